"""rigcheck's speed against the tools people already run, on this machine, in this run.

    python benchmarks/run.py [--runs 5] [--quick] [--only hostile|lint] [--json FILE]

Every figure is the median wall time of ``--runs`` runs of a separate process (so start-up counts,
as it does in pre-commit and CI), with the peak resident memory of that process. The commands a
target compares (the cold-start group, the throughput group, each scale step with its parse) run
interleaved, one run of each in turn, so that a moment when the machine is busier slows them alike
and the ratios hold even where the absolute times drift. Comparisons:

- cold start: ``python -c pass``; ``rigcheck --version``; ``rigcheck check`` on one rig + workload
  pair; ``yamllint`` and ``check-jsonschema`` (with rigcheck's own schemas) on the same two files;
- throughput: ``rigcheck lint`` on a generated repository of 1,000 rigs and 1,000 workloads (each
  workload paired with a rig, no two pairs alike: ``benchmarks/generate.py``), against a process
  that only parses the same files with PyYAML's C loader (the floor of any YAML linter in Python);
  what the lint's time is made of: the same lint with no checker selected (loading, pairing, the
  engine's bookkeeping, the report) and without MEM001 (the memory fit and its search for fixes);
  ``lint --jobs`` 1, 2 and each power of two up to the CPUs there are (the default: all of them) for
  the runs checked in worker processes (issue 20; ``--only lint`` times this group alone);
- scale: ``rigcheck check`` on one rig with 1 / 10 / 100 / 1,000 / 4,096 nodes listed one by one, 8
  GPUs each (32,768 GPUs at the top), against the C-loader parse of the same file;
- a hostile pull request (issue 15, docs/security.md): ``rigcheck lint`` of 10,000 tiny specs (JSON,
  and the JUnit, Markdown and HTML writers, whose memory once grew with the files), a rig with 20,000
  unknown GPU names, a spec with one 20 MB scalar, and 1,000 workloads naming their rigs by name, or
  naming rigs that do not exist (each name once a scan of every spec, and a fuzzy search for these).

yamllint and check-jsonschema are compared only when installed (``pip install yamllint
check-jsonschema``). Targets (issue 20): a cold check of one pair at most 0.3 s and 0.85x
check-jsonschema validating both files in one invocation; ``--version``, ``rules`` and ``explain``
under 0.1 s; lint of 2,000 files at most 3 s and 5x the parse floor, under 150 MiB and flat in the
number of files (in every streamed format); 32,768 GPUs at most 2 s, growing linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from generate import cluster_text, write_repo  # noqa: E402

from rigcheck.core.lint.cpus import usable_cpus  # noqa: E402

PAIR = (REPO / "specs" / "rigs" / "home-2x3090.yaml", REPO / "specs" / "workloads" / "qwen-1.8b-lora.yaml")
FLOOR = (
    "import sys, yaml\n"
    "for path in sys.argv[1:]:\n"
    "    with open(path, encoding='utf-8') as handle:\n"
    "        yaml.load(handle, Loader=yaml.CSafeLoader)\n"
)


@dataclass
class Timing:
    label: str
    seconds: float
    peak_mib: float
    note: str = ""
    #: user + system CPU seconds of the process and its children (median): what a lint in worker
    #: processes costs the machine, where its wall time hides it
    cpu_seconds: float = 0.0


#: One command to time: its label, the command line, the folder it runs in, a note for the table.
Item = tuple[str, list[str], Path | None, str]


def run_once(command: list[str], cwd: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system, its worker processes included) of
    one run of ``command``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # its children, reaped by it, are counted here
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    return elapsed, peak, cpu


def run_interleaved(items: list[Item], runs: int) -> list[tuple[float, float, float]]:
    """For each item, the median wall seconds, the largest peak RSS (MiB) and the median CPU seconds of
    ``runs`` runs, taken in rounds (one run of every item, in order, per round): a moment when the
    machine is busier slows every command compared in a target alike, instead of whichever happened to
    be running then."""
    times: list[list[float]] = [[] for _ in items]
    peaks: list[list[float]] = [[] for _ in items]
    cpus: list[list[float]] = [[] for _ in items]
    for _ in range(runs):
        for index, (_, command, cwd, _) in enumerate(items):
            seconds, peak, cpu = run_once(command, cwd)
            times[index].append(seconds)
            peaks[index].append(peak)
            cpus[index].append(cpu)
    return [
        (statistics.median(t), max(p), statistics.median(c))
        for t, p, c in zip(times, peaks, cpus, strict=True)
    ]


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def prepare() -> str:
    """Compile rigcheck's bytecode first, as ``pip install`` does (a tree run with
    PYTHONDONTWRITEBYTECODE would otherwise compile every module in every timed run), and name the
    third-party plugins installed: their checkers run in every ``check`` and ``lint`` timed here."""
    import compileall
    from importlib.metadata import entry_points

    compileall.compile_dir(str(REPO / "rigcheck"), quiet=1)
    # a first run of each command fills the shipped-data cache (~/.cache/rigcheck), as a user's first
    # run does
    first_run = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for command in (["check", *map(str, PAIR)], ["rules"], ["lint", str(REPO / "specs"), "-o", os.devnull]):
        subprocess.run(
            [sys.executable, "-m", "rigcheck", *command], env=first_run, capture_output=True, check=False
        )
    plugins = sorted({f"{ep.dist.name if ep.dist else ep.value}" for ep in entry_points(group="rigcheck")})
    return ", ".join(plugins) if plugins else "none"


def benchmark(runs: int, quick: bool, only: str | None = None) -> list[Timing]:
    rigcheck = [sys.executable, "-m", "rigcheck"]
    python = sys.executable
    results: list[Timing] = []

    def together(items: list[Item]) -> list[Timing]:
        """Time the items interleaved (:func:`run_interleaved`) and record them in order."""
        timings = []
        for (label, _, _, note), (seconds, peak, cpu) in zip(
            items, run_interleaved(items, runs), strict=True
        ):
            timing = Timing(label, seconds, peak, note, cpu)
            results.append(timing)
            timings.append(timing)
            print(f"  {label:<52} {seconds:7.3f} s {cpu:7.3f} s CPU {peak:7.0f} MiB {note}", file=sys.stderr)
        return timings

    def add(label: str, command: list[str], note: str = "", cwd: Path | None = None) -> Timing:
        return together([(label, command, cwd, note)])[0]

    if only == "hostile":
        hostile_repository(add, rigcheck, quick)
        return results
    if only == "lint":
        with tempfile.TemporaryDirectory(prefix="rigcheck-bench-") as folder:
            throughput(together, Path(folder), quick, tool("yamllint"))
        return results
    print("cold start (interleaved)", file=sys.stderr)
    cold: list[Item] = [
        ("python -c pass", [python, "-c", "pass"], None, ""),
        ("rigcheck --version", [*rigcheck, "--version"], None, ""),
        ("rigcheck rules", [*rigcheck, "rules"], None, ""),
        ("rigcheck explain PWR002", [*rigcheck, "explain", "PWR002"], None, ""),
        ("rigcheck check RIG WORKLOAD", [*rigcheck, "check", str(PAIR[0]), str(PAIR[1])], None, ""),
        ("PyYAML C loader, the 2 files", [python, "-c", FLOOR, *map(str, PAIR)], None, ""),
    ]
    yamllint = tool("yamllint")
    if yamllint:
        cold.append(("yamllint, the 2 files", [yamllint, *map(str, PAIR)], None, ""))
    schema_tool = tool("check-jsonschema")
    with tempfile.TemporaryDirectory(prefix="rigcheck-schemas-") as folder:
        if schema_tool:
            rig_schema, workload_schema = (
                REPO / "schemas" / "rig.schema.json",
                REPO / "schemas" / "workload.schema.json",
            )
            either = Path(folder) / "either.schema.json"  # one invocation for both files: rig or workload
            for name in ("rig", "workload"):
                shutil.copy(REPO / "schemas" / f"{name}.schema.json", Path(folder) / f"{name}.schema.json")
            either.write_text(
                json.dumps({"anyOf": [{"$ref": "rig.schema.json"}, {"$ref": "workload.schema.json"}]}),
                encoding="utf-8",
            )
            cold += [
                (
                    "check-jsonschema, rig",
                    [schema_tool, "--schemafile", str(rig_schema), str(PAIR[0])],
                    None,
                    "",
                ),
                (
                    "check-jsonschema, workload",
                    [schema_tool, "--schemafile", str(workload_schema), str(PAIR[1])],
                    None,
                    "",
                ),
                (
                    "check-jsonschema, both files in one invocation",
                    [schema_tool, "--schemafile", str(either), *map(str, PAIR)],
                    None,
                    "",
                ),
            ]
        together(cold)

    with tempfile.TemporaryDirectory(prefix="rigcheck-bench-") as folder:
        root = Path(folder)
        throughput(together, root, quick, yamllint)
        print("hostile input (each must end in a one-line error, quickly)", file=sys.stderr)
        for label, path in hostile_files(root).items():
            add(f"rigcheck check, {label}", [*rigcheck, "check", str(path)])
        print("scale (nodes listed one by one, 8 GPUs each)", file=sys.stderr)
        for nodes in (1, 10, 100, 1000) if quick else (1, 10, 100, 1000, 4096):
            path = root / f"cluster-{nodes}.yaml"
            path.write_text(cluster_text(nodes), encoding="utf-8")
            together(
                [
                    (f"scale: C loader, {nodes} nodes", [python, "-c", FLOOR, str(path)], None, ""),
                    (
                        f"scale: C loader, garbage collector off, {nodes} nodes",
                        [python, "-c", "import gc; gc.disable()\n" + FLOOR, str(path)],
                        None,
                        "",
                    ),
                    (
                        f"scale: rigcheck check, {nodes} nodes ({8 * nodes:,} GPUs)",
                        [*rigcheck, "check", str(path), "-o", os.devnull],
                        None,
                        "",
                    ),
                ]
            )
        hostile_repository(add, rigcheck, quick)
    return results


def cpu_text() -> str:
    """The machine's CPUs, and those this process may use where fewer (``taskset``, a cgroup quota:
    what ``lint --jobs`` defaults to, :func:`rigcheck.core.lint.cpus.usable_cpus`)."""
    usable = usable_cpus()
    total = os.cpu_count() or usable
    return f"{total} CPUs" if usable == total else f"{total} CPUs, {usable} usable"


def jobs_ladder(cpus: int) -> list[int]:
    """``--jobs`` values timed: 1, 2 and the powers of two up to the CPUs there are, and the CPUs (issue 20:
    the lint measured where cores are free, on whatever machine the benchmark is run)."""
    ladder = {1, 2, cpus}
    jobs = 4
    while jobs < cpus:
        ladder.add(jobs)
        jobs *= 2
    return sorted(ladder)


def throughput(
    together: Callable[[list[Item]], list[Timing]], root: Path, quick: bool, yamllint: str | None
) -> None:
    """``rigcheck lint`` of the generated repository against the C-loader parse of its files, with what
    its time is made of: the lint with no checker selected (loading, pairing, the engine's bookkeeping
    and the report: what any lint costs) and without MEM001 (the memory fit and its search for fixes,
    the largest checker), and ``--jobs`` from 1 to the CPUs there are."""
    rigcheck = [sys.executable, "-m", "rigcheck"]
    count = 200 if quick else 1000
    files = write_repo(root / "repo", count)
    print(f"throughput ({2 * count} files, interleaved)", file=sys.stderr)
    repo = root / "repo"
    lint = [*rigcheck, "lint", "--format", "json", "-o", os.devnull]
    items: list[Item] = [
        (
            f"PyYAML C loader, {2 * count} files (floor)",
            [sys.executable, "-c", FLOOR, *map(str, files)],
            None,
            "",
        ),
        (f"rigcheck lint, {2 * count} files", lint, repo, ""),
        (f"{LINT_WITHOUT_MEM001}, {2 * count} files", [*lint, "--ignore", "MEM001"], repo, ""),
        (f"{LINT_NO_CHECKER}, {2 * count} files", [*lint, "--select", "ENGINE"], repo, ""),
    ]
    for jobs in jobs_ladder(usable_cpus()):  # issue 20: the runs in worker processes
        items.append(
            (f"rigcheck lint --jobs {jobs}, {2 * count} files", [*lint, "--jobs", str(jobs)], repo, "")
        )
    if yamllint:
        items.append((f"yamllint, {2 * count} files", [yamllint, "-d", "relaxed", str(repo)], None, ""))
    together(items)


#: The two lints that say what the lint's time is made of (:func:`throughput`).
LINT_WITHOUT_MEM001 = "rigcheck lint --ignore MEM001"
LINT_NO_CHECKER = "rigcheck lint --select ENGINE (no checker runs)"


TINY_RIG = "apiVersion: rigcheck/v1\nkind: Rig\nname: r{index}\nnodes: [{{gpus: {{model: L40S}}}}]\n"
TINY_WORKLOAD = (
    "apiVersion: rigcheck/v1\nkind: Workload\nname: w{index}\nruns_on: [{rig}]\n"
    "model: {{preset: qwen-1.8b}}\ntask: inference\n"
)


def hostile_repository(add: Callable[..., Timing], rigcheck: list[str], quick: bool) -> None:
    """What a pull request can add to make lint slow: many tiny specs, many unknown names, one huge
    scalar, many workloads naming their rigs (or rigs that do not exist) by name (each a separate
    ``rigcheck lint`` of its own repository)."""
    count = 2_000 if quick else 10_000
    names = 4_000 if quick else 20_000
    pairs = 400 if quick else 1_000
    print("hostile pull request", file=sys.stderr)
    lint_json = [*rigcheck, "lint", "-f", "json", "-o", os.devnull]
    with tempfile.TemporaryDirectory(prefix="rigcheck-hostile-") as folder:

        def repository(name: str) -> Path:
            (Path(folder) / name / ".git").mkdir(parents=True)
            return Path(folder) / name

        tiny = repository("tiny")
        for index in range(count):
            (tiny / f"r{index}.yaml").write_text(TINY_RIG.format(index=index), encoding="utf-8")
        add(f"rigcheck lint, {count:,} tiny specs", lint_json, cwd=tiny)
        for fmt in ("junit", "markdown", "html"):  # the writers that once held every finding as a model
            add(
                f"rigcheck lint -f {fmt}, {count:,} tiny specs",
                [*rigcheck, "lint", "-f", fmt, "-o", os.devnull],
                cwd=tiny,
            )
        unknown = repository("unknown")
        nodes = "".join(f"  - {{name: n{i}, gpus: {{model: NoSuchGpu{i}}}}}\n" for i in range(names))
        (unknown / "rig.yaml").write_text(f"apiVersion: rigcheck/v1\nkind: Rig\nname: u\nnodes:\n{nodes}")
        add(f"rigcheck lint, {names:,} unknown GPU names", lint_json, cwd=unknown)
        scalar = repository("scalar")
        with open(scalar / "rig.yaml", "w", encoding="utf-8") as handle:
            handle.write("apiVersion: rigcheck/v1\nkind: Rig\nname: '")
            for _ in range(20):
                handle.write("x" * 2**20)
            handle.write("'\nnodes: [{gpus: {model: L40S}}]\n")
        add("rigcheck lint, one 20 MB scalar", lint_json, cwd=scalar)
        for label, rig in (
            ("naming their rigs", "r{index}"),
            ("naming rigs that do not exist", "rigg{index}"),
        ):
            named = repository(f"named-{rig[:4]}")
            for index in range(pairs):  # runs_on by name: one lookup each, not a scan of every spec
                (named / f"r{index}.yaml").write_text(TINY_RIG.format(index=index), encoding="utf-8")
                (named / f"w{index}.yaml").write_text(
                    TINY_WORKLOAD.format(index=index, rig=rig.format(index=index)), encoding="utf-8"
                )
            add(f"rigcheck lint, {pairs:,} workloads {label}", lint_json, cwd=named)


def hostile_files(root: Path) -> dict[str, Path]:
    """A billion-laughs alias bomb, a 100 MB file, a binary file and a Latin-1 file."""
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index in range(1, 9):
        prev, here = chr(ord("a") + index - 1), chr(ord("a") + index)
        levels.append(f"{here}: &{here} [" + ",".join([f"*{prev}"] * 9) + "]")
    files = {
        "alias bomb": ("apiVersion: rigcheck/v1\nkind: Rig\nname: x\n" + "\n".join(levels) + "\n").encode(),
        "binary file": bytes(range(256)) * 64,
        "Latin-1 file": "apiVersion: rigcheck/v1\nkind: Rig\nname: café\n".encode("latin-1"),
    }
    paths = {}
    for label, data in files.items():
        paths[label] = root / f"{label.replace(' ', '-')}.yaml"
        paths[label].write_bytes(data)
    big = root / "100mb.yaml"
    with open(big, "wb") as handle:  # in chunks: a 100 MB string here would inflate every child's peak memory
        handle.write(b"apiVersion: rigcheck/v1\nkind: Rig\nname: x\ncomment: '")
        for _ in range(100):
            handle.write(b"x" * 2**20)
        handle.write(b"'\n")
    paths["100 MB file"] = big
    return paths


def table(results: list[Timing]) -> str:
    """The measurements, then each target of issue 20 with the measured ratio beside its peer."""
    by = {timing.label: timing for timing in results}
    lines = ["| measurement | median | CPU (user + system) | peak memory |", "|---|---:|---:|---:|"]
    lines += [
        f"| {t.label} | {t.seconds:.3f} s | {t.cpu_seconds:.3f} s | {t.peak_mib:.0f} MiB |" for t in results
    ]
    lines += ["", "| target | measured | ratio | met |", "|---|---|---:|---|"]

    def row(target: str, measured: str, ratio: str, met: bool) -> None:
        lines.append(f"| {target} | {measured} | {ratio} | {'yes' if met else 'no'} |")

    check = by.get("rigcheck check RIG WORKLOAD")
    if check:
        row("cold check of one pair <= 0.3 s", f"{check.seconds:.3f} s", "", check.seconds <= 0.3)
    both = by.get("check-jsonschema, both files in one invocation")
    if check and both:
        ratio = check.seconds / both.seconds
        row(
            f"check <= 0.85x check-jsonschema on both files ({both.seconds:.3f} s)",
            f"{check.seconds:.3f} s",
            f"{ratio:.2f}x",
            ratio <= 0.85,
        )
    if check and both:  # issue 45
        ratio = check.seconds / both.seconds
        row(
            "(issue 45) check <= 1.0x check-jsonschema on both files",
            f"{check.seconds:.3f} s",
            f"{ratio:.2f}x",
            ratio <= 1.0,
        )
    for label in ("rigcheck --version", "rigcheck rules", "rigcheck explain PWR002"):
        if label in by:
            row(
                f"`{label.removeprefix('rigcheck ')}` < 0.1 s",
                f"{by[label].seconds:.3f} s",
                "",
                by[label].seconds < 0.1,
            )
    lint = next((t for t in results if t.label.startswith("rigcheck lint,") and "files" in t.label), None)
    floor = next((t for t in results if t.label.startswith("PyYAML C loader,") and "floor" in t.label), None)
    if lint:
        row(f"{lint.label.removeprefix('rigcheck ')} <= 3 s", f"{lint.seconds:.3f} s", "", lint.seconds <= 3)
        row("lint peak memory < 150 MiB", f"{lint.peak_mib:.0f} MiB", "", lint.peak_mib < 150)
    if lint and floor:
        ratio = lint.seconds / floor.seconds
        row(
            f"lint <= 5x the C-loader floor ({floor.seconds:.3f} s)",
            f"{lint.seconds:.3f} s",
            f"{ratio:.1f}x",
            ratio <= 5,
        )
    if lint and floor:
        for label, what in ((LINT_NO_CHECKER, "no checker runs"), (LINT_WITHOUT_MEM001, "without MEM001")):
            part = next((t for t in results if t.label.startswith(f"{label}, ")), None)
            if part:  # not targets: what the lint's time is made of, against the same floor
                share = f"{part.seconds / floor.seconds:.1f}x"
                lines.append(f"| (lint {what}: {part.seconds:.3f} s, {share} the floor) | | {share} | |")
    for label, what in (
        ("rigcheck lint", "lint"),
        ("rigcheck lint -f junit", "junit"),
        ("rigcheck lint -f markdown", "markdown"),
        ("rigcheck lint -f html", "html"),
    ):
        many = by.get(f"{label}, 10,000 tiny specs")
        if lint and many:
            row(
                f"{what} memory flat in the number of files (10,000 tiny specs)",
                f"{many.peak_mib:.0f} MiB",
                f"{many.peak_mib / lint.peak_mib:.2f}x",
                many.peak_mib < 150,
            )
    yamllint_many = next(
        (t for t in results if t.label.startswith("yamllint, ") and t.label.split()[1].isdigit()), None
    )  # "yamllint, 2000 files", not "yamllint, the 2 files"
    if lint and yamllint_many:  # issue 45: the machine's CPU, worker processes included
        ratio = lint.cpu_seconds / yamllint_many.cpu_seconds
        row(
            f"(issue 45) lint CPU <= yamllint CPU on the same files ({yamllint_many.cpu_seconds:.3f} s)",
            f"{lint.cpu_seconds:.3f} s",
            f"{ratio:.2f}x",
            ratio <= 1.0,
        )
    top_gc_off = max(
        (
            (int(t.label.rsplit(", ", 1)[1].split()[0]), t)
            for t in results
            if t.label.startswith("scale: C loader, garbage collector off, ")
        ),
        default=None,
        key=lambda pair: pair[0],
    )
    scale = [
        (int(t.label.split(", ")[1].split()[0]), t)
        for t in results
        if t.label.startswith("scale: rigcheck check, ")
    ]
    if scale:
        top_nodes, top = max(scale, key=lambda pair: pair[0])
        row(f"{8 * top_nodes:,} GPUs <= 2 s", f"{top.seconds:.3f} s", "", top.seconds <= 2)
        if top_gc_off is not None and top_gc_off[0] == top_nodes:
            ratio = top.seconds / top_gc_off[1].seconds
            row(
                f"(issue 45) {top_nodes:,} nodes <= 4x the C-loader parse, garbage collector off "
                f"({top_gc_off[1].seconds:.3f} s)",
                f"{top.seconds:.3f} s",
                f"{ratio:.1f}x",
                ratio <= 4,
            )
        base = dict(scale).get(1)
        if base and len(scale) > 2:
            growth = ", ".join(
                f"{n}: {(t.seconds - base.seconds) / max(n - 1, 1) * 1000:.2f} ms/node"
                for n, t in sorted(scale)
                if n > 1
            )
            lines.append(f"| time grows linearly (per extra node) | {growth} | | |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="400 files and up to 1,000 nodes")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument(
        "--only",
        choices=("hostile", "lint"),
        help="only the hostile pull request section, or only the lint throughput (with --jobs up to the CPUs)",
    )
    args = parser.parse_args()
    machine = (
        f"{platform.processor() or platform.machine()}, {cpu_text()}, Python {platform.python_version()}"
    )
    plugins = prepare()
    print(f"rigcheck benchmarks: {machine}; third-party plugins installed: {plugins}", file=sys.stderr)
    results = benchmark(args.runs, args.quick, args.only)
    print(
        f"\n{time.strftime('%Y-%m-%d')}, {machine}, median of {args.runs} runs, "
        f"third-party plugins installed: {plugins}\n"
    )
    print(table(results))
    if args.json:
        Path(args.json).write_text(
            json.dumps([t.__dict__ for t in results], indent=2) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

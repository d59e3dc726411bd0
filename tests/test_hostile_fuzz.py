"""Issue 15: a pull request is hostile input, fuzzed. Hypothesis writes repositories whose names, keys,
paths, file names, configs and numbers are built from what an attacker would send (workflow commands,
terminal escapes, Markdown links, bidirectional overrides, huge and non-finite numbers), runs
``rigcheck lint`` on each as GitHub Actions would (every format at once), and checks the invariants of
docs/security.md on everything that comes out:

- no traceback, no internal error; exit 0, 1 or 2;
- no raw control byte on standard output, standard error, text, github, Markdown, SARIF or JSON;
- no line the Actions runner would run as a workflow command unless rigcheck wrote it (``::`` lines
  have rigcheck's exact shape, ``##[`` appears nowhere) on standard output, standard error, text or
  Markdown (JSON and SARIF values are data, written exactly, with no raw control character);
- Markdown forms no link, image or HTML from spec text; JUnit parses as XML;
- JSON and SARIF parse without NaN or Infinity, and the JSON report is valid against its schema;
- nothing outside the repository is read (a secret beside it never shows up).

A fixed budget with a fixed seed (``derandomize=True``): CI time is bounded and a failure reproduces.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
REPORT_SCHEMA = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: bounded time in CI, the example is still shown
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
SECRET = "SECRET-OUTSIDE-7f3a"

#: What an attacker puts in a string: workflow commands (new and legacy), escapes, links, HTML,
#: bidi overrides, line separators, the characters GitHub's escaping is about.
PIECES = [
    "\n::error file=README.md::pwned",
    "\r\n::warning title=x::pwned",
    "::add-mask::x",
    "  ::notice::pwned",
    "##[error]pwned",
    "##vso[task.setvariable variable=x]1",
    "\x1b[2J",
    "\x1b]0;title\x07",
    "\x1b[31m",
    "\x07",
    "\x08",
    "\x00",
    "\x7f",
    "\x85",
    "\x9b",
    "\u202e",
    "\u2066",
    "\u2028",
    "\u2029",
    "[x](javascript:alert(1))",
    "![i](http://evil.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "<https://evil.example>",
    "|",
    "%0A",
    "%",
    ":",
    ",",
    "`",
    "\\",
    "](",
    "{{ secrets.TOKEN }}",
    "${{ github.token }}",
    "../../etc/passwd",
    "/etc/passwd",
]
hostile = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(st.characters(codec="utf-8"), max_size=4)),
    min_size=1,
    max_size=4,
).map("".join)
file_names = hostile.map(lambda text: re.sub(r"[/\x00]", "_", text)[:60] or "x").filter(
    lambda name: name not in (".", "..") and not name.startswith(".")
)
numbers = st.one_of(
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([".inf", "-.inf", ".nan", "1e999", "0", "-0", "0x7fffffffffffffff", "9" * 500]),
)

# -- what comes out ---------------------------------------------------------------------------------

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and LF, DEL, C1
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u2028\u2029]")
#: A workflow command rigcheck writes: properties with no raw ',' or ':' in their values.
OWN_COMMAND = re.compile(
    r"::(error|warning|notice) file=[^,:\r\n]*(,line=\d+)?(,col=\d+)?(,endLine=\d+)?(,endColumn=\d+)?"
    r",title=rigcheck [A-Z]+\d{3} \([a-z0-9-]+\)::[^\r\n]*"
)
OWN_HTML = {"<details>", "</details>", "<summary>", "</summary>"}
FORMATS = {
    "json": "report.json",
    "sarif": "report.sarif",
    "junit": "report.xml",
    "markdown": "report.md",
    "text": "report.txt",
}


def _no_forged_command(text: str, where: str) -> None:
    for line in text.splitlines():
        assert "##[" not in line and "##vso[" not in line, (where, line)
        stripped = line.lstrip()
        if stripped.startswith("::"):
            assert OWN_COMMAND.fullmatch(stripped), (where, line)


def _no_raw_controls(text: str, where: str) -> None:
    assert not CONTROL.search(text), (where, CONTROL.search(text))
    assert not BIDI.search(text), (where, BIDI.search(text))


def _strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _lint_everything(run, root: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``rigcheck lint`` of ``root`` as under GitHub Actions, every format; the invariants above."""
    out = root.parent / "out"
    out.mkdir(exist_ok=True)
    monkeypatch.chdir(root)
    args = ["lint", "-f", "github"]
    for name, file in FORMATS.items():
        args += ["-f", name, "-o", str(out / file)]
    monkeypatch.setenv("RIGCHECK_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = run(args)
    assert result.exit_code in (0, 1, 2), result.err
    for stream, text in (("stdout", result.out), ("stderr", result.err)):
        assert "Traceback" not in text and "internal error" not in text, (stream, text)
        _no_raw_controls(text, stream)
        _no_forged_command(text, stream)
    assert SECRET not in result.out + result.err
    if result.exit_code == 2:  # a config error: one escaped line per problem, no report
        return
    report = _strict_json((out / FORMATS["json"]).read_text(encoding="utf-8"))
    jsonschema.validate(report, REPORT_SCHEMA)
    sarif_text = (out / FORMATS["sarif"]).read_text(encoding="utf-8")
    _strict_json(sarif_text)
    markdown = (out / FORMATS["markdown"]).read_text(encoding="utf-8")
    ET.fromstring((out / FORMATS["junit"]).read_bytes())
    text_report = (out / FORMATS["text"]).read_text(encoding="utf-8")
    for name, text in (("sarif", sarif_text), ("markdown", markdown), ("text", text_report)):
        _no_raw_controls(text, name)
        assert SECRET not in text
    for name, text in (("markdown", markdown), ("text", text_report)):  # JSON and SARIF values are data
        _no_forged_command(text, name)
    assert not re.search(r"(?<!\\)\]\(", markdown), "a Markdown link or image was formed"
    assert set(re.findall(r"<[^>\s]*>?", markdown)) <= OWN_HTML, re.findall(r"<[^>\s]*>?", markdown)


@pytest.fixture
def lint_run(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``rigcheck ARGS`` in this process (unlike ``run_cli``, the environment is left as set)."""
    from rigcheck.cli import main

    from .conftest import CliResult

    def run(args: list[str]) -> CliResult:
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def _repository(base: Path, files: dict[str, str]) -> Path:
    """A fresh repository under ``base`` (each example its own), with a secret beside it."""
    index = len(list(base.glob("case-*")))
    case = base / f"case-{index}"
    root = case / "repo"
    (root / ".git").mkdir(parents=True)
    (case / "secret.yaml").write_text(
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: {SECRET}\nnodes: [{{gpus: {{model: L40S}}}}]\n",
        encoding="utf-8",
    )
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return root


_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})")


def _yaml(data: object) -> str:
    """``data`` as YAML flow text that any character survives: JSON, but with astral characters
    written ``\\UXXXXXXXX`` (YAML has no surrogate-pair escapes) and non-finite floats as YAML's."""
    text = json.dumps(data, allow_nan=True).replace("NaN", ".nan").replace("Infinity", ".inf")

    def astral(match: re.Match[str]) -> str:
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}"

    return _PAIR.sub(astral, text)


def _q(text: str) -> str:
    """``text`` as a YAML double-quoted scalar, any character included."""
    return _yaml(text)


def _rig(name: str, node: str, gpu: str, storage: str, key: str, watts: object) -> str:
    return (
        f"apiVersion: rigcheck/v1\nkind: Rig\nname: {_q(name)}\nnodes:\n"
        f"  - name: {_q(node)}\n"
        f"    gpus: {{model: {_q(gpu)}, count: 2}}\n"
        "    cpu: {cores: 16, tdp_w: 100}\n    memory_gib: 128\n"
        f"    psu: {{watts: {watts}}}\n"
        f"    storage: [{{name: {_q(storage)}, kind: nvme, read_mb_s: 7000}}]\n"
        f"    {_q(key)}: 1\n"
    )


def _workload(name: str, runs_on: list[str]) -> str:
    listed = ", ".join(_q(item) for item in runs_on)
    return (
        f"apiVersion: rigcheck/v1\nkind: Workload\nname: {_q(name)}\nmodel: {{preset: gpt2-124m}}\n"
        f"task: pretrain\nruns_on: [{listed}]\n"
    )


# -- the fuzz ---------------------------------------------------------------------------------------


@FUZZ
@given(
    name=hostile,
    node=hostile,
    gpu=st.one_of(st.just("RTX 3090"), hostile),
    storage=hostile,
    key=hostile,
    workload=hostile,
    runs_on=st.lists(st.one_of(st.just("rig.yaml"), hostile, st.just("../secret.yaml")), max_size=3),
    file_name=file_names,
)
def test_hostile_strings_in_specs_and_file_names(  # type: ignore[no-untyped-def]
    lint_run, tmp_path_factory, monkeypatch, name, node, gpu, storage, key, workload, runs_on, file_name
) -> None:
    base = tmp_path_factory.mktemp("strings")
    root = _repository(
        base,
        {
            "rig.yaml": _rig(name, node, gpu, storage, key, 800),
            f"{file_name}.yaml": _rig(node, name, gpu, storage, "extra", 1200),
            "w.yaml": _workload(workload, [*runs_on, "rig.yaml"]),
        },
    )
    _lint_everything(lint_run, root, monkeypatch)


def _lint_with_config(run, base: Path, monkeypatch, config: object) -> None:  # type: ignore[no-untyped-def]
    """Lint a repository of one good rig and workload under the project config ``config``."""
    rig, workload = _rig("r", "n", "RTX 3090", "data", "extra", 800), _workload("w", ["rig.yaml"])
    root = _repository(base, {".rigcheck.yaml": _yaml(config) + "\n", "rig.yaml": rig, "w.yaml": workload})
    _lint_everything(run, root, monkeypatch)


config_keys = st.one_of(
    st.sampled_from(
        [
            *("select", "ignore", "fail_on", "severity", "thresholds", "pairs"),
            *("matrix", "waivers", "plugins", "exclude", "baseline"),
        ]
    ),
    hostile,
)
config_values = st.recursive(
    st.one_of(st.none(), st.booleans(), hostile, st.integers(-(10**30), 10**30), st.floats()),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.one_of(config_keys, hostile), children, max_size=3)
    ),
    max_leaves=12,
)


@FUZZ
@given(config=st.dictionaries(config_keys, config_values, max_size=4))
def test_hostile_project_configs(lint_run, tmp_path_factory, monkeypatch, config) -> None:  # type: ignore[no-untyped-def]
    _lint_with_config(lint_run, tmp_path_factory.mktemp("configs"), monkeypatch, config)


paths = st.one_of(
    st.sampled_from(["rig.yaml", "w.yaml", "*.yaml", "../secret.yaml", "/etc/*", "../*"]), hostile
)
structured_configs = st.fixed_dictionaries(
    {},
    optional={
        "pairs": st.lists(st.fixed_dictionaries({"rig": paths, "workload": paths}), max_size=2),
        "matrix": st.fixed_dictionaries(
            {
                "rigs": st.lists(paths, min_size=1, max_size=2),
                "workloads": st.lists(paths, min_size=1, max_size=2),
            }
        ),
        "waivers": st.lists(
            st.fixed_dictionaries(
                {"rule": st.sampled_from(["PWR001", "PWR", "MEM001", "SPEC011"]), "reason": hostile},
                optional={
                    "path": paths,
                    "spec": hostile,
                    "pointer": hostile,
                    "expires": st.just("2001-01-01"),
                },
            ),
            max_size=2,
        ),
        "exclude": st.lists(paths, max_size=2),
        "select": st.lists(st.one_of(st.sampled_from(["PWR", "MEM001", "SPEC"]), hostile), max_size=2),
        "severity": st.dictionaries(
            st.one_of(st.just("PWR001"), hostile), st.sampled_from(["warn", "off"]), max_size=1
        ),
        "thresholds": st.dictionaries(
            st.sampled_from(["power.sustained.warn_above_fraction", "evidence.nccl_busbw.min_size_bytes"]),
            st.one_of(st.integers(-(10**30), 10**30), st.floats(), hostile),
            max_size=1,
        ),
        "plugins": st.lists(st.one_of(st.sampled_from(["venv.__main__", "this", "os"]), hostile), max_size=1),
        "baseline": paths,
    },
)


@FUZZ
@given(config=structured_configs)
def test_hostile_strings_in_a_valid_shaped_config(lint_run, tmp_path_factory, monkeypatch, config) -> None:  # type: ignore[no-untyped-def]
    """Configs of the right shape, so that they get past the schema: paths, globs, waiver reasons,
    pointers and plugin names an attacker chose."""
    _lint_with_config(lint_run, tmp_path_factory.mktemp("shaped"), monkeypatch, config)


@FUZZ
@given(
    watts=numbers,
    memory=numbers,
    read=numbers,
    count=numbers,
    micro=numbers,
    tp=numbers,
    tokens=numbers,
)
def test_hostile_numbers_in_every_quantity(  # type: ignore[no-untyped-def]
    lint_run, tmp_path_factory, monkeypatch, watts, memory, read, count, micro, tp, tokens
) -> None:
    base = tmp_path_factory.mktemp("numbers")
    rig = (
        "apiVersion: rigcheck/v1\nkind: Rig\nname: r\nnodes:\n  - name: n\n"
        f"    gpus: {{model: RTX 3090, count: {count}}}\n    memory_gib: {memory}\n"
        f"    psu: {{watts: {watts}}}\n    storage: [{{name: d, kind: nvme, read_mb_s: {read}}}]\n"
    )
    workload = _workload("w", ["rig.yaml"]) + (
        f"batch: {{micro: {micro}, seq_len: 1024}}\nparallelism: {{tp: {tp}}}\ndata: {{tokens: {tokens}}}\n"
    )
    root = _repository(base, {"rig.yaml": rig, "w.yaml": workload})
    _lint_everything(lint_run, root, monkeypatch)

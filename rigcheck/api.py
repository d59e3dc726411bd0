"""rigcheck as a library: what ``rigcheck check``, ``estimate`` and ``plan`` give, without a shell.

    import rigcheck
    report = rigcheck.check("rigs/box.yaml", "jobs/lora.yaml", select=["MEM", "PWR"])
    report.exit_code, [f.code for f in report.findings]
    rigcheck.estimate({"apiVersion": "rigcheck/v1", "kind": "Workload", ...}, rig="home-2x3090")["fit"]
    rigcheck.plan("qwen-1.8b-law-lora", mode="buy", budget=5000)["answer"]

A spec is a path to a file, the name of a shipped spec (``home-2x3090``), or a mapping (written to a
temporary file, so that it is read, located and checked exactly as a file is). The command line's own
code runs underneath (the same pipeline, config discovery, plugins and verdicts), so the results are the
CLI's: ``tests/test_api.py`` holds them to it. Bad input raises :class:`rigcheck.SpecError` (the CLI's
exit 2) or :class:`rigcheck.core.engine.errors.UsageError`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rigcheck.core.report.report import Report

Spec = str | os.PathLike[str] | Mapping[str, Any]


@contextlib.contextmanager
def _paths(*specs: Spec | None) -> Iterator[list[str | None]]:
    """File paths for ``specs``: paths and shipped names as given, mappings written to a temporary folder."""
    from rigcheck.core.spec.boundary import replacing
    from rigcheck.core.spec.yaml_writer import dump_yaml

    with tempfile.TemporaryDirectory(prefix="rigcheck-api-") as folder:
        paths: list[str | None] = []
        for number, spec in enumerate(specs):
            if spec is None:
                paths.append(None)
            elif isinstance(spec, Mapping):
                path = os.path.join(folder, f"spec{number}.yaml")
                with replacing(path) as handle:  # the one writer (rigcheck.core.spec.boundary)
                    handle.write(dump_yaml(dict(spec)))
                paths.append(path)
            else:
                paths.append(os.fspath(spec))
        yield paths


def _args(command: str, arguments: Sequence[str]) -> Any:
    """The options ``rigcheck COMMAND ARGUMENTS`` would give that command (its own parser)."""
    import argparse
    import importlib

    parser = argparse.ArgumentParser(prog="rigcheck")
    importlib.import_module(f"rigcheck.commands.{command}").add_parser(parser.add_subparsers())
    return parser.parse_args([command, *arguments])


def check(
    rig: Spec,
    workload: Spec | None = None,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    fail_on: str | None = None,
    evidence: Sequence[str | os.PathLike[str]] = (),
    config: str | os.PathLike[str] | None = None,
) -> Report:
    """``rigcheck check RIG [WORKLOAD]`` as a :class:`~rigcheck.core.report.report.Report` (its
    ``findings``, ``exit_code``, ``verdict``; ``model_dump(mode="json")`` is the JSON format's data).
    ``select``/``ignore`` take rule codes or prefixes; ``evidence`` tool-output files; ``config`` a
    project config file (else the one found from the rig's folder, as the CLI finds it)."""
    from rigcheck.commands.check import report_builder
    from rigcheck.commands.reporting import ReportRequest, build_pipeline
    from rigcheck.core.spec.specs_index import resolve_spec_argument

    with _paths(rig, workload) as (rig_path, workload_path):
        assert rig_path is not None
        arguments = [rig_path, *([workload_path] if workload_path else [])]
        arguments += [f"--select={','.join(select)}"] if select else []
        arguments += [f"--ignore={','.join(ignore)}"] if ignore else []
        arguments += [f"--fail-on={fail_on}"] if fail_on else []
        arguments += [f"--config={os.fspath(config)}"] if config else []
        for path in evidence:
            arguments += ["-e", os.fspath(path)]
        args = _args("check", arguments)
        rig_file = resolve_spec_argument(args.rig, "Rig")
        workload_file = resolve_spec_argument(args.workload, "Workload") if args.workload else None
        pipeline = build_pipeline(ReportRequest.from_args(args, [rig_file]))
        return report_builder(rig_file, workload_file, args.evidence)(pipeline)


def estimate(workload: Spec, rig: Spec | None = None) -> dict[str, Any]:
    """``rigcheck estimate WORKLOAD [--rig RIG] -f json`` as its data: the model, the memory component
    by component, and with a rig the fit (MEM001's verdict), the largest micro-batch and the speed."""
    from rigcheck.commands._shared import load_registry, load_specs
    from rigcheck.commands.estimate import load_workload
    from rigcheck.core.engine.context import CheckContext
    from rigcheck.core.engine.engine import build_catalog
    from rigcheck.core.report import estimate_report
    from rigcheck.core.spec.specs_index import resolve_spec_argument

    with _paths(workload, rig) as (workload_path, rig_path):
        assert workload_path is not None
        workload_file = resolve_spec_argument(workload_path, "Workload")
        rig_file = resolve_spec_argument(rig_path, "Rig") if rig_path else None
        if rig_file:
            rig_doc, workload_doc = load_specs(rig_file, workload_file)
            ctx = CheckContext(rig_doc, workload_doc, build_catalog(load_registry([])))
            return estimate_report.build(workload_doc, ctx)
        return estimate_report.build(load_workload(workload_file), None)


def plan(
    workload: Spec,
    *,
    mode: str = "both",
    budget: float | None = None,
    deadline: float | None = None,
    gpus: Sequence[str] | None = None,
    max_gpus: int = 64,
    rigs: Sequence[Spec] = (),
    currency: str = "USD",
    electricity: float | str | None = None,
    references: bool = True,
) -> dict[str, Any]:
    """``rigcheck plan WORKLOAD -f json`` as its data: the ranked rows, the answer, the prices used.
    ``mode`` is rent, buy or both; ``gpus`` catalog names; ``rigs`` more rigs to check (paths, shipped
    names or mappings); ``electricity`` a price per kWh or a rate's name (``industrial``, ``CN:residential``)."""
    from rigcheck.commands.plan import plan_report

    if mode not in ("rent", "buy", "both"):
        from rigcheck.core.engine.errors import UsageError

        raise UsageError(f"mode {mode!r}: rent, buy or both")
    with _paths(workload, *rigs) as (workload_path, *rig_paths):
        assert workload_path is not None
        arguments = [workload_path, f"--{mode}", f"--max-gpus={max_gpus}", f"--currency={currency}"]
        arguments += [f"--budget={budget}"] if budget is not None else []
        arguments += [f"--deadline={deadline}"] if deadline is not None else []
        arguments += [f"--gpus={','.join(gpus)}"] if gpus else []
        arguments += [f"--electricity={electricity}"] if electricity is not None else []
        arguments += [] if references else ["--no-references"]
        for path in rig_paths:
            arguments += ["--rig", str(path)]
        data: dict[str, Any] = plan_report(_args("plan", arguments)).model_dump(mode="json")
        return data

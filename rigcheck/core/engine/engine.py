"""Running checkers with fault isolation, and turning their findings into one report.

Each checker runs under a time limit. One that raises, hangs, tries to end the process, or yields
something that is not a finding of its own rules is reported as an ``ENGINE`` fail finding (with
its plugin's name and version) and the other checkers still run (docs/design.md section 5). Third-party
checkers run on a watchdog thread, or in child processes with ``--isolate-plugins``
(:mod:`rigcheck.core.engine.sandbox`); what they print is captured.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import GeneratorType
from typing import Any, TypeVar

from rigcheck.core.catalog.catalog import Catalog, load_catalog_file
from rigcheck.core.engine.context import CheckContext
from rigcheck.core.engine.engine_rules import (
    CHECKER_CRASHED,
    CHECKER_INVALID_RESULT,
    CHECKER_TIMED_OUT,
    PLUGIN_FAILED_TO_LOAD,
    RUN_TIMED_OUT,
)
from rigcheck.core.engine.findings import Finding, Severity
from rigcheck.core.engine.registry import CheckerEntry, PluginFault, Registry
from rigcheck.core.engine.rules import CURRENT_CHECKER, Rule, matches, structural
from rigcheck.core.engine.sandbox import (
    PluginExit,
    WatchdogTimeout,
    call_in_child,
    call_watched,
    can_isolate,
    guarded_stdout,
)
from rigcheck.core.report.report import (
    CheckerRun,
    Report,
    build_report,
)
from rigcheck.core.spec.documents import SpecDocument

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 10.0
#: Why a ``physical_build`` checker did not run on a rig of cloud instances.
CLOUD_ONLY = "cloud instances: the provider owns power, cooling and the chassis"

#: How a ``gpu_vendor`` is named in the reason a checker did not apply.
VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD (ROCm)", "intel": "Intel", "apple": "Apple"}


@dataclass(frozen=True)
class RunOptions:
    """What the user chose: rule selection (ruff-style selectors) and the exit threshold."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.FAIL
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: Thresholds from a project config: ``{"power.sustained.warn_above_fraction": (0.85, origin)}``.
    fact_overrides: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    #: Run third-party checkers in child processes (``--isolate-plugins``; rigcheck.core.engine.sandbox).
    isolate_plugins: bool = False
    #: Plugin name -> its validated config (``rigcheck_config_schema``) from the project config; plugins
    #: left out get their model's defaults (``Registry.config_schemas``).
    plugin_configs: Mapping[str, Any] = field(default_factory=dict)
    #: ``--timeout``: when the whole run must end, on time.monotonic()'s clock (None: no limit). No
    #: checker starts after it (ENGINE005) and none runs past it (its own limit is cut to what is left).
    deadline: float | None = None

    def selected(self, code: str) -> bool:
        """Whether the rule's checker runs and its warnings and failures are reported: what ``chosen``
        says, and always for a structural rule (a broken spec or a crashed checker is not a pass)."""
        return structural(code) or self.chosen(code)

    def chosen(self, code: str) -> bool:
        """Whether ``select`` and ``ignore`` pick the rule (ruff's reading): its passes and skips are
        listed only then."""
        if self.select and not matches(code, self.select):
            return False
        return not matches(code, self.ignore)


class CheckerTimeout(BaseException):
    """Raised inside a checker that ran past its limit (a BaseException, so ``except Exception`` in
    plugin code does not swallow it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CheckerTimeout()


class _Deadlines:
    """One interval timer for a run's built-in checkers. Each checker sets its own deadline; the timer
    is set only when that deadline comes before the alarm already set (two system calls per checker
    were 1-3% of a lint). An alarm raises :class:`CheckerTimeout` only in a checker past its deadline;
    in one that started later it is set again for that checker's deadline, and between checkers it
    does nothing. So each checker is cut at its own limit, as with a timer set around each."""

    def __init__(self) -> None:
        self.deadline: float | None = None  # the running checker's, on time.monotonic()
        self.alarm_at: float | None = None  # when the timer set goes off

    def start(self, seconds: float) -> None:
        now = time.monotonic()
        self.deadline = now + seconds
        if self.alarm_at is None or self.deadline < self.alarm_at:
            signal.setitimer(signal.ITIMER_REAL, seconds)
            self.alarm_at = self.deadline

    def stop(self) -> None:
        self.deadline = None

    def on_alarm(self, signum: int, frame: Any) -> None:
        self.alarm_at = None
        deadline = self.deadline
        if deadline is None:  # between checkers, or in one without a limit
            return
        left = deadline - time.monotonic()
        if left <= 0:
            self.deadline = None
            raise CheckerTimeout()
        signal.setitimer(signal.ITIMER_REAL, left)
        self.alarm_at = deadline


@contextlib.contextmanager
def _alarm_handler() -> Iterator[_Deadlines | None]:
    """Install the SIGALRM handler once for a whole run, and the timer its built-in checkers share
    (None where there can be none: off the main thread, or no ``setitimer``)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield None
        return
    deadlines = _Deadlines()
    previous = signal.signal(signal.SIGALRM, deadlines.on_alarm)
    try:
        yield deadlines
    finally:
        if deadlines.alarm_at is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_with_timeout(function: Callable[[], T], seconds: float | None) -> T:
    """Run ``function()``; raise :class:`CheckerTimeout` if it takes longer than ``seconds``.

    On the main thread of a POSIX process an interval timer interrupts the checker, which costs
    microseconds; elsewhere the checker runs in a daemon thread that is abandoned on timeout.
    """
    if not seconds or seconds <= 0:
        return function()
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        installed = signal.getsignal(signal.SIGALRM) is _on_alarm
        previous = None if installed else signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return function()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if not installed:
                signal.signal(signal.SIGALRM, previous)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # handed back to the caller below
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="rigcheck-checker", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise CheckerTimeout()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def build_catalog(registry: Registry) -> Catalog:
    """The built-in catalog plus plugin entries; a bad plugin entry becomes a plugin fault that names the
    entry and every field that failed (the plugin's other entries and its checkers are still used)."""
    from rigcheck.resources import hardware_file

    catalog = Catalog()
    load_catalog_file(str(hardware_file("gpus.yaml")), catalog)
    for entry, plugin, override in registry.catalog_entries:
        try:
            catalog.add(entry, origin=f"plugin {plugin.name}", override=override)
        except Exception as exc:
            registry.faults.append(
                PluginFault(
                    plugin.name,
                    plugin.version,
                    "rigcheck_catalog",
                    catalog_entry_problem(entry, exc),
                    "that entry was not added (its other entries and its checkers are used)",
                )
            )
    return catalog


#: Fields of a refused catalog entry named in its fault; the rest are counted.
MAX_ENTRY_ERRORS = 12


def catalog_entry_problem(entry: Any, exc: Exception) -> str:
    """``catalog entry 'acme-x1' is not a valid GpuSpec: vendor: Input should be ...; as_of: Field
    required`` (every field that failed), or the refusal's own message."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):  # refused as a whole: the message names the entry
        return " ".join(f"{exc}".split()) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
    gpu_id = entry.get("id") if isinstance(entry, Mapping) else getattr(entry, "id", None)
    which = f"catalog entry {_short(gpu_id)}" if gpu_id is not None else "a catalog entry without an id"
    errors = exc.errors(include_url=False)
    parts = []
    for error in errors[:MAX_ENTRY_ERRORS]:
        field_name = ".".join(str(step) for step in error["loc"]) or "(entry)"
        got = "" if error["type"] == "missing" else f" (got {_short(error.get('input'))})"
        parts.append(f"{field_name}: {error['msg']}{got}")
    more = f"; and {len(errors) - MAX_ENTRY_ERRORS} more" if len(errors) > MAX_ENTRY_ERRORS else ""
    return (
        f"{which} is not a valid GpuSpec ({len(errors)} problem{'s' if len(errors) != 1 else ''}): "
        f"{'; '.join(parts)}{more} (the fields of an entry: docs/plugins.md, Catalog entries)"
    )


def run_checks(
    rig_doc: SpecDocument,
    workload_doc: SpecDocument | None,
    registry: Registry,
    catalog: Catalog,
    options: RunOptions | None = None,
    *,
    load_ms: float = 0.0,
    evidence: Sequence[Any] = (),
) -> Report:
    """Check one rig (and optionally one workload, and measured evidence) with every registered checker."""
    options = options or RunOptions()
    started = time.perf_counter()
    ctx, findings, statuses = check_all(rig_doc, workload_doc, registry, catalog, options, evidence=evidence)
    check_ms = (time.perf_counter() - started) * 1000
    runs = [status.record() for status in statuses]
    return _report(ctx, registry, findings, runs, options, load_ms, check_ms)


#: A :class:`CheckerStatus` as a tuple: name, plugin, status, findings, duration_ms, reason.
StatusSlots = tuple[str, str, str, int, float, "str | None"]


class CheckerStatus:
    """How one checker ended in one run: :class:`rigcheck.core.report.report.CheckerRun` without the model
    (``rigcheck lint`` adds up thousands of them; :meth:`record` makes the report's)."""

    __slots__ = ("duration_ms", "findings", "name", "plugin", "reason", "status")

    def __init__(
        self, name: str, plugin: str, status: str, findings: int, duration_ms: float, reason: str | None
    ) -> None:
        self.name = name
        self.plugin = plugin
        self.status = status
        self.findings = findings
        self.duration_ms = duration_ms
        self.reason = reason

    def slots(self) -> StatusSlots:
        """The status as a plain tuple, in the order the constructor takes."""
        return (self.name, self.plugin, self.status, self.findings, self.duration_ms, self.reason)

    def record(self) -> CheckerRun:
        return CheckerRun(
            name=self.name,
            plugin=self.plugin,
            status=self.status,  # type: ignore[arg-type]  # one of CheckerRun's, set below
            findings=self.findings,
            duration_ms=self.duration_ms,
            reason=self.reason,
        )


def check_all(
    rig_doc: SpecDocument,
    workload_doc: SpecDocument | None,
    registry: Registry,
    catalog: Catalog,
    options: RunOptions,
    *,
    evidence: Sequence[Any] = (),
) -> tuple[CheckContext, list[Finding], list[CheckerStatus]]:
    """Every registered checker on one rig (and workload, and evidence): the context, the findings
    (plugin faults first) and each checker's status, without a report (:func:`run_checks` makes one)."""
    configs = {name: schema.default for name, schema in registry.config_schemas.items()}
    configs.update(options.plugin_configs)
    ctx = CheckContext(
        rig_doc,
        workload_doc,
        catalog,
        options.fact_overrides,
        evidence=evidence,
        plugin_configs=configs,
        selection=options.selected,
    )
    findings: list[Finding] = [_fault_finding(fault, ctx) for fault in registry.faults]
    statuses: list[CheckerStatus] = []
    third_party = any(not entry.plugin.builtin for entry in registry.checkers)
    with _alarm_handler() as armed, guarded_stdout() if third_party else contextlib.nullcontext() as guard:
        hosted: list[bool] = []  # whether every node is a cloud instance, worked out when first asked
        for index, entry in enumerate(registry.checkers):
            if options.deadline is not None and time.monotonic() >= options.deadline:
                findings.extend(_not_run(registry.checkers[index:], ctx, options, statuses))
                break
            status, produced = _run_one(entry, ctx, options, armed, hosted)
            printed = guard.take() if guard is not None and not entry.plugin.builtin else ""
            if printed:
                note = f"printed {len(printed):,} characters to standard output (captured, not shown)"
                status.reason = f"{status.reason}; {note}" if status.reason else note
            statuses.append(status)
            findings.extend(produced)
    return ctx, findings, statuses


#: (checker, select, ignore) -> (the checker, its rule codes, those selected, those chosen), by id.
_SELECTED: dict[
    tuple[int, tuple[str, ...], tuple[str, ...]],
    tuple[Any, frozenset[str], frozenset[str], frozenset[str]],
] = {}


def _codes(checker: Any, options: RunOptions) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The checker's rule codes, those ``options`` select and those it chooses
    (:meth:`RunOptions.chosen`), worked out once per checker and selection."""
    key = (id(checker), options.select, options.ignore)
    known = _SELECTED.get(key)
    if known is not None and known[0] is checker:
        return known[1], known[2], known[3]
    codes = frozenset(rule.code for rule in checker.rules)
    selected = frozenset(code for code in codes if options.selected(code))
    chosen = frozenset(code for code in codes if options.chosen(code))
    if len(_SELECTED) > 4096:
        _SELECTED.clear()
    _SELECTED[key] = (checker, codes, selected, chosen)
    return codes, selected, chosen


def _skip_reason(
    checker: Any, ctx: CheckContext, options: RunOptions, selected: frozenset[str], hosted: list[bool]
) -> tuple[str, str] | None:
    """Why the checker does not run on this context (its status and reason), or None: it runs."""
    if not selected:
        return "deselected", "none of its rules is selected"
    if getattr(checker, "needs_workload", False) and ctx.workload_doc is None:
        return "skipped", "needs a workload; only a rig was given"
    if getattr(checker, "physical_build", False):
        if not hosted:
            hosted.append(bool(ctx.nodes) and all(node.hosted for node in ctx.nodes))
        if hosted[0]:
            return "skipped", CLOUD_ONLY
    vendor = getattr(checker, "gpu_vendor", None)
    if vendor is not None and not any(gpu.facts.vendor == vendor for node in ctx.nodes for gpu in node.gpus):
        return "skipped", f"not applicable: the rig has no {VENDOR_NAMES.get(vendor, vendor)} GPU"
    if getattr(checker, "needs_evidence", False) and not ctx.evidence:
        return "skipped", "needs evidence (--evidence FILE: nvidia-smi, nccl-tests, fio, probe...)"
    return None


def _collect(checker: Any, plugin: str, ctx: CheckContext) -> list[Any]:
    """What ``checker.check(ctx)`` yields, as a list (or the one problem with what it returned); the
    findings it makes are born stamped with its name and plugin."""
    token = CURRENT_CHECKER.set((checker.name, plugin))
    try:
        result = checker.check(ctx)
        if type(result) is GeneratorType or type(result) is list:  # what checkers return: no questions
            return list(result)
        problem = _not_findings(result)
        return [problem] if problem is not None else list(result)
    finally:
        CURRENT_CHECKER.reset(token)


def _run_one(
    entry: CheckerEntry,
    ctx: CheckContext,
    options: RunOptions,
    armed: _Deadlines | None = None,
    hosted: list[bool] | None = None,
) -> tuple[CheckerStatus, list[Finding]]:
    """One checker on one context: its status and the findings it produced (a fault finding when it
    crashed, hung, tried to end the run or yielded what is not a finding of its own rules)."""
    checker, plugin = entry.checker, entry.plugin
    codes, selected, chosen = _codes(checker, options)
    skipped = _skip_reason(checker, ctx, options, selected, hosted if hosted is not None else [])
    if skipped is not None:
        return CheckerStatus(checker.name, plugin.name, skipped[0], 0, 0.0, skipped[1]), []
    timeout = getattr(checker, "timeout_s", None) or options.timeout_s
    if options.deadline is not None:  # never past the run's --timeout
        left = max(options.deadline - time.monotonic(), 0.001)
        timeout = min(timeout, left) if timeout and timeout > 0 else left
    started = time.perf_counter()
    untrusted = not plugin.builtin
    try:
        # a built-in checker on the main thread: its deadline on the run's timer (the handler is in place)
        if not untrusted and armed is not None and timeout and timeout > 0:
            armed.start(timeout)
            try:
                items = _collect(checker, plugin.name, ctx)
            finally:
                armed.stop()
        elif untrusted and options.isolate_plugins and can_isolate():
            items = _from_child(
                call_in_child(lambda: _to_child(_collect(checker, plugin.name, ctx), codes), timeout)
            )
        elif untrusted:
            items = call_watched(lambda: _collect(checker, plugin.name, ctx), timeout)
        elif armed is not None:  # a built-in checker without a limit
            items = _collect(checker, plugin.name, ctx)
        else:
            items = call_with_timeout(lambda: _collect(checker, plugin.name, ctx), timeout)
    except (CheckerTimeout, WatchdogTimeout):
        produced = [
            _fault(
                entry,
                codes,
                ctx,
                CHECKER_TIMED_OUT,
                f"did not finish within {timeout:g} s; its rules were not checked",
                f"report the hang to the authors of {plugin.name}, or turn it off with -p no:{plugin.name}",
                timeout_s=timeout,
            )
        ]
        return _status(entry, "timed-out", f"timed out after {timeout:g} s", produced, started), produced
    except (SystemExit, KeyboardInterrupt, GeneratorExit, PluginExit) as exc:  # obeyed by no one
        what = exc if isinstance(exc, PluginExit) else f"raised {type(exc).__name__}({exc})"
        reason = f"tried to end the run: {what}"
        produced = [
            _fault(
                entry,
                codes,
                ctx,
                CHECKER_CRASHED,
                f"{reason}; rigcheck carried on and its rules were not checked",
                f"report it to the authors of {plugin.name}, or turn it off with -p no:{plugin.name}",
                exception=type(exc).__name__,
                detail=str(exc)[:500],
            )
        ]
        return _status(entry, "crashed", reason, produced, started), produced
    except Exception as exc:  # a checker's bug must not take the run down
        _debug_traceback(exc)
        reason = f"{type(exc).__name__}: {exc}"
        produced = [
            _fault(
                entry,
                codes,
                ctx,
                CHECKER_CRASHED,
                f"raised {reason}; its rules were not checked",
                f"report the error to the authors of {plugin.name} (RIGCHECK_DEBUG=1 shows where it "
                f"failed), or turn it off with -p no:{plugin.name}",
                exception=type(exc).__name__,
                detail=str(exc)[:500],
            )
        ]
        return _status(entry, "crashed", reason, produced, started), produced

    produced = []
    invalid: list[str] = []
    name, plugin_name = checker.name, plugin.name
    for item in items:
        if (  # a structural rule's passes and skips only where chosen: its warnings and failures always
            type(item) is Finding
            and item.code in selected
            and item.code not in chosen
            and item.severity not in (Severity.WARN, Severity.FAIL)
        ):
            continue
        if type(item) is Finding and item.code in selected and not untrusted:  # the common case
            produced.append(
                item
                if item.checker == name and item.plugin == plugin_name
                else _stamp(item, name, plugin_name)
            )
        elif isinstance(item, _Problem):  # described where it was found (in a child, when isolated)
            invalid.append(str(item))
        elif not isinstance(item, Finding):
            invalid.append(f"yielded {type(item).__name__} {_short(item)!r}, not a rigcheck.Finding")
        elif item.code not in codes:
            invalid.append(f"yielded a finding of rule {item.code}, which it does not declare")
        elif item.code in selected:
            if untrusted and not _serialisable(item):
                invalid.append(f"yielded a {item.code} finding whose evidence is not JSON data")
                item = item.with_changes(evidence={"unserialisable_evidence": _short(item.evidence)})
            produced.append(_stamp(item, name, plugin_name))
    if not invalid:
        return _status(entry, "ran", None, produced, started), produced
    more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
    produced.append(
        _fault(
            entry,
            codes,
            ctx,
            CHECKER_INVALID_RESULT,
            f"{invalid[0]}{more}; {'its rules were not checked' if not produced else 'the rest was kept'}",
            "yield the findings from check() (or return a list of them), built with the checker's own rules: "
            "RULE.failed(message, location=..., evidence=...)",
            problems=invalid[:10],
        )
    )
    return _status(entry, "invalid-result", invalid[0], produced, started), produced


def _status(
    entry: CheckerEntry, name: str, reason: str | None, produced: list[Finding], started: float
) -> CheckerStatus:
    elapsed_ms = (time.perf_counter() - started) * 1000
    return CheckerStatus(
        entry.checker.name, entry.plugin.name, name, len(produced), round(elapsed_ms, 3), reason
    )


def _fault(
    entry: CheckerEntry,
    codes: frozenset[str],
    ctx: CheckContext,
    rule: Rule,
    message: str,
    fix: str,
    **details: Any,
) -> Finding:
    """The ENGINE finding for a checker that failed, naming it and its plugin."""
    checker, plugin = entry.checker, entry.plugin
    evidence = {
        "checker": checker.name,
        "plugin": plugin.name,
        "plugin_version": plugin.version,
        "rules": sorted(codes),
        **details,
    }
    finding = rule.failed(
        f"checker {checker.name} (plugin {plugin.name} {plugin.version}) {message}",
        location=ctx.rig_at(""),
        subject=ctx.subject,
        evidence=evidence,
        fix=fix,
    )
    return _stamp(finding, checker.name, plugin.name)


class _Problem(str):
    """What is wrong with a checker's result, described where it was found (in its child process when
    isolated). A plain ``str`` that a checker yields is not one: it is reported as a str yielded."""


def _not_findings(result: Any) -> _Problem | None:
    """Why what ``check()`` returned is not an iterable of findings (``None`` when it is one)."""
    if result is None:
        return _Problem(
            "returned None from check() instead of findings (a check() without `yield` returns None)"
        )
    if isinstance(result, Finding):
        return _Problem("returned one Finding from check() instead of an iterable of findings")
    not_iterable = isinstance(result, str | bytes | Mapping)
    if not not_iterable:
        try:
            iter(result)
        except TypeError:
            not_iterable = True
    if not_iterable:
        return _Problem(
            f"returned {type(result).__name__} {_short(result)} from check(), not an iterable of findings"
        )
    return None


def _short(value: Any) -> str:
    try:
        return repr(value)[:80]
    except Exception:  # a hostile __repr__
        return f"<{type(value).__name__}>"


def _serialisable(finding: Finding) -> bool:
    try:
        json.dumps(finding.evidence, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _to_child(items: list[Any], codes: frozenset[str]) -> list[Any]:
    """In the child: findings as JSON data, anything else as the description of the problem."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, _Problem):
            out.append(str(item))
        elif isinstance(item, Finding) and item.code in codes and _serialisable(item):
            out.append(item.model_dump(mode="json"))
        elif isinstance(item, Finding) and item.code in codes:
            out.append(f"yielded a {item.code} finding whose evidence is not JSON data")
        elif isinstance(item, Finding):
            out.append(f"yielded a finding of rule {item.code}, which it does not declare")
        else:
            out.append(f"yielded {type(item).__name__} {_short(item)!r}, not a rigcheck.Finding")
    return out


def _from_child(data: Any) -> list[Any]:
    if not isinstance(data, list):
        return [f"its process returned {type(data).__name__}, not a list of findings"]
    return [_Problem(item) if isinstance(item, str) else Finding.model_validate(item) for item in data]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _stamp(finding: Finding, checker: str, plugin: str) -> Finding:
    if finding.checker == checker and finding.plugin == plugin:
        return finding
    return finding.with_changes(checker=checker, plugin=plugin)


def _not_run(
    entries: Sequence[CheckerEntry], ctx: CheckContext, options: RunOptions, statuses: list[CheckerStatus]
) -> list[Finding]:
    """The run's ``--timeout`` passed before ``entries`` ran on ``ctx``: each gets a status that says
    so, and the run one ENGINE005 finding naming those whose rules are selected (none: no finding)."""
    names = []
    for entry in entries:
        _, selected, _ = _codes(entry.checker, options)
        status, reason = (
            ("timed-out", "the run's --timeout was reached before it ran")
            if selected
            else ("deselected", "none of its rules is selected")
        )
        statuses.append(CheckerStatus(entry.checker.name, entry.plugin.name, status, 0, 0.0, reason))
        if selected:
            names.append(entry.checker.name)
    if not names:
        return []
    finding = RUN_TIMED_OUT.failed(
        f"not checked: the run reached its --timeout before {len(names)} checker(s) ran on {ctx.subject}; "
        "their rules were not checked",
        location=ctx.rig_at(""),
        subject=ctx.subject,
        evidence={"checkers_not_run": names},
        fix="raise --timeout, or split the lint into smaller steps",
    )
    return [_stamp(finding, "engine", "rigcheck")]


def _fault_finding(fault: PluginFault, ctx: CheckContext) -> Finding:
    effect = fault.effect or "what it registered in that step was not added"
    finding = PLUGIN_FAILED_TO_LOAD.failed(
        f"plugin {fault.plugin} {fault.version} failed in {fault.stage}: {fault.message}; {effect}",
        location=ctx.rig_at(""),
        subject=ctx.subject,
        evidence={
            "plugin": fault.plugin,
            "plugin_version": fault.version,
            "stage": fault.stage,
            "detail": fault.message,
            "effect": effect,
        },
        fix=f"fix or upgrade the plugin, or block it with -p no:{fault.plugin}",
    )
    return _stamp(finding, "engine", fault.plugin)


def _debug_traceback(exc: BaseException) -> None:
    import os

    if os.environ.get("RIGCHECK_DEBUG"):
        import sys
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)


def _report(
    ctx: CheckContext,
    registry: Registry,
    findings: list[Finding],
    runs: list[CheckerRun],
    options: RunOptions,
    load_ms: float,
    check_ms: float,
) -> Report:
    return build_report(
        ctx.subject,
        findings,
        options.fail_on,
        documents=ctx.documents,
        checkers=runs,
        plugins=registry.plugins,
        load_ms=load_ms,
        check_ms=check_ms,
    )

"""What several commands do alike: load the plugins, pick a renderer, colour and render options, load
a rig and a workload, write the result. The core is imported inside each function, when a command
runs, never when the command line is parsed."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    from rigcheck.core.engine.config import Settings
    from rigcheck.core.engine.registry import Registry
    from rigcheck.core.report.render import RenderOptions
    from rigcheck.core.spec.documents import SpecDocument


def load_registry(
    plugins: Sequence[str] = (), *, isolate: bool | None = None, config: Settings | None = None
) -> Registry:
    """Plugins: built-ins, entry points, the project config's ``plugins:`` and ``-p`` (``plugins``);
    ``isolate`` is ``--isolate-plugins`` (None: RIGCHECK_ISOLATE_PLUGINS decides)."""
    from rigcheck.core.engine.plugin_manager import PluginHost

    blocked = [item[3:] for item in plugins if item.startswith("no:")]
    modules = [item for item in plugins if not item.startswith("no:")]
    config_modules = list(config["plugins"]) if config is not None else []
    config_root = str(config.base) if config is not None and config.path else None
    from rigcheck.core.engine.sandbox import isolation_requested

    return PluginHost(
        extra_modules=modules,
        blocked=blocked,
        config_modules=config_modules,
        config_root=config_root,
        isolate=isolation_requested(isolate),
    ).load()


def renderer(registry: Registry, name: str) -> Any:
    """The render function of the format ``name``; a usage error with a suggestion for an unknown one."""
    from rigcheck.core.engine.errors import UsageError
    from rigcheck.core.spec.fields import did_you_mean

    entry = registry.formats.get(name)
    if entry is None:
        raise UsageError(
            f"unknown format {name!r}{did_you_mean(name, registry.formats)}; "
            f"formats: {', '.join(sorted(registry.formats))}"
        )
    return entry.load()


def rule_codes(values: Sequence[str]) -> tuple[str, ...]:
    """``--select PLT,spec001 --select MEM`` as ("PLT", "SPEC001", "MEM")."""
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def use_color(color: str, *, to_file: bool) -> bool:
    """``--color`` (auto, always, never) for a report written to a file or to standard output."""
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR") or to_file:
        return False
    return sys.stdout.isatty()


def render_options(
    registry: Registry | None,
    *,
    color: str,
    verbose: bool,
    to_file: bool,
    show_passes: bool = False,
    quiet: bool = False,
) -> RenderOptions:
    """The renderers' options for one output: colour, Unicode where the output takes it, the rules of
    ``registry`` and the root that file paths are made relative to."""
    from rigcheck.core.report.render import RenderOptions

    encoding = (getattr(sys.stdout, "encoding", None) or "").lower()
    unicode = to_file or encoding.replace("-", "") in ("utf8", "utf16", "utf32")
    rules = {code: entry.rule for code, entry in registry.rules.items()} if registry is not None else {}
    return RenderOptions(
        color=use_color(color, to_file=to_file),
        verbose=verbose,
        show_passes=show_passes or verbose,
        quiet=quiet,
        unicode=unicode,
        rules=rules,
        root=report_root(),
    )


def report_root() -> str:
    """The nearest folder at or above the working directory with a .git entry, else the working directory:
    SARIF and annotation paths are relative to the repository."""
    here = os.path.abspath(os.getcwd())
    folder = here
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


@overload
def load_specs(rig_path: str, workload_path: str) -> tuple[SpecDocument, SpecDocument]: ...


@overload
def load_specs(rig_path: str, workload_path: str | None) -> tuple[SpecDocument, SpecDocument | None]: ...


@overload
def load_specs(
    rig_path: str | None, workload_path: str | None
) -> tuple[SpecDocument | None, SpecDocument | None]: ...


def load_specs(
    rig_path: str | None, workload_path: str | None
) -> tuple[SpecDocument | None, SpecDocument | None]:
    """Load the rig and the workload (either may be None: then so is its document); report the problems
    of both files before giving up."""
    from rigcheck.core.engine.errors import SpecError
    from rigcheck.core.spec.documents import load_spec

    loaded: list[SpecDocument | None] = []
    problems = []
    for path, kind in ((rig_path, "Rig"), (workload_path, "Workload")):
        if path is None:
            loaded.append(None)
            continue
        try:
            loaded.append(load_spec(path, kind=kind))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return loaded[0], loaded[1]


def emit(text: str | Iterable[str | bytes | memoryview], output: str | None) -> None:
    """Write ``text`` (a string, or its parts in order) to the file ``output``, replaced whole once
    written (:func:`rigcheck.core.spec.boundary.replacing`), or to standard output when it is None or
    empty. A part may be UTF-8 bytes (the JSON writer's chunks: see
    :func:`rigcheck.core.report.render.json._listed`); they are written as they are where the stream is UTF-8
    and translates no newline, else decoded and written as text."""
    parts = [text] if isinstance(text, str) else text
    if output:
        from rigcheck.core.engine.errors import UsageError
        from rigcheck.core.report.render.escape import escape_text
        from rigcheck.core.spec.boundary import BoundaryError, replacing

        try:
            with replacing(output) as handle:  # beside the file, renamed over it; never through a link
                _write_parts(handle, parts)
        except BoundaryError as exc:
            raise UsageError(f"cannot write {escape_text(output)}: {exc.reason}") from None
        except OSError as exc:  # a full disk, /dev/full, a folder removed meanwhile
            raise UsageError(f"cannot write {escape_text(output)}: {exc.strerror or exc}") from None
    else:
        _write_parts(sys.stdout, parts)
        sys.stdout.flush()


def _write_parts(handle: Any, parts: Iterable[str | bytes | memoryview]) -> None:
    raw = getattr(handle, "buffer", None) if os.linesep == "\n" and _is_utf8(handle) else None
    for part in parts:
        if isinstance(part, str):
            handle.write(part)
        elif raw is not None:
            handle.flush()  # what the text layer holds goes first
            raw.write(part)
        else:
            handle.write(bytes(part).decode("utf-8"))


def _is_utf8(handle: Any) -> bool:
    """Whether ``handle`` encodes text as UTF-8 (so UTF-8 bytes may go to its buffer as they are)."""
    import codecs

    try:
        return codecs.lookup(handle.encoding).name == "utf-8"
    except (AttributeError, LookupError, TypeError):  # no encoding (StringIO), or one Python does not know
        return False

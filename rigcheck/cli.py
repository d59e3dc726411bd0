"""The ``rigcheck`` command line: parse, run the command (one module each in rigcheck/commands/), exit.

Exit codes (as ruff and ESLint use them): 0 when no finding reaches ``--fail-on``, 1 when one
does, 2 for bad input, a bad command line, a broken plugin or an internal error. Errors are one
line each (``file:line:col: error: ...``); ``RIGCHECK_DEBUG=1`` adds the traceback.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from typing import Any

from rigcheck.exit_codes import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK

__all__ = ["EXIT_ERROR", "EXIT_FINDINGS", "EXIT_OK", "console", "entry", "main"]


def console() -> None:
    """The console script and ``python -m rigcheck``: the command moves to a child process that a small
    parent watches (:mod:`rigcheck.supervisor`: a plugin that ends the process early cannot end the run
    green), then :func:`entry` runs it."""
    from rigcheck import supervisor

    supervisor.supervise()
    entry()


def entry() -> None:
    """What :func:`console` runs: :func:`main`, then :func:`fast_exit` with its code.

    Pydantic's own plugins are off in this process unless ``PYDANTIC_DISABLE_PLUGINS`` is set already
    (https://docs.pydantic.dev/latest/concepts/plugins/): they observe an application's validation, and
    rigcheck's validation is of the specs it reads, which no such plugin should be handed."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    fast_exit(main())


def fast_exit(code: int) -> None:
    """End the process with ``code`` after flushing standard output and error, skipping the interpreter's
    teardown (freeing every module and object: about 60-80 ms of a cold ``check``, docs/performance.md) with
    ``os._exit`` when nothing is waiting for it: no ``atexit`` handler (coverage, logging, a plugin's), no
    thread that the interpreter would join, and ``RIGCHECK_NO_FAST_EXIT`` unset. Otherwise ``sys.exit``."""
    import threading

    from rigcheck.supervisor import finished

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a closed pipe or stream: let the normal exit say so
        finished(code)
        sys.exit(code)
    finished(code)  # the report is out: the watching parent exits with this code
    foreground = [
        thread
        for thread in threading.enumerate()
        if thread is not threading.main_thread() and not thread.daemon
    ]
    if os.environ.get("RIGCHECK_NO_FAST_EXIT") or foreground or _atexit_handlers():
        sys.exit(code)
    os._exit(code)


def _atexit_handlers() -> int:
    import atexit

    count = getattr(atexit, "_ncallbacks", None)
    return int(count()) if callable(count) else 1  # unknown: assume someone is waiting


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and ``python -m rigcheck``."""
    # A short-lived command that allocates many small objects and few cycles: collecting the youngest
    # generation every 700 allocations (Python's default) costs a third of a large run
    # (docs/performance.md). Collections still happen, 300 times less often.
    gc.set_threshold(200_000, 50, 100)
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse after --help (0) or a usage error (2), its text printed already
        return stop.code if isinstance(stop.code, int) else EXIT_ERROR
    if args.command is None and not args.version:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if args.command is None:
        from rigcheck.commands import version

        args.handler, args.plugins = version.run, []
    token = stdin = None
    try:
        token = _confine(args)
        stdin = _take_stdin(args)
        if getattr(args, "allow_network", False):  # a model's config may be fetched from the hub
            from rigcheck.core.estimate.hf_cache import allowing_network

            with allowing_network(True):
                return int(args.handler(args))
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("rigcheck: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # rigcheck.core.engine.errors is imported only when something failed: --version does not load it
        from rigcheck.core.engine.errors import RigcheckError
        from rigcheck.core.report.render.escape import (
            escape_stderr,  # spec text: no control or workflow command
        )
        from rigcheck.core.spec.boundary import BoundaryError

        if isinstance(exc, RigcheckError):
            lines = [problem.format() for problem in getattr(exc, "problems", ())] or [str(exc)]
            print("\n".join(escape_stderr(line) for line in lines), file=sys.stderr)
            return EXIT_ERROR
        if isinstance(exc, BoundaryError):  # a file the boundary will not read or write (docs/security.md)
            print(escape_stderr(f"rigcheck: {exc.path}: {exc.reason}"), file=sys.stderr)
            return EXIT_ERROR
        if isinstance(exc, BrokenPipeError):
            return EXIT_ERROR
        if os.environ.get("RIGCHECK_DEBUG"):  # never a traceback unless asked for
            raise

        print(
            escape_stderr(
                f"rigcheck: internal error: {type(exc).__name__}: {exc} (RIGCHECK_DEBUG=1 shows the traceback; "
                f"please report it)"
            ),
            file=sys.stderr,
        )
        return EXIT_ERROR
    finally:
        if stdin is not None:
            from rigcheck.core.spec.boundary import drop_stdin

            drop_stdin(stdin)
        if token is not None:
            from rigcheck.core.spec.boundary import reset_root

            reset_root(token)


# -- the parser -------------------------------------------------------------------------------------


#: The commands, in the order ``rigcheck --help`` lists them; each is the module ``rigcheck/commands/NAME.py``.
COMMANDS = (
    "check",
    "lint",
    "estimate",
    "plan",
    "models",
    "validate",
    "schema",
    "rules",
    "explain",
    "gpus",
    "plugins",
    "probe",
    "evidence",
    "merge",
    "measure",
    "completion",
    "version",
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser; each command module adds its own sub-parser (rigcheck/commands/).

    Given a command line that starts with a command's name, only that command's sub-parser is built: a
    cold ``rigcheck check`` imports one command module and sets up its options, not sixteen (about 8 ms;
    docs/performance.md). Otherwise (no command, an option first, a misspelt name) every one is, for the
    help and for the error that lists them."""
    import importlib

    named = argv[0] if argv else None
    commands = (named,) if named in COMMANDS else COMMANDS
    parser = argparse.ArgumentParser(
        prog="rigcheck",
        description="Validate GPU rigs and ML workloads before you buy, build or change them.",
        epilog="Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and the loaded plugins")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    for name in commands:
        importlib.import_module(f"rigcheck.commands.{name}").add_parser(subparsers)
    return parser


#: The arguments that may name a spec file, and so may be ``-`` (standard input).
_SPEC_ARGUMENTS = ("paths", "files", "rig", "workload")


def _take_stdin(args: argparse.Namespace) -> Any:
    """A spec given as ``-``: standard input is read once (capped as a spec file is) and stands for the
    file ``--stdin-filename`` names (else ``<stdin>``), and the ``-`` is replaced by that name; the token
    to drop it with, or None when no argument is ``-``."""
    named = [key for key in _SPEC_ARGUMENTS for value in _listed(getattr(args, key, None)) if value == "-"]
    if not named:
        return None
    from rigcheck.core.engine.errors import UsageError

    if len(named) > 1:
        raise UsageError("standard input (-) can stand for one spec only")
    from rigcheck.core.spec.boundary import STDIN_NAME, BoundaryError, take_stdin
    from rigcheck.core.spec.loader import max_file_bytes

    name = getattr(args, "stdin_filename", None)
    try:
        token = take_stdin(name, max_file_bytes())
    except BoundaryError as exc:
        raise UsageError(exc.reason) from None
    shown = name or STDIN_NAME
    for key in _SPEC_ARGUMENTS:
        value = getattr(args, key, None)
        if isinstance(value, list):
            setattr(args, key, [shown if item == "-" else item for item in value])
        elif value == "-":
            setattr(args, key, shown)
    return token


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _confine(args: argparse.Namespace) -> Any:
    """Set the checked root for the commands that read what a repository names (``confined``, set by
    check, lint, validate, estimate, evidence and probe; docs/security.md); the token to reset it
    with, or None."""
    if not getattr(args, "confined", False):
        return None
    from rigcheck.core.spec.boundary import repository_root, set_root

    if getattr(args, "root", None):
        return set_root(args.root)
    config = getattr(args, "config", None)
    paths = (
        getattr(args, "paths", None)
        or getattr(args, "files", None)
        or getattr(args, "from_files", None)
        or [name for name in (getattr(args, "rig", None), getattr(args, "workload", None)) if name]
    )
    start = config or (paths[0] if paths else os.getcwd())
    return set_root(repository_root(start if os.path.exists(start) else os.getcwd()))

"""The ``rigcheck`` command runs in a child process that a small parent watches, so that no plugin can end
a run green without its report (docs/security.md).

A plugin is code in rigcheck's process: ``os._exit(0)`` at import, in a hook or in an evidence parser
ends that process at once, with exit code 0 and no report, and no ``try`` can stop it. So the console
entry forks before it imports anything else: the child runs the command and, once its report is written
and flushed, tells the parent its exit code through a pipe. A child that ends without saying so did not
finish; the parent then says why in one line and exits 2, whatever the child's own code. A child that
said it finished but does not end (a thread a checker left running) is ended after
:data:`LINGER_S` seconds, and the parent exits with the code the child said. With ``--timeout`` the
child tells the parent when it must end (:func:`end_at`); one still running :data:`GRACE_S` seconds
past its limit (a plugin blocked at import, which the run's own deadline cannot stop) is ended, and
the parent exits 2 (each output already says the run did not finish).

Where ``fork`` is missing (Windows) the command runs in the one process, as before.
``RIGCHECK_NO_SUPERVISOR=1`` turns the parent off (a debugger, a profiler).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

#: How long a child that said it finished may take to end (a thread left running) before it is ended.
LINGER_S = 5.0
#: How long past its ``--timeout`` a run may take to write its report before the parent ends it.
GRACE_S = 10.0

_DONE = b"rigcheck-done "
_END_AT = b"rigcheck-end-at "
_write_end: int | None = None  # in the child: where it says it finished


def supervise() -> None:
    """Fork: return in the child, which runs the command; in the parent, wait for it and exit."""
    global _write_end
    if os.environ.get("RIGCHECK_NO_SUPERVISOR") or not hasattr(os, "fork"):
        return
    import gc

    gc.freeze()  # what is loaded so far stays out of the collector's walks: fewer pages copied after fork
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare: run here, unwatched
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:
        os.close(read_end)
        _write_end = write_end
        return
    os.close(write_end)
    os._exit(_watch(pid, read_end))


def finished(code: int) -> None:
    """In the child, once the report is written and flushed: tell the parent the run finished."""
    global _write_end
    if _write_end is None:
        return
    with contextlib.suppress(OSError):  # the parent is gone: nobody to tell
        os.write(_write_end, _DONE + str(code).encode() + b"\n")
        os.close(_write_end)
    _write_end = None


def end_at(when: float) -> None:
    """In the child: the parent is to end it at ``when`` (on time.monotonic()'s clock, which a forked
    process shares) if it has not said it finished by then."""
    if _write_end is not None:
        with contextlib.suppress(OSError):
            os.write(_write_end, _END_AT + repr(float(when)).encode() + b"\n")


def _watch(pid: int, read_end: int) -> int:
    """The parent: the child's exit code if it said it finished, else 2 with a line that says why."""
    import select
    import time

    # Ctrl-C reaches the child from the terminal; a TERM sent to the parent is passed on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda signum, frame: _kill(pid, signal.SIGTERM))
    pending, code, deadline = b"", None, None
    # the child's lines until it says it finished, or the end of the pipe: a process it forked (a lint
    # worker left hanging) may hold the pipe open after the child said it finished
    while code is None:
        wait: float | None = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if not select.select([read_end], [], [], wait)[0]:
            _kill(pid, signal.SIGKILL)
            _reap(pid, None)
            _say(
                "was still running past its --timeout (and the time given to write its report) and was ended"
            )
            return 2
        chunk = _read(read_end)
        if not chunk:
            break
        pending = (pending + chunk)[-256:]  # a line is short: what a child writes beyond is dropped
        while b"\n" in pending:
            line, _, pending = pending.partition(b"\n")
            if line.startswith(_DONE) and line[len(_DONE) :].isdigit():
                code = int(line[len(_DONE) :])
            elif line.startswith(_END_AT):
                with contextlib.suppress(ValueError):
                    deadline = float(line[len(_END_AT) :])
    os.close(read_end)
    if code is not None:
        _reap(pid, LINGER_S)
        return code
    status = _reap(pid, None)
    ended = f"was killed by signal {-status}" if status < 0 else f"exited with code {status}"
    _say(f"{ended} before it finished its report (a plugin may have ended the process: os._exit, a signal)")
    return 2


def _say(what: str) -> None:
    sys.stderr.write(f"rigcheck: the run {what}; nothing it wrote can be trusted, exit 2\n")
    sys.stderr.flush()


def _read(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, 64)
        except InterruptedError:
            continue


def _kill(pid: int, signum: int) -> None:
    with contextlib.suppress(OSError):  # it ended already
        os.kill(pid, signum)


def _reap(pid: int, timeout: float | None) -> int:
    """Wait for the child (ending it after ``timeout`` seconds, when given); its exit code, or minus
    the signal that ended it."""
    import time

    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.0005  # a child that said it finished ends at once: look again soon, then less often
    while True:
        try:
            done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() >= deadline:
            _kill(pid, signal.SIGKILL)
            deadline = None
            continue
        time.sleep(pause)
        pause = min(pause * 2, 0.05)

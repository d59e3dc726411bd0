"""Running third-party checker code so that what it does cannot take rigcheck down.

In-process (the default), a third-party checker runs on a watchdog thread: a checker that
swallows the timeout is abandoned, not waited for; whatever it prints goes to a buffer, not into
the report on standard output; ``SystemExit`` and ``KeyboardInterrupt`` are faults. What no thread
can stop is ``os._exit``, or a plugin that rewrites rigcheck's memory: ``--isolate-plugins`` (or
``RIGCHECK_ISOLATE_PLUGINS=1``) runs each third-party checker in a forked child process instead,
which hands back its findings as JSON; a child that exits, hangs or dies is reported as an ``ENGINE``
finding and nothing it changed reaches the parent. rigcheck's own checkers always run in-process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Output a plugin may leave in the capture buffer before the rest is dropped.
MAX_CAPTURED = 64 * 1024


class WatchdogTimeout(BaseException):
    """The watched call ran past its limit (raised in the caller; injected into the worker)."""


class PluginExit(Exception):
    """The plugin tried to end the process (``sys.exit``, ``os._exit`` in a child, a signal)."""


class _GuardedStream(io.TextIOBase):
    """Standard output for a run: the main thread writes through, every other thread (plugin code
    on the watchdog) into a bounded buffer."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.main = threading.main_thread()
        self.captured = io.StringIO()

    def write(self, text: str) -> int:
        if threading.current_thread() is self.main:
            return self.target.write(text)
        if self.captured.tell() < MAX_CAPTURED:
            self.captured.write(text[: MAX_CAPTURED - self.captured.tell()])
        return len(text)

    def flush(self) -> None:
        if threading.current_thread() is self.main:
            self.target.flush()

    def take(self) -> str:
        text = self.captured.getvalue()
        self.captured = io.StringIO()
        return text

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno...
        return getattr(self.target, name)


class Watchdog:
    """One worker thread that runs calls with a time limit; a call that overruns is abandoned with
    its thread (told to stop with an asynchronous exception), and the next call gets a new one."""

    def __init__(self) -> None:
        self._worker: threading.Thread | None = None
        self._tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.abandoned = 0

    def _start(self) -> None:
        self._tasks = queue.SimpleQueue()
        tasks = self._tasks

        def loop() -> None:
            while True:
                function, done, box = tasks.get()
                try:
                    box["value"] = function()
                except BaseException as exc:  # handed back to the caller
                    box["error"] = exc
                done.set()

        self._worker = threading.Thread(target=loop, name="rigcheck-plugin-watchdog", daemon=True)
        self._worker.start()

    def call(self, function: Callable[[], T], seconds: float) -> T:
        if self._worker is None or not self._worker.is_alive():
            self._start()
        done = threading.Event()
        box: dict[str, Any] = {}  # "value" or "error", filled by the worker
        self._tasks.put((function, done, box))
        if not done.wait(seconds):
            worker, self._worker = self._worker, None
            self.abandoned += 1
            if worker is not None and worker.ident is not None:
                import ctypes  # only for a plugin that hung

                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(worker.ident), ctypes.py_object(WatchdogTimeout)
                )
            raise WatchdogTimeout()
        if "error" in box:
            raise box["error"]
        return box["value"]


_WATCHDOG = Watchdog()


@contextlib.contextmanager
def guarded_stdout() -> Iterator[_GuardedStream]:
    """Standard output guarded for the length of a run (left guarded if a plugin thread was
    abandoned, since it may still write)."""
    if isinstance(sys.stdout, _GuardedStream):
        yield sys.stdout
        return
    guard = _GuardedStream(sys.stdout)
    before = _WATCHDOG.abandoned
    sys.stdout = guard
    try:
        yield guard
    finally:
        if _WATCHDOG.abandoned == before and sys.stdout is guard:
            sys.stdout = guard.target


def call_watched(function: Callable[[], T], seconds: float) -> T:
    """Run third-party ``function`` on the watchdog thread; :class:`WatchdogTimeout` past ``seconds``."""
    return _WATCHDOG.call(function, seconds)


def safe_to_fork() -> bool:
    """Whether this process may fork now: no thread runs but this one and the idle watchdog (a thread
    that runs while the process forks may hold a lock the child then waits on forever)."""
    current = threading.current_thread()
    watchdog = _WATCHDOG._worker
    others = [thread for thread in threading.enumerate() if thread is not current and thread is not watchdog]
    return not others and _WATCHDOG.abandoned == 0


def isolation_requested(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return os.environ.get("RIGCHECK_ISOLATE_PLUGINS", "").strip().lower() in ("1", "true", "yes", "on")


def can_isolate() -> bool:
    return hasattr(os, "fork")


def call_in_child(function: Callable[[], Any], seconds: float) -> Any:
    """Run ``function`` in a forked child and return its JSON-able result.

    :class:`WatchdogTimeout` when it overruns (the child is killed), :class:`PluginExit` when the
    child ends without a result (``os._exit``, ``sys.exit``, a signal), the child's exception
    otherwise (as ``RuntimeError`` with its type and message)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's stack
        os.close(read_end)
        status = 0
        try:
            # what the plugin writes, by Python or straight to file descriptors 1 and 2 (os.write), goes
            # nowhere: it must not reach the report or the CI log as a forged annotation
            sys.stdout = io.StringIO()
            sys.stderr = io.StringIO()
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, 1)
            os.dup2(nowhere, 2)
            os.close(nowhere)
            try:
                payload = {"value": function()}
            except BaseException as exc:  # SystemExit included: reported, not obeyed
                payload = {"error": type(exc).__name__, "message": str(exc)[:500]}
            data = json.dumps(payload, allow_nan=False, default=str).encode("utf-8")
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
        except BaseException:
            status = 3
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise WatchdogTimeout()
            ready, _, _ = select.select([read_end], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status):
            raise PluginExit(f"its process was killed by signal {os.WTERMSIG(status)}")
        raise PluginExit(
            f"its process exited with status {os.WEXITSTATUS(status)} before returning (os._exit?)"
        )
    payload = json.loads(b"".join(chunks))
    if "error" in payload:
        if payload["error"] in ("SystemExit", "KeyboardInterrupt"):
            raise PluginExit(f"it raised {payload['error']}: {payload['message']}")
        raise RuntimeError(f"{payload['error']}: {payload['message']}")
    return payload["value"]

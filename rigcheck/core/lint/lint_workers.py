"""``rigcheck lint --jobs N``: the runs checked in forked worker processes, their outcomes taken back
in run order.

Workers are forked, so they inherit the loaded plugins, catalog, settings and specs; nothing is
imported or loaded again. The runs go out in contiguous slices; what a worker sends back is plain
tuples (the findings as rows, each checker status's slots), half the cost of pickling models, plus
whatever state the caller asks it to report (which suppressions it used). A slice whose worker died
or whose outcome would not pickle gives None for its runs, and the caller checks those itself.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Generator, Iterable
from typing import Any

from rigcheck.core.engine.engine import StatusSlots

#: Workers are started only for at least this many runs each: starting two (importing multiprocessing,
#: forking, taking the findings back) costs about 85 ms, which on this project's 2-CPU machine a lint
#: wins back from about 250 runs (docs/performance.md: 100 runs took 6% longer with two workers, 400 runs
#: 9% less).
RUNS_PER_WORKER = 128

#: The most runs sent to a worker at once, and the most slices out at once per worker: what waits
#: in this process for its turn stays bounded, whatever the number of files.
SLICE_RUNS = 64
SLICES_AHEAD = 2

#: One run checked: its rows, its checker statuses (as tuples), and the problems of a spec it found
#: broken (or None).
Outcome = tuple[list[Any], list[StatusSlots], Any]

#: What forked workers inherit: how to check run N, and how to read the state they send back (set only
#: while they run).
_INHERITED: tuple[Callable[[int], Outcome], Callable[[], Any]] | None = None

#: A slice's outcomes (plain tuples), and the worker's state.
_Packed = tuple[list[Outcome], Any]


def worker_count(jobs: int, runs: int, *, isolate_plugins: bool = False) -> int:
    """How many worker processes ``rigcheck lint --jobs JOBS`` uses for ``runs`` runs; 0: none, every
    run is checked in this process (the ``--jobs 1`` path).

    At most ``jobs``, at most the CPUs this process may use (:func:`rigcheck.core.lint.cpus.usable_cpus`: more
    workers than CPUs only wait for each other), and one per :data:`RUNS_PER_WORKER` runs; none where that
    leaves fewer than two. Workers are forked, so they inherit the loaded plugins, catalog and settings
    (nothing is imported again); so there are none where ``fork`` is not a start method (Windows) or not
    a safe one (macOS, where ``spawn`` is the default and would import everything again), none from a
    process that runs other threads (forking one can deadlock; rigcheck's idle plugin watchdog is fine),
    and none with ``--isolate-plugins`` (which forks per checker already)."""
    if jobs <= 1 or isolate_plugins or runs < 2 * RUNS_PER_WORKER:
        return 0
    from rigcheck.core.lint.cpus import usable_cpus

    workers = min(jobs, usable_cpus(), runs // RUNS_PER_WORKER)
    if workers <= 1:
        return 0
    import multiprocessing  # here: ``rigcheck check`` and small lints never need it

    if sys.platform in ("win32", "darwin") or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    from rigcheck.core.engine.sandbox import safe_to_fork

    return workers if safe_to_fork() else 0


def _check_slice(start: int, stop: int) -> _Packed:
    """In a worker: the outcomes of runs start..stop-1 (the inherited check), and the worker's state."""
    assert _INHERITED is not None
    check, state = _INHERITED
    return [check(index) for index in range(start, stop)], state()


def _unpack(packed: _Packed, add_state: Callable[[Any], None]) -> list[Outcome]:
    outcomes, state = packed
    add_state(state)
    return outcomes


def outcomes(
    runs: int,
    check: Callable[[int], Outcome],
    *,
    jobs: int,
    isolate_plugins: bool = False,
    first: Iterable[int] = (),
    state: Callable[[], Any] = lambda: None,
    add_state: Callable[[Any], None] = lambda _: None,
) -> Generator[Outcome | None, None, None]:
    """For each of ``runs`` runs in order, its outcome when a worker process checked it
    (:func:`worker_count` says whether there are any), else None: the caller checks it.

    The runs in ``first`` are checked here before any worker starts (what they import and cache is
    then inherited). The others go out in slices of at most :data:`SLICE_RUNS`, in order, at most
    :data:`SLICES_AHEAD` per worker at a time; each worker also sends back ``state()``, which is
    given to ``add_state`` here. A slice whose worker died or whose outcome could not be sent back
    gives None for its runs (a checker that raises is an ENGINE finding inside the worker, as here)."""
    workers = worker_count(jobs, runs, isolate_plugins=isolate_plugins)
    if not workers:
        for _ in range(runs):
            yield None
        return
    import multiprocessing
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor

    global _INHERITED
    done = {index: check(index) for index in first}
    rest = [index for index in range(runs) if index not in done]
    size = min(SLICE_RUNS, max(1, -(-len(rest) // (workers * 8))))
    slices: list[tuple[int, int]] = []
    for index in rest:  # contiguous ranges of the runs left, at most size long
        if slices and slices[-1][1] == index and index - slices[-1][0] < size:
            slices[-1] = (slices[-1][0], index + 1)
        else:
            slices.append((index, index + 1))
    _INHERITED = (check, state)
    for stream in (sys.stdout, sys.stderr):  # a child flushes what it inherited: nothing must be waiting
        stream.flush()
    pool: ProcessPoolExecutor | None = None
    out: deque[tuple[tuple[int, int], Future[_Packed]]] = deque()
    queued = 0
    pending: dict[int, Outcome] = {}
    try:
        try:
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        except OSError:  # no processes to be had: every run is checked here
            pool = None
        for index in range(runs):
            if index in done:
                yield done.pop(index)
                continue
            while pool is not None and (queued < len(slices) and len(out) < workers * SLICES_AHEAD):
                try:
                    out.append((slices[queued], pool.submit(_check_slice, *slices[queued])))
                except Exception:  # a broken pool: what is left is checked here
                    pool = None
                    break
                queued += 1
            while index not in pending and out and out[0][0][0] <= index:
                (start, _), future = out.popleft()
                with contextlib.suppress(Exception):  # a dead worker, an outcome that would not pickle
                    pending.update(enumerate(_unpack(future.result(), add_state), start))
            yield pending.pop(index, None)
    finally:
        _INHERITED = None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

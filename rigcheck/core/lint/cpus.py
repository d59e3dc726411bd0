"""How many CPUs this process may use: the default of ``rigcheck lint --jobs`` and the most worker
processes it starts.

``os.cpu_count()`` counts the machine's CPUs, not this process's: a CI job in a container limited to 2
CPUs on a 64-CPU host sees 64, and 64 workers on 2 CPUs only wait for each other (on this project's
2-CPU machine, 16 workers made a 400-file lint 26% slower than one process; docs/performance.md). The
count here is the affinity mask (``os.sched_getaffinity``, what ``taskset`` and cpusets set), at most
the CPU quota of the process's cgroup, rounded up (``cpu.max`` in cgroup v2, ``cpu.cfs_quota_us`` over
``cpu.cfs_period_us`` in v1: what ``docker run --cpus`` and Kubernetes CPU limits set;
https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files). Files that cannot be read
leave the count as it was.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

#: Where the cgroup file systems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus(root: Path = CGROUP_ROOT, read: Callable[[Path], str] | None = None) -> int:
    """The CPUs this process may use, at least 1 (see the module's docstring)."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        count = os.cpu_count() or 1
    quota = cgroup_quota(root, read or _read)
    if quota is not None:
        count = min(count, quota)
    return max(1, count)


def cgroup_quota(root: Path, read: Callable[[Path], str]) -> int | None:
    """The process's cgroup CPU quota in whole CPUs (rounded up), or None when there is none or it
    cannot be read."""
    try:
        memberships = read(Path("/proc/self/cgroup")).splitlines()
    except OSError:
        return None
    for line in memberships:  # "0::/path" (v2), "4:cpu,cpuacct:/path" (v1)
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        relative = path.strip().lstrip("/")
        if controllers == "":
            found = _v2_quota([root / relative / "cpu.max", root / "cpu.max"], read)
        elif "cpu" in controllers.split(","):
            folders = [root / name / relative for name in ("cpu", "cpu,cpuacct")] + [root / "cpu"]
            found = _v1_quota(folders, read)
        else:
            continue
        if found is not None:
            return found
    return None


def _v2_quota(files: list[Path], read: Callable[[Path], str]) -> int | None:
    for file in files:
        try:
            quota, _, period = read(file).strip().partition(" ")
        except OSError:
            continue
        if quota == "max":
            return None
        return _whole(quota, period)
    return None


def _v1_quota(folders: list[Path], read: Callable[[Path], str]) -> int | None:
    for folder in folders:
        try:
            quota, period = read(folder / "cpu.cfs_quota_us"), read(folder / "cpu.cfs_period_us")
        except OSError:
            continue
        return _whole(quota.strip(), period.strip())
    return None


def _whole(quota: str, period: str) -> int | None:
    """``quota`` microseconds per ``period`` as whole CPUs, rounded up; None for no limit (-1) or text
    that is not a pair of numbers."""
    try:
        microseconds, every = int(quota), int(period or "100000")
    except ValueError:
        return None
    if microseconds <= 0 or every <= 0:
        return None
    return max(1, math.ceil(microseconds / every))


def _read(path: Path) -> str:
    return path.read_text(encoding="ascii", errors="replace")

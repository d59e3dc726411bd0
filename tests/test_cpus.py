"""Issue 20: ``rigcheck lint`` uses the CPUs it has, which in a container is its cgroup's CPU limit, not
the host's count (``os.cpu_count()``). Cases from the kernel's cgroup v2 documentation (``cpu.max``:
"$MAX $PERIOD", "max" for none) and cgroup v1's CFS files (``cpu.cfs_quota_us`` -1 for none)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rigcheck.core.lint.cpus import cgroup_quota, usable_cpus

ROOT = Path("/cg")


def reader(files: dict[str, str]):  # type: ignore[no-untyped-def]
    def read(path: Path) -> str:
        try:
            return files[str(path)]
        except KeyError:
            raise FileNotFoundError(path) from None

    return read


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [
        ("200000 100000\n", 2),  # docker run --cpus 2
        ("150000 100000\n", 2),  # 1.5 CPUs: rounded up
        ("50000 100000\n", 1),
        ("400000 50000\n", 8),  # another period
        ("max 100000\n", None),  # no limit
        ("garbage\n", None),
    ],
)
def test_a_v2_quota_is_its_whole_cpus_rounded_up(cpu_max: str, expected: int | None) -> None:
    files = {"/proc/self/cgroup": "0::/\n", "/cg/cpu.max": cpu_max}
    assert cgroup_quota(ROOT, reader(files)) == expected


def test_the_v2_file_is_the_process_cgroups_own() -> None:
    files = {
        "/proc/self/cgroup": "0::/kubepods/pod1/c1\n",
        "/cg/kubepods/pod1/c1/cpu.max": "300000 100000",
        "/cg/cpu.max": "max 100000",
    }
    assert cgroup_quota(ROOT, reader(files)) == 3


@pytest.mark.parametrize(
    ("quota", "expected"), [("-1", None), ("100000", 1), ("250000", 3), ("0", None), ("x", None)]
)
def test_a_v1_quota_over_its_period(quota: str, expected: int | None) -> None:
    files = {
        "/proc/self/cgroup": "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n",
        "/cg/cpu/docker/abc/cpu.cfs_quota_us": quota + "\n",
        "/cg/cpu/docker/abc/cpu.cfs_period_us": "100000\n",
    }
    assert cgroup_quota(ROOT, reader(files)) == expected


def test_a_v1_quota_inside_the_container_is_read_at_the_controllers_root() -> None:
    """Inside a container the cgroup path is the host's, but the mount shows the container's own."""
    files = {
        "/proc/self/cgroup": "4:cpu,cpuacct:/docker/abc\n",
        "/cg/cpu/cpu.cfs_quota_us": "200000",
        "/cg/cpu/cpu.cfs_period_us": "100000",
    }
    assert cgroup_quota(ROOT, reader(files)) == 2


def test_nothing_readable_is_no_quota() -> None:
    assert cgroup_quota(ROOT, reader({})) is None
    assert cgroup_quota(ROOT, reader({"/proc/self/cgroup": "0::/\n"})) is None


def test_usable_cpus_is_the_affinity_at_most_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    limited = {"/proc/self/cgroup": "0::/\n", "/cg/cpu.max": "200000 100000"}
    assert usable_cpus(ROOT, reader(limited)) == 2
    assert usable_cpus(ROOT, reader({})) == 16
    generous = {"/proc/self/cgroup": "0::/\n", "/cg/cpu.max": "6400000 100000"}
    assert usable_cpus(ROOT, reader(generous)) == 16  # a quota above the CPUs it may run on


def test_usable_cpus_on_this_machine_is_a_positive_count() -> None:
    count = usable_cpus()
    assert 1 <= count <= (os.cpu_count() or 1)

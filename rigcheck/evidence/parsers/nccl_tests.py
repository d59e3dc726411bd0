"""nccl-tests (``all_reduce_perf``, ``all_gather_perf``...) standard output.

Header lines start with ``#``; the table rows are the lines that start with a size in bytes.
Everything else (``NCCL INFO`` lines, Open MPI notices, ``NCCL version``) is noise. ``mpirun
--tag-output`` prefixes every line with ``[1,0]<stdout>:``, which is removed first. Two layouts:
the current one (``size count type redop root | time algbw busbw #wrong`` twice) and the legacy
one (no ``root``; ``error`` instead of ``#wrong``). Ranks are counted from the ``# Rank`` lines.

Checks on the numbers: ``algbw`` must be ``size / time`` (within 2%, or rounding for tiny values),
and ``busbw / algbw`` must match the collective (2(n-1)/n for all_reduce, (n-1)/n for all_gather,
reduce_scatter and alltoall, 1 for broadcast/reduce/sendrecv). A table whose ratio is (n-1)/n or
whose redop is ``none`` is not an all_reduce table, whatever the file is called.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rigcheck.evidence.model import Evidence, NcclResult, NcclRow

_TAG = re.compile(r"^\[\d+,\d+\]<(?:stdout|stderr)>:")
_RANK = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$"
)
_DATA = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]\w*\s+[A-Za-z]\w*\s")
_FLOAT = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_FACTORS = {
    "all_gather": "(n-1)/n",
    "reduce_scatter": "(n-1)/n",
    "alltoall": "(n-1)/n",
    "broadcast": "1",
    "reduce": "1",
    "sendrecv": "1",
}
_REDOPS = {"sum", "prod", "max", "min", "avg", "premulsum", "mulsum"}


def _float(token: str) -> float | None:
    return float(token) if _FLOAT.match(token) else None


def _int_or_none(token: str) -> int | None:
    return int(token) if token.lstrip("-").isdigit() else None


def _version(code: str) -> str:
    """nccl-library=21903 -> 2.19.3 (NCCL_VERSION_CODE = major*10000 + minor*100 + patch)."""
    number = int(code)
    if number >= 10000:
        return f"{number // 10000}.{number % 10000 // 100}.{number % 100}"
    return f"{number // 1000}.{number % 1000 // 100}.{number % 100}"


def _factor_name(ratio: float, ranks: int, tolerance: float = 0.02) -> tuple[str, Fraction] | None:
    """Which busbw factor ``ratio`` is, for ``ranks`` ranks (within ``tolerance``, relative)."""
    candidates = [
        ("2(n-1)/n", Fraction(2 * (ranks - 1), ranks)),
        ("(n-1)/n", Fraction(ranks - 1, ranks)),
        ("1", Fraction(1)),
    ]
    for name, value in candidates:
        if abs(ratio - float(value)) <= tolerance * float(value):
            return name, value
    return None


class NcclTestsParser:
    name = "nccl-tests"

    def detect(self, text: str) -> bool:
        return ("nThread" in text and "minBytes" in text) or bool(
            re.search(r"#\s+size\s+count\s+type\s+redop", text) or "# Avg bus bandwidth" in text
        )

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        anomalies: list[str] = []
        result = NcclResult()
        claimed: str | None = None
        has_root: bool | None = None
        hosts: list[str] = []
        rank_lines = 0
        driver_cuda = None
        for raw in text.splitlines():
            line = _TAG.sub("", raw).rstrip()
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                if match := re.search(r"nccl-tests version (\S+)", stripped):
                    result.tests_version = match.group(1)
                if match := re.search(r"nccl-library=(\d+)", stripped):
                    result.nccl_version = result.nccl_version or _version(match.group(1))
                if match := re.search(r"Collective test starting:\s*(\w+?)(?:_perf)?\s*$", stripped):
                    claimed = match.group(1)
                if match := re.search(r"\bnGpus\s+(\d+)", stripped):
                    result.gpus_per_process = int(match.group(1))
                if match := _RANK.match(stripped):
                    rank_lines += 1
                    host = match.group(3)
                    if host not in hosts:
                        hosts.append(host)
                    result.devices.append(match.group(6))
                if re.search(r"#\s+size\s+count\s+type\s+redop", stripped):
                    has_root = " root " in f" {stripped} "
                if match := re.search(r"Out of bounds values\s*:\s*(\d+)", stripped):
                    result.out_of_bounds = int(match.group(1))
                if match := re.search(r"Avg bus bandwidth\s*:\s*([\d.eE+-]+)", stripped):
                    result.avg_busbw_gbps = float(match.group(1))
                continue
            if match := re.search(r"NCCL version (\d+\.\d+\.\d+)(?:\+cuda([\d.]+))?", stripped):
                result.nccl_version = match.group(1)
                driver_cuda = match.group(2)
                continue
            if match := re.search(
                r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv"
                r"|scatter|gather|hypercube)_perf\b",
                stripped,
            ):
                claimed = claimed or match.group(1)
            if not _DATA.match(line):
                continue
            row = self._row(line.split(), has_root)
            if row is None:
                problems.append(f"cannot read the table row {stripped[:80]!r}")
                continue
            result.rows.append(row)

        result.ranks = rank_lines or None
        result.hosts = hosts
        if rank_lines == 0:
            problems.append("no '# Rank' lines (the '# Using devices' block is missing)")
        if not result.rows:
            problems.append("no table rows after the header")
        if result.avg_busbw_gbps is None:
            problems.append("no '# Avg bus bandwidth' footer (cut off?)")
        if result.rows:
            largest = max(row.size_bytes for row in result.rows)
            at_largest = [row for row in result.rows if row.size_bytes == largest]
            busbws = [
                v for row in at_largest for v in (row.busbw_gbps, row.in_place_busbw_gbps) if v is not None
            ]
            result.largest_size_bytes = largest
            result.busbw_at_largest_gbps = max(busbws) if busbws else None
        self._check(result, claimed, anomalies)
        result.anomalies = anomalies
        return Evidence(
            source=path,
            tool=self.name,
            tool_version=result.tests_version,
            host=hosts[0] if len(hosts) == 1 else None,
            gpu_count=result.ranks,
            nccl=[result],
            problems=problems,
            extra={"nccl_cuda": driver_cuda} if driver_cuda else {},
        )

    @staticmethod
    def _row(tokens: list[str], has_root: bool | None) -> NcclRow | None:
        if has_root is None:
            has_root = len(tokens) in (9, 13)
        lead = 5 if has_root else 4
        if len(tokens) < lead + 4:
            return None
        size = _int_or_none(tokens[0])
        if size is None:
            return None
        out = tokens[lead : lead + 4]
        inplace = tokens[lead + 4 : lead + 8]
        return NcclRow(
            size_bytes=size,
            count=_int_or_none(tokens[1]),
            dtype=tokens[2],
            redop=tokens[3],
            time_us=_float(out[0]),
            algbw_gbps=_float(out[1]),
            busbw_gbps=_float(out[2]),
            wrong=_int_or_none(out[3]),
            in_place_busbw_gbps=_float(inplace[2]) if len(inplace) >= 3 else None,
        )

    @staticmethod
    def _check(result: NcclResult, claimed: str | None, anomalies: list[str]) -> None:
        rows = result.rows
        for row in rows:
            if row.size_bytes and row.time_us and row.algbw_gbps is not None:
                expected = row.size_bytes / (row.time_us * 1e-6) / 1e9
                if abs(expected - row.algbw_gbps) > max(0.02 * expected, 0.006):
                    anomalies.append(
                        f"size {row.size_bytes}: algbw {row.algbw_gbps} GB/s but size/time = {expected:.2f} GB/s"
                    )
        redops = {row.redop for row in rows if row.redop}
        ranks = result.ranks
        ratio = None
        tolerance = 0.02
        usable = [row for row in rows if row.algbw_gbps and row.busbw_gbps]
        if usable:
            # The fastest row has the most significant digits; the table rounds to 0.01 GB/s.
            best = max(usable, key=lambda row: row.algbw_gbps or 0.0)
            algbw, busbw = best.algbw_gbps or 1.0, best.busbw_gbps or 0.0
            ratio = busbw / algbw
            tolerance += 0.005 / algbw + 0.005 / busbw
        factor = _factor_name(ratio, ranks, tolerance) if ratio is not None and ranks and ranks > 1 else None
        inferred: str | None = None
        if factor is not None:
            if factor[0] == "2(n-1)/n" and redops & _REDOPS:
                inferred = "all_reduce"
            elif factor[0] == "(n-1)/n" and redops & _REDOPS:
                inferred = "reduce_scatter"
            elif factor[0] == "(n-1)/n":
                inferred = None  # all_gather or alltoall: the table alone cannot tell
        result.operation = claimed or inferred
        gather_signature = factor is not None and factor[0] == "(n-1)/n"
        if claimed == "all_reduce" or (claimed is None and gather_signature):
            reasons = []
            if "none" in redops:
                reasons.append("redop is `none`")
            if gather_signature and factor is not None:
                reasons.append(f"busbw/algbw = {factor[1].numerator}/{factor[1].denominator} = (n-1)/n")
            if reasons and not (claimed is None and inferred == "reduce_scatter"):
                subject = (
                    "the file says all_reduce but " if claimed else "the file does not name its collective; "
                )
                signature = " (the all_gather/alltoall signature)" if gather_signature else ""
                anomalies.append(
                    f"{subject}{' and '.join(reasons)}: this is not an all_reduce table{signature}"
                )
        if claimed and claimed != "all_reduce" and factor is not None and ranks:
            expected_factor = _FACTORS.get(claimed)
            values = {"(n-1)/n": Fraction(ranks - 1, ranks), "1": Fraction(1)}
            if expected_factor and values[expected_factor] != factor[1]:
                anomalies.append(
                    f"busbw/algbw = {factor[0]} does not match {claimed}, whose factor is {expected_factor}"
                )
        if ratio is not None and factor is None and ranks and ranks > 1:
            anomalies.append(
                f"busbw/algbw = {ratio:.3f} matches none of 2(n-1)/n, (n-1)/n or 1 for n = {ranks} ranks"
            )


PARSER = NcclTestsParser()

"""fio ``--output-format=json`` (also ``json,normal``, where the JSON sits between text).

Per job and direction: ``iops``, ``bw`` in KiB/s and, from fio 3.x, ``bw_bytes`` in B/s (used when
present). What was measured comes from the job's options, else the global options. fio 2.x writes
latencies in µs (``clat``), 3.x in ns (``clat_ns``). ``global options`` can hold the same key twice
(``filename``); the JSON is read with a hook that keeps the last value, as ``json.load`` does,
and reports the duplicate.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rigcheck.evidence.model import Evidence, StorageJob


def _to_int(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _direction(section: Any) -> tuple[float | None, float | None]:
    """(iops, bytes/s) for one direction; (None, None) when it did no I/O."""
    if not isinstance(section, dict):
        return None, None
    iops = section.get("iops")
    bw_bytes = section.get("bw_bytes")
    bw_kib = section.get("bw")
    io = section.get("io_bytes", section.get("io_kbytes"))
    if isinstance(bw_bytes, (int, float)):
        rate = float(bw_bytes)
    elif isinstance(bw_kib, (int, float)):
        rate = float(bw_kib) * 1024
    else:
        rate = None
    iops_value = float(iops) if isinstance(iops, (int, float)) else None
    if not iops_value and not rate and not io:
        return None, None
    return iops_value, rate


def _p99_us(section: Any) -> float | None:
    if not isinstance(section, dict):
        return None
    for key, scale in (("clat_ns", 1e-3), ("clat", 1.0), ("lat_ns", 1e-3)):
        latency = section.get(key)
        if isinstance(latency, dict) and isinstance(latency.get("percentile"), dict):
            value = latency["percentile"].get("99.000000")
            if isinstance(value, (int, float)) and value:
                return round(value * scale, 3)
    return None


def _find_json(text: str) -> int:
    """Where the fio JSON object starts: the ``{`` before ``"fio version"``, else the first ``{``."""
    marker = text.find('"fio version"')
    if marker >= 0:
        start = text.rfind("{", 0, marker)
        if start >= 0:
            return start
    match = re.search(r"(?m)^\s*\{", text)
    return match.start() if match else -1


class FioParser:
    name = "fio"

    def detect(self, text: str) -> bool:
        return '"fio version"' in text or ('"jobs"' in text and '"jobname"' in text)

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        duplicates: list[str] = []

        def keep_last(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            result: dict[str, Any] = {}
            for key, value in pairs:
                if key in result and key not in duplicates:
                    duplicates.append(key)
                result[key] = value
            return result

        start = _find_json(text)
        data: Any = None
        mixed = False
        if start < 0:
            problems.append("no JSON object in the file")
        else:
            decoder = json.JSONDecoder(object_pairs_hook=keep_last)
            try:
                data, end = decoder.raw_decode(text, start)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
                problems.append(f"the fio JSON is cut off or malformed: {exc}")
            else:
                mixed = bool(text[:start].strip() or text[end:].strip())
        if duplicates:
            keys = ", ".join(f'"{key}"' for key in duplicates)
            problems.append(f"duplicate keys in the JSON ({keys}); the last value of each was kept")
        if not isinstance(data, dict):
            version_match = re.search(r'"fio version"\s*:\s*"fio-([^"]+)"', text)
            return Evidence(
                source=path,
                tool=self.name,
                tool_version=version_match.group(1) if version_match else None,
                problems=problems,
            )

        version = str(data.get("fio version", "")) or None
        if version is None:
            problems.append('no "fio version" key')
        raw_global_options = data.get("global options")
        global_options: dict[str, Any] = raw_global_options if isinstance(raw_global_options, dict) else {}
        disk_util = [entry for entry in data.get("disk_util", []) if isinstance(entry, dict)]
        utils = {
            str(entry.get("name")): float(entry["util"])
            for entry in disk_util
            if isinstance(entry.get("util"), (int, float))
        }
        single_util = next(iter(utils.values())) if len(utils) == 1 else None
        jobs: list[StorageJob] = []
        p99: dict[str, dict[str, float]] = {}
        raw_jobs = data.get("jobs")
        if not isinstance(raw_jobs, list) or not raw_jobs:
            problems.append('no "jobs" in the JSON')
            raw_jobs = []
        for number, job in enumerate(raw_jobs):
            if not isinstance(job, dict):
                continue
            raw_options = job.get("job options")
            options: dict[str, Any] = raw_options if isinstance(raw_options, dict) else {}

            def option(key: str, options: dict[str, Any] = options) -> Any:
                return options.get(key, global_options.get(key))

            name = job.get("jobname") or f"job{number}"
            read_iops, read_bw = _direction(job.get("read"))
            write_iops, write_bw = _direction(job.get("write"))
            if "read" not in job and "write" not in job:
                problems.append(f"job {name!r} has neither a read nor a write section")
            jobs.append(
                StorageJob(
                    name=name,
                    rw=option("rw") or option("readwrite"),
                    block_size=option("bs") or option("blocksize"),
                    iodepth=_to_int(option("iodepth")),
                    numjobs=_to_int(option("numjobs")),
                    filename=option("filename") or option("directory"),
                    read_iops=read_iops,
                    read_bw_bytes_per_s=read_bw,
                    write_iops=write_iops,
                    write_bw_bytes_per_s=write_bw,
                    device_util_pct=single_util,
                )
            )
            latencies = {
                direction: value
                for direction in ("read", "write")
                if (value := _p99_us(job.get(direction))) is not None
            }
            if latencies:
                p99[name] = latencies
        extra: dict[str, Any] = {}
        if utils:
            extra["disk_util"] = utils
        if p99:
            extra["clat_p99_us"] = p99
        if global_options.get("direct") is not None:
            extra["direct"] = str(global_options.get("direct")) == "1"
        if mixed:
            extra["mixed_output"] = True
        return Evidence(
            source=path,
            tool=self.name,
            tool_version=version.removeprefix("fio-") if version else None,
            collected_at=data.get("time") if isinstance(data.get("time"), str) else None,
            storage=jobs,
            problems=problems,
            extra=extra,
        )


PARSER = FioParser()

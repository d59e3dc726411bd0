"""``df``: the mounted filesystems, their size, use and free space (``df -h``, ``df -T``, ``df -hT``, ``df -k``,
``df -P``; GNU coreutils and BSD/macOS).

The header names the columns: ``Filesystem``, ``Type`` with ``-T``, then the size column (``Size`` with
``-h``/``-H``, else the block size: ``1K-blocks``, ``1M-blocks``, ``1024-blocks``, ``512-blocks``), ``Used``,
``Avail`` (``Available``), ``Use%`` (``Capacity`` in POSIX and BSD output), BSD's inode columns (``iused
ifree %iused``) and ``Mounted on``, which is the rest of the line (a mount point may hold spaces).

GNU ``df -h`` prints powers of 1024 with the suffixes K, M, G, T, P, E rounded up to a few significant
digits (coreutils manual, "df invocation" and "Block size"); ``df -H`` prints powers of 1000 with the same
suffixes, which the output does not tell apart: sizes are read as ``-h`` prints them. BSD ``df -h`` adds
``i`` (``Gi``) to the same binary units. An old ``df`` puts a long filesystem name on a line of its own and
the numbers on the next; the two are joined.
"""

from __future__ import annotations

import re

from rigcheck.evidence.model import Evidence, MountEvidence

_HEADER = re.compile(
    r"^Filesystem\s+(?P<type>Type\s+)?(?P<size>Size|\S*blocks)\s+Used\s+Avail(?:able)?\s+"
    r"(?:Use%|Capacity)\s+(?P<inodes>iused\s+ifree\s+%iused\s+)?Mounted\s+on\s*$",
    re.IGNORECASE,
)
_HUMAN = re.compile(r"^(\d+(?:[.,]\d+)?)([KMGTPEZY]?)(i?)B?$", re.IGNORECASE)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6, "Z": 7, "Y": 8}
_BLOCKS = re.compile(r"^(\d+)([KMG]?)-blocks$", re.IGNORECASE)


def _block_size(column: str) -> float | None:
    """Bytes per unit of a block column (``1K-blocks`` -> 1024); None for ``Size`` (human-readable)."""
    match = _BLOCKS.match(column)
    if not match:
        return None
    return int(match.group(1)) * 1024 ** _POWERS[match.group(2).upper()]


def human_bytes(value: str) -> float | None:
    """``1.8T`` -> 1.8 x 1024^4; ``0`` -> 0; ``512`` (no suffix) -> 512 bytes; ``-`` -> None."""
    match = _HUMAN.match(value.strip())
    if not match:
        return None
    number = float(match.group(1).replace(",", "."))
    return number * 1024 ** _POWERS[match.group(2).upper()]


def _percent(value: str) -> float | None:
    text = value.strip().rstrip("%")
    try:
        return float(text)
    except ValueError:
        return None


class DfParser:
    name = "df"

    def detect(self, text: str) -> bool:
        return any(_HEADER.match(line.strip()) for line in text.splitlines()[:5])

    def parse(self, text: str, path: str) -> Evidence:
        problems: list[str] = []
        lines = text.splitlines()
        start = next((index for index, line in enumerate(lines) if _HEADER.match(line.strip())), None)
        header = _HEADER.match(lines[start].strip()) if start is not None else None
        if start is None or header is None:
            return Evidence(
                source=path, tool=self.name, problems=["no df header line (Filesystem ... Mounted on)"]
            )
        typed = bool(header.group("type"))
        block = _block_size(header.group("size"))
        inodes = bool(header.group("inodes"))
        mounts: list[MountEvidence] = []
        held: str | None = None  # a long filesystem name printed on a line of its own
        for number, raw in enumerate(lines[start + 1 :], start=start + 2):
            if not raw.strip():
                continue
            parts = raw.split()
            if held is not None:
                parts = [held, *parts]
                held = None
            elif len(parts) == 1:
                held = parts[0]
                continue
            fixed = 6 + typed + 3 * inodes  # the columns before "Mounted on", which is the rest
            if len(parts) < fixed:
                problems.append(
                    f"line {number}: {len(parts)} columns, not the {fixed} of the header: {raw.strip()!r}"
                )
                continue
            filesystem, rest = parts[0], parts[1:]
            kind = rest.pop(0) if typed else None
            size, used, available, percent = rest[:4]
            mount_start = 4 + 3 * inodes
            mounted_on = " ".join(rest[mount_start:])

            def amount(value: str) -> float | None:
                if block is not None:
                    return float(value) * block if value.isdigit() else None
                return human_bytes(value)

            mounts.append(
                MountEvidence(
                    filesystem=filesystem,
                    type=kind,
                    size_bytes=amount(size),
                    used_bytes=amount(used),
                    available_bytes=amount(available),
                    use_pct=_percent(percent),
                    mounted_on=mounted_on,
                )
            )
        if held is not None:
            problems.append(
                f"the file ends after the filesystem name {held!r}, before its numbers (cut off?)"
            )
        if not mounts:
            problems.append("a df header but no filesystem rows")
        extra = {"units": "1024-based (df -h)" if block is None else f"blocks of {block:g} bytes"}
        return Evidence(source=path, tool=self.name, mounts=mounts, problems=problems, extra=extra)


PARSER = DfParser()

"""A cache of rigcheck's shipped data files as plain data, so that a cold run does not parse them again.

``specs/hardware/``, ``specs/rules/`` and ``specs/models/`` (about 300 KB of YAML) cost a cold ``check``
about a tenth of its time to parse with positions (docs/performance.md).
:func:`rigcheck.core.spec.loader.load_yaml_file`
keeps what one of them loads to, as JSON, under the SHA-256 of the file's bytes: an edited file has a new
key, so a cache entry is never stale. Only the data is kept; positions are parsed again from the text
when something asks for one (an error in the data). A file with YAML traps is not cached.

Where: ``RIGCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/rigcheck``, else ``~/.cache/rigcheck``;
``RIGCHECK_NO_CACHE=1`` turns it off. A cache that cannot be read or written is skipped silently. JSON, not
pickle or marshal: a cache file someone else wrote can at worst be wrong data, never code.
"""

from __future__ import annotations

import json
import os
from typing import Any

#: Bumped when what the loader builds from a file changes, so that old entries are not read.
FORMAT = "1"
_FOLDERS = ("hardware", "rules", "models")


def cache_dir() -> str | None:
    """The cache folder, or None when caching is off."""
    if os.environ.get("RIGCHECK_NO_CACHE", "").strip().lower() in ("1", "true", "yes", "on"):
        return None
    explicit = os.environ.get("RIGCHECK_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rigcheck")


def is_shipped_data(path: str) -> bool:
    """Whether ``path`` is one of the shipped data files (not a shipped rig or workload spec)."""
    from rigcheck.core.spec.boundary import resolved
    from rigcheck.resources import specs_dir

    try:
        folder = os.path.dirname(resolved(path))
        return folder in _data_folders(str(specs_dir()))
    except (OSError, FileNotFoundError):
        return False


_FOLDER_CACHE: dict[str, frozenset[str]] = {}


def _data_folders(specs: str) -> frozenset[str]:
    folders = _FOLDER_CACHE.get(specs)
    if folders is None:
        real = os.path.realpath(specs)
        folders = _FOLDER_CACHE[specs] = frozenset(os.path.join(real, name) for name in _FOLDERS)
    return folders


def _entry(digest: str) -> str | None:
    folder = cache_dir()
    return None if folder is None else os.path.join(folder, f"data-{FORMAT}-{digest}.json")


def get(digest: str) -> Any | None:
    """The data cached for a file whose bytes hash to ``digest``, or None."""
    entry = _entry(digest)
    if entry is None:
        return None
    try:
        with open(entry, encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("sha256") != digest or "data" not in stored:
        return None
    return stored["data"]


def cached_file(path: str) -> Any | None:
    """The cached data of the shipped data file ``path`` when its current bytes were loaded before, else
    None; reads no YAML (so imports neither PyYAML nor the loader: ``rigcheck explain`` needs only this)."""
    import hashlib

    if cache_dir() is None:
        return None
    try:
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None
    return get(digest)


def put(digest: str, data: Any) -> None:
    """Keep ``data`` for ``digest`` (written to a temporary file, then renamed: readers never see half)."""
    entry = _entry(digest)
    if entry is None:
        return
    try:
        text = json.dumps({"sha256": digest, "data": data}, ensure_ascii=False, allow_nan=True)
        if json.loads(text)["data"] != data:  # non-string keys, tuples: JSON would change the data
            return
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        temporary = f"{entry}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, entry)
    except (OSError, TypeError, ValueError):
        return

"""A Hugging Face model id's ``config.json``, read from the local Hugging Face cache (issue 48).

The hub's cache layout (huggingface_hub ``file_download``, "Understand caching" in its docs):
``<cache>/models--<org>--<name>/refs/<revision>`` holds the commit a branch or tag points at, and
``<cache>/models--<org>--<name>/snapshots/<commit>/config.json`` the file (a link into ``blobs/``).
``<cache>`` is ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``. Only the config is read, never weights, and never from the network: a
model not in the cache is named with the command that fetches its config.
"""

from __future__ import annotations

import os
import re

#: A hub repository id: ``org/name`` (letters, digits, ``-``, ``_``, ``.``; no ``..``).
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


class NotCached(Exception):
    """The model's config is not in the cache; the message says how to fetch it."""


def is_repo_id(text: str) -> bool:
    return bool(REPO_ID.match(text)) and ".." not in text


def hub_cache() -> str:
    """The cache folder huggingface_hub uses (``constants.HF_HUB_CACHE``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return os.path.join(home, "hub")


def fetch_command(repo_id: str, revision: str | None) -> str:
    return f"hf download {repo_id} config.json" + (f" --revision {revision}" if revision else "")


def cached_config(repo_id: str, revision: str | None = None) -> str:
    """The path of ``repo_id``'s cached config.json at ``revision`` (a branch, tag or commit; main when
    unset), resolved and confined to the model's cache folder; :class:`NotCached` otherwise."""
    if not is_repo_id(repo_id):
        raise ValueError(f"{repo_id!r} is not a Hugging Face model id (org/name)")
    if revision is not None and (not _REVISION.match(revision) or ".." in revision):
        raise ValueError(f"{revision!r} is not a revision (a branch, tag or commit)")
    cache = hub_cache()
    folder = os.path.join(cache, "models--" + repo_id.replace("/", "--"))
    wanted = revision or "main"
    commit = wanted if _COMMIT.match(wanted) else _read_ref(folder, wanted)
    fetch = fetch_command(repo_id, revision)
    if commit is None:
        raise NotCached(
            f"{repo_id} ({wanted}) is not in the Hugging Face cache at {cache}; fetch its config with: {fetch}"
        )
    path = os.path.join(folder, "snapshots", commit, "config.json")
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if not os.path.isfile(real):
        raise NotCached(
            f"{repo_id} ({wanted}, commit {commit[:12]}) has no config.json in the Hugging Face cache at {cache}; "
            f"fetch it with: {fetch}"
        )
    if os.path.commonpath([real, root]) != root:
        raise NotCached(
            f"{repo_id}: the cached config.json links outside its cache folder ({real}); not read"
        )
    return real


def _read_ref(folder: str, name: str) -> str | None:
    """The commit ``refs/<name>`` holds, or None."""
    from rigcheck.core.spec.boundary import BoundaryError, read_regular

    try:
        text = read_regular(os.path.join(folder, "refs", name), 256, inside=False).decode("ascii").strip()
    except (OSError, BoundaryError, UnicodeDecodeError):
        return None
    return text if _COMMIT.match(text) else None

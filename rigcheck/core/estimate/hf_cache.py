"""A Hugging Face model id's ``config.json``, read from the local Hugging Face cache (issue 48).

The hub's cache layout (huggingface_hub ``file_download``, "Understand caching" in its docs):
``<cache>/models--<org>--<name>/refs/<revision>`` holds the commit a branch or tag points at, and
``<cache>/models--<org>--<name>/snapshots/<commit>/config.json`` the file (a link into ``blobs/``).
``<cache>`` is ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``. Only the config is read, never weights.

A model not in the cache is fetched only where the command allows the network (:func:`allowing_network`:
``estimate`` and ``plan`` unless ``--offline``; ``check`` and ``lint`` only with ``--allow-network``) and
``HF_HUB_OFFLINE`` is not set: huggingface_hub's ``hf_hub_download`` writes config.json, and nothing
else, into the same cache (from ``HF_ENDPOINT`` when set), and it is read back from there as any
cached config is. Otherwise the message names the command that fetches it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: A hub repository id: ``org/name`` (letters, digits, ``-``, ``_``, ``.``; no ``..``).
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


class NotCached(Exception):
    """The model's config is not in the cache (nor could be fetched); the message says what to do."""


#: Whether the running command may fetch a config from the hub (set by :func:`allowing_network`).
_NETWORK: ContextVar[bool] = ContextVar("rigcheck_hf_network", default=False)

#: The values of ``HF_HUB_OFFLINE`` that mean offline (huggingface_hub ``constants._is_true``).
_TRUE = frozenset({"1", "ON", "YES", "TRUE"})


@contextmanager
def allowing_network(allowed: bool) -> Iterator[None]:
    """Let the code run inside fetch a missing config from the hub (``allowed``), or not."""
    token = _NETWORK.set(allowed)
    try:
        yield
    finally:
        _NETWORK.reset(token)


def network_allowed() -> bool:
    """The command allows the network and ``HF_HUB_OFFLINE`` does not forbid it."""
    return _NETWORK.get() and os.environ.get("HF_HUB_OFFLINE", "").upper() not in _TRUE


def config_path(repo_id: str, revision: str | None, cap: int) -> str:
    """The cached config.json of ``repo_id`` at ``revision`` (:func:`cached_config`); when it is not
    cached and the network is allowed, fetched first (:func:`fetch_config`, at most ``cap`` bytes: the
    reader's cap)."""
    try:
        return cached_config(repo_id, revision)
    except NotCached as missing:
        if not network_allowed():
            raise
        first = missing
    fetch_config(repo_id, revision, first, cap)
    return cached_config(repo_id, revision)


def fetch_config(repo_id: str, revision: str | None, missing: NotCached, cap: int) -> None:
    """Download ``config.json`` alone into the hub cache with huggingface_hub (``hf_hub_download``, from
    ``HF_ENDPOINT`` when set), refusing one the hub says is over ``cap`` bytes before any is downloaded;
    :class:`NotCached` saying why when it cannot (gated, private or unknown model, no such revision, no
    network, too large, huggingface_hub not installed)."""
    import logging

    fetch = fetch_command(repo_id, revision)
    try:
        from huggingface_hub import errors, get_hf_file_metadata, hf_hub_download, hf_hub_url
    except ImportError:
        raise NotCached(f"{missing}; or pip install huggingface_hub so that rigcheck fetches it") from None
    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    quiet = logging.getLogger("huggingface_hub")  # its retry warnings are not rigcheck's one line
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        # One HEAD first, without retries: where the hub cannot be reached, hf_hub_download retries
        # for about 23 s before it gives up; this says so at once.
        url = hf_hub_url(repo_id, "config.json", revision=revision, endpoint=endpoint)
        size = get_hf_file_metadata(url, timeout=10).size
        if size is not None and size > cap:  # a model id in a pull request must not fill the disk
            raise NotCached(
                f"{repo_id}'s config.json on {endpoint} is {size:,} bytes, over the {cap:,} rigcheck "
                f"reads; not fetched"
            )
        hf_hub_download(
            repo_id,
            "config.json",
            revision=revision,
            cache_dir=hub_cache(),
            endpoint=endpoint,
            etag_timeout=10,
        )
    except NotCached:
        raise
    except errors.GatedRepoError:
        raise NotCached(
            f"{repo_id} is a gated model: accept its terms at {endpoint}/{repo_id} and log in "
            f"(hf auth login, or HF_TOKEN), then run again, or fetch its config with: {fetch}"
        ) from None
    except errors.RevisionNotFoundError:
        raise NotCached(f"{repo_id} has no revision {revision!r} on {endpoint}") from None
    except errors.RepositoryNotFoundError:
        raise NotCached(
            f"{repo_id}: no such model on {endpoint} (a private one needs hf auth login or HF_TOKEN)"
        ) from None
    except errors.LocalEntryNotFoundError:  # before its base class: the hub was not reached
        raise NotCached(f"cannot fetch the config of {repo_id} from {endpoint}; {missing}") from None
    except errors.EntryNotFoundError:  # huggingface_hub 1.x: RemoteEntryNotFoundError, a subclass
        raise NotCached(f"{repo_id} has no config.json on {endpoint}") from None
    except Exception as exc:  # no network, a proxy, a timeout: huggingface_hub's and httpx's errors
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise NotCached(
            f"cannot fetch the config of {repo_id} from {endpoint} ({reason}); {missing}"
        ) from None
    finally:
        quiet.setLevel(level)


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

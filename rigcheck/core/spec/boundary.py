"""The checked root: what a spec or a config in a pull request may make rigcheck read.

A repository under review is untrusted input. Every path it names (``runs_on``, config ``pairs``,
``matrix`` and ``baseline``, a workload's ``hf_config``) and every file the lint walk finds must
resolve, symlinks included, to a file inside the checked root; anything else is reported, not
read. Only regular files are opened, without blocking (a FIFO named ``*.yaml`` does not hang the
run), and at most a cap of bytes is read from the open file, whatever ``stat`` says (``/dev/zero``
reports size 0).

The root is the repository being checked: ``--root``, else the nearest folder with a ``.git``
entry at or above the config, the first path named or the working directory, else that folder
itself. Library callers
that never set a root read wherever they are told.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any

_NUL = "the path contains a NUL character; no file has such a name"

#: The most paths a confined run keeps resolved before it starts again (memory stays flat).
_MOST_RESOLVED = 65_536


class _Confinement:
    """The checked root of one run, and the paths resolved in it: a lint resolves each file four or five
    times (found, checked, loaded, paired, shown), and the files of a folder share its resolution."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.resolved: dict[str, str] = {}

    def resolve(self, path: str) -> str:
        """``os.path.realpath(path)``, kept by (absolute) path."""
        key = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
        known = self.resolved.get(key)
        if known is None:
            if len(self.resolved) >= _MOST_RESOLVED:
                self.resolved.clear()
            known = self.resolved[key] = self._resolve(key)
        return known

    def _resolve(self, path: str) -> str:
        """What ``realpath`` gives, as it gives it: a last part that is not a symlink (or does not
        exist) is joined to its folder's resolution; anything else is resolved whole."""
        folder, leaf = os.path.split(path)
        if leaf in ("", os.curdir, os.pardir) or not folder or folder == path:
            return os.path.realpath(path)
        try:
            link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:  # realpath takes what it cannot stat as written (and raises on a NUL, as this does)
            link = False
        return os.path.realpath(path) if link else os.path.join(self.resolve(folder), leaf)


_ROOT: ContextVar[_Confinement | None] = ContextVar("rigcheck_checked_root", default=None)

#: A spec given as ``-`` on the command line: the name it stands for (``--stdin-filename``, else
#: ``<stdin>``) and the bytes read from standard input, once. Reading that name reads these bytes.
_STDIN: ContextVar[tuple[str, bytes] | None] = ContextVar("rigcheck_stdin", default=None)

#: The name a spec read from standard input has when no ``--stdin-filename`` is given.
STDIN_NAME = "<stdin>"


def take_stdin(name: str | None, limit: int, stream: Any = None) -> Token[tuple[str, bytes] | None]:
    """Read standard input (or ``stream``, a binary file) once, up to ``limit`` bytes, and let it stand
    for the file ``name`` (``--stdin-filename``; None: :data:`STDIN_NAME`): every read of that name
    through this module returns these bytes (ruff's ``--stdin-filename``). :class:`BoundaryError` when
    the input is over ``limit``. The token resets it (:func:`drop_stdin`)."""
    import sys

    source = stream if stream is not None else sys.stdin.buffer
    data = source.read(limit + 1)
    shown = name or STDIN_NAME
    if len(data) > limit:
        raise BoundaryError(shown, f"standard input is over {limit:,} bytes, the most rigcheck reads")
    return _STDIN.set((shown, data))


def drop_stdin(token: Token[tuple[str, bytes] | None]) -> None:
    _STDIN.reset(token)


def stdin_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes standard input gave for ``path``, when ``path`` is the name it stands for; else None."""
    taken = _STDIN.get()
    if taken is None or os.fspath(path) != taken[0]:
        return None
    return taken[1]


class BoundaryError(Exception):
    """A path outside the checked root, or a file that is not a regular file or is over its cap."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def repository_root(start: str | os.PathLike[str]) -> str:
    """The nearest folder at or above ``start`` that holds a ``.git`` entry, else ``start``'s folder.
    A file is not followed to where it links (a committed ``ev.txt -> /etc/passwd`` does not make
    ``/etc`` the root): its folder is."""
    here = Path(os.path.abspath(start))
    folder = Path(os.path.realpath(here if here.is_dir() and not here.is_symlink() else here.parent))
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(folder)


def set_root(path: str | os.PathLike[str] | None) -> Token[_Confinement | None]:
    """Confine reads to ``path`` (None: no confinement) until :func:`reset_root` of the token."""
    return _ROOT.set(_Confinement(os.path.realpath(path)) if path is not None else None)


def reset_root(token: Token[_Confinement | None]) -> None:
    _ROOT.reset(token)


def checked_root() -> str | None:
    confined = _ROOT.get()
    return confined.root if confined is not None else None


def resolved(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath(path)``; under a checked root (one run), kept for the rest of the run."""
    confined = _ROOT.get()
    text = os.fspath(path)
    return os.path.realpath(text) if confined is None else confined.resolve(text)


def outside_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` may not be read under the current root (None when it may)."""
    if "\x00" in os.fspath(path):  # no file system has such a name; os calls raise ValueError on it
        return _NUL
    confined = _ROOT.get()
    if confined is None:
        return None
    root, real = confined.root, confined.resolve(os.fspath(path))
    if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    how = "a symlink to " if os.path.islink(path) else ""
    return (
        f"{how}{real} is outside the checked root {root}; rigcheck reads only files inside the repository "
        "(--root DIR sets another)"
    )


def check_inside(path: str | os.PathLike[str]) -> None:
    reason = outside_reason(path)
    if reason is not None:
        raise BoundaryError(str(path), reason)


@contextmanager
def _open_regular(path: str | os.PathLike[str]) -> Iterator[int]:
    """A descriptor of ``path`` opened without blocking (a FIFO does not hang), closed after;
    :class:`BoundaryError` unless ``fstat`` of the open file says it is a regular file."""
    if "\x00" in os.fspath(path):
        raise BoundaryError(str(path), _NUL)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise BoundaryError(
                str(path), f"not a regular file ({_kind(info.st_mode)}); rigcheck reads only files"
            )
        yield descriptor
    finally:
        os.close(descriptor)


def read_regular(path: str | os.PathLike[str], limit: int, *, inside: bool = True) -> bytes:
    """Up to ``limit`` bytes of a regular file (``inside``: within the checked root), or
    :class:`BoundaryError`; ``OSError`` for a file that cannot be opened. The name standard input
    stands for (:func:`take_stdin`) reads its bytes."""
    given = stdin_bytes(path)
    if given is not None:
        if len(given) > limit:
            raise BoundaryError(str(path), f"the file is over {limit:,} bytes, the most rigcheck reads")
        return given
    if inside:
        check_inside(path)
    chunks, left = [], limit + 1
    with _open_regular(path) as descriptor:
        while left > 0:  # the cap is read from the open file: stat says 0 for /dev/zero
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise BoundaryError(str(path), f"the file is over {limit:,} bytes, the most rigcheck reads")
    return data


def named_reason(path: str | os.PathLike[str]) -> str | None:
    """Why a file named on the command line (evidence, ``--config``) or found beside the specs (a
    project config) may not be read, or None: one written inside the checked root must resolve inside
    it (a committed link to ``~/.ssh/id_rsa`` is not followed); one typed outside the root is the
    user's own choice and is read."""
    text = os.fspath(path)
    if "\x00" in text:
        return _NUL
    confined = _ROOT.get()
    if confined is None or not _inside(os.path.abspath(text), confined.root):
        return None
    return outside_reason(text)


def read_named(path: str | os.PathLike[str], limit: int) -> bytes:
    """Up to ``limit`` bytes of a regular file named on the command line or found beside the specs
    (:func:`named_reason`); :class:`BoundaryError` for a link out of the root, what is not a regular
    file (a FIFO does not block) or a file over ``limit``; ``OSError`` when it cannot be read."""
    reason = named_reason(path)
    if reason is not None:
        raise BoundaryError(os.fspath(path), reason)
    return read_regular(path, limit, inside=False)


def read_head(path: str | os.PathLike[str], size: int) -> bytes:
    """The first ``size`` bytes of a regular file (no root check, no cap): for telling a spec from
    other YAML. :class:`BoundaryError` for what is not a regular file, ``OSError`` if unreadable."""
    given = stdin_bytes(path)
    if given is not None:
        return given[:size]
    with _open_regular(path) as descriptor:
        return os.read(descriptor, size)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why rigcheck would not write a report to ``path``, or None: something that is not a regular file
    (a folder, a FIFO, ``/dev/full``), a folder that does not exist, or (inside the checked root) a
    folder that a link leads out of it. A symbolic link is no reason: :func:`replacing` replaces the
    link itself, never what it points at (a pull request can commit ``rigcheck.sarif -> ~/.bashrc``;
    the run leaves ``~/.bashrc`` alone and a report in the link's place, which a later upload step
    then reads instead of the file the link named). Asked before any work, and again as it is written."""
    text = os.fspath(path)
    if "\x00" in text:
        return _NUL
    try:
        info = os.lstat(text)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return f"cannot look at it ({exc.strerror or exc})"
    if info is not None and _device_outside(text, info.st_mode):
        return None  # -o /dev/null, /dev/stdout: typed on the command line, written as a stream
    if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
        return f"it is not a regular file ({_kind(info.st_mode)})"
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        return f"its folder {folder} does not exist"
    confinement = _ROOT.get()
    if (
        confinement is not None
        and _inside(folder, confinement.root)
        and not _inside(os.path.realpath(folder), confinement.root)
    ):
        return "its folder is a link out of the checked repository"
    return None


def _device_outside(path: str, mode: int) -> bool:
    """Whether ``path`` is a character device (``/dev/null``, ``/dev/stdout``'s terminal) outside the
    checked root: only a command line names one."""
    confinement = _ROOT.get()
    outside = confinement is None or not _inside(os.path.abspath(path), confinement.root)
    return stat.S_ISCHR(mode) and outside


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Any]:
    """A text file (UTF-8) to write that replaces ``path`` when the block ends without an error, and
    is removed otherwise: written beside the target and renamed over it, so a report is never seen
    half written (a run killed while writing leaves the old file or none, never a truncated one), a
    link at ``path`` is replaced, not written through, and nothing that is not a regular file is
    replaced (:func:`output_problem`)."""
    reason = output_problem(path)
    if reason is not None:
        raise BoundaryError(os.fspath(path), reason)
    target = os.path.abspath(os.fspath(path))
    try:
        device = _device_outside(target, os.lstat(target).st_mode)
    except OSError:
        device = False
    if device:  # nothing to rename over: written as a stream
        with open(target, "w", encoding="utf-8", newline="") as stream:
            yield stream
        return
    # a new name beside the target (tempfile's way, without importing it: it loads shutil, bz2, lzma)
    temporary = os.path.join(
        os.path.dirname(target), f".{os.path.basename(target)}.{os.urandom(6).hex()}.tmp"
    )
    # created as a new file is (0o644 less the umask, which the system applies), never an existing one
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise

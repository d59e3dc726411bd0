"""The code that ``dataclasses``, ``typing`` and ``re`` compile, kept between runs of the command line beside
rigcheck's bytecode.

``@dataclass`` writes each method it adds as Python source and compiles it with ``exec``,
``typing.ForwardRef`` compiles each annotation written as a string, and ``re`` compiles each pattern to a
program for its matcher: in a cold ``rigcheck check``, some 280 methods of the dataclasses that pydantic,
annotated-types and rigcheck define, some 770 annotations (the fields of the ``TypedDict`` classes of
``pydantic_core.core_schema``, 206 distinct texts) and 78 patterns (PyYAML's reader's alone took 9 ms).
Compiling them took about 65 ms of a run of 0.5 s here (issue 20, docs/performance.md). What is compiled
from a text depends only on that text and the interpreter, so, as Python keeps a module's bytecode in
``__pycache__`` (https://peps.python.org/pep-3147/) and numba its compiled functions there
(https://numba.readthedocs.io/en/stable/developer/caching.html), :func:`install` makes the three modules
use what was kept for a text compiled before, and :func:`save` keeps what a run compiled.

- Only the console entry installs it (``rigcheck.cli.entry``), unless ``RIGCHECK_NO_CODE_CACHE=1`` (or
  ``RIGCHECK_NO_CACHE=1``, which turns every cache off) is set: importing rigcheck as a library changes
  nothing. It shadows the builtin ``exec`` in the namespace of ``dataclasses`` and ``compile`` in that of
  ``typing``, nowhere else; a text is compiled as those modules compile it (the same file name and mode, no
  ``__future__`` flags, the interpreter's optimisation level), so each gets the very code it would have.
  On Python 3.11 and 3.12 it stands in for ``re._compiler.compile``: a pattern's program and groups are
  worked out as that function works them out and handed to ``_sre.compile`` as it hands them (a pattern
  whose parsing warns is compiled as usual every time, so that it warns every time); other versions keep
  their ``re``. A text or pattern longer than :data:`MAX_TEXT` is not kept.
- The file is ``__pycache__/code_cache.<interpreter>[.opt-N].compiled`` beside this module's bytecode
  (``importlib.util.cache_from_source``, which follows ``sys.pycache_prefix``), and begins with the
  interpreter's bytecode magic number: a file another Python wrote is not read. It is trusted as that
  folder's ``.pyc`` files are. It is never kept in the user's cache folder with the shipped data
  (rigcheck.core.data_cache), which holds only JSON so that a file someone else wrote there can at worst be
  wrong data, nor read from a checked repository or the working directory.
- A file that cannot be read or is not what this module writes counts as empty. Nothing is written when
  ``sys.dont_write_bytecode`` is set (``PYTHONDONTWRITEBYTECODE``, ``-B``), when nothing new was compiled,
  from a forked worker, or when the folder is not writable; a file is replaced whole (written aside, then
  renamed) and holds at most :data:`MAX_ENTRIES` texts, those of the latest runs.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys
import typing
from types import CodeType
from typing import Any

#: The most texts the file keeps (a cold check compiles about 490 distinct ones).
MAX_ENTRIES = 4096
#: A longer text or pattern is compiled as usual and not kept (what a checked spec can make rigcheck
#: compile, such as a suppression's glob, cannot fill the file).
MAX_TEXT = 4096
#: A larger file is not read (4,096 texts take about 3 MB).
MAX_BYTES = 32 * 2**20
#: After the magic number: what the rest of the file is.
FORMAT = b"rigcheck compiled code 2\n"


#: A compiled text's key: the ``compile`` mode, the file name, the text; for a regular expression ``"re"``,
#: its flags, the pattern (text or bytes).
Key = tuple[str, str, Any]


class CodeCache:
    """Compiled code by mode, file name and text (and patterns' programs by flags and pattern): what was read
    from ``path``, and what this run used or compiled. Its :meth:`exec` stands in for ``exec`` in
    ``dataclasses``, its :meth:`compile` for ``compile`` in ``typing`` (where ``ForwardRef`` compiles each
    annotation written as a string: some 770 in a cold check, mostly the fields of the ``TypedDict`` classes
    of ``pydantic_core.core_schema``), its :meth:`regex` for ``re._compiler.compile``."""

    def __init__(self, path: str, known: dict[Key, Any] | None = None) -> None:
        self.path = path
        self._known = known
        self.used: dict[Key, Any] = {}
        self.compiled = 0
        self.owner = os.getpid()

    @property
    def known(self) -> dict[Key, Any]:
        """What the file holds, read when first asked (a ``--version`` compiles nothing and reads nothing)."""
        if self._known is None:
            self._known = read(self.path)
        return self._known

    def code(self, source: str, filename: str, mode: str) -> CodeType:
        """The code of ``source`` as ``compile(source, filename, mode)`` makes it in a module without
        ``__future__`` imports (``dataclasses`` and ``typing`` have none: a test checks)."""
        key = (mode, filename, source)
        if len(source) > MAX_TEXT:
            return builtins.compile(source, filename, mode, dont_inherit=True)
        code = self.used.get(key)
        if code is None:
            code = self.known.get(key)
        if type(code) is not CodeType:
            code = builtins.compile(source, filename, mode, dont_inherit=True)
            self.compiled += 1
        self.used[key] = code
        return code

    def regex(self, pattern: Any, flags: int = 0) -> Any:
        """``re._compiler.compile`` for ``re``: a text pattern's compiled program is kept, and the pattern
        object is made from it as ``re._compiler.compile`` makes it (:func:`_sre_arguments`)."""
        if type(pattern) not in (str, bytes) or flags & _RE_DEBUG or len(pattern) > MAX_TEXT:
            return _REAL_RE_COMPILE(pattern, flags)
        key = ("re", str(flags), pattern)
        arguments: Any = self.used.get(key)
        if arguments is None:
            arguments = self.known.get(key)
        if not _is_sre_arguments(arguments):
            arguments = _sre_arguments(pattern, flags)
            if arguments is None:  # it warned: compiled as usual, not kept
                return _REAL_RE_COMPILE(pattern, flags)
            self.compiled += 1
        self.used[key] = arguments
        return _sre.compile(pattern, *arguments)

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """``exec`` for ``dataclasses``: a text runs as its kept code."""
        if type(source) is str:
            source = self.code(source, "<string>", "exec")
        exec(source, globals, locals)

    def compile(
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
    ) -> Any:
        """``compile`` for ``typing``: a text compiled with no flags is its kept code."""
        if type(source) is str and type(filename) is str and not flags and optimize == -1:
            return self.code(source, filename, mode)
        return builtins.compile(source, filename, mode, flags, True, optimize)


# The regular-expression compiler of Python 3.11 and 3.12 (re/_compiler.py), whose ``compile`` parses a
# pattern, writes its program (``_code``) and hands both to ``_sre.compile``; None on other versions, where
# ``re`` is left as it is.
try:
    import _sre
    import re
    from re import _compiler as _re_compiler  # type: ignore[attr-defined]
    from re import _parser as _re_parser  # type: ignore[attr-defined]

    _REAL_RE_COMPILE: Any = _re_compiler.compile
    _RE_DEBUG = int(re.DEBUG)
    if sys.version_info[:2] not in ((3, 11), (3, 12)) or _REAL_RE_COMPILE.__code__.co_varnames[:2] != (
        "p",
        "flags",
    ):
        _REAL_RE_COMPILE = None
except (ImportError, AttributeError):
    _REAL_RE_COMPILE = None
    _RE_DEBUG = 128


def _sre_arguments(pattern: str | bytes, flags: int) -> tuple[Any, ...] | None:
    """What ``re._compiler.compile(pattern, flags)`` hands ``_sre.compile`` after the pattern, worked out as
    it works them out; None where parsing the pattern warned (those are compiled as usual each time, so
    that the warning is given each time)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = _re_parser.parse(pattern, flags)
        code = _re_compiler._code(parsed, flags)
    if caught:
        return None
    groupindex = parsed.state.groupdict
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # the opcodes are int subclasses (re._constants); _sre reads them as integers, and marshal keeps only plain ones
    return (
        int(flags | parsed.state.flags),
        [int(word) for word in code],
        int(parsed.state.groups - 1),
        {str(name): int(index) for name, index in groupindex.items()},
        tuple(indexgroup),
    )


def _is_sre_arguments(value: Any) -> bool:
    return (
        type(value) is tuple
        and len(value) == 5
        and type(value[0]) is int
        and type(value[1]) is list
        and type(value[2]) is int
        and type(value[3]) is dict
        and type(value[4]) is tuple
    )


def _kept(key: Any, value: Any) -> bool:
    """Whether a value read from the file is one this module writes for its key."""
    if type(key) is not tuple or len(key) != 3:
        return False
    return _is_sre_arguments(value) if key[0] == "re" else type(value) is CodeType


def cache_path() -> str:
    """Where this interpreter keeps the file (``sys.pycache_prefix`` and ``-O`` as for bytecode)."""
    import importlib.util

    return importlib.util.cache_from_source(__file__).removesuffix(".pyc") + ".compiled"


def install(path: str | None = None) -> CodeCache | None:
    """Make ``typing`` and ``dataclasses`` use the kept code (``dataclasses`` once it is imported, where it is
    not yet: a ``--version`` never imports it); the cache, or None where either has its own ``compile`` or
    ``exec`` already (installed once, or another tool's) or the cache is turned off."""
    loaded = sys.modules.get("dataclasses")
    if _turned_off() or "compile" in vars(typing) or (loaded is not None and "exec" in vars(loaded)):
        return None
    cache = CodeCache(path or cache_path())
    typing.compile = cache.compile  # type: ignore[attr-defined]
    if _REAL_RE_COMPILE is not None and _re_compiler.compile is _REAL_RE_COMPILE:
        _re_compiler.compile = cache.regex
    if loaded is not None:
        loaded.exec = cache.exec  # type: ignore[attr-defined]
    else:
        sys.meta_path.insert(0, _AfterImport("dataclasses", cache))
    return cache


class _AfterImport:
    """A finder on ``sys.meta_path`` for one module, which leaves finding it to the finders after it and gives
    the module the cache's ``exec`` once its code has run; it takes itself off the path when first asked."""

    def __init__(self, name: str, cache: CodeCache) -> None:
        self.name = name
        self.cache = cache

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        loader = getattr(spec, "loader", None)
        # a loader that is a class (frozen, built-in) is shared: it is left as it is, and nothing is patched
        if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
            return spec
        run, cache = loader.exec_module, self.cache

        def exec_module(module: Any) -> None:
            run(module)
            if "exec" not in vars(module):
                module.exec = cache.exec

        loader.exec_module = exec_module
        return spec


def _turned_off() -> bool:
    """``RIGCHECK_NO_CODE_CACHE``, or ``RIGCHECK_NO_CACHE`` (every cache: rigcheck.core.data_cache), is 1, true,
    yes or on."""
    from rigcheck.core.plugin_env import env_flag

    return env_flag("RIGCHECK_NO_CODE_CACHE") or env_flag("RIGCHECK_NO_CACHE")


def uninstall(cache: CodeCache) -> None:
    """Give ``typing`` and ``dataclasses`` back the builtins (for tests)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, _AfterImport) and f.cache is cache)]
    if vars(typing).get("compile") == cache.compile:
        del typing.compile  # type: ignore[attr-defined]
    if _REAL_RE_COMPILE is not None and _re_compiler.compile == cache.regex:
        _re_compiler.compile = _REAL_RE_COMPILE
    loaded = sys.modules.get("dataclasses")
    if loaded is not None and vars(loaded).get("exec") == cache.exec:
        del loaded.exec


def read(path: str) -> dict[Key, Any]:
    """The texts and their code in the file at ``path``; empty when it is missing, too large, written by
    another interpreter or not a mapping of texts."""
    import importlib.util

    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_BYTES:
                return {}
            data = handle.read()
        header = importlib.util.MAGIC_NUMBER + FORMAT
        if not data.startswith(header):
            return {}
        known = marshal.loads(memoryview(data)[len(header) :])
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    return known if type(known) is dict else {}


def save(cache: CodeCache) -> bool:
    """Write the file when this process compiled a text the file lacks; whether it was written. The
    texts this run used come last and the oldest are dropped past :data:`MAX_ENTRIES`."""
    if not cache.compiled or sys.dont_write_bytecode or os.getpid() != cache.owner:
        return False
    import importlib.util

    kept = {key: code for key, code in cache.known.items() if key not in cache.used and _kept(key, code)}
    kept.update(cache.used)
    keys = list(kept)[-MAX_ENTRIES:]
    try:
        payload = importlib.util.MAGIC_NUMBER + FORMAT + marshal.dumps({key: kept[key] for key in keys})
    except ValueError:  # a value marshal cannot write: nothing is kept
        return False
    aside = f"{cache.path}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(cache.path), exist_ok=True)
        descriptor = os.open(aside, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        with open(descriptor, "wb") as handle:
            handle.write(payload)
        os.replace(aside, cache.path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        return False
    cache.compiled = 0
    return True

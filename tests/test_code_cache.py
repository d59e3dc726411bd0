"""The compiled-code cache of the command line (rigcheck/core/code_cache.py, issue 20): a class or a forward
reference made through it gets the code the standard library makes, the file is read only when this
interpreter wrote it, and it is written only when it should be."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import marshal
import os
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcheck.core import code_cache

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def writes_bytecode(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """As a default interpreter does (this machine's shell sets PYTHONDONTWRITEBYTECODE)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[code_cache.CodeCache]:
    cache = code_cache.install(str(tmp_path / "cache.compiled"))
    assert cache is not None
    try:
        yield cache
    finally:
        code_cache.uninstall(cache)
    assert "exec" not in vars(dataclasses) and "compile" not in vars(typing)


def _point() -> type:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: float = 0.5
        tags: list[str] = dataclasses.field(default_factory=list)

    return Point


def _same_code(a: typing.Any, b: typing.Any) -> None:
    assert (a.co_code, a.co_consts, a.co_names, a.co_varnames, a.co_filename) == (
        b.co_code,
        b.co_consts,
        b.co_names,
        b.co_varnames,
        b.co_filename,
    )


def test_a_dataclass_made_through_the_cache_is_the_one_the_standard_decorator_makes(
    installed: code_cache.CodeCache, tmp_path: Path
) -> None:
    cached = _point()
    assert installed.compiled >= 6  # __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__
    code_cache.uninstall(installed)
    plain = _point()
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        _same_code(getattr(cached, name).__code__, getattr(plain, name).__code__)
    # the fields' types (strings: this module has `from __future__ import annotations`), not the generated
    # code's own names ('_type_x'), which they would be if the cache's compile took that flag from its module
    assert (
        cached.__init__.__annotations__
        == plain.__init__.__annotations__
        == {
            "x": "int",  # this module's own annotations are strings; dataclasses passes them through
            "y": "float",
            "tags": "list[str]",
            "return": None,
        }
    )
    assert repr(cached(1)) == "_point.<locals>.Point(x=1, y=0.5, tags=[])"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cached(1).x = 2  # type: ignore[misc]

    # the next run reads what this one saved and compiles nothing
    assert code_cache.save(installed)
    again = code_cache.install(installed.path)
    assert again is not None
    try:
        second = _point()
    finally:
        code_cache.uninstall(again)
    assert again.compiled == 0 and len(again.used) >= 6
    _same_code(second.__init__.__code__, plain.__init__.__code__)


def test_a_forward_reference_compiles_as_typing_compiles_it(installed: code_cache.CodeCache) -> None:
    reference = typing.ForwardRef("dict[str, int]")
    assert installed.compiled == 1
    _same_code(reference.__forward_code__, compile("dict[str, int]", "<string>", "eval"))
    assert typing.ForwardRef("dict[str, int]").__forward_code__ is reference.__forward_code__
    assert installed.compiled == 1
    assert reference._evaluate(globals(), None, frozenset()) == dict[str, int]

    class Shape(typing.TypedDict):
        sides: int
        name: typing.Optional[str]  # noqa: UP045 (the string an old annotation is)

    assert typing.get_type_hints(Shape) == {"sides": int, "name": typing.Optional[str]}  # noqa: UP045
    with pytest.raises(SyntaxError, match="Forward reference must be an expression"):
        typing.ForwardRef("1 +")


def test_the_standard_modules_it_compiles_for_have_no_future_imports() -> None:
    """The cache compiles without ``__future__`` flags, as ``exec`` and ``compile`` do when they are called
    from a module without them; if a Python added one to these modules, the code would differ."""
    for module in (dataclasses, typing):
        tree = ast.parse(inspect.getsource(module))
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "__future__"]


def test_the_file_is_named_for_the_interpreter_beside_the_bytecode() -> None:
    path = code_cache.cache_path()
    assert Path(path).parent == Path(importlib.util.cache_from_source(code_cache.__file__)).parent
    assert Path(path).name == f"code_cache.{sys.implementation.cache_tag}.compiled"


def _write(path: Path, payload: bytes) -> str:
    path.write_bytes(payload)
    return str(path)


def test_a_file_this_interpreter_did_not_write_is_read_as_empty(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    header = importlib.util.MAGIC_NUMBER + code_cache.FORMAT
    code = compile("x = 1", "<string>", "exec")
    good = {("exec", "<string>", "x = 1"): code}
    assert code_cache.read(_write(tmp_path / "good", header + marshal.dumps(good))) == good
    assert code_cache.read(str(tmp_path / "missing")) == {}
    other = bytes([importlib.util.MAGIC_NUMBER[0] ^ 1]) + importlib.util.MAGIC_NUMBER[1:]
    assert code_cache.read(_write(tmp_path / "other", other + code_cache.FORMAT + marshal.dumps(good))) == {}
    assert code_cache.read(_write(tmp_path / "truncated", header + marshal.dumps(good)[:-3])) == {}
    assert code_cache.read(_write(tmp_path / "list", header + marshal.dumps([1, 2]))) == {}
    assert code_cache.read(_write(tmp_path / "garbage", header + b"\xff\x00garbage")) == {}
    monkeypatch.setattr(code_cache, "MAX_BYTES", 10)
    assert code_cache.read(_write(tmp_path / "large", header + marshal.dumps(good))) == {}


def test_a_kept_value_that_is_not_code_is_compiled_again(tmp_path: Path) -> None:
    path = tmp_path / "odd"
    key = ("exec", "<string>", "x = 1")
    path.write_bytes(importlib.util.MAGIC_NUMBER + code_cache.FORMAT + marshal.dumps({key: "not code", 7: 8}))
    cache = code_cache.CodeCache(str(path), code_cache.read(str(path)))
    namespace: dict[str, object] = {}
    cache.exec("x = 1", namespace)
    assert namespace["x"] == 1 and cache.compiled == 1
    assert code_cache.save(cache)
    assert list(code_cache.read(str(path))) == [key]  # the odd entries are not written back


def test_nothing_is_written_when_it_should_not_be(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "cache.compiled"
    cache = code_cache.CodeCache(str(path), {})
    assert not code_cache.save(cache)  # nothing compiled
    cache.exec("y = 2", {})
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not code_cache.save(cache)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    cache.owner = os.getpid() + 1  # a forked worker
    assert not code_cache.save(cache)
    assert not path.exists()
    cache.owner = os.getpid()
    cache.path = str(tmp_path / "a-file" / "cache.compiled")
    (tmp_path / "a-file").write_text("not a folder")
    assert not code_cache.save(cache)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing left aside
    cache.path = str(path)
    assert code_cache.save(cache) and path.exists()
    assert not code_cache.save(cache)  # saved already: nothing new


def test_the_file_keeps_the_latest_texts_up_to_its_bound(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(code_cache, "MAX_ENTRIES", 3)
    path = str(tmp_path / "cache.compiled")
    first = code_cache.CodeCache(path, {})
    for text in ("a = 1", "b = 1", "c = 1"):
        first.exec(text, {})
    assert code_cache.save(first)
    second = code_cache.CodeCache(path, code_cache.read(path))
    for text in ("d = 1", "a = 1"):
        second.exec(text, {})
    assert second.compiled == 1
    assert code_cache.save(second)
    assert [text for _, _, text in code_cache.read(path)] == ["c = 1", "d = 1", "a = 1"]


def test_install_leaves_an_exec_or_compile_it_did_not_put_there(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name, value in (("RIGCHECK_NO_CODE_CACHE", "1"), ("RIGCHECK_NO_CACHE", " Yes")):
        monkeypatch.setenv(name, value)
        assert code_cache.install(str(tmp_path / "c")) is None
        monkeypatch.delenv(name)
    monkeypatch.setenv("RIGCHECK_NO_CODE_CACHE", "0")
    cache = code_cache.install(str(tmp_path / "c"))
    assert cache is not None
    code_cache.uninstall(cache)
    monkeypatch.setattr(typing, "compile", compile, raising=False)
    assert code_cache.install(str(tmp_path / "c")) is None
    assert "exec" not in vars(dataclasses)


def test_the_console_entry_installs_it_and_saves_what_the_command_compiled(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from rigcheck import cli

    path = tmp_path / "cache.compiled"
    monkeypatch.setattr(code_cache, "cache_path", lambda: str(path))
    exits: list[object] = []
    made: list[type] = []
    installed: list[code_cache.CodeCache | None] = []
    install = code_cache.install
    monkeypatch.setattr(code_cache, "install", lambda: installed.append(install()) or installed[-1])
    monkeypatch.setattr(cli, "main", lambda: made.append(_point()) or 0)
    monkeypatch.setattr(cli, "fast_exit", exits.append)
    try:
        cli.entry()
    finally:
        if installed and installed[0] is not None:
            code_cache.uninstall(installed[0])
    assert exits == [0] and made
    assert len(code_cache.read(str(path))) >= 6


def test_a_cold_check_writes_the_file_and_reports_as_without_it(tmp_path: Path) -> None:
    """Two runs of the command line, each interpreter's bytecode under a fresh ``PYTHONPYCACHEPREFIX``: the
    first writes the file, the second reads it; both print what a run without the cache prints."""
    pair = [
        str(REPO / "specs" / "rigs" / "home-2x3090.yaml"),
        str(REPO / "specs" / "workloads" / "qwen-1.8b-lora.yaml"),
    ]
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "RIGCHECK_NO_CODE_CACHE")
    }
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "prefix")
    command = [sys.executable, "-m", "rigcheck", "check", *pair, "--color", "never"]

    def run(**extra: str) -> str:
        done = subprocess.run(
            command, capture_output=True, text=True, env={**env, **extra}, cwd=REPO, check=False
        )
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    first = run()
    written = list((tmp_path / "prefix").rglob("code_cache.*.compiled"))
    assert len(written) == 1
    before = written[0].stat().st_mtime_ns
    assert len(code_cache.read(str(written[0]))) > 200
    assert run() == first == run(RIGCHECK_NO_CODE_CACHE="1")
    assert written[0].stat().st_mtime_ns == before  # the second run compiled nothing new


def test_dataclasses_imported_after_install_gets_the_cache_and_the_finder_leaves(tmp_path: Path) -> None:
    """The console entry installs the cache before anything imports ``dataclasses`` (a ``--version`` never
    does): the module gets the cache's ``exec`` once it is imported, and the finder takes itself off."""
    script = (
        "import sys\n"
        "from rigcheck.core import code_cache\n"
        "assert 'dataclasses' not in sys.modules\n"
        f"cache = code_cache.install({str(tmp_path / 'c.compiled')!r})\n"
        "assert any(isinstance(f, code_cache._AfterImport) for f in sys.meta_path)\n"
        "import dataclasses\n"
        "assert vars(dataclasses)['exec'] == cache.exec\n"
        "assert not any(isinstance(f, code_cache._AfterImport) for f in sys.meta_path)\n"
        "@dataclasses.dataclass\n"
        "class A:\n"
        "    x: int\n"
        "methods = [key for key in cache.used if key[0] == 'exec']\n"
        "assert len(methods) == 3 and A(1) == A(1) and repr(A(2)) == 'A(x=2)', methods\n"
        "code_cache.uninstall(cache)\n"
        "assert 'exec' not in vars(dataclasses)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr


PATTERNS = [
    (r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>gib|gb)(?![a-z0-9])", re.IGNORECASE),
    ("[^\t\n\r -~\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", 0),
    (
        r"""\A\s*  # spaces
         (?<![\w.])(\d{1,4})  # a number""",
        re.VERBOSE,
    ),
    (rb"(__libc_init)|(GLIBC_([0-9.]+))", 0),
    (r"^(a|b)*?c$", re.MULTILINE | re.DOTALL),
]


@pytest.mark.skipif(code_cache._REAL_RE_COMPILE is None, reason="re is left as it is on this Python")
def test_a_regular_expression_made_through_the_cache_is_the_one_re_makes(
    installed: code_cache.CodeCache,
) -> None:
    import _sre

    for pattern, flags in PATTERNS:
        made = installed.regex(pattern, flags)
        plain = code_cache._REAL_RE_COMPILE(pattern, flags)
        assert (made, made.groupindex, made.groups, made.flags) == (
            plain,
            plain.groupindex,
            plain.groups,
            plain.flags,
        )
    assert installed.compiled == len(PATTERNS)
    assert re._compiler.compile == installed.regex  # type: ignore[attr-defined]
    re.purge()
    assert re.match(r"(?P<x>ab)+", "ababc").group("x") == "ab"  # through re itself
    assert code_cache.save(installed)
    again = code_cache.CodeCache(installed.path)
    for pattern, flags in PATTERNS:
        made = again.regex(pattern, flags)
        assert made == _sre.compile(pattern, *code_cache._sre_arguments(pattern, flags))  # type: ignore[misc]
        assert made == code_cache._REAL_RE_COMPILE(pattern, flags)
    assert again.compiled == 0
    with pytest.raises(re.error, match="missing \\)"):
        installed.regex("(ab", 0)


@pytest.mark.skipif(code_cache._REAL_RE_COMPILE is None, reason="re is left as it is on this Python")
def test_a_pattern_that_warns_warns_every_time_and_a_long_one_is_not_kept(
    installed: code_cache.CodeCache,
) -> None:
    for _ in range(2):
        with pytest.warns(FutureWarning, match="Possible nested set"):
            installed.regex("[[a]", 0)
    long = "a" * (code_cache.MAX_TEXT + 1)
    assert installed.regex(long, 0).match(long)
    assert not [key for key in installed.used if key[2] in ("[[a]", long)]  # pytest.warns' own match is kept
    code_cache.uninstall(installed)
    assert re._compiler.compile is code_cache._REAL_RE_COMPILE  # type: ignore[attr-defined]

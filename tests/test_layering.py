"""The layering rules of docs/architecture.md, checked on the source (issue 16): the core never imports
the top-level package or a plugin, a plugin never imports another plugin, and no module imports
another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rigcheck"


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, names, line) of every import in ``path``, inside functions too (not docstrings)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, [], node.lineno) for alias in node.names)
    return found


def _dotted(path: Path) -> str:
    """``rigcheck.plugins.power.psu_sustained`` for rigcheck/plugins/power/psu_sustained.py."""
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("folder", [PACKAGE, PACKAGE.parent / "tests"], ids=["rigcheck", "tests"])
def test_no_private_names_are_imported_across_modules(folder: Path) -> None:
    """Nor by a test (issue 45): tests go through what a module offers; a helper tested alone is public."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {module}.{name}"
        for path in sorted(folder.rglob("*.py"))
        for module, names, line in _imports(path)
        if module.startswith("rigcheck")
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not offenders, "import a public name, or make the helper public:\n" + "\n".join(offenders)


def test_the_core_never_imports_the_top_level_package() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in _modules("core")
        for module, names, line in _imports(path)
        if module == "rigcheck"  # ``import rigcheck`` or ``from rigcheck import ...``
    ]
    assert not offenders, "the core imports rigcheck._version, not rigcheck:\n" + "\n".join(offenders)


def test_a_plugin_never_imports_another_plugin() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {module}"
        for path in _modules("plugins")
        for module, _, line in _imports(path)
        if module.startswith("rigcheck.plugins.") and module != _dotted(path)
    ]
    assert not offenders, "move what two plugins share to rigcheck/core:\n" + "\n".join(offenders)


def test_the_core_imports_no_plugin_module() -> None:
    """The core may import the list of built-in plugins (``rigcheck.plugins``) to load them; what a
    plugin and the core share lives in the core."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {module}"
        for path in _modules("core")
        for module, _, line in _imports(path)
        if module.startswith("rigcheck.plugins.")
    ]
    assert not offenders, "move it to rigcheck/core:\n" + "\n".join(offenders)


def test_each_built_in_checker_lives_in_the_folder_of_its_family() -> None:
    """prefix -> family (rigcheck.core.engine.taxonomy) -> rigcheck/plugins/<family>/: one guess finds a rule."""
    import importlib

    from rigcheck.core.engine.checker import Checker
    from rigcheck.core.engine.taxonomy import FAMILIES, code_prefix
    from rigcheck.plugins import BUILTIN_PLUGINS

    misplaced = []
    for name in BUILTIN_PLUGINS:
        module = importlib.import_module(name)
        checkers = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Checker)]
        families = {
            FAMILIES[code_prefix(rule.code)]
            for checker in checkers
            if checker.__module__ == name
            for rule in checker.rules
        }
        folder = name.split(".")[2] if name.count(".") == 3 else None
        if families and families != {folder}:
            misplaced.append(f"{name}: rules of {sorted(families)}")
    assert not misplaced, "\n".join(misplaced)


def test_the_estimators_are_arithmetic_on_views_not_on_the_check_context() -> None:
    """rigcheck/core/estimate/ computes from specs, views and facts; what reads a CheckContext (the
    run length, the nodes a job uses, the checkpoint plan, the estimate on the rig) is a checker helper
    (rigcheck/core/engine/workload_on_rig.py, rig_estimate.py)."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in _modules("core/estimate")
        for module, names, line in _imports(path)
        if module == "rigcheck.core.engine.context" and "CheckContext" in names
    ]
    assert not offenders, "\n".join(offenders)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_circles() -> None:
    """Issue 45: no module reaches itself through rigcheck's imports, those inside functions included
    (``context -> estimate -> links -> context`` was one; the views now live in engine/views.py)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for module, names, _ in _imports(path):
            for imported in names or [""]:
                full = f"{module}.{imported}" if imported else module
                targets.add(full if full in modules else module)
        graph[name] = {target for target in targets if target in modules and target != name}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "\n".join(" -> ".join(circle) for circle in circles)


def test_the_core_is_split_by_domain() -> None:
    """A newcomer finds a module in one guess: rigcheck/core holds only domain packages."""
    loose = sorted(path.name for path in (PACKAGE / "core").glob("*.py") if path.name != "__init__.py")
    assert not loose, loose

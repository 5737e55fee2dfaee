"""The engine's modules import each other without a circle, so each can be read (and tested)
from the bottom up: the call machinery below the judges and retrievers, the settings below
the pipeline, the pipeline below the commands. Every import counts, at the top of a module,
inside a function or under TYPE_CHECKING; a module importing its own package's __init__ (its
package's public names, which Python loads first anyway) does not."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import rag_regress

ROOT = Path(rag_regress.__file__).parent


def _name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, package: str, modules: set[str]) -> set[str]:
    """The engine's modules `path` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:  # `from . import batch` imports the module batch
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & modules


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the package at `root` -> the package's modules it imports."""
    paths = {_name(path, root): path for path in root.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = {
            other
            for other in _imported(path, package, set(paths))
            if other != name and not name.startswith(other + ".")
        }
    return graph


def test_the_engine_imports_without_a_circle() -> None:
    graph = import_graph()
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the whole engine was read
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        raise AssertionError(f"modules import each other in a circle: {' -> '.join(error.args[1])}") from None
    assert order.index("rag_regress.calling.caller") < order.index("rag_regress.answers.llm.judge")
    assert order.index("rag_regress.settings.config") < order.index("rag_regress.run")


def test_a_circle_is_found_when_there_is_one(tmp_path: Path) -> None:
    """The check itself, on a package whose two modules import each other, one of them only
    inside a function; its import of its own package's __init__ is not a circle."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import A\n", encoding="utf-8")
    (package / "a.py").write_text("from . import b\nimport pkg\nA = 1\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    from .a import A\n    return A\n", encoding="utf-8")
    graph = import_graph(package)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        assert set(error.args[1]) == {"pkg.a", "pkg.b"}
    else:
        raise AssertionError("the circle through a.py and b.py was not found")

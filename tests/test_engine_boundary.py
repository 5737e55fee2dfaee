"""The line between the team's files and the template's engine, in a baked project.

- Layout: at most 8 modules at the package's top level; the engine sits in folders named by
  the flow, and imports between folders only go down the flow (never back up).
- Boundary: no engine module imports the team's `retriever.py` or `generator.py`, by any form
  of import (`import x`, `from . import x`, `from pkg import x`, `importlib`); only the
  command line does, to hand their factories to the orchestrator.
- Consequence: a team that replaces both factories with anything meeting the contract keeps
  the engine's tests green.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import bake, nox, package_of

TEAM_FILES = {"retriever", "generator"}
# Top of the flow first. A module may import modules of its own folder and of any folder
# (or top-level module) below its own; nothing imports upwards.
LAYERS = [
    {"retriever", "generator", "__main__"},  # the team's files, and `python -m`
    {"cli"},  # the only engine module that imports the team's files
    {"sweep"},  # many evaluations of a grid of settings, through run's readers
    {"run"},  # the one orchestrator
    {"interop"},
    {"render"},
    {"gate"},
    {"settings"},
    {"answers"},
    {"retrieval"},
    {"text"},  # words, stop words, stemmers: shared by retrieval and answers
    {"execution"},  # where the expensive steps run (this process or a Dask cluster)
    {"inputs"},
    {"api", "errors", "__init__"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(package_dir: Path, path: Path) -> str:
    parts = list(path.relative_to(package_dir).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def imported_modules(package: str, package_dir: Path, path: Path) -> set[str]:
    """Every module of `package` that `path` imports, by any form, as dotted names inside
    the package ("retriever", "retrieval.ranking"). `from a import b` counts `a.b` too (b may
    be a module). A dynamic import whose target cannot be read is reported as "?"."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(package_dir, path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]  # the package the module sits in
    found: set[str] = set()

    def inside(dotted: str) -> str | None:
        if dotted == package:
            return ""
        return dotted[len(package) + 1 :] if dotted.startswith(package + ".") else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = inside(alias.name)
                if name is not None:
                    found.add(name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            else:
                target = inside(node.module or "")
                if target is None:
                    continue
            if target:
                found.add(target)
            found.update(f"{target}.{alias.name}".strip(".") for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if called in {"import_module", "__import__"}:
                literal = node.args[0] if node.args else None
                if not (isinstance(literal, ast.Constant) and isinstance(literal.value, str)):
                    found.add("?")
                    continue
                name = literal.value
                if name.startswith("."):  # relative to the `package` argument, or to here
                    anchor = node.args[1] if len(node.args) > 1 else None
                    base = here
                    if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
                        base = (inside(anchor.value) or "").split(".")
                    level = len(name) - len(name.lstrip("."))
                    base = base[: len(base) - (level - 1)] if level > 1 else base
                    found.add(".".join([*base, name.lstrip(".")]).strip("."))
                elif (inner := inside(name)) is not None:
                    found.add(inner)
    return found


def import_graph(project: Path) -> dict[str, set[str]]:
    package = package_of(project)
    package_dir = project / "src" / package
    return {
        module_name(package_dir, path): imported_modules(package, package_dir, path)
        for path in sorted(package_dir.rglob("*.py"))
    }


def test_imports_are_found_in_every_form(tmp_path: Path) -> None:
    """The scanner itself: each way of importing a team file is seen."""
    package_dir = tmp_path / "pkg"
    (package_dir / "gate").mkdir(parents=True)
    forms = {
        "import pkg.retriever": "retriever",
        "from pkg import generator": "generator",
        "from .. import retriever": "retriever",
        "from ..generator import build_generator": "generator",
        "import importlib\nimportlib.import_module('pkg.retriever')": "retriever",
        "__import__('pkg.generator')": "generator",
        "import importlib\nimportlib.import_module('..generator', 'pkg.gate')": "generator",
    }
    for source, team_file in forms.items():
        module = package_dir / "gate" / "rules.py"
        module.write_text(source + "\n", encoding="utf-8")
        found = imported_modules("pkg", package_dir, module)
        assert team_file in found or "?" in found, source
    (package_dir / "gate" / "rules.py").write_text("import importlib\nimportlib.import_module(NAME)\n")
    assert "?" in imported_modules("pkg", package_dir, package_dir / "gate" / "rules.py")


def test_engine_never_imports_the_team_files_and_imports_only_go_down(default_project: Path) -> None:
    graph = import_graph(default_project)
    top_level = [name for name in graph if "." not in name and name in RANK and name not in {"__init__"}]
    modules_at_top = [p.name for p in (default_project / "src" / package_of(default_project)).glob("*.py")]
    assert len(modules_at_top) <= 8, f"{len(modules_at_top)} modules at the top: {sorted(modules_at_top)}"
    assert top_level, "the scan found the package's modules"

    for module, imports in graph.items():
        assert "?" not in imports, f"{module}: an import whose target cannot be read"
        if module.split(".")[0] in TEAM_FILES or module in {"cli"}:
            continue
        assert not (imports & TEAM_FILES), f"engine module {module} imports the team's files"

    backwards = []
    for module, imports in graph.items():
        folder = module.split(".")[0]
        for target in imports:
            head = target.split(".")[0]
            if head not in RANK:
                continue  # a name imported from a module, not a module of its own
            if module == "cli" and head in TEAM_FILES:
                continue  # the one designed exception: the CLI hands the team's factories over
            if head != folder and RANK[head] <= RANK[folder]:
                backwards.append(f"{module} -> {target}")
    assert not backwards, "imports that run up the flow:\n" + "\n".join(sorted(backwards))


SUBSTRING_RETRIEVER = '''
"""A team's first retriever: count how often the question's longer words occur."""

from __future__ import annotations

import re
from typing import Any

from .api import Document, Hit, Retriever, Tokenizer


class Substring:
    def __init__(self, documents: list[Document]):
        self.texts = {d.id: f"{d.title} {d.text}".lower() for d in documents}

    def search(self, question: str, depth: int) -> list[Hit]:
        words = [w for w in re.findall(r"\\w+", question.lower()) if len(w) > 3]
        counts = {doc_id: sum(text.count(w) for w in words) for doc_id, text in self.texts.items()}
        ranked = sorted((c, doc_id) for doc_id, c in counts.items() if c > 0)[::-1]
        return [Hit(doc_id, float(c)) for c, doc_id in ranked[:depth]]


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
    return Substring(documents)
'''

REVERSED_RETRIEVER = '''
"""The shipped retriever's hits, worst first (scores remade so they still never increase)."""

from __future__ import annotations

from typing import Any

from .api import Document, Hit, Retriever, Tokenizer
from .retrieval.retrievers import {shipped}


class Reversed:
    def __init__(self, inner: Retriever):
        self.inner = inner

    def search(self, question: str, depth: int) -> list[Hit]:
        hits = self.inner.search(question, depth)[::-1]
        return [Hit(hit.doc_id, float(len(hits) - i)) for i, hit in enumerate(hits)]


def build_retriever(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> Retriever:
    return Reversed({shipped}.build(documents, tokenize, options))
'''

TRIVIAL_GENERATOR = '''
"""A trivial generator: it always declines."""

from __future__ import annotations

from typing import Any

from .api import Answer, Document, Generator, Retriever


class AlwaysAbstains:
    def answer(self, question: str) -> Answer:
        return Answer("I don't know.", [], abstained=True)


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return AlwaysAbstains()
'''


def test_engine_tests_pass_whatever_the_team_puts_in_its_files(tmp_path: Path) -> None:
    """The team replaces build_retriever (the shipped ranking, worst first) and build_generator
    (always abstains): the engine's tests stay green, and the team's system really is what the
    command line now evaluates. (A substring retriever with the shipped generator gets the
    same full run in test_day_one.py.)"""
    project = bake(tmp_path)
    package_dir = project / "src" / package_of(project)
    (package_dir / "retriever.py").write_text(REVERSED_RETRIEVER.format(shipped="bm25").lstrip(), "utf-8")
    (package_dir / "generator.py").write_text(TRIVIAL_GENERATOR.lstrip(), encoding="utf-8")

    result = nox(project, "tests", "eval")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said[-6000:]
    passed = re.search(r"(\d+) passed", said)
    assert passed and int(passed.group(1)) > 300 and not re.search(r"\d+ failed", said)
    # The eval session ran the team's system: every answer is an abstention.
    assert "abstained on an answerable question" in said
    assert "Retriever Reversed " in said

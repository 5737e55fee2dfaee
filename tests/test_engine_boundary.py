"""The line between the team's files and the engine, in a baked project.

- The bake holds the team's Python only (its package's `__init__`, `retriever` and
  `generator`, its tests, its nox sessions); the engine is the `rag_regress` dependency.
- The team's files reach the engine through `rag_regress` alone, never through a relative
  import (a copied engine module would need one); the engine reaches the team's files only
  through the two factories eval.toml's [system] table names.
- Consequence: whatever the team puts in its two files, the project's own tests stay green,
  and the command evaluates exactly that system.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

from conftest import bake, nox, output, package_of

# What the generated Python may import besides the standard library.
ALLOWED = {"rag_regress", "pytest", "hypothesis", "nox", "packaging"}


def top_level_imports(path: Path) -> tuple[set[str], list[int]]:
    """The top-level modules `path` imports, and the line of each relative import."""
    found, relative = set(), []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                relative.append(node.lineno)
            else:
                found.add((node.module or "").split(".")[0])
    return found - {"__future__"}, relative


def test_the_teams_python_reaches_the_engine_only_as_rag_regress(default_project: Path) -> None:
    python = sorted(default_project.rglob("*.py"))
    assert python, "the bake has Python"
    for path in python:
        name = path.relative_to(default_project)
        imported, relative = top_level_imports(path)
        assert not relative, f"{name}: relative imports at lines {relative}"
        foreign = imported - ALLOWED - set(sys.stdlib_module_names)
        assert not foreign, f"{name} imports {sorted(foreign)}"
    package = default_project / "src" / package_of(default_project)
    for team_file in ("retriever.py", "generator.py"):
        imported, _ = top_level_imports(package / team_file)
        assert "rag_regress" in imported, f"{team_file} builds on the engine's types"


def test_eval_toml_names_the_teams_two_factories(default_project: Path) -> None:
    system = tomllib.loads((default_project / "eval.toml").read_text(encoding="utf-8"))["system"]
    assert set(system) == {"retriever", "generator"}
    for part, spec in system.items():
        module, function = spec.split(":")
        package, name = module.split(".")
        assert (package, name, function) == (package_of(default_project), part, f"build_{part}")
        tree = ast.parse((default_project / "src" / package / f"{name}.py").read_text(encoding="utf-8"))
        assert function in {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


REVERSED_RETRIEVER = '''
"""The shipped retriever's hits, worst first (scores remade so they still never increase)."""

from __future__ import annotations

from typing import Any

from rag_regress import Document, Hit, Retriever, Tokenizer
from rag_regress.retrieval.retrievers import {shipped}


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

from rag_regress import Answer, Document, Generator, Retriever


class AlwaysAbstains:
    def answer(self, question: str) -> Answer:
        return Answer("I don't know.", [], abstained=True)


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    return AlwaysAbstains()
'''


def test_the_command_evaluates_whatever_the_team_puts_in_its_files(tmp_path: Path) -> None:
    """The team replaces build_retriever (the shipped ranking, worst first) and build_generator
    (always abstains): `nox -s eval` evaluates exactly that system, through [system] alone.
    (The project's tests other than the gate's read eval.toml and the corpus, never these
    files: they stay green whatever is in them; a substring retriever with the shipped generator gets the full
    day-one run, `nox -s tests gate`, in test_day_one.py.)"""
    project = bake(tmp_path)
    package_dir = project / "src" / package_of(project)
    (package_dir / "retriever.py").write_text(REVERSED_RETRIEVER.format(shipped="bm25").lstrip(), "utf-8")
    (package_dir / "generator.py").write_text(TRIVIAL_GENERATOR.lstrip(), encoding="utf-8")

    result = nox(project, "eval")
    said = result.stdout + result.stderr
    assert result.returncode == 0, output(result)
    # The eval session ran the team's system: every answer is an abstention.
    assert "abstained on an answerable question" in said
    assert "Retriever Reversed " in said

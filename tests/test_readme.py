"""The root README's two commands are the ones CI runs, and they match the template."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ANSWERS, RETRIEVERS, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_command(marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n```bash\n(.*?)\n```", README, re.DOTALL)
    assert match, f"README.md lost its <!-- {marker} --> command"
    return match.group(1)


def test_generate_command_bakes_the_template_and_enters_the_default_project(default_project: Path) -> None:
    command = readme_command("readme-generate")
    assert "cookiecutter --no-input" in command
    assert f"cd build/demo/{default_project.name} && nox -s gate" in command
    # Offline, from this clone: the bake installs the engine from engine/, not its pin.
    assert 'export RAG_REGRESS_ENGINE="$PWD/engine"' in command


def test_both_commands_install_what_they_use_and_ci_runs_them() -> None:
    for marker in ("readme-generate", "readme-test"):
        assert "pip install -r requirements-dev.txt" in readme_command(marker)
        assert marker in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    sessions = re.search(r"nox -s ([\w -]+)$", readme_command("readme-test"))
    assert sessions, "the readme-test command ends with the nox sessions it runs"
    ran = sessions.group(1).split()
    assert {"lint", "engine", "tests"} <= set(ran), "lint, the engine's tests and the template's"
    defined = re.findall(r"^def (\w+)\(session", (ROOT / "noxfile.py").read_text(encoding="utf-8"), re.M)
    assert set(ran) <= set(defined), f"sessions the root noxfile lacks: {set(ran) - set(defined)}"
    assert (ROOT / "requirements-dev.txt").is_file()


def test_readme_names_every_retriever_choice() -> None:
    for retriever in RETRIEVERS:
        assert f"`{retriever}`" in README


def test_readme_names_every_judge_choice() -> None:
    for judge in ANSWERS["judge"]:
        assert f"`{judge}`" in README
    assert "RAG_EVAL_NLI_MODEL" in README, "say plainly when the semantic NLI tests are skipped"

"""Teams that run tox get the nox sessions as tox environments: the generated tox.ini installs
the same dependency groups and calls the same command, so neither runner holds logic of its own.
"""

from __future__ import annotations

import ast
import configparser
import sys
from pathlib import Path

from conftest import bake, output, run

# The sessions that run the engine's command with its subcommand of the same name.
COMMAND_SESSIONS = [
    "eval",
    "baseline",
    "gate",
    "calibrate",
    "sweep",
    "pool",
    "grade",
    "add-judgments",
    "add-labels",
]


def nox_sessions(noxfile: Path) -> set[str]:
    """The names of the sessions a noxfile defines (`@nox.session` or `@nox.session(name=...)`)."""
    names = set()
    for node in ast.walk(ast.parse(noxfile.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call else decorator
            if ast.unparse(target) != "nox.session":
                continue
            named = [k.value for k in (call.keywords if call else []) if k.arg == "name"]
            names.add(ast.literal_eval(named[0]) if named else node.name)
    return names


def tox_config(project: Path) -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(project / "tox.ini", encoding="utf-8")
    return config


def test_every_nox_session_is_a_tox_environment_running_the_same_command(default_project: Path) -> None:
    config = tox_config(default_project)
    environments = {section.removeprefix("testenv:") for section in config.sections() if ":" in section}
    assert nox_sessions(default_project / "noxfile.py") == environments
    assert environments == {*COMMAND_SESSIONS, "generate", "import-logs", "tests"}
    for name in COMMAND_SESSIONS:
        assert config[f"testenv:{name}"]["commands"].strip() == f"rag-regress {name} {{posargs}}"
    assert config["testenv:generate"]["commands"].strip() == "rag-regress golden generate {posargs}"
    assert config["testenv:import-logs"]["commands"].strip() == "rag-regress golden import-logs {posargs}"
    # The same dependency group as the noxfile's `install(session, "test")`.
    assert config["testenv:tests"]["dependency_groups"].strip() == "test"
    assert config["testenv:tests"]["commands"].strip() == "pytest {posargs}"
    assert config["tox"]["env_list"].replace(" ", "") == "tests,gate", "plain `tox` runs what CI runs"
    # RAG_REGRESS_ENGINE, when set, installs the engine from that folder first (as nox does).
    assert config["testenv"]["deps"].split() == ["{env:RAG_REGRESS_ENGINE:}"]
    assert "RAG_REGRESS_*" in config["testenv"]["pass_env"].split()


def test_tox_gate_passes_on_a_fresh_project(tmp_path: Path) -> None:
    """`tox -e gate` in a default bake: real virtualenv, real install, the shipped baseline holds."""
    project = bake(tmp_path)
    result = run(project, sys.executable, "-m", "tox", "-e", "gate")
    assert result.returncode == 0, output(result)
    assert "GATE PASSED" in result.stdout, result.stdout[-4000:]

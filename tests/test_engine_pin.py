"""The engine a project depends on: the template's release version, or the template commit it
was made from, and never a path of the machine that baked it.

- cookiecutter.json's `_engine_version` is the engine's own version.
- From a local folder without a remote: `rag-regress[extras]==<version>`.
- From a local clone whose origin is a URL, from a git URL with cookiecutter, or with cruft:
  `rag-regress[extras] @ git+URL@COMMIT#subdirectory=engine`, and that requirement installs
  the engine of that commit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    ANSWERS,
    ENGINE_VERSION,
    ENV,
    RETRIEVER_EXTRAS,
    RETRIEVERS,
    ROOT,
    bake,
    copy_template,
    engine_pin,
    project_files,
    sh,
    template_repository,
)

GIT_PIN = re.compile(
    r"rag-regress(?:\[[a-z,]+\])? @ git\+(?P<url>\S+)@(?P<commit>[0-9a-f]{40})#subdirectory=engine"
)


def extras(retriever: str) -> str:
    chosen = sorted(RETRIEVER_EXTRAS[retriever])
    return f"[{','.join(chosen)}]" if chosen else ""


def assert_names_no_path_of(project: Path, *paths: Path, allowed: dict[str, str] | None = None) -> None:
    """No file of the bake holds any of `paths` (as given or resolved), except `allowed`:
    file name -> the one string (the URL the user gave) that may carry it there."""
    needles = {str(p) for p in paths} | {str(p.resolve()) for p in paths}
    for path in project_files(project):
        name = str(path.relative_to(project))
        text = path.read_text(encoding="utf-8", errors="replace")
        if allowed and name in allowed:
            text = text.replace(allowed[name], "")
        found = [needle for needle in needles if needle in text]
        assert not found, f"{name} names {found}"


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The template committed to a git repository without a remote (read by bakes only)."""
    return template_repository(tmp_path_factory.mktemp("repository") / "template")


def test_cookiecutter_json_carries_the_engines_version() -> None:
    assert ANSWERS["_engine_version"] == ENGINE_VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", ENGINE_VERSION)


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_a_local_folder_without_a_remote_pins_the_release(
    tmp_path: Path, repository: tuple[Path, str], retriever: str
) -> None:
    folder, _ = repository
    project = bake(tmp_path / "out", f"retriever={retriever}", template=folder)
    assert engine_pin(project) == f"rag-regress{extras(retriever)}=={ENGINE_VERSION}"
    assert_names_no_path_of(project, folder, ROOT)


def test_a_folder_that_is_no_git_clone_pins_the_release(tmp_path: Path) -> None:
    template = copy_template(tmp_path / "template")
    project = bake(tmp_path / "out", template=template)
    assert engine_pin(project) == f"rag-regress=={ENGINE_VERSION}"
    assert_names_no_path_of(project, template, ROOT)


def test_the_default_bake_names_no_path_of_this_machine(default_project: Path) -> None:
    assert_names_no_path_of(default_project, ROOT, default_project.parent)


def test_a_local_clone_of_a_url_pins_that_url_at_its_checked_out_commit(tmp_path: Path) -> None:
    """The clone's `origin` is where the team's CI fetches from; its path here is not."""
    repository, commit = template_repository(tmp_path / "template")
    url = "https://git.example.com/platform/rag-eval-template.git"
    sh(repository, "git", "remote", "add", "origin", url)
    project = bake(tmp_path / "out", "retriever=tfidf", template=repository)
    assert engine_pin(project) == f"rag-regress[tfidf] @ git+{url}@{commit}#subdirectory=engine"
    assert_names_no_path_of(project, repository, ROOT)


def test_cookiecutter_from_a_git_url_pins_the_commit_it_cloned(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    folder, commit = repository
    url = f"file://{folder}"  # given as git+URL: cookiecutter takes a URL for git's by its "git"
    config = tmp_path / "cookiecutter.yaml"  # its clone goes here, not under the home folder
    config.write_text(
        f"cookiecutters_dir: {json.dumps(str(tmp_path / 'clones'))}\n"
        f"replay_dir: {json.dumps(str(tmp_path / 'replay'))}\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "cookiecutter", "--no-input", "--config-file", str(config), f"git+{url}"]
    result = subprocess.run(
        [*command, "-o", str(tmp_path / "out")], capture_output=True, text=True, env=ENV, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (project,) = (tmp_path / "out").iterdir()
    assert engine_pin(project) == f"rag-regress @ git+{url}@{commit}#subdirectory=engine"
    assert_names_no_path_of(project, folder, ROOT, tmp_path / "clones", allowed={"pyproject.toml": url})


def test_cruft_create_pins_the_commit_and_the_pin_installs_that_engine(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    """`cruft create file://CLONE`: the pin names the clone's commit; pip reads the pin and
    installs the engine of that commit (without its dependencies: the pin is what is checked)."""
    folder, commit = repository
    url = f"file://{folder}"
    command = [
        sys.executable,
        "-m",
        "cruft",
        "create",
        "--no-input",
        "--output-dir",
        str(tmp_path / "out"),
        url,
    ]
    created = subprocess.run(command, capture_output=True, text=True, env=ENV, check=False)
    assert created.returncode == 0, created.stdout + created.stderr
    (project,) = (tmp_path / "out").iterdir()
    pin = engine_pin(project)
    assert pin == f"rag-regress @ git+{url}@{commit}#subdirectory=engine", pin
    assert GIT_PIN.fullmatch(pin)
    cruft = json.loads((project / ".cruft.json").read_text(encoding="utf-8"))
    assert cruft["template"] == str(folder) and cruft["commit"] == commit  # cruft records the path
    # The template the user gave, where cruft and the pin need it, and nowhere else.
    allowed = {".cruft.json": str(folder), "pyproject.toml": url}
    assert_names_no_path_of(project, folder, ROOT, allowed=allowed)

    # virtualenv, as nox makes them: its pip reads a git+file: URL (the pip that Python 3.11's
    # ensurepip brings, 23.2, refuses a URL without a host).
    environment = tmp_path / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "virtualenv", "-q", str(environment)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    python = str(environment / "bin" / "python")
    installed = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", pin], capture_output=True, text=True, env=ENV
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    check = (
        "import json, importlib.metadata as m, rag_regress; "
        "d = m.distribution('rag-regress'); "
        "print(json.dumps([rag_regress.__version__, json.loads(d.read_text('direct_url.json'))]))"
    )
    imported = subprocess.run([python, "-c", check], capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    version, direct_url = json.loads(imported.stdout)
    assert version == ENGINE_VERSION
    assert direct_url["url"] == url and direct_url["subdirectory"] == "engine"
    assert direct_url["vcs_info"]["commit_id"] == commit

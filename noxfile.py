"""Sessions for the template itself.

nox -s tests       bake every choice, run each baked project's own tests and gate, check hooks
nox -s lint        ruff on the template's own Python (the templated folder is excluded)
nox -s baselines   remake the baseline each retriever choice ships with (review, then commit)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).resolve().parent
ANSWERS = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
SHIPPED_BASELINES = ROOT / "{{cookiecutter.project_slug}}" / "evals" / "baselines"


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-r", "requirements-dev.txt")
    session.run("pytest", *session.posargs)


# The template's own Python. The templated folder is not valid Python until rendered: the
# tests lint each baked project instead (tests/test_bake.py).
LINTED = ["noxfile.py", "local_extensions.py", "hooks", "tests"]


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)


@nox.session
@nox.parametrize("retriever", ANSWERS["retriever"])
def baselines(session: nox.Session, retriever: str) -> None:
    """Bake with default answers and this retriever, run its `baseline`, copy it back."""
    session.install("cookiecutter")
    out = Path(session.create_tmp()) / f"bake-{retriever}"
    shutil.rmtree(out, ignore_errors=True)
    session.run("cookiecutter", "--no-input", str(ROOT), "-o", str(out), f"retriever={retriever}")
    (project,) = out.iterdir()
    session.install(str(project))
    package = next((project / "src").iterdir()).name
    # The bake sits inside this repository: keep the template's own commit out of the receipt.
    outside_git = {"GIT_CEILING_DIRECTORIES": str(out.resolve())}
    with session.chdir(project):
        session.run(package, "baseline", env=outside_git)
    SHIPPED_BASELINES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(project / "evals" / "baseline.json", SHIPPED_BASELINES / f"{retriever}.json")
    session.log(f"updated {SHIPPED_BASELINES / f'{retriever}.json'}")

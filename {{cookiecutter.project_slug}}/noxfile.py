"""Sessions: `nox -s eval`, `nox -s baseline`, `nox -s gate`, `nox -s tests` (CI: tests gate),
`nox -s typecheck` (mypy, strict), `nox -s calibrate` (the faithfulness judge against human
labels), `nox -s sweep` (a grid of settings against the current ones) and `nox -s screenshot`
(the gate's HTML report rendered by headless Chromium).

Each session installs the project plus the dependency groups from pyproject.toml, then calls
the `{{ cookiecutter.package_name }}` command: all the logic lives in src/, configured by eval.toml.
Extra arguments go through, e.g. `nox -s eval -- --quiet` or `nox -s tests -- -k metrics`.
tox.ini has the same sessions as tox environments (`tox -e gate`), for teams that run tox.
"""

import tomllib
from pathlib import Path

import nox

PYPROJECT = nox.project.load_toml("pyproject.toml")
COMMAND = "{{ cookiecutter.package_name }}"


def judge_backend() -> str:
    """[judge] backend from eval.toml ("lexical" if unreadable: the command then says why)."""
    try:
        return tomllib.loads(Path("eval.toml").read_text(encoding="utf-8"))["judge"]["backend"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return "lexical"


nox.needs_version = ">=2025.2.9"  # dependency groups read from pyproject.toml

# An embedding retriever and the NLI judge need torch. Pip installs it, pinned in the same
# command as the project so it is never resolved freely (that would pull a multi-GB CUDA
# build); such projects use pip (virtualenv), not uv, so that PIP_EXTRA_INDEX_URL can point it
# at PyTorch's CPU-only build. See {{ 'README, "Installing torch"' if cookiecutter.retriever in ["dense", "hybrid"] else 'README, "The NLI judge"' }}.
RETRIEVER_NEEDS_TORCH = {{ "True  # the retriever embeds with sentence-transformers" if cookiecutter.retriever in ["dense", "hybrid"] else "False  # the retriever needs no model" }}
TORCH = ["torch==2.13.0"] if RETRIEVER_NEEDS_TORCH or judge_backend() == "nli" else []
nox.options.default_venv_backend = "virtualenv" if TORCH else "uv|virtualenv"  # uv: much faster
nox.options.sessions = ["tests", "gate"]
nox.options.reuse_venv = "yes"  # a second run reuses each session's virtualenv
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *groups: str) -> None:
    project = ".[nli]" if judge_backend() == "nli" else "."
    session.install("-e", project, *TORCH, *nox.project.dependency_groups(PYPROJECT, *groups))


def run_command(session: nox.Session, *args: str) -> None:
    """Run the command; on failure exit nox with the command's own exit code (2 or 3),
    not nox's generic 1, so CI can tell invalid input from a quality regression."""
    try:
        session.run(COMMAND, *args, *session.posargs)
    except nox.command.CommandFailed as failure:
        session.log(f"{COMMAND} {args[0]} exited with code {failure.return_code}")
        raise SystemExit(failure.return_code) from None


@nox.session(name="eval")
def eval_(session: nox.Session) -> None:
    """Evaluate the golden set: per-question table, aggregates, slices; writes the report."""
    install(session)
    run_command(session, "eval")


@nox.session
def baseline(session: nox.Session) -> None:
    """Deliberately rewrite the committed baseline (review the diff, then commit it)."""
    install(session)
    run_command(session, "baseline")


@nox.session
def gate(session: nox.Session) -> None:
    """Compare a fresh evaluation with the baseline. Exit 3 on regression, 2 on bad input."""
    install(session)
    run_command(session, "gate")


@nox.session
def sweep(session: nox.Session) -> None:
    """Try the [sweep] grid of eval.toml against the current settings (docs/sweep.md): a table,
    build/sweep.md and build/sweep.html; a winner only when significant and confirmed."""
    install(session)
    run_command(session, "sweep")


@nox.session
def screenshot(session: nox.Session) -> None:
    """Open the gate's HTML report in headless Chromium, offline; save a PNG next to it.
    Needs Chromium (Debian/Ubuntu: `apt-get install chromium`); run `nox -s gate` first."""
    session.run("python", "tools/screenshot.py", *session.posargs)  # standard library only


@nox.session
def tests(session: nox.Session) -> None:
    """Unit and Hypothesis property tests (the quality gate itself: `pytest -m gate`)."""
    install(session, "test")
    session.run("pytest", "-n", "auto", *session.posargs)  # pytest-xdist: one worker per core


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the package (settings: [tool.mypy] in pyproject.toml)."""
    # mypy reads the source, so only mypy and the type information it needs are installed
    # (the typecheck group): not the project's dependencies, so never torch or a model.
    session.install(*nox.project.dependency_groups(PYPROJECT, "typecheck"))
    session.run("mypy", *session.posargs)


@nox.session
def calibrate(session: nox.Session) -> None:
    """Score the judge against evals/judge_labels.jsonl: accuracy, precision, recall, kappa."""
    install(session)
    run_command(session, "calibrate")

"""Sessions: `nox -s eval`, `nox -s baseline`, `nox -s gate`, `nox -s tests` (CI: tests gate),
`nox -s calibrate` (the faithfulness judge against human labels) and `nox -s screenshot`
(the gate's HTML report rendered by headless Chromium).

Each session installs the project plus the dependency groups from pyproject.toml, then calls
the `{{ cookiecutter.package_name }}` command: all the logic lives in src/, configured by eval.toml.
Extra arguments go through, e.g. `nox -s eval -- --quiet` or `nox -s tests -- -k metrics`.
"""

import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"  # uv when installed: much faster
nox.options.sessions = ["tests", "gate"]
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")
COMMAND = "{{ cookiecutter.package_name }}"


def judge_backend() -> str:
    """[judge] backend from eval.toml ("lexical" if unreadable: the command then says why)."""
    try:
        return tomllib.loads(Path("eval.toml").read_text(encoding="utf-8"))["judge"]["backend"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return "lexical"


# The NLI judge needs torch. Pin it in the same pip command as sentence-transformers so pip
# never resolves it freely; uv cannot see every torch build, so these sessions use pip
# (virtualenv). For the CPU-only build, set PIP_EXTRA_INDEX_URL (see README, "The NLI judge").
TORCH_FOR_NLI = ["torch==2.13.0"] if judge_backend() == "nli" else []
VENV_FOR_NLI = "virtualenv" if TORCH_FOR_NLI else None


def install(session: nox.Session, *groups: str) -> None:
    project = ".[nli]" if TORCH_FOR_NLI else "."
    session.install("-e", project, *TORCH_FOR_NLI, *nox.project.dependency_groups(PYPROJECT, *groups))


def run_command(session: nox.Session, *args: str) -> None:
    """Run the command; on failure exit nox with the command's own exit code (2 or 3),
    not nox's generic 1, so CI can tell invalid input from a quality regression."""
    try:
        session.run(COMMAND, *args, *session.posargs)
    except nox.command.CommandFailed as failure:
        session.log(f"{COMMAND} {args[0]} exited with code {failure.return_code}")
        raise SystemExit(failure.return_code) from None


@nox.session(name="eval", venv_backend=VENV_FOR_NLI)
def eval_(session: nox.Session) -> None:
    """Evaluate the golden set: per-question table, aggregates, slices; writes the report."""
    install(session)
    run_command(session, "eval")


@nox.session(venv_backend=VENV_FOR_NLI)
def baseline(session: nox.Session) -> None:
    """Deliberately rewrite the committed baseline (review the diff, then commit it)."""
    install(session)
    run_command(session, "baseline")


@nox.session(venv_backend=VENV_FOR_NLI)
def gate(session: nox.Session) -> None:
    """Compare a fresh evaluation with the baseline. Exit 3 on regression, 2 on bad input."""
    install(session)
    run_command(session, "gate")


@nox.session(venv_backend=VENV_FOR_NLI)
def screenshot(session: nox.Session) -> None:
    """Open the gate's HTML report in headless Chromium, offline; save a PNG next to it.
    Needs Chromium (Debian/Ubuntu: `apt-get install chromium`); run `nox -s gate` first."""
    install(session)
    session.run("python", "-m", f"{COMMAND}.browser")


@nox.session(venv_backend=VENV_FOR_NLI)
def tests(session: nox.Session) -> None:
    """Unit and Hypothesis property tests (the quality gate itself: `pytest -m gate`)."""
    install(session, "test")
    session.run("pytest", *session.posargs)


@nox.session(venv_backend=VENV_FOR_NLI)
def calibrate(session: nox.Session) -> None:
    """Score the judge against evals/judge_labels.jsonl: accuracy, precision, recall, kappa."""
    install(session)
    run_command(session, "calibrate")

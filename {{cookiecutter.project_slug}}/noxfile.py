"""Sessions: `nox -s eval`, `nox -s baseline`, `nox -s gate`, `nox -s tests` (CI: tests gate).

Each session installs the project plus the dependency groups from pyproject.toml, then calls
the `{{ cookiecutter.package_name }}` command: all the logic lives in src/, configured by eval.toml.
Extra arguments go through, e.g. `nox -s eval -- --quiet` or `nox -s tests -- -k metrics`.
"""

import nox

# The dense retriever needs torch: installed by pip (uv does not see the local CPU wheel),
# pinned in the same command as the project. See README, "Installing torch".
TORCH = {{ '["torch==2.13.0"]' if cookiecutter.retriever in ["dense", "hybrid"] else "[]" }}
nox.options.default_venv_backend = "virtualenv" if TORCH else "uv|virtualenv"  # uv: much faster
nox.options.sessions = ["tests", "gate"]
nox.options.error_on_missing_interpreters = True

PYPROJECT = nox.project.load_toml("pyproject.toml")
COMMAND = "{{ cookiecutter.package_name }}"


def install(session: nox.Session, *groups: str) -> None:
    session.install("-e", ".", *TORCH, *nox.project.dependency_groups(PYPROJECT, *groups))


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
def tests(session: nox.Session) -> None:
    """Unit and Hypothesis property tests (the quality gate itself: `pytest -m gate`)."""
    install(session, "test")
    session.run("pytest", "-n", "auto", *session.posargs)  # pytest-xdist: one worker per core

"""Sessions: `nox -s eval`, `nox -s baseline`, `nox -s gate`, `nox -s tests` (CI: tests gate),
`nox -s calibrate` (the faithfulness judge against human labels) and `nox -s sweep` (the
[sweep] grid of eval.toml against the current settings). Growing the golden set (README):
`nox -s generate` (candidates from [golden]'s model), `nox -s import-logs -- FILE` (candidates
from real questions in a log export), `nox -s pool` (documents nobody graded),
`nox -s grade -- --pool build/pool.jsonl` (a page to grade them in), `nox -s add-judgments --
FILE` (merge what the page downloaded). The judge on your own answers: `nox -s grade --
--answers` (a page to label the sentences of build/report.json's answers), `nox -s add-labels
-- FILE` (merge the labels into evals/judge_labels.jsonl, which `nox -s calibrate` reads).

Each installs this project, whose one dependency is the rag-regress engine pinned in
pyproject.toml, and runs the `rag-regress` command on eval.toml. Extra arguments go through:
`nox -s eval -- --all`, `nox -s tests -- -k judge`. tox.ini has the same sessions.
"""

import os
import tomllib
from pathlib import Path

import nox
from packaging.requirements import Requirement

PYPROJECT = nox.project.load_toml("pyproject.toml")
COMMAND = "rag-regress"
# A folder holding the engine's source (its pyproject.toml) to install instead of the pin:
# for working offline from a clone of the template, or on the engine itself.
ENGINE_FROM = os.environ.get("RAG_REGRESS_ENGINE", "")


def needs_torch() -> bool:
    """An embedding retriever or the NLI judge: sentence-transformers, so torch."""
    engine = next(Requirement(r) for r in PYPROJECT["project"]["dependencies"] if r.startswith("rag-regress"))
    try:
        judge = tomllib.loads(Path("eval.toml").read_text(encoding="utf-8"))["judge"]["backend"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
        judge = "lexical"  # unreadable: the command then says why
    return bool(engine.extras & {"dense", "hybrid", "qdrant", "nli"}) or judge == "nli"


nox.needs_version = ">=2025.2.9"  # dependency groups read from pyproject.toml
# torch is pinned in the same pip command as the project, so it is never resolved freely (a
# multi-GB CUDA build); such projects use pip (virtualenv), not uv, so that
# PIP_EXTRA_INDEX_URL can point it at PyTorch's CPU-only builds.
TORCH = ["torch==2.13.0"] if needs_torch() else []
nox.options.default_venv_backend = "virtualenv" if TORCH else "uv|virtualenv"
nox.options.sessions = ["tests", "gate"]
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True


def install(session: nox.Session, *groups: str) -> None:
    extra = nox.project.dependency_groups(PYPROJECT, *groups)
    if not ENGINE_FROM:
        session.install("-e", ".", *TORCH, *extra)
        return
    # The engine from ENGINE_FROM with the pin's extras, the project's other dependencies as
    # declared, then the project itself without resolving its pin again.
    requirements = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    engine = next(r for r in requirements if r.name == "rag-regress")
    others = [str(r) for r in requirements if r.name != "rag-regress"]
    extras = f"[{','.join(sorted(engine.extras))}]" if engine.extras else ""
    session.install("-e", f"{ENGINE_FROM}{extras}", *others, *TORCH, *extra)
    session.install("--no-deps", "-e", ".")


def run_command(session: nox.Session, *args: str) -> None:
    """Run the command; on failure exit nox with the command's own code (2 invalid input,
    3 regression), not nox's generic 1, so CI can tell them apart."""
    try:
        session.run(COMMAND, *args, *session.posargs)
    except nox.command.CommandFailed as failure:
        session.log(f"{COMMAND} {args[0]} exited with code {failure.return_code}")
        raise SystemExit(failure.return_code) from None


@nox.session(name="eval")
def eval_(session: nox.Session) -> None:
    """Evaluate the golden set: summary, failed questions, slices; writes the report."""
    install(session)
    run_command(session, "eval")


@nox.session
def baseline(session: nox.Session) -> None:
    """Rewrite the committed baseline on purpose (review the diff, then commit it). `-- --fit-floors`
    also fits the gate's floors to it, as a team's own service or LLM needs for its first baseline."""
    install(session)
    run_command(session, "baseline")


@nox.session
def gate(session: nox.Session) -> None:
    """Compare a fresh evaluation with the baseline. Exit 3 on regression, 2 on bad input."""
    install(session)
    run_command(session, "gate")


@nox.session
def calibrate(session: nox.Session) -> None:
    """Score the judge against evals/judge_labels.jsonl: accuracy, precision, recall, kappa."""
    install(session)
    run_command(session, "calibrate")


@nox.session
def sweep(session: nox.Session) -> None:
    """Try the [sweep] grid against the current settings; names a winner only when it is one."""
    install(session)
    run_command(session, "sweep")


@nox.session
def generate(session: nox.Session) -> None:
    """Candidate questions from the corpus through [golden]'s model, to evals/candidates.jsonl."""
    install(session)
    run_command(session, "golden", "generate")


@nox.session(name="import-logs")
def import_logs(session: nox.Session) -> None:
    """Candidate questions from real ones in a log export (`nox -s import-logs -- FILE`): JSONL, CSV
    or an OpenTelemetry span export, redacted, deduplicated and sampled, to evals/candidates.jsonl."""
    install(session)
    run_command(session, "golden", "import-logs")


@nox.session
def pool(session: nox.Session) -> None:
    """The unjudged documents of the baseline's and this run's top k, to build/pool.jsonl."""
    install(session)
    run_command(session, "pool")


@nox.session
def grade(session: nox.Session) -> None:
    """A self-contained page to grade candidates or pooled documents in (build/grade.html)."""
    install(session)
    run_command(session, "grade")


@nox.session(name="add-judgments")
def add_judgments(session: nox.Session) -> None:
    """Merge the judgments file the grading page downloaded into the golden set."""
    install(session)
    run_command(session, "add-judgments")


@nox.session(name="add-labels")
def add_labels(session: nox.Session) -> None:
    """Merge the labels file a `grade --answers` page downloaded into the judge's labels."""
    install(session)
    run_command(session, "add-labels")


@nox.session
def tests(session: nox.Session) -> None:
    """Your tests: metric properties, the judge on known hallucinations (`-m gate`: the gate)."""
    install(session, "test")
    session.run("pytest", *session.posargs)

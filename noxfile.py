"""Sessions for the template and its engine.

nox -s engine      the engine's own tests (engine/tests: units, properties, conformance with
                   trec_eval and ranx, fuzz), once, with every retriever's dependencies
nox -s tests       bake every choice, run each baked project's own tests and gate, check hooks,
                   cruft updates and the engine pin
nox -s typecheck   mypy --strict on the engine (its typecheck group; no torch, no models)
nox -s lint        ruff on the template's and the engine's Python (the templated folder is excluded)
nox -s baselines   remake the baseline each retriever choice ships with (review, then commit)
nox -s bench       speed and quality benchmark, printed as tables (see bench/bench.py)
nox -s live        opt-in: the LLM judge, calibrate --compare and golden generate against a real
                   OpenAI-compatible server (RAG_REGRESS_LIVE_BASE_URL, RAG_REGRESS_LIVE_MODEL)
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from local_extensions import choice_parts  # noqa: E402  (the template's root, just put on the path)

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "typecheck", "engine", "tests"]

ANSWERS = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
SHIPPED_BASELINES = ROOT / "{{cookiecutter.project_slug}}" / "evals" / "baselines"
# What each retriever choice's part file (templates/retrievers/NAME.jinja) declares.
PARTS = choice_parts("retrievers")
# Choices whose project needs torch, pinned in the same command (never resolved freely: a
# multi-GB CUDA build). Offline: models come from packages, never from a hub.
TORCH_CHOICES = {name for name, part in PARTS.items() if part.torch}
# Choices that call the team's own service: no baseline can be made for them here.
SERVICE_CHOICES = {name for name, part in PARTS.items() if part.service}
TORCH = "torch==2.13.0"
OFFLINE = {"HF_HUB_OFFLINE": "1"}
ENGINE = ROOT / "engine"
# Baked projects install the engine from this clone instead of their pin: offline, and the
# engine under test rather than a published release (the projects' noxfile reads it).
FROM_THIS_CLONE = {"RAG_REGRESS_ENGINE": str(ENGINE)}


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the engine's source: the typecheck group only, never torch or a model."""
    project = nox.project.load_toml(str(ENGINE / "pyproject.toml"))
    session.install(*nox.project.dependency_groups(project, "typecheck"))
    with session.chdir(ENGINE):
        session.run("mypy", *session.posargs)


def torch(session: nox.Session) -> list[str]:
    """TORCH for `session.install`: the wheel pip picks for it, when pip can fetch one. pip
    reads pip.conf (a local CPU build's folder, PyTorch's CPU index) and uv does not, so pip
    chooses the file and uv installs it, compiled as pip would (else, with
    PYTHONDONTWRITEBYTECODE set, every process compiles torch again): the engine's session
    installs in 31 s instead of 93 s."""
    if session.venv_backend != "uv":
        return [TORCH]
    folder = ROOT / ".nox" / "_wheels"
    fetched = session.run(
        sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), TORCH,
        external=True, success_codes=[0, 1], silent=True,
    )  # fmt: skip
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"  # pip fetched it for this Python
    wheels = sorted(folder.glob(f"torch-{TORCH.split('==')[1]}*-{python}-*.whl"))
    if not wheels:  # no pip beside nox, or no wheel for this machine: uv resolves the pin
        session.log(f"pip could not fetch {TORCH}: {str(fetched)[-300:]}")
        return ["--compile-bytecode", TORCH]
    return ["--compile-bytecode", str(wheels[-1])]


@nox.session
def engine(session: nox.Session) -> None:
    """The engine's tests, with the dense, hybrid, TF-IDF and Qdrant retrievers' dependencies
    (torch pinned) and its test group."""
    project = nox.project.load_toml(str(ENGINE / "pyproject.toml"))
    group = nox.project.dependency_groups(project, "test")
    session.install("-e", f"{ENGINE}[tfidf,dense,qdrant]", *torch(session), *group)
    # Bytecode written even where PYTHONDONTWRITEBYTECODE is set: the tests start hundreds of
    # engine processes, and each would compile the engine again (227 s -> 202 s).
    env = {**OFFLINE, "PYTHONDONTWRITEBYTECODE": ""}
    scifact = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
    if scifact.is_file():  # every SciFact sentence supported by its own document (the judge)
        env["RAG_EVAL_SELF_SUPPORT_CORPUS"] = str(scifact)
    with session.chdir(ENGINE):
        session.run("pytest", "-n", "2", *session.posargs, env=env)


@nox.session
def live(session: nox.Session) -> None:
    """Opt-in: the engine's tests/live against the real model server RAG_REGRESS_LIVE_* names."""
    for required in ("RAG_REGRESS_LIVE_BASE_URL", "RAG_REGRESS_LIVE_MODEL"):
        if not os.environ.get(required, "").strip():
            session.error(
                f"set {required}: `nox -s live` runs the engine against a real OpenAI-compatible server "
                "(e.g. RAG_REGRESS_LIVE_BASE_URL=http://127.0.0.1:8012/v1 RAG_REGRESS_LIVE_MODEL=my-model)"
            )
    project = nox.project.load_toml(str(ENGINE / "pyproject.toml"))
    group = nox.project.dependency_groups(project, "test")
    session.install("-e", f"{ENGINE}[tfidf,dense,qdrant]", *torch(session), *group)
    env = dict(OFFLINE)
    env |= {name: value for name, value in os.environ.items() if name.startswith("RAG_REGRESS_LIVE_")}
    key = os.environ.get("RAG_REGRESS_LIVE_API_KEY_ENV", "").strip()
    if key and key in os.environ:  # the server's key, under the name the tests give [judge] and [golden]
        env[key] = os.environ[key]
    with session.chdir(ENGINE):
        session.run("pytest", "tests/live", "-p", "no:randomly", "-v", *session.posargs, env=env)


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-r", "requirements-dev.txt")
    # Three tests at once on two cores: a bake waits on installs and the package index for
    # much of its time, so a third keeps the cores busy (330 s against 353 s with two). Work
    # stealing keeps all busy to the end (the bakes take from seconds to minutes).
    # `nox -s tests -- -n 0` runs them one after another.
    session.run("pytest", "-n", "3", "--dist", "worksteal", *session.posargs, env=FROM_THIS_CLONE)


# The template's own Python. The templated folder is not valid Python until rendered: the
# tests lint each baked project instead (tests/test_bake.py).
LINTED = ["noxfile.py", "local_extensions.py", "hooks", "tests", "bench", "engine"]


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)


def bake_and_install(session: nox.Session, retriever: str) -> Path:
    """Bake with default answers and this retriever into the session's tmp; install it."""
    session.install("cookiecutter")
    out = Path(session.create_tmp()) / f"bake-{retriever}"
    shutil.rmtree(out, ignore_errors=True)
    session.run("cookiecutter", "--no-input", str(ROOT), "-o", str(out), f"retriever={retriever}")
    (project,) = out.iterdir()
    extras = f"[{PARTS[retriever].extra}]" if PARTS[retriever].extra else ""
    pinned = torch(session) if retriever in TORCH_CHOICES else []
    session.install("-e", f"{ENGINE}{extras}", *pinned)
    session.install("--no-deps", "-e", str(project))
    return project


@nox.session
@nox.parametrize("retriever", [r for r in ANSWERS["retriever"] if r not in SERVICE_CHOICES])
def baselines(session: nox.Session, retriever: str) -> None:
    """Bake with default answers and this retriever, run its `baseline`, copy it back."""
    project = bake_and_install(session, retriever)
    # The bake sits inside this repository: keep the template's own commit out of the receipt.
    outside_git = {"GIT_CEILING_DIRECTORIES": str(project.parent.resolve())}
    with session.chdir(project):
        session.run("rag-regress", "baseline", env={**OFFLINE, **outside_git})
    SHIPPED_BASELINES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(project / "evals" / "baseline.json", SHIPPED_BASELINES / f"{retriever}.json")
    session.log(f"updated {SHIPPED_BASELINES / f'{retriever}.json'}")


@nox.session
def bench(session: nox.Session) -> None:
    """Bake the hybrid choice (it holds the BM25 and dense retrievers) and benchmark it:
    metrics vs pytrec_eval and ranx, SciFact quality, BM25 vs bm25s, 10k x 100k eval, calls
    in flight and the output cache, local vs Dask executor, warm gate time. Prints tables and
    writes build/bench.json. Options after `--` go to bench/bench.py, e.g.
    `nox -s bench -- --only metrics --json /tmp/bench.json`."""
    bake_and_install(session, "hybrid")
    # bm25s: the reference sparse-matrix BM25; dask: the project's executor extra.
    session.install(
        "pytrec-eval-terrier", "ranx", "nox", "cookiecutter", "bm25s", "dask[distributed]>=2024.8"
    )
    scifact = os.environ.get("SCIFACT", str(ROOT.parent / "shared" / "datasets" / "scifact"))
    with session.chdir(session.create_tmp()):  # the embedding cache goes here
        session.run(
            "python",
            str(ROOT / "bench" / "bench.py"),
            "--package=rag_regress",  # the engine's modules; the bench reads the bake for its demo
            f"--scifact={scifact}",
            *session.posargs,
            env={**OFFLINE, **FROM_THIS_CLONE},
        )

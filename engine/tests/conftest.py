"""Shared test helpers: the shipped system, a deterministic Hypothesis profile and a tiny
project in tmp_path.

Whose tests are whose: everything under tests/engine/ tests the template's engine (it mirrors
the package's folders). Those tests never use your retriever.py or generator.py: they build
the retriever this project shipped with and the stand-in generator directly (`SHIPPED`), so
they stay green whatever you put in your files. tests/test_quality_gate.py is yours: it runs
the gate on your system, your data and your baseline.

Unit and command-line tests never read the shipped demo data in evals/ (teams replace it):
they write the small corpus, golden set and eval.toml below into a temporary folder.

The tiny project is built so that every query matches exactly the documents listed next to
it, whatever the retriever (BM25 or TF-IDF), so expected numbers can be worked out by hand:

  q1 "SSO"               -> sso-setup (relevant, 3), password-policy (mentions SSO once)
  q2 "2FA"               -> 2fa-setup (relevant, 3)
  q3 "API"               -> api-keys (relevant, 3)
  q4 "download invoices" -> invoices (relevant, 3); export-data (relevant, 1) is never found
  q5 unanswerable        -> left out of every average

With `min_length = 4` the acronyms SSO, 2FA and API are no longer tokens, so q1-q3 retrieve
nothing: the regression the gate exists to catch.

Answers come from the stand-in generator (the best passage, verbatim) and hold each
question's `must_include`; q5 is answered (with the 2FA passage: "app"), wrongly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a model hub

from rag_regress import cli, run
from rag_regress.answers import stand_in
from rag_regress.api import System
from rag_regress.inputs.reports import Report
from rag_regress.net import redact
from rag_regress.retrieval.retrievers import bm25 as shipped_retriever
from rag_regress.settings.config import Config

# The system the engine's tests run: the retriever this project shipped with and the
# stand-in generator, built directly (never through the team's retriever.py/generator.py).
SHIPPED = System(shipped_retriever.build, stand_in.build)


def run_cli(argv: list[str], system: System = SHIPPED) -> int:
    """The command line, as `main` runs it, on `system` (the shipped one unless given)."""
    return cli.main(argv, system)


def evaluate_shipped(
    config: Config, judge_stats: dict[str, int] | None = None, system: System = SHIPPED
) -> dict[str, Any]:
    """The orchestrator's evaluate() on `system` (the shipped one unless given), as the JSON
    object the report file holds (the layout teams' scripts read)."""
    return run.evaluate(config, system, judge_stats).to_dict()


def as_report(data: dict[str, Any]) -> Report:
    """A report's JSON object read back as a typed Report, as a baseline is read."""
    return Report.from_dict(data, Path("report.json"), "test")


# Deterministic CI: the same examples on every run, no example database written to disk.
settings.register_profile(
    "ci", deadline=None, max_examples=200, derandomize=True, print_blob=True, database=None
)
settings.load_profile("ci")

ENGINE_ROOT = Path(__file__).resolve().parents[1]
# The demo project the engine's tests read: a copy of the template's demo data (a template test
# checks they are equal) with its eval.toml as the default bake renders it.
PROJECT_ROOT = ENGINE_ROOT / "tests" / "demo"


@pytest.fixture(autouse=True)
def _work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative paths written by the code under test (the embedding cache) land in a folder
    of this test's own, never in the project nor in the tiny project: safe under xdist."""
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")


TINY_CORPUS: list[dict[str, Any]] = [
    {
        "id": "sso-setup",
        "title": "Single sign-on (SSO)",
        "text": "Turn on SSO with SAML; members then sign in through SSO.",
    },
    {
        "id": "password-policy",
        "title": "Password rules",
        "text": "Passwords need twelve characters and expire yearly unless your workspace "
        "enforces SSO for every member of every team across the whole company.",
    },
    {
        "id": "2fa-setup",
        "title": "Two-factor authentication (2FA)",
        "text": "Enable 2FA with an authenticator app.",
    },
    {"id": "api-keys", "title": "API keys", "text": "Create an API key under Developer settings."},
    {"id": "invoices", "title": "Invoices", "text": "Download invoices as PDF files from the Billing page."},
    {"id": "export-data", "title": "Export data", "text": "Export projects as CSV files."},
]

TINY_GOLDEN: list[dict[str, Any]] = [
    {
        "id": "q1",
        "question": "SSO",
        "relevant": {"sso-setup": 3},
        "must_include": ["SAML"],
        "tags": ["acronym", "security"],
        "must_pass": True,
    },
    {
        "id": "q2",
        "question": "2FA",
        "relevant": {"2fa-setup": 3},
        "must_include": ["authenticator app"],
        "tags": ["acronym", "security"],
    },
    {
        "id": "q3",
        "question": "API",
        "relevant": {"api-keys": 3},
        "must_include": ["developer settings"],
        "tags": ["acronym"],
    },
    {
        "id": "q4",
        "question": "download invoices",
        "relevant": {"invoices": 3, "export-data": 1},
        "must_include": ["PDF"],
        "tags": ["billing"],
    },
    {
        "id": "q5",
        "question": "Is there a mobile app?",
        "relevant": {},
        "answerable": False,
        "tags": ["billing", "unanswerable"],
    },
]

TINY_CONFIG = r"""
[data]
corpus = "corpus.jsonl"
golden = "golden.jsonl"
baseline = "baseline.json"
report = "build/report.json"

[retrieval]
k = 5
depth = 10
metrics = ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"]

[tokenizer]
lowercase = true
pattern = '\w+'
min_length = 1
stopwords = "english"

[retriever]

[gate]
metrics = ["recall@5", "hit@5", "mrr"]
tolerance = 0.02

[gate.floors]
"hit@5" = 0.5

[gate.checks]
"hit@5" = 1.0
"recall@5" = 1.0
abstention = 1.0
key_facts = 1.0
faithfulness = 1.0

[generation]
min_score = 0.0
""".lstrip()


def write_jsonl(path: Path, rows: Sequence[dict[str, Any] | str]) -> Path:
    """Write one line per row: dicts as JSON, strings verbatim (for malformed lines)."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def write_project(
    root: Path,
    config: str = TINY_CONFIG,
    corpus: Sequence[dict[str, Any] | str] = TINY_CORPUS,
    golden: Sequence[dict[str, Any] | str] = TINY_GOLDEN,
) -> Path:
    """Write eval.toml, corpus.jsonl and golden.jsonl into `root`; return the config path."""
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus.jsonl", corpus)
    write_jsonl(root / "golden.jsonl", golden)
    path = root / "eval.toml"
    path.write_text(config, encoding="utf-8")
    return path


def write_team_project(root: Path, source: str) -> Path:
    """The tiny project, its [system] naming the factories of a team module `source` beside
    eval.toml (team_system.py); return the config path."""
    config = write_project(root)
    config.write_text(
        '[system]\nretriever = "team_system:build_retriever"\ngenerator = "team_system:build_generator"\n\n'
        + config.read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    (root / "team_system.py").write_text(source, encoding="utf-8")
    return config


def set_min_length(config_path: Path, min_length: int) -> None:
    """Change the tokenizer's min_length in an eval.toml written by write_project."""
    text = config_path.read_text(encoding="utf-8")
    assert "min_length = 1" in text
    config_path.write_text(text.replace("min_length = 1", f"min_length = {min_length}"), encoding="utf-8")


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[str]:
    """The scheduler address of a local Dask cluster of two worker processes (not threads),
    started once per test process for the Dask executor's tests (the test group installs it)."""
    distributed = pytest.importorskip("distributed", reason="the test group installs dask[distributed]")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The tiny project in tmp_path; returns the path of its eval.toml."""
    return write_project(tmp_path)


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never append to the CI run's real $GITHUB_STEP_SUMMARY (the gate writes there)."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(autouse=True)
def no_secrets_between_tests() -> Iterator[None]:
    """Each test starts with no registered secret (net/redact.py keeps them per process)."""
    yield
    redact.forget_all()

"""The model backends against a real OpenAI-compatible server (`nox -s live`): the LLM judge in
`eval` and in `calibrate --compare`, and `golden generate`, as a team runs them on its own model.

Opt-in. The server is named by environment variables:

  RAG_REGRESS_LIVE_BASE_URL      its API up to /v1, e.g. http://127.0.0.1:8012/v1 (required)
  RAG_REGRESS_LIVE_MODEL         the model it serves (required)
  RAG_REGRESS_LIVE_API_KEY_ENV   the name of the variable holding its key (optional; no key sent
                                 without it)
  RAG_REGRESS_LIVE_TIMEOUT       seconds one request may take, retries included (default 300)

Without the first two every test here is skipped, saying which variable to set: the engine's
own test run (`nox -s engine`) collects them and skips them.

What a model writes is measured, never assumed: these tests hold for any model, from a base
model that mostly copies the prompt's example to a capable instruct one. They check what a
team relies on whatever the model: the commands finish with their documented exit codes, the
figures are well formed, and a sentence or label the model gave no verdict is counted and left
out, never passed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT_ROOT, TINY_CONFIG, run_cli, write_jsonl, write_project
from rag_regress.golden.generate import read_candidates

pytestmark = pytest.mark.live

BASE_URL = "RAG_REGRESS_LIVE_BASE_URL"
MODEL = "RAG_REGRESS_LIVE_MODEL"
KEY_ENV = "RAG_REGRESS_LIVE_API_KEY_ENV"
TIMEOUT = "RAG_REGRESS_LIVE_TIMEOUT"
DEFAULT_TIMEOUT = 300.0
SLOTS = 3  # golden generate's candidates asked for: the first three kinds (single, two-passage, unanswerable)
START_UP = 60.0  # seconds a command may take beyond its requests (imports, reading, judging)


@dataclass(frozen=True)
class Live:
    """The server the tests run against."""

    base_url: str
    model: str
    key_env: str | None
    timeout: float

    def table(self, name: str, **more: Any) -> str:
        """A TOML table `name` pointing at the server, with `more` settings."""
        values: dict[str, Any] = {"base_url": self.base_url, "model": self.model, "timeout": self.timeout}
        if self.key_env:
            values["api_key_env"] = self.key_env
        lines = [f"{key} = {json.dumps(value)}" for key, value in (values | more).items()]
        return f"\n[{name}]\n" + "\n".join(lines) + "\n"


@pytest.fixture
def live() -> Live:
    """The server named by the environment; every test is skipped without one."""
    for name in (BASE_URL, MODEL):
        if not os.environ.get(name, "").strip():
            pytest.skip(f"no live model server: set {BASE_URL} (its API up to /v1) and {MODEL}")
    raw = os.environ.get(TIMEOUT, "").strip()
    try:
        timeout = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        pytest.fail(f"{TIMEOUT} must be seconds (a number), got {raw!r}")
    if not 0 < timeout <= 3600:
        pytest.fail(f"{TIMEOUT} must be more than 0 and at most 3600 seconds, got {raw!r}")
    key_env = os.environ.get(KEY_ENV, "").strip() or None
    if key_env and not os.environ.get(key_env):
        pytest.fail(f"{KEY_ENV} names the variable {key_env}, which is not set: set it to the server's key")
    return Live(os.environ[BASE_URL].strip().rstrip("/"), os.environ[MODEL].strip(), key_env, timeout)


# -- the LLM judge in `eval` ------------------------------------------------------------------


def test_eval_with_the_llm_judge_counts_its_requests_and_lists_what_it_did_not_judge(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eval` on the tiny project, its answers judged by the model: exit 0; `judged` is a share;
    run.judge counts the requests; every sentence the model gave no verdict is listed under
    not_judged and counted neither supported nor unsupported."""
    config = write_project(
        tmp_path, config=TINY_CONFIG + '\n[judge]\nbackend = "llm"\n' + live.table("judge.llm", concurrency=1)
    )

    assert run_cli(["--config", str(config), "eval"]) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))

    assert report["settings"]["judge"]["name"] == "llm"
    assert report["settings"]["judge"]["model"] == live.model
    judged_share = report["aggregate"]["judged"]
    assert isinstance(judged_share, float | int) and 0 <= judged_share <= 1
    counts = report["run"]["judge"]
    assert counts["requests"] >= 1  # a fresh project: nothing came from the verdict cache
    assert counts["judged"] + counts["not_judged"] >= 1

    answered = [row for row in report["questions"] if row.get("answer") and not row["answer"]["abstained"]]
    assert answered, "the stand-in generator answers every question of the tiny project"
    listed = 0
    for row in answered:
        answer = row["answer"]
        skipped = [f["text"] for f in answer["not_judged"] if f["why"].startswith("faithfulness")]
        unsupported = [u["claim"] for u in answer["unsupported"]]
        listed += len(answer["not_judged"])
        assert not set(skipped) & set(unsupported), row["id"]  # not judged is not a fail either
        judged_sentences = answer["claims"] - len(skipped)
        assert 0 <= len(unsupported) <= judged_sentences, row["id"]
        if judged_sentences == 0:
            assert answer["faithfulness"] is None, row["id"]  # nothing judged: no pass, no fail
        else:  # the share of the sentences judged: one not judged never counts as supported
            supported = judged_sentences - len(unsupported)
            assert answer["faithfulness"] == pytest.approx(supported / judged_sentences), row["id"]
        share = answer["judged"]  # of the answer's judge items, those given a verdict
        assert 0 <= share <= 1 and (share < 1) == bool(answer["not_judged"]), row["id"]
    assert (counts["not_judged"] > 0) == (listed > 0)
    assert (judged_share < 1) == (listed > 0)


# -- the LLM judge in `calibrate --compare` ---------------------------------------------------

CONTEXTS = {
    "invoices": "Download invoices as PDF files from the Billing page. "
    "Invoices are issued on the first day of each month.",
    "refunds": "Monthly subscriptions are not refunded for partial months. "
    "Annual plans can be refunded in full within 30 days of purchase.",
    "passwords": "Passwords need twelve characters and expire yearly unless your workspace enforces SSO.",
    "settings": "Enable 2FA with an authenticator app. Create an API key under Developer settings.",
}
DOMAINS = {"invoices": "billing", "refunds": "billing", "passwords": "accounts", "settings": "accounts"}
# (id, context, supported, split, claim): both classes in both splits, two domains.
LABELS = [
    ("b1", "invoices", True, "dev", "You can download invoices as PDF files from the Billing page."),
    ("b2", "invoices", False, "dev", "Invoices are issued on the last day of each month."),
    ("b3", "refunds", True, "dev", "Annual plans can be refunded in full within 30 days of purchase."),
    ("b4", "invoices", True, "check", "Each month's invoice is issued on its first day."),
    ("b5", "invoices", False, "check", "Invoices can be downloaded as Excel files from the Billing page."),
    ("b6", "refunds", False, "check", "Annual plans can be refunded in full within 90 days of purchase."),
    ("a1", "passwords", True, "dev", "Passwords must be twelve characters long."),
    ("a2", "passwords", False, "dev", "Passwords expire every month."),
    ("a3", "settings", True, "dev", "API keys are created under Developer settings."),
    ("a4", "settings", False, "dev", "2FA can only be enabled by text message."),
    ("a5", "passwords", True, "check", "Unless SSO is enforced, passwords expire once a year."),
    ("a6", "passwords", False, "check", "Passwords need eight characters."),
]


def write_labels(path: Path) -> Path:
    rows = [
        {
            "id": ident,
            "claim": claim,
            "context": CONTEXTS[context],
            "supported": supported,
            "split": split,
            "domain": DOMAINS[context],
        }
        for ident, context, supported, split, claim in LABELS
    ]
    return write_jsonl(path, rows)


def test_calibrate_compares_the_lexical_and_llm_judges_leaving_out_what_the_model_did_not_judge(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`calibrate --compare lexical,llm` on 12 labelled claims: exit 0; each split's table has
    both judges' columns; the labels the model gave no verdict are counted per split and left out
    of its figures, and the lexical judge judges every label."""
    config = write_project(
        tmp_path, config=TINY_CONFIG + '\n[judge]\nbackend = "llm"\n' + live.table("judge.llm", concurrency=1)
    )
    labels = write_labels(tmp_path / "labels.jsonl")
    per_split = {split: sum(row[3] == split for row in LABELS) for split in ("dev", "check")}
    command = ["--config", str(config), "calibrate", "--compare", "lexical,llm", "--labels", str(labels)]

    assert run_cli([*command, "--json"]) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert list(result["backends"]) == ["lexical", "llm"]
    assert result["backends"]["llm"]["judge"]["model"] == live.model
    for name, figures in result["backends"].items():
        splits = figures["splits"]
        assert set(splits) == set(per_split), name
        left_out = 0
        for split, labelled in per_split.items():
            found = splits[split]
            skipped = found.get("not_judged", 0)
            left_out += skipped
            assert found["n"] + skipped == labelled, (name, split)  # judged or left out, never both
            if found["n"]:
                assert 0 <= found["accuracy"] <= 1, (name, split)
                # None: no faithful claim judged to flag; no kappa when the judged labels are of one class
                for figure in ("false_alarms", "kappa"):
                    assert found[figure] is None or -1 <= found[figure] <= 1, (name, split, figure)
                assert sum(d["n"] for d in found["per_domain"].values()) == found["n"], (name, split)
        assert figures["not_judged"] == left_out, name
        assert figures["examples"] == splits[figures["split"]]["n"] > 0, name  # the headline split's
    assert result["backends"]["lexical"]["not_judged"] == 0  # a rule-based judge always gives a verdict
    asked = result["backends"]["llm"]["requests"]
    assert asked["requests"] >= len(CONTEXTS)  # a request per context at least, none cached

    assert run_cli(command) == 0, capsys.readouterr().err
    table = capsys.readouterr().out
    assert table.startswith("Judges compared on labels.jsonl")
    for split in per_split:
        assert f"\n{split}:\n" in table
    headers = [line.split() for line in table.splitlines() if line.strip().startswith("domain")]
    assert headers == [["domain", "lexical", "llm"]] * len(per_split)
    rows = [line.split() for line in table.splitlines() if line.strip().startswith("all ")]
    assert len(rows) == len(per_split) and all(len(row) >= 3 for row in rows)
    for line in table.splitlines():  # the labels left out, if any, said per split
        if "not judged" in line:
            assert line.strip().startswith("llm: ") and line.endswith("label(s) not judged, left out")


# -- golden generate --------------------------------------------------------------------------


def generate_project(root: Path, live: Live) -> Path:
    """The demo project in `root` (corpus and golden set), its [golden] table naming the server."""
    (root / "evals").mkdir(parents=True)
    for name in ("corpus.jsonl", "golden.jsonl"):
        shutil.copy(PROJECT_ROOT / "evals" / name, root / "evals" / name)
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    assert "\n[golden]" not in text  # the demo sets no [golden]: its defaults apply
    config = root / "eval.toml"
    config.write_text(text + live.table("golden", concurrency=1, max_tokens=512), encoding="utf-8")
    return config


def test_golden_generate_writes_valid_candidates_or_says_none_was_written(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`golden generate --count 3`, as a team runs it: exit 0 with candidate lines the engine's
    own readers accept (the resume reader and the grading page's), or exit 2 saying no candidate
    was written; never a traceback or exit 1, and within its requests' timeout."""
    config = generate_project(tmp_path / "project", live)
    output = tmp_path / "project" / "evals" / "candidates.jsonl"
    budget = SLOTS * live.timeout + START_UP  # each request bounded by [golden] timeout, retries included
    command = [sys.executable, "-m", "rag_regress", "--config", str(config), "golden", "generate"]
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*command, "--count", str(SLOTS), "--quiet"],
            capture_output=True,
            text=True,
            timeout=budget,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"golden generate ran past {budget:.0f} s ({SLOTS} requests of {TIMEOUT}): {expired}")
    took = time.monotonic() - started
    said = f"exit {done.returncode} after {took:.0f} s\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"

    assert "Traceback" not in done.stderr, said
    assert done.returncode in (0, 2), said
    assert output.is_file(), said  # every slot asked is one line, candidate or dropped
    found, _ = read_candidates(output)  # the reader a rerun resumes with: every line well formed
    assert sorted(found) == list(range(SLOTS)), said
    lines = [line for _, line in found.values()]
    made = [line for line in lines if line["status"] == "candidate"]
    assert all(line["why"] for line in lines if line["status"] == "dropped"), said
    assert all(line["provenance"]["model"] == live.model for line in lines), said
    if done.returncode == 2:
        assert not made and "golden generate wrote no candidate" in done.stderr, said
        return
    assert made, said
    page = tmp_path / "grade.html"
    grade = ["--config", str(config), "grade", "--candidates", str(output), "--output", str(page)]
    assert run_cli(grade) == 0, capsys.readouterr().err
    assert page.is_file()
    for line in made:
        assert line["question"].strip() and line["id"].startswith("cand-"), line
        if line["answerable"]:
            assert line["reference"] and line["relevant"] and line["passages"], line
        else:
            assert line["reference"] is None and line["relevant"] == {}, line

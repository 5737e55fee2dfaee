"""The net flip rule end to end, as a team with an LLM behind the generator meets it: `baseline`
and `gate` through the command line on a small project whose system is the shipped BM25 and the
openai generator, pointed at a chat server on 127.0.0.1. The server answers from the prompt's
passages: the first sentence of passage [1] (which holds the question's key fact), or, for the
questions its current prompt "rewords" badly, the second one (true to the passage, without the
fact). Rewording the prompt file between `baseline` and `gate` moves answers both ways.

  (a) a rewording that keeps the facts but trades two questions for two others: the net rule
      passes (exit 0) and lists both sides; the strict rule fails it (exit 3);
  (b) a prompt that drops the facts on a third of the questions fails (exit 3), naming them;
  (c) a must-pass question broken fails (exit 3), though the check gains on balance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from adapter_fakes import chat, passages

from conftest import TINY_CONFIG, run_cli, write_project
from fake_http import Received, Reply, Server, serving
from rag_regress.adapters import openai
from rag_regress.api import System
from rag_regress.retrieval.retrievers import bm25

SYSTEM = System(bm25.build, openai.build)

# (id, topic, the sentence with the key fact, a true sentence without it, question, key fact)
TOPICS = [
    ("q01", "refunds", "Refunds arrive within 14 days.", "Refunds start from the billing console.",
     "When do refunds arrive?", "14 days"),
    ("q02", "passwords", "Passwords need twelve characters.", "Passwords are changed under account settings.",
     "What must passwords have?", "twelve characters"),
    ("q03", "exports", "Exports are delivered as CSV files.", "Exports run from the projects page.",
     "What format do exports use?", "CSV"),
    ("q04", "invoices", "Invoices are emailed on the first of each month.",
     "Invoices list every seat on the plan.",
     "When are invoices emailed?", "first of each month"),
    ("q05", "sessions", "Sessions expire after 30 minutes of inactivity.",
     "Sessions are listed on the security page.",
     "When do sessions expire?", "30 minutes"),
    ("q06", "backups", "Backups are kept for 90 days.", "Backups are stored in a second region.",
     "How long are backups kept?", "90 days"),
    ("q07", "uploads", "Uploads may be at most 2 GB each.", "Uploads resume after a dropped connection.",
     "How large may uploads be?", "2 GB"),
    ("q08", "seats", "Seats cost 8 dollars per month.", "Seats are assigned by workspace owners.",
     "What do seats cost?", "8 dollars"),
    ("q09", "webhooks", "Webhooks retry 5 times before giving up.", "Webhooks are configured per project.",
     "How often do webhooks retry?", "5 times"),
    ("q10", "trials", "Trials last 21 days.", "Trials include every paid feature.",
     "How long do trials last?", "21 days"),
    ("q11", "archives", "Archives are deleted after one year.", "Archives can be restored by admins.",
     "When are archives deleted?", "one year"),
    ("q12", "tokens", "Tokens are revoked when a member leaves.",
     "Tokens are created under developer settings.",
     "When are tokens revoked?", "member leaves"),
]  # fmt: skip
CORPUS = [
    {"id": topic, "title": topic.title(), "text": f"{fact} {other}"} for _, topic, fact, other, _, _ in TOPICS
]
GOLDEN = [
    {
        "id": qid,
        "question": question,
        "relevant": {topic: 3},
        "must_include": [key],
        "must_pass": qid == "q01",
    }
    for qid, topic, _, _, question, key in TOPICS
]
QUESTION_OF = {question: qid for qid, _, _, _, question, _ in TOPICS}

# Each prompt's first line, and the questions a model given it answers without the key fact.
PROMPTS = {
    "baseline": ("Answer the question using only the numbered passages below.", {"q03", "q04"}),
    "reworded": ("Using only the numbered passages below, answer the question.", {"q05", "q06"}),
    "careless": ("Answer in a word or two, from the passages below.",
                 {"q03", "q04", "q05", "q06", "q07", "q08"}),
    "must-pass": ("Answer briefly, using the numbered passages below.", {"q01"}),
}  # fmt: skip
DROPS = dict(PROMPTS.values())


# The tiny project's [data] table and its [retrieval] k and depth (conftest.py); the rest is this
# project's own.
TINY_DATA_AND_DEPTH = TINY_CONFIG[: TINY_CONFIG.index("metrics = ")]


def config(prompt: Path, url: str, rule: str) -> str:
    return f"""{TINY_DATA_AND_DEPTH}metrics = ["recall@5", "hit@5", "mrr"]

[retriever]

[generation]
base_url = "{url}"
model = "answer-model"
prompt = {json.dumps(str(prompt))}
contexts = 3

[judge]
backend = "lexical"

[gate]
metrics = ["recall@5", "mrr", "key_facts", "faithfulness"]
tolerance = 0.02
flip_rule = "{rule}"

[gate.floors]
key_facts = 0.5

[gate.checks]
"hit@5" = 1.0
abstention = 1.0
key_facts = 1.0
faithfulness = 1.0
"""


def model(request: Received) -> Reply:
    """The scripted LLM: the first sentence of passage [1], or its second for the questions
    this prompt (known by its first line) answers without the key fact."""
    prompt = request.user
    found = passages(prompt)
    question = re.search(r"(?m)^Question: (.*)$", prompt)
    if not found or question is None:
        return chat("I don't know.")
    fact, other = re.split(r"(?<=\.)\s", found[1].strip(), maxsplit=1)
    dropped = QUESTION_OF.get(question.group(1)) in DROPS[prompt.splitlines()[0]]
    return chat(other if dropped else fact)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=model), "/v1") as fake:
        yield fake


def write_prompt(path: Path, which: str) -> None:
    first, _ = PROMPTS[which]
    path.write_text(
        f"{first}\n\nPassages:\n{{contexts}}\n\nQuestion: {{question}}\nAnswer:", encoding="utf-8"
    )


Gated = tuple[Path, int, str, dict[str, Any]]
Reworded = Callable[[str, str], Gated]


@pytest.fixture
def reworded(tmp_path: Path, llm: Server, capsys: pytest.CaptureFixture[str]) -> Reworded:
    """A function making the project under flip_rule `rule` with its baseline made from the
    "baseline" prompt, then rewording the prompt file as `which` and running `gate`; returns
    (eval.toml, gate's exit code, what it printed, the report's comparison)."""

    def gated(rule: str, which: str) -> Gated:
        root = tmp_path / rule
        root.mkdir()
        prompt = root / "answer.txt"
        write_prompt(prompt, "baseline")
        path = write_project(root, config(prompt, llm.url, rule), CORPUS, GOLDEN)
        assert run_cli(["--config", str(path), "baseline"], SYSTEM) == 0
        write_prompt(prompt, which)
        capsys.readouterr()
        code = run_cli(["--config", str(path), "gate"], SYSTEM)
        report = json.loads((root / "build" / "report.json").read_text(encoding="utf-8"))
        return path, code, capsys.readouterr().out, report["comparison"]

    return gated


def key_facts(comparison: dict[str, Any]) -> dict[str, Any]:
    (flips,) = [flips for flips in comparison["flips"] if flips["check"] == "key_facts"]
    return dict(flips)


def test_a_rewording_that_trades_questions_passes_the_net_rule_and_lists_both_sides(
    reworded: Reworded,
) -> None:
    """q05 and q06 lose their key fact, q03 and q04 gain theirs: no net loss, p = 11/16."""
    path, code, out, comparison = reworded("net", "reworded")
    assert code == 0, out
    flips = key_facts(comparison)
    assert (flips["newly_failing"], flips["newly_passing"]) == (["q05", "q06"], ["q03", "q04"])
    assert flips["rule"] == "net" and not flips["fails"] and flips["p"] == pytest.approx(11 / 16)
    listing = out.split("Flips per check against the baseline")[1]
    assert (
        "key_facts: 2 newly failing, 2 newly passing of 12; net rule: net loss b - c = 2 - 2 = 0" in listing
    )
    failing, passing = listing.split("newly failing (2):")[1].split("newly passing (2):")
    assert '"When do sessions expire?"' in failing and '"How long are backups kept?"' in failing
    assert '"What format do exports use?"' in passing and '"When are invoices emailed?"' in passing
    assert "newly failing question(s) for review" in out and "GATE PASSED" in out
    summary = (path.parent / "build" / "summary.md").read_text(encoding="utf-8")
    assert "`q05`" in summary and "`q03`" in summary


def test_the_same_rewording_fails_the_strict_rule(reworded: Reworded) -> None:
    _, code, out, comparison = reworded("strict", "reworded")
    assert code == 3, out
    assert key_facts(comparison)["fails"] and "key_facts: 2 newly failing, 2 newly passing" in out


def test_answers_dropping_the_facts_on_a_third_of_the_questions_fail_naming_them(reworded: Reworded) -> None:
    """q05-q08 newly lose their key fact, nothing is won: a net loss of 4 (p = 1/16)."""
    _, code, out, comparison = reworded("net", "careless")
    assert code == 3, out
    flips = key_facts(comparison)
    assert flips["fails"] and flips["newly_failing"] == ["q05", "q06", "q07", "q08"]
    assert "net loss b - c = 4 - 0 = 4, beyond the 0 allowed" in flips["verdict"]
    assert "p=0.0625" in flips["verdict"]
    blocking = {f["subject"] for f in comparison["failures"] if f["blocking"] and f["kind"] != "regression"}
    assert blocking == {"q05", "q06", "q07", "q08"}
    failed = out.split("GATE FAILED")[1]
    assert "[flips] key_facts: 4 newly failing" in failed
    assert all(f"[newly failing answer] {qid} " in failed for qid in ("q05", "q06", "q07", "q08"))


def test_a_broken_must_pass_question_fails_the_net_rule(reworded: Reworded) -> None:
    """q01 (must-pass) loses its key fact while q03 and q04 gain theirs: the check gains on
    balance and passes the net rule, but a must-pass question is never traded."""
    _, code, out, comparison = reworded("net", "must-pass")
    assert code == 3, out
    flips = key_facts(comparison)
    assert not flips["fails"] and flips["newly_failing"] == ["q01"]
    (failure,) = [f for f in comparison["failures"] if f["blocking"]]
    assert (
        failure["subject"] == "q01" and "must-pass: fails whatever the flip rule allows" in failure["message"]
    )
    assert '[newly failing answer] q01 "When do refunds arrive?"' in out.split("GATE FAILED")[1]

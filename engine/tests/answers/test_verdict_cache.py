"""The verdict cache (answers/cache.py) verifies what it wrote: every verdict a judge returns,
of every shape (findings tuples, empty windows, unicode, long text, a claim copied from a
window the narrow checks find something in), is read back on the next run as a hit, never
"did not verify and judged again". An entry that was tampered with still never verifies."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from conftest import SHIPPED, TINY_CORPUS, run_cli, write_project
from rag_regress.answers.cache import VerdictCache
from rag_regress.answers.judges import Item, Verdict
from rag_regress.answers.judges.claims import windows
from rag_regress.answers.judges.lexical import FAIL_ON, LexicalJudge
from rag_regress.api import Answer, Context, System

HEDGED = "Refunds may take up to 10 days to reach your card. All admins can export data as CSV."
UNICODE = (
    "Les remboursements arrivent sous 10 jours ouvrés. "
    + unicodedata.normalize("NFD", "Überweisungen dauern länger: 3 Tage.")
    + " 返金は10日以内に届きます。 Emoji stay 🚀 as written."
)
LONG = " ".join(f"Sentence number {i} says the export holds {i} rows of data." for i in range(400))


def judged_items() -> list[Item]:
    """Claims a real answer makes against contexts like a real answer's."""
    return [
        # a fragment copied from a hedged sentence: supported as copied, though the narrow
        # checks find the hedge it drops (the verdict the cache used to reject on every run)
        ("take up to 10 days to reach your card.", (HEDGED,)),
        ("Refunds may take up to 10 days.", (HEDGED,)),
        ("admins can export data as CSV.", (HEDGED,)),
        ("Refunds take 60 days.", (HEDGED,)),  # a changed number: unsupported, with findings
        ("Les remboursements arrivent sous 10 jours ouvrés.", (UNICODE,)),
        (unicodedata.normalize("NFC", "Überweisungen dauern länger: 3 Tage."), (UNICODE,)),
        ("返金は10日以内に届きます。", (UNICODE,)),
        ("Emoji stay 🚀 as written.", (UNICODE,)),
        ("Sentence number 399 says the export holds 399 rows of data.", (LONG,)),
        ("The export holds a million rows.", (LONG, HEDGED)),
        ("Nothing to check it against.", ()),  # no context: an empty window
        ("A claim about a context of no sentence.", ("ok",)),
    ]


def made_verdicts() -> list[tuple[Item, Verdict]]:
    """Verdicts of the shapes a backend returns, made by hand: an integer score, a score with
    float noise, findings as a tuple, an unsupported verdict with no window, long reasons."""
    window = windows((HEDGED,))[1]
    return [
        (("All admins can export data as CSV.", (HEDGED,)), Verdict(True, 1, window, "")),
        (
            ("Admins export data.", (HEDGED,)),
            Verdict(
                True,
                0.1 + 0.2,
                window,
                "",
                ("condition: leaves out 'if'", "order: \u2018A\u2019 before \u201cB\u201d"),
            ),
        ),
        (("Unsupported.", (HEDGED,)), Verdict(False, 0.0, "", "no context to check it against")),
        (
            ("Why " * 500, (LONG,)),
            Verdict(False, 1 / 3, "", "é" * 2000, tuple(f"number: {i}" for i in range(50))),
        ),
        (("Gleich.", ("Gleich ist gleich.",)), Verdict(False, 0.25, "Gleich ist gleich.", "x", ())),
        # half an emoji, as a model's JSON reply may escape it: keyed, signed and saved
        (("A cut \ud83d emoji.", ("A cut \ud83d emoji.",)), Verdict(False, 0.2, "", "cut \ud83d")),
    ]


def test_every_verdict_a_judge_returns_is_read_back_verified(tmp_path: Path) -> None:
    judge = LexicalJudge(0.5, FAIL_ON, ("Tidemark",))
    items = judged_items()
    pairs = list(zip(items, judge.verdicts(items), strict=True)) + made_verdicts()
    assert any(v.supported and v.findings == () and "may" in v.window for _, v in pairs[:1])
    path = tmp_path / "verdicts.json"
    first = VerdictCache(path, judge.identity)
    for item, verdict in pairs:
        assert first.get(item) is None
        first.put(item, verdict)
    first.save()

    again = VerdictCache(path, judge.identity)
    read = [again.get(item) for item, _ in pairs]
    assert again.rejected == 0 and again.hits == len(pairs)
    for (item, verdict), back in zip(pairs, read, strict=True):
        assert back == Verdict(
            verdict.supported, float(verdict.score), verdict.window, verdict.reason, tuple(verdict.findings)
        ), item[0][:40]
    again.save()  # and once more: what a run kept verifies on the run after it
    third = VerdictCache(path, judge.identity)
    assert [third.get(item) for item, _ in pairs] == read and third.rejected == 0


def test_a_tampered_entry_still_does_not_verify(tmp_path: Path) -> None:
    judge = LexicalJudge(0.5, FAIL_ON)
    item = ("take up to 10 days to reach your card.", (HEDGED,))
    path = tmp_path / "verdicts.json"
    cache = VerdictCache(path, judge.identity)
    cache.put(item, judge.verdicts([item])[0])
    cache.save()
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["verdicts"].values():
        entry["verdict"]["score"] = 0.99
    path.write_text(json.dumps(data), encoding="utf-8")
    again = VerdictCache(path, judge.identity)
    assert again.get(item) is None and again.rejected == 1


class Quoting:
    """A generator that quotes part of a hedged sentence, as an LLM does: "Refunds take up to
    10 days" from "Refunds may take up to 10 days ..."; the lexical judge supports it as copied."""

    def __init__(self, retriever: object, documents: object, options: object):
        pass

    def answer(self, question: str) -> Answer:
        return Answer("take up to 10 days to reach your card.", [Context("refunds", HEDGED)])


def test_a_second_run_takes_every_verdict_from_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = [*TINY_CORPUS, {"id": "refunds", "title": "Refunds", "text": HEDGED}]
    config = write_project(tmp_path, corpus=corpus)
    system = System(SHIPPED.build_retriever, Quoting)
    assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config), "eval"], system) == 0
    out = capsys.readouterr().out
    assert "did not verify" not in out and re.search(r"Verdict cache: [1-9]\d* hits, 0 misses", out), out

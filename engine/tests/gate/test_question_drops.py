"""Every failing aggregate or slice names the questions behind it (gate/drops.py): the largest
per-question drops of its metric against the baseline, with or without [gate.checks], and the
lowest-scoring questions for a floor missed with nothing dropped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from test_gate import BASELINE_PATH, GOOD, compare, gate_settings, report, row

from conftest import TINY_CONFIG, as_report, evaluate_shipped, set_min_length, write_project
from rag_regress.gate.rules import Failure, GateResult
from rag_regress.render.console import console_verdict
from rag_regress.render.view import gate_view
from rag_regress.settings.config import load_config


def failure(result: GateResult, kind: str, subject: str) -> Failure:
    (found,) = [f for f in result.failures if f.kind == kind and f.subject == subject]
    return found


def printed(result: GateResult, now: dict[str, Any], before: dict[str, Any], max_listed: int = 10) -> str:
    return console_verdict(gate_view(as_report(now), result, as_report(before), max_listed))


def test_a_regression_without_checks_lists_the_largest_drops_first() -> None:
    """No [gate.checks]: nothing is per question, yet the mrr regression names q3 (1 -> 0),
    then q1 and q2 (1 -> 0.5, report order), and never the nine unchanged questions."""
    before = [row(f"q{i}") for i in range(12)]
    after = [row(f"q{i}", 1.0, mrr={1: 0.5, 2: 0.5, 3: 0.0}.get(i)) for i in range(12)]
    now, old = report({**GOOD, "mrr": 0.833}, *after), report(GOOD, *before)
    result = compare(now, old, gate_settings(checks={}), BASELINE_PATH)
    regression = failure(result, "regression", "mrr")
    assert [(m.id, m.baseline, m.now) for m in regression.moves] == [
        ("q3", 1.0, 0.0),
        ("q1", 1.0, 0.5),
        ("q2", 1.0, 0.5),
    ]
    assert "3 of 12 questions dropped" in regression.moves_note
    text = printed(result, now, old)
    assert re.search(r'q3\s+1\.000 -> 0\.000 \(-1\.000\)  "question q3"', text)
    assert "q1  1.000 -> 0.500 (-0.500)" in text
    assert "q0 " not in text and "q11" not in text  # unchanged: not listed
    # The JSON verdict keeps them.
    (stored,) = [f for f in result.to_dict()["failures"] if f["subject"] == "mrr"]
    assert [m["id"] for m in stored["moves"]] == ["q3", "q1", "q2"]


def test_the_list_is_cut_to_max_listed_and_says_how_many_more() -> None:
    before = [row(f"q{i:02d}") for i in range(15)]
    after = [row(f"q{i:02d}", 0.0, retrieved=("doc-x",)) for i in range(15)]
    now, old = report({**GOOD, "recall@5": 0.0}, *after), report(GOOD, *before)
    result = compare(now, old, gate_settings(checks={}), BASELINE_PATH)
    text = printed(result, now, old, max_listed=3)
    block = text.split("[regression] recall@5")[1].split("[regression] mrr")[0]
    assert block.count("1.000 -> 0.000 (-1.000)") == 3
    assert "... and 12 more question(s): every one is in the JSON report" in block


def test_floor_and_regression_of_one_metric_list_its_questions_once() -> None:
    before = [row(f"q{i}") for i in range(10)]
    after = [row("q0", 0.0, retrieved=("doc-x",)), *before[1:]]
    now, old = report({**GOOD, "recall@5": 0.7}, *after), report(GOOD, *before)
    result = compare(now, old, gate_settings(checks={}, floors={"recall@5": 0.95}), BASELINE_PATH)
    assert {("floor", "recall@5"), ("regression", "recall@5")} <= {
        (f.kind, f.subject) for f in result.failures
    }
    text = printed(result, now, old)
    block = text.split("[floor] recall@5")[1].split("[regression] mrr")[0]
    assert "[regression] recall@5" in block and block.count('"question q0"') == 1


def test_floor_missed_with_nothing_dropped_lists_the_lowest_scoring_questions() -> None:
    """The baseline was as low: no drop to show, so the questions below the floor, lowest first."""
    rows = [row("q0", 0.5), row("q1", 0.0, retrieved=("doc-x",)), row("q2"), row("q3", 0.9)]
    low = report({**GOOD, "recall@5": 0.6}, *rows)
    result = compare(low, low, gate_settings(checks={}, floors={"recall@5": 0.8}), BASELINE_PATH)
    floor = failure(result, "floor", "recall@5")
    assert [m.id for m in floor.moves] == ["q1", "q0"]  # q3 (0.9) is above the floor
    assert floor.moves_note.startswith("none of the 4 questions in both reports dropped")
    assert "lowest-scoring" in floor.moves_note and "2 of 4 below the floor 0.800" in floor.moves_note
    assert "q1  0.000 -> 0.000 (+0.000)" in printed(result, low, low)


def test_a_question_new_since_the_baseline_is_listed_as_such() -> None:
    """No question is in both reports (a first run against an unrelated baseline)."""
    now = report({**GOOD, "recall@5": 0.0}, row("new", 0.0, retrieved=("doc-x",)))
    old = report(GOOD, row("old"))
    result = compare(now, old, gate_settings(checks={}, floors={"recall@5": 0.8}), BASELINE_PATH)
    floor = failure(result, "floor", "recall@5")
    assert floor.moves_note.startswith("no question is in both the baseline and this run")
    assert floor.moves[0].numbers == "0.000 now (not in the baseline)"


def test_a_failing_slice_names_only_its_own_questions(tmp_path: Path) -> None:
    """The tiny project without [gate.checks], a floor on the acronym tag, min_length = 4:
    the tag's floor names q1-q3 (SSO, 2FA, API) and not q4 (billing)."""
    config = re.sub(r"(?s)\[gate\.checks\].*?(?=\n\[generation\])", "", TINY_CONFIG)
    config += '\n[gate.slices.acronym]\n"hit@5" = 0.8\n'
    path = write_project(tmp_path, config=config)
    before = evaluate_shipped(load_config(path))
    set_min_length(path, 4)
    loaded = load_config(path)
    assert not loaded.gate.checks
    now = evaluate_shipped(loaded)
    result = compare(now, before, loaded.gate, BASELINE_PATH, loaded.stats)
    sliced = failure(result, "floor", "hit@5 [acronym]")
    assert {m.id for m in sliced.moves} == {"q1", "q2", "q3"}
    assert "hit@5 on tag 'acronym'" in sliced.moves_note
    assert all(m.delta == -1.0 for m in sliced.moves)


def test_a_slice_drop_that_is_not_significant_is_not_called_significant() -> None:
    """6 questions tagged t, one drops: beyond the tolerance, p = 0.5. The note says one thing."""
    before = [{**row(f"q{i}"), "tags": ["t"]} for i in range(6)]
    after = [{**row("q0", 0.0, retrieved=("doc-x",)), "tags": ["t"]}, *before[1:]]
    now, old = report(GOOD, *after), report(GOOD, *before)
    result = compare(now, old, gate_settings(checks={}), BASELINE_PATH)
    (note,) = [n for n in result.notes if "on tag 't'" in n and "recall@5" in n]
    assert note.startswith("slice drop not significant, so not a regression")
    assert "but not significant at alpha 0.05" in note and "and significant" not in note

"""YOUR TESTS: the quality gate as tests, on your system, data and committed baseline.

`pytest -m gate` (the default run leaves these out). The `rag_regress_gate` fixture runs the
very command `nox -s gate` runs, once per session, so the two can never disagree: this fails
exactly when the gate exits 3 (a regression) or 2 (it cannot run), with the gate's own words.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gate

# The questions your users rely on most, each pinned to a document that must be in its top k
# whatever the averages do. Empty in a new project; add yours, e.g. "q03": "single-sign-on-saml".
PINNED: dict[str, str] = {}


def test_gate_passes(rag_regress_gate) -> None:
    """Every configured check ran on evaluated data and held."""
    rag_regress_gate.check()


@pytest.mark.parametrize(("qid", "doc_id"), sorted(PINNED.items()))
def test_pinned_question_retrieves_its_document(rag_regress_gate, qid: str, doc_id: str) -> None:
    rag_regress_gate.check()
    report = rag_regress_gate.report
    rows = {row["id"]: row for row in report["questions"]}
    assert qid in rows, f"{qid} is not in the golden set: update PINNED"
    top = [hit[0] for hit in rows[qid]["retrieved"][: report["settings"]["k"]]]
    assert doc_id in top, f"{qid}: {doc_id} is not in the top {report['settings']['k']}: {top}"

"""YOUR TESTS: the faithfulness judge eval.toml configures, on known hallucinations.

Each case is a sentence about one of your documents: the document's own words must pass,
and a known hallucination (a changed number, an added claim, a negation) must be flagged.
Add the hallucinations your generator has produced: a judge update that lets one through
fails here before it can pass a bad answer in the gate. `nox -s calibrate` measures the
judge on the labelled claims in evals/judge_labels.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CORPUS = Path(__file__).parents[1] / "evals" / "corpus.jsonl"
TEXTS = {row["id"]: row["text"] for row in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}

# (document id, a sentence the document supports, a known hallucination about it)
CASES = [
    (
        "refund-policy",
        "Annual plans can be refunded in full within 30 days of purchase or renewal.",
        "Annual plans can be refunded in full within 90 days of purchase or renewal.",
    ),
    (
        "refund-policy",
        "Approved refunds reach your original payment method within 5 to 10 business days.",
        "Approved refunds never reach your original payment method.",
    ),
    (
        "api-rate-limits",
        "Each API key can make 300 requests per minute on Enterprise.",
        "Each API key can make 3000 requests per minute on Enterprise.",
    ),
]


@pytest.mark.parametrize(("doc_id", "faithful", "hallucinated"), CASES, ids=[c[0] for c in CASES])
def test_judge_passes_the_document_and_flags_the_hallucination(
    rag_regress_judge, doc_id: str, faithful: str, hallucinated: str
) -> None:
    if doc_id not in TEXTS:
        pytest.skip(f"{doc_id} is not in evals/corpus.jsonl: make CASES sentences about your documents")
    context = TEXTS[doc_id]
    assert rag_regress_judge(faithful, [context]).supported, f"{faithful!r} is in {doc_id}"
    verdict = rag_regress_judge(hallucinated, [context])
    assert not verdict.supported, f"{hallucinated!r} passed; the judge read {verdict.window!r}"

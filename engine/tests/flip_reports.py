"""Small hand-built reports for the flip rule's tests (tests/gate/test_net_rule.py) and its
listings (tests/render/test_flip_listings.py): rows of answerable questions whose recall@5 and
hit@5 are per-question checks, and a report of them whose aggregates are their means, as
evaluate() writes them."""

from __future__ import annotations

from typing import Any

import numpy as np


def row(
    qid: str,
    recall: float = 1.0,
    hit: float | None = None,
    *,
    mrr: float = 1.0,
    question: str = "",
    must_pass: bool = False,
) -> dict[str, Any]:
    """One answerable question: recall@5 and hit@5 (default: recall's) are its two checks; it
    retrieves its one relevant document, doc-a, when it hits. Its text: `question`, or
    "question QID"."""
    hit = recall if hit is None else hit
    return {
        "id": qid,
        "question": question or f"question {qid}",
        "tags": [],
        "answerable": True,
        "must_pass": must_pass,
        "relevant": {"doc-a": 3},
        "retrieved": [["doc-a" if hit else "doc-x", 1.0]],
        "found": ["doc-a"] if hit else [],
        "missing": [],
        "metrics": {"recall@5": recall, "hit@5": hit, "mrr": mrr},
        "checks": None,
    }


def report(*rows: dict[str, Any]) -> dict[str, Any]:
    """A report whose aggregates are the means of its rows, as evaluate() writes them."""
    means = {
        name: float(np.mean([r["metrics"][name] for r in rows])) for name in ("recall@5", "hit@5", "mrr")
    }
    return {
        "format": "rag-eval-report",
        "version": 1,
        "settings": {"k": 5},
        "counts": {"questions": len(rows), "evaluated": len(rows), "left_out": 0},
        "aggregate": means,
        "slices": {},
        "questions": list(rows),
    }

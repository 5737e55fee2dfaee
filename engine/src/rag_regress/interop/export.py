"""Export the golden set as qrels and the retriever's output as a run, for trec_eval, ranx & co.

The file name picks the format: `.json` writes JSON ({qid: {docid: grade}} and
{qid: {docid: score}}), anything else TREC text. Both are written atomically.

An exported run reproduces the report's numbers exactly in trec_eval: its scores rank every
question's documents in the order its metrics were computed on (`[retrieval] ties`):
  "trec_eval"  each score is the float32 value trec_eval compares (`ranking.as_float32`),
               written in full: trec_eval reads it back bit for bit, so ties and their
               order by document id are exactly ours, and a tool that reads doubles (ranx)
               sees the same ties; the retriever's double scores differ beyond float32;
  "retriever"  rank-preserving scores: n, n - 1, ..., 1 for a question's n hits, in the
               retriever's own order, since its scores (tied ones included) would be
               reordered by any tool that ranks by score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..api import Hit
from ..errors import EvalInputError
from ..inputs.data import load_corpus, load_golden
from ..inputs.files import write_atomic
from ..inputs.reports import Report
from ..retrieval.ranking import Ties, as_float32
from ..settings.config import Config
from .trec import format_qrels, format_run


def _check_ids(path: Path, ids: list[str], what: str, line: int | None = None) -> None:
    # TREC text splits columns on whitespace: an id with a space would shift every column.
    for ident in ids:
        if any(c.isspace() for c in ident):
            raise EvalInputError(
                path,
                f"{what} {ident!r} contains whitespace, which TREC text cannot hold",
                "write .json",
                line,
            )


def export_qrels(config: Config, target: Path) -> int:
    """Write the golden set's judgments as qrels; returns how many queries. Documents judged
    not relevant are written with grade 0, as trec_eval's qrels hold them (bpref and the
    condensed `_j` metrics read them).

    Unanswerable questions have no relevant document and so no qrels line; trec_eval, like
    our evaluator, then leaves them out.
    """
    questions = load_golden(config.golden, load_corpus(config.corpus))
    qrels = {question.id: question.qrels for question in questions if question.relevant}
    as_json = target.suffix == ".json"
    if not as_json:
        for question in questions:
            _check_ids(config.golden, [question.id], "question id", question.line)
            _check_ids(config.golden, list(question.qrels), "document id", question.line)
    write_atomic(target, format_qrels(qrels, as_json=as_json))
    return len(qrels)


def exported_scores(hits: Sequence[Hit], ties: Ties) -> list[Hit]:
    """`hits`, in the order their metrics were computed on, with the scores an exported run
    carries for them (module docstring): trec_eval ranks them in exactly this order."""
    if ties == "retriever":
        return [Hit(hit.doc_id, float(len(hits) - rank)) for rank, hit in enumerate(hits)]
    scores = as_float32(np.array([hit.score for hit in hits], dtype=np.float64)).tolist()
    return [Hit(hit.doc_id, score) for hit, score in zip(hits, scores, strict=True)]


def export_run(config: Config, target: Path, tag: str, evaluate: Callable[[Config], Report]) -> str:
    """Evaluate (with `evaluate`, the orchestrator's), then write what the retriever returned
    for every question as a run whose scores reproduce the report's numbers in trec_eval
    (module docstring). Returns what the scores are, for the command's message.
    """
    as_json = target.suffix == ".json"
    if not as_json:
        _check_ids(Path("--tag"), [tag], "run tag")
    report = evaluate(config)
    ties = config.retrieval.ties
    run = {
        row.id: exported_scores([Hit(doc_id, score) for doc_id, score in row.retrieved], ties)
        for row in report.questions
    }
    if not as_json:
        _check_ids(config.golden, list(run), "question id")
        _check_ids(config.corpus, [hit.doc_id for hits in run.values() for hit in hits], "document id")
    write_atomic(target, format_run(run, tag, as_json=as_json))
    if ties == "retriever":
        return "scores are ranks, n down to 1, in the retriever's order ([retrieval] ties)"
    return "scores are the retriever's, as the float32 values trec_eval compares"

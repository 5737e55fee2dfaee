"""Export the golden set as qrels and the retriever's output as a run, for trec_eval, ranx & co.

The file name picks the format: `.json` writes JSON ({qid: {docid: grade}} and
{qid: {docid: score}}), anything else TREC text. Both are written atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..api import Hit
from ..errors import EvalInputError
from ..inputs.data import load_corpus, load_golden
from ..inputs.files import write_atomic
from ..inputs.reports import Report
from ..retrieval.ranking import trec_order
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
    """Write the golden set's graded relevant documents as qrels; returns how many queries.

    Unanswerable questions have no relevant document and so no qrels line; trec_eval, like
    our evaluator, then leaves them out.
    """
    questions = load_golden(config.golden, load_corpus(config.corpus))
    qrels = {question.id: dict(question.relevant) for question in questions if question.relevant}
    as_json = target.suffix == ".json"
    if not as_json:
        for question in questions:
            _check_ids(config.golden, [question.id], "question id", question.line)
            _check_ids(config.golden, list(question.relevant), "document id", question.line)
    write_atomic(target, format_qrels(qrels, as_json=as_json))
    return len(qrels)


def export_run(config: Config, target: Path, tag: str, evaluate: Callable[[Config], Report]) -> list[str]:
    """Evaluate (with `evaluate`, the orchestrator's), then write what the retriever returned
    for every question as a run.

    Returns the questions whose hits, as the retriever ordered them, differ from trec_eval's
    order (tied scores not ordered by document id descending): for those, tools that rank
    by score see a different ranking than our report did.
    """
    as_json = target.suffix == ".json"
    if not as_json:
        _check_ids(Path("--tag"), [tag], "run tag")
    report = evaluate(config)
    run = {row.id: [Hit(doc_id, score) for doc_id, score in row.retrieved] for row in report.questions}
    if not as_json:
        _check_ids(config.golden, list(run), "question id")
        _check_ids(config.corpus, [hit.doc_id for hits in run.values() for hit in hits], "document id")
    write_atomic(target, format_run(run, tag, as_json=as_json))
    return [qid for qid, hits in run.items() if trec_order(hits) != hits]

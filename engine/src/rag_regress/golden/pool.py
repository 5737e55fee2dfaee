"""`pool`: the documents of the baseline's and the candidate's top k that nobody judged.

A test collection judges the pool of the systems it compared; a document outside that pool
counts as not relevant. When a new retriever brings such documents into its top k, this
writes them, per question, so a person can grade them (`grade --pool FILE`) and
`add-judgments` can merge the grades: then baseline and candidate are compared on the same
judged documents. The file (JSON Lines, one line per question with any):

  {"id": "q07", "question": "...", "docs": [{"doc": "doc-id", "in": ["baseline", "candidate"]}]}

documents in the candidate's rank order, then the baseline's; a document no longer in the
corpus is left out (and counted on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..api import Document
from ..errors import ExitCode
from ..inputs.files import write_atomic
from ..inputs.lines import Line, NonEmpty, Text
from ..inputs.reports import Report

BASELINE, CANDIDATE = "baseline", "candidate"


class Pooled(Line):
    """A document of a pool line, and whose top k it was in."""

    doc: Text
    in_: list[Literal["baseline", "candidate"]] = Field(
        default_factory=list, alias="in", description='a list of "baseline" and/or "candidate"'
    )


class PoolLine(Line):
    """A line of a pool file (module doc), as the grading page reads it (golden/page.py)."""

    id: NonEmpty
    question: Text = ""
    docs: Annotated[
        list[Pooled], Field(description='a list of {"doc": a document id, "in": baseline and/or candidate}')
    ]


def unjudged_pool(
    report: Report, baseline: Report, corpus: dict[str, Document]
) -> tuple[list[dict[str, Any]], int]:
    """The pool file's lines, and how many unjudged ids were left out as not in the corpus.
    Judged means judged now (the report's golden set), for both runs."""
    k = report.k
    before = {row.id: row for row in baseline.questions}
    lines: list[dict[str, Any]] = []
    gone = 0
    for row in report.questions:
        old = before.get(row.id)
        where: dict[str, list[str]] = {}
        then = old.unjudged(k, row.qrels) if old is not None else []
        for source, ids in ((CANDIDATE, row.unjudged(k)), (BASELINE, then)):
            for doc_id in ids:
                where.setdefault(doc_id, []).append(source)
        docs = []
        for doc_id, sources in where.items():
            if doc_id not in corpus:
                gone += 1
                continue
            docs.append({"doc": doc_id, "in": sorted(sources)})
        if docs:
            lines.append({"id": row.id, "question": row.question, "docs": docs})
    return lines, gone


def write_pool(path: Path, lines: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def report_pool(path: Path, lines: list[dict[str, Any]], gone: int, k: int) -> ExitCode:
    """Write the pool file and say what is in it and what to do next."""
    write_pool(path, lines)
    count = sum(len(line["docs"]) for line in lines)
    only = sum(1 for line in lines for doc in line["docs"] if doc["in"] == [CANDIDATE])
    print(
        f"wrote {path}: {count} unjudged document(s) in the top {k} of {len(lines)} question(s) "
        f"({only} only in the candidate's)"
    )
    if gone:
        print(f"warning: {gone} unjudged id(s) of the baseline are no longer in the corpus", file=sys.stderr)
    if count:
        print(f"next: rag-regress grade --pool {path}, grade them, then rag-regress add-judgments <download>")
    return ExitCode.OK

"""The grading page: one self-contained HTML file in which a person grades documents for
questions, accepts or rejects generated candidates, edits them and adds questions, then
downloads the judgments as JSON Lines for `rag-regress add-judgments`.

`page_items` gathers what there is to grade: every candidate of a candidates file (its source
documents, pre-graded), every question of a pool file (the documents a retriever ranked but
nobody judged, next to those already judged) and, on request, every golden question with its
judged documents. `write_page` writes them into page.html, the template next to this module.

Files read (JSON Lines):
  candidates  {"id": "cand-0007", "status": "candidate" | "dropped", "question": "...",
               "relevant": {"doc-id": 3}, "passages": [{"doc", "start", "end", "grade"}],
               "reference", "nuggets", "answerable", "kind", "provenance", ...}
  pool        {"id": "q07", "question": "...", "docs": [{"doc": "doc-id", "in": ["baseline"]}]}
The file the page downloads: a header {"format": "rag-regress-judgments", "version": 1, "by",
"at", "page"}, then one line per item the grader touched: {"id", "origin", "status", "question",
"answerable", ["kind", "reference", "nuggets",] "judgments": {"doc-id": 0..3}[, "passages",
"provenance"]} ("kind": a candidate's, so the merged question is tagged with it).
A golden question's item may carry "history": [{"role", "content" or null}], shown above it.

A page of answer sentences (`grade --answers`, golden/answers.py: items of origin "sentence")
grades each sentence supported, not supported or cannot tell, with a note, and downloads a
labels file for `rag-regress add-labels` (golden/labels.py): a header {"format":
"rag-regress-labels", "version": 1, "by", "at", "page", "report": {"path", "sha256"[, "commit",
"engine", "judge"]}}, then one line per sentence graded: {"id", "question_id", "question",
"tags", "claim", "context", "label": "supported" | "not supported" | "cannot tell"[, "note"]}
("context": the contexts' texts as shown, joined by a blank line).

The page keeps the grader's work in the browser's local storage under its title and `key`, a
digest of the items it grades: two pages of one title but other items never share saved work
(a page made again from the same items finds it). A question added on the page gets the first
id `new-N` that neither the golden set (as the page was made) nor the page holds; the merge
renames it if another round took that id since. An unanswerable item's documents can only be
graded 0, as the golden set holds them.

The page runs with no network and no server, opened from disk: the data travels inside it as
JSON in a `<script type="application/json">` element, with `<`, `>` and `&` escaped so that a
document containing `</script>` cannot end that element, and the page's script inserts every
piece of it as text (never as HTML).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..api import Document
from ..errors import EvalInputError, ExitCode
from ..inputs.data import MAX_GRADE, Question, json_lines, load_corpus, load_golden
from ..inputs.files import write_atomic
from ..inputs.lines import checked
from ..settings.config import Config
from .candidates import CandidateLine
from .pool import PoolLine

TEXT_LIMIT = 4_000  # characters of a document's text shown; a longer one is cut around its passage
INDEX_LIMIT = 50_000  # corpus documents offered by the add-question form's picker
WHY_SOURCE, WHY_JUDGED = "source passage", "judged"
WHY_LOGGED = "shown to the user (log)"  # a candidate of `golden import-logs` (kind "logs")
WHY_POOL = {"baseline": "in the baseline's top k", "candidate": "in the candidate's top k"}

# Characters that could end the data's <script> element or that JavaScript source once could
# not hold: written as \u escapes, which JSON.parse reads back as the same characters.
_UNSAFE = re.compile("[<>&\u2028\u2029]")
_ADDED_ID = re.compile(r"new-\d+")  # the ids the page gives a question added on it


def _fail(path: Path, number: int, problem: str, fix: str) -> EvalInputError:
    return EvalInputError(path, problem, fix, number)


def _lines(path: Path, what: str, fix: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of the JSON Lines file `path`; `fix`
    says how to make the file when it is missing."""
    return list(json_lines(path, what, missing_fix=fix))


def _need(path: Path, number: int, given: Iterable[str], keys: tuple[str, ...], fix: str) -> None:
    missing = [key for key in keys if key not in given]
    if missing:
        raise _fail(path, number, f"missing key(s): {', '.join(missing)}", f"add {missing[0]!r}; {fix}")


def _doc_id(path: Path, number: int, value: Any, corpus: dict[str, Document], where: str, fix: str) -> str:
    if not isinstance(value, str) or value not in corpus:
        raise _fail(path, number, f"{where}: document {value!r:.80} is not in the corpus", fix)
    return value


def _candidate(path: Path, number: int, line: CandidateLine, corpus: dict[str, Document]) -> dict[str, Any]:
    """The page's item for one "candidate" line of a candidates file, checked."""
    fix = "`rag-regress golden generate` writes every key; regenerate the line"
    unknown = "fix the id, or regenerate the candidates from this corpus (`rag-regress golden generate`)"
    _need(path, number, line.model_fields_set, ("question", "relevant"), fix)
    if not line.question.strip():
        raise _fail(path, number, f"'question' must be a non-empty string, got {line.question!r:.60}", fix)
    relevant = line.relevant
    for doc, grade in relevant.items():
        _doc_id(path, number, doc, corpus, "relevant", unknown)
        if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
            raise _fail(path, number, f"grade of {doc!r} must be 1 to {MAX_GRADE}, got {grade!r:.20}", fix)
    spans: dict[str, list[tuple[int, int]]] = {}
    for entry in line.passages:
        doc = _doc_id(path, number, entry.get("doc"), corpus, "passage", unknown)
        start: Any = entry.get("start")  # checked on the next lines
        end: Any = entry.get("end")
        length = len(corpus[doc].text)
        whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
        if doc not in relevant or not whole or not 0 <= start < end <= length:
            raise _fail(
                path,
                number,
                f"passage in {doc!r}: start={start!r:.20}, end={end!r:.20} must be offsets inside its text "
                f"({length} characters) of one of the candidate's relevant documents",
                fix,
            )
        spans.setdefault(doc, []).append((start, end))
    why = WHY_LOGGED if line.kind == "logs" else WHY_SOURCE
    return {
        "id": line.id,
        "origin": "candidate",
        "kind": line.kind,
        "question": line.question,
        "answerable": line.answerable,
        "reference": line.reference,
        "nuggets": [{"text": n.text, "vital": n.vital} for n in line.nuggets],
        "passages": line.passages,
        "provenance": line.provenance,
        "docs": [_doc(corpus[doc], grade, [why], spans.get(doc, [])) for doc, grade in relevant.items()],
    }


def _candidates(path: Path, corpus: dict[str, Document]) -> list[dict[str, Any]]:
    """The items of a candidates file: its "candidate" lines (a "dropped" one is skipped)."""
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, value in _lines(path, "candidates", "run `rag-regress golden generate`, or fix the path"):
        line = checked(CandidateLine, value, path, number)
        if line.id in seen:
            first = f"id {line.id!r:.60} is first used on line {seen[line.id]}"
            raise _fail(path, number, first, "give every candidate its own id")
        seen[line.id] = number
        if line.status == "candidate":
            items.append(_candidate(path, number, line, corpus))
    return items


def _pool(
    path: Path, corpus: dict[str, Document], golden: dict[str, Question]
) -> dict[str, dict[str, list[str]]]:
    """{question id: {unjudged document: why it is shown}} from a pool file, checked."""
    pooled: dict[str, dict[str, list[str]]] = {}
    fix = "regenerate it with `rag-regress pool` from this golden set"
    for number, value in _lines(path, "pool", "run `rag-regress pool`, or fix the path"):
        line = checked(PoolLine, value, path, number, fix)
        if line.id not in golden:
            raise _fail(path, number, f"question {line.id!r:.60} is not in the golden set", fix)
        shown = pooled.setdefault(line.id, {})
        for entry in line.docs:
            doc = _doc_id(path, number, entry.doc, corpus, "docs", fix)
            reasons = shown.setdefault(doc, [])
            reasons += [WHY_POOL[run] for run in sorted(entry.in_) if WHY_POOL[run] not in reasons]
    return pooled


def _doc(
    document: Document,
    grade: int | None,
    why: list[str],
    spans: list[tuple[int, int]],
    limit: int = TEXT_LIMIT,
) -> dict[str, Any]:
    """A document as the page shows it: its text, cut to `limit` characters around the first
    passage, the passages' offsets into what is shown, its grade (None: unjudged), why shown."""
    text, first = document.text, 0
    if len(text) > limit:
        anchor = min(start for start, _ in spans) if spans else 0
        first = max(0, min(anchor - 200, len(text) - limit))  # some context before the passage
        text = text[first : first + limit]
    marks = [[max(s - first, 0), min(e - first, len(text))] for s, e in sorted(spans)]
    return {
        "id": document.id,
        "title": document.title,
        "text": text,
        "start": first,  # where the shown text starts in the whole one: the page marks a cut
        "length": len(document.text),
        # Offsets count code points (Python's), which the page counts the same way.
        "marks": [mark for mark in marks if mark[0] < mark[1]],
        "grade": grade,
        "why": why,
    }


def _question(
    question: Question, corpus: dict[str, Document], unjudged: dict[str, list[str]]
) -> dict[str, Any]:
    """A golden question's item: the pooled documents nobody judged, then those judged."""
    qrels = question.qrels
    spans: dict[str, list[tuple[int, int]]] = {}
    for passage in question.passages:
        spans.setdefault(passage.doc, []).append((passage.start, passage.end))
    docs = [_doc(corpus[doc], None, why, []) for doc, why in unjudged.items() if doc not in qrels]
    docs += [_doc(corpus[doc], grade, [WHY_JUDGED], spans.get(doc, [])) for doc, grade in qrels.items()]
    item: dict[str, Any] = {
        "id": question.id,
        "origin": "question",
        "question": question.question,
        "answerable": question.answerable,
        "reference": question.reference,
        "nuggets": [{"text": n.text, "vital": n.vital} for n in question.nuggets],
        "docs": docs,
    }
    return item | history_field(question.history)


def history_field(history: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """An item's "history" key (the turns before its question, for the page to show above it),
    or nothing for none: an item without history stays as it was, and so does the page key."""
    turns = [{"role": role, "content": content} for role, content in history]
    return {"history": turns} if turns else {}


def page_items(
    corpus: dict[str, Document],
    golden: list[Question],
    *,
    candidates: Path | None = None,
    pool: Path | None = None,
    include_golden: bool = False,
) -> list[dict[str, Any]]:
    """What the page offers to grade, in order: the candidates, the pooled questions, then
    (`include_golden`) every other golden question. EvalInputError names the file, line and fix
    for a bad line of either file."""
    items = _candidates(candidates, corpus) if candidates is not None else []
    by_id = {question.id: question for question in golden}
    pooled = _pool(pool, corpus, by_id) if pool is not None else {}
    items += [_question(by_id[ident], corpus, docs) for ident, docs in pooled.items()]
    if include_golden:
        items += [_question(question, corpus, {}) for question in golden if question.id not in pooled]
    return items


def _inert_json(value: Any) -> str:
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", json.dumps(value, ensure_ascii=False))


def page_key(items: list[dict[str, Any]]) -> str:
    """The digest of what a page grades (its items), part of where it keeps work in progress:
    pages of one title but other items never share it."""
    canonical = json.dumps(items, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def write_page(
    path: Path,
    items: list[dict[str, Any]],
    corpus: dict[str, Document],
    title: str,
    taken: Iterable[str] = (),
    *,
    mode: str = "documents",
    report: dict[str, Any] | None = None,
) -> None:
    """Write the grading page for `items` to `path` (atomically): one HTML file that needs
    nothing else, holding the items, their digest (`page_key`), the `new-N` ids a question
    added on the page must not take (of `taken`, the golden set's ids, and of the items) and
    the ids and titles of up to INDEX_LIMIT corpus documents (the add-question form picks
    documents from them). `mode` "answers": a page of answer sentences (golden/answers.py),
    which adds no question (no corpus index) and records `report` in its download."""
    answers = mode == "answers"
    documents = [] if answers else list(corpus.values())[:INDEX_LIMIT]
    index = [[doc.id, doc.title[:200]] for doc in documents]
    # Only ids an added question could take (new-N): a large golden set's others would only
    # make the page bigger.
    ids = sorted(i for i in {*taken, *(str(item["id"]) for item in items)} if _ADDED_ID.fullmatch(i))
    data = {
        "title": title,
        "key": page_key(items),
        "mode": "answers" if answers else "documents",
        "items": items,
        "taken": [] if answers else ids,
        "corpus": index,
        "corpus_size": len(index) if answers else len(corpus),
        **({"report": report or {}} if answers else {}),
    }
    template = files(__package__ or "rag_regress.golden").joinpath("page.html").read_text(encoding="utf-8")
    values = {"TITLE": escape(title), "DATA": _inert_json(data)}
    # One pass over the template: text put in for one marker is never searched for the other.
    write_atomic(path, re.sub(r"__(TITLE|DATA)__", lambda match: values[match.group(1)], template))


def run_grade(
    config: Config,
    output: Path,
    candidates: Path | None,
    pool: Path | None,
    include_golden: bool,
    title: str | None,
) -> ExitCode:
    """`grade`: the page of the candidates, the pool and (`include_golden`) the golden set, to
    `output`; EvalInputError when given nothing to grade."""
    if candidates is None and pool is None and not include_golden:
        raise EvalInputError(
            config.path, "grade needs something to grade", "give --candidates FILE, --pool FILE or --all"
        )
    corpus = load_corpus(config.corpus)
    golden = load_golden(config.golden, corpus)
    items = page_items(corpus, golden, candidates=candidates, pool=pool, include_golden=include_golden)
    taken = [question.id for question in golden]
    write_page(output, items, corpus, title or f"Grading: {config.path.parent.resolve().name}", taken)
    print(f"wrote {output}: {len(items)} item(s) to grade; open it in a browser (no server needed)")
    print("download your grades from the page, then: rag-regress add-judgments <downloaded file>")
    return ExitCode.OK

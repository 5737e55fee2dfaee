"""Qrels and runs in TREC text and JSON: read them from any system, write ours for any tool.

Qrels (relevance judgements), one of:
  TREC text  `qid iteration docid grade` per line; the iteration column is ignored (usually 0)
  JSON       {"q1": {"doc-a": 2, "doc-b": 0}}     graded; grade 0 means judged not relevant
  JSON       {"q1": ["doc-a", "doc-b"]}           every listed id is relevant (grade 1)

Runs (ranked output of a retriever), one of:
  TREC text  `qid Q0 docid rank score tag` per line; one run per tag
  JSON       {"q1": {"doc-a": 12.5, "doc-b": 3.0}}           scores
  JSON       {"q1": ["doc-a", "doc-b"]}                      ids, best first
  JSON       {"bm25": {"q1": [...]}, "dense": {"q1": {...}}}  several runs by name

Scored runs are ranked exactly as trec_eval ranks them (`ranking.trec_order`: score
descending, then document id descending); like trec_eval we ignore the rank column. A run
without a name of its own (a JSON `{qid: ...}` file) is named after its file: `bm25.json`
is run `bm25`. Anything we cannot read raises EvalInputError with file, line and fix.

Scores are numbers: in JSON a string ("6.47") or a boolean (true) is refused, in TREC text
a field that is not a plain decimal number (`6.47`, `-1e-3`; not `nan`, `1_0` or digits of
another script, which other tools would read otherwise). Reading is linear in the file's
size: the line of a JSON key is looked up only when an error names it.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..api import Hit
from ..errors import EvalInputError
from ..inputs.reading import CORPUS_LIMIT, STRICT_JSON, DuplicateKey, read_data
from ..retrieval.ranking import trec_order

AllQrels = dict[str, dict[str, int]]  # {query id: {document id: grade}}
Run = dict[str, list[str]]  # {query id: [document ids, best first]}

QRELS_FIX = 'write TREC qrels (`qid 0 docid grade` per line) or JSON {"qid": {"docid": grade}}'
RUN_FIX = 'write a TREC run (`qid Q0 docid rank score tag` per line) or JSON {"qid": ["docid", ...]}'


# --- reading -----------------------------------------------------------------------------


def read_text(path: Path, what: str) -> str:
    """A file as UTF-8 text (a byte-order mark tolerated); EvalInputError naming file and line.
    Read by inputs.reading.read_data: a FIFO, a device or a file over CORPUS_LIMIT is refused."""
    raw = read_data(path, what, limit=CORPUS_LIMIT)  # a regular file, of a bounded size
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # tolerate a UTF-8 byte-order mark
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise EvalInputError(
            path, f"not valid UTF-8 (byte {error.start + 1})", "save the file as UTF-8", line
        ) from None


def _is_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


# The line of a JSON key for an error message, computed only when the error is raised:
# finding it scans the text, so computing it for every key would make reading quadratic.
Where = Callable[[], int | None]


def _line_of(text: str, *keys: str) -> int | None:
    """Best-effort line of the nested object key path `keys` (None when it cannot be found)."""
    offset = 0
    for key in keys:
        match = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:").search(text, offset)
        if match is None:
            return None
        offset = match.end()
    return text.count("\n", 0, offset) + 1


def _load_json(path: Path, text: str, fix: str) -> dict[str, Any]:
    try:
        value = STRICT_JSON.decode(text)
    except json.JSONDecodeError as error:
        raise EvalInputError(
            path, f"not valid JSON: {error.msg} (column {error.colno})", fix, error.lineno
        ) from None
    except DuplicateKey as error:
        key = str(error.args[0])
        raise EvalInputError(
            path, f"key {key!r} appears twice in one object", "keep one entry per id", _line_of(text, key)
        ) from None
    except ValueError as error:  # NaN / Infinity
        raise EvalInputError(path, f"not valid JSON: {error}", "write finite numbers", None) from None
    except RecursionError:
        raise EvalInputError(path, "JSON nested too deeply", fix) from None
    try:  # "\ud800"-style escapes decode to text that can never be printed or written as UTF-8
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise EvalInputError(
            path, "holds a \\u escape of a lone surrogate, which is not a character", "remove it"
        ) from None
    if not isinstance(value, dict):
        raise EvalInputError(path, f"expected a JSON object, got {type(value).__name__}", fix, 1)
    if not value:
        raise EvalInputError(path, "holds no queries", fix, 1)
    return value


def _at(text: str, *keys: str) -> Where:
    return lambda: _line_of(text, *keys)


def _check_id(path: Path, value: Any, what: str, where: Where) -> str:
    # Ids must survive a round trip through TREC text, whose columns are split on whitespace.
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise EvalInputError(
            path, f"{what} must be a non-empty string without spaces, got {value!r}", "fix the id", where()
        )
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


GRADES = "an integer from -1000 to 1000"
GRADE_FIX = "write grades like 0 (not relevant), 1, 2, 3"


# What trec_eval's C reader takes as a number, in ASCII: Python's float() and int() also take
# "1_000", "nan", "infinity" and digits of other scripts, which no other tool reads the same.
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _grade(value: Any) -> int:
    # Bounded so that every metric, exponential nDCG gain included, stays a finite float.
    if not isinstance(value, int) or isinstance(value, bool) or not -1000 <= value <= 1000:
        raise ValueError(value)
    return value


def _table_lines(
    path: Path, text: str, columns: int, layout: str, fix: str
) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, fields) of a whitespace-separated TREC file; reject other lines."""
    found = False
    for number, line in enumerate(text.split("\n"), start=1):  # numbered as editors number them
        fields = line.split()
        if not fields:
            continue
        if len(fields) != columns:
            raise EvalInputError(
                path,
                f"expected {columns} columns ({layout}), got {len(fields)}: {line.strip()[:80]!r}",
                fix,
                number,
            )
        found = True
        yield number, fields
    if not found:
        raise EvalInputError(path, "holds no lines", fix)


def load_qrels(path: Path) -> AllQrels:
    """Read qrels (TREC text or JSON, see the module docstring) into {qid: {docid: grade}}.

    Grades are integers; as in trec_eval a document is relevant when its grade is at least 1,
    and zero or negative grades mean judged not relevant. A document judged twice for the
    same query is an error, as is a query with nothing judged.
    """
    text = read_text(path, "qrels")
    qrels: AllQrels = {}
    if not _is_json(text):
        seen: dict[tuple[str, str], int] = {}
        for number, (qid, _iteration, doc_id, grade) in _table_lines(
            path, text, 4, "qid iteration docid grade", QRELS_FIX
        ):
            if (qid, doc_id) in seen:
                raise EvalInputError(
                    path,
                    f"query {qid!r} judges {doc_id!r} twice (first on line {seen[qid, doc_id]})",
                    "keep one judgement per query and document",
                    number,
                )
            try:
                if not _INTEGER.fullmatch(grade):
                    raise ValueError(grade)
                qrels.setdefault(qid, {})[doc_id] = _grade(int(grade))
            except ValueError:
                raise EvalInputError(
                    path, f"grade must be {GRADES}, got {grade!r}", GRADE_FIX, number
                ) from None
            seen[qid, doc_id] = number
        return qrels
    for qid, judged in _load_json(path, text, QRELS_FIX).items():
        where = _at(text, qid)
        _check_id(path, qid, "a query id", where)
        if isinstance(judged, list):
            ids = [_check_id(path, doc_id, f"query {qid!r}: a document id", where) for doc_id in judged]
            duplicates = sorted(doc_id for doc_id, count in Counter(ids).items() if count > 1)
            if duplicates:
                raise EvalInputError(
                    path,
                    f"query {qid!r} lists {duplicates[0]!r} twice",
                    "list each relevant id once",
                    where(),
                )
            judged = dict.fromkeys(ids, 1)
        elif isinstance(judged, dict):
            for doc_id, grade in judged.items():
                _check_id(path, doc_id, f"query {qid!r}: a document id", where)
                try:
                    _grade(grade)
                except ValueError:
                    raise EvalInputError(
                        path,
                        f"query {qid!r}: grade of {doc_id!r} must be {GRADES}, got {grade!r}",
                        GRADE_FIX,
                        _line_of(text, qid, doc_id),
                    ) from None
        else:
            raise EvalInputError(
                path,
                f"query {qid!r}: expected a list of relevant ids or an object of grades, got {judged!r}"[
                    :200
                ],
                'write e.g. "q1": ["doc-a"] or "q1": {"doc-a": 2}',
                where(),
            )
        if not judged:
            raise EvalInputError(
                path,
                f"query {qid!r} has no judged documents",
                "label its relevant documents or remove it",
                where(),
            )
        qrels[qid] = judged
    return qrels


def _ranking(path: Path, text: str, value: Any, keys: tuple[str, ...]) -> list[str]:
    """One query's ranking from a JSON list of ids or an object of scores."""
    name = "/".join(keys)
    where = _at(text, *keys)
    if isinstance(value, list):
        ranking = [_check_id(path, doc_id, f"{name}: a document id", where) for doc_id in value]
        if len(set(ranking)) != len(ranking):
            first = next(doc_id for doc_id, count in Counter(ranking).items() if count > 1)
            raise EvalInputError(
                path, f"{name} ranks {first!r} twice", "rank each document at most once per query", where()
            )
        return ranking
    if isinstance(value, dict):
        hits = []
        for doc_id, score in value.items():
            _check_id(path, doc_id, f"{name}: a document id", where)
            if not _is_number(score) or not math.isfinite(_as_float(score)):
                kind = f" (a {type(score).__name__}, not a number)" if not _is_number(score) else ""
                raise EvalInputError(
                    path,
                    f"{name}: score of {doc_id!r} must be a finite number, got {score!r}{kind}"[:300],
                    "write the score as a JSON number, e.g. 6.47 (no quotes)",
                    _line_of(text, *keys, doc_id),
                )
            hits.append(Hit(doc_id, _as_float(score)))
        return [hit.doc_id for hit in trec_order(hits)]
    raise EvalInputError(
        path,
        f"{name}: expected a list of ids or an object of scores, got {value!r}"[:200],
        'write e.g. "q1": ["doc-a", "doc-b"] or "q1": {"doc-a": 1.5}',
        where(),
    )


def _as_float(number: float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer with hundreds of digits
        return math.inf


def _is_ranking(value: Any) -> bool:
    """A list of ids, or an object of scores: of anything but lists and objects, so that a
    score written as a string is refused as a score, not read as a run of another shape."""
    return isinstance(value, list) or (
        isinstance(value, dict) and not any(isinstance(v, dict | list) for v in value.values())
    )


def load_runs(path: Path) -> dict[str, Run]:
    """Read one or more runs (TREC text or JSON, see the module docstring): {run name: run}.

    A document ranked twice for one query is an error. A query may rank no document (an
    empty list): that scores zero.
    """
    text = read_text(path, "run")
    if not _is_json(text):
        scored: dict[str, dict[str, dict[str, float]]] = {}
        seen: dict[tuple[str, str, str], int] = {}
        for number, (qid, _q0, doc_id, _rank, score, tag) in _table_lines(
            path, text, 6, "qid Q0 docid rank score tag", RUN_FIX
        ):
            if (tag, qid, doc_id) in seen:
                raise EvalInputError(
                    path,
                    f"run {tag!r} ranks {doc_id!r} twice for query {qid!r} "
                    f"(first on line {seen[tag, qid, doc_id]})",
                    "rank each document at most once per query",
                    number,
                )
            value = float(score) if _DECIMAL.fullmatch(score) else math.nan
            if not math.isfinite(value):
                raise EvalInputError(
                    path,
                    f"score must be a finite decimal number, got {score!r}",
                    "write the score like 6.47 or -1.5e-3",
                    number,
                )
            seen[tag, qid, doc_id] = number
            scored.setdefault(tag, {}).setdefault(qid, {})[doc_id] = value
        return {
            tag: {
                qid: [hit.doc_id for hit in trec_order(Hit(*item) for item in scores.items())]
                for qid, scores in run.items()
            }
            for tag, run in scored.items()
        }
    data = _load_json(path, text, RUN_FIX)
    if all(_is_ranking(value) for value in data.values()):  # one run: {qid: ranking}
        return {
            path.stem: {
                _check_id(path, qid, "a query id", _at(text, qid)): _ranking(path, text, value, (qid,))
                for qid, value in data.items()
            }
        }
    runs: dict[str, Run] = {}
    for name, run in data.items():
        if not isinstance(run, dict) or not run:
            raise EvalInputError(
                path,
                f"run {name!r}: expected an object of queries, got {run!r}"[:200],
                'write e.g. {"bm25": {"q1": ["doc-a"]}}',
                _line_of(text, name),
            )
        runs[name] = {
            _check_id(path, qid, f"run {name!r}: a query id", _at(text, name, qid)): _ranking(
                path, text, value, (name, qid)
            )
            for qid, value in run.items()
        }
    return runs


# --- writing -----------------------------------------------------------------------------


def format_qrels(qrels: Mapping[str, Mapping[str, int]], *, as_json: bool = False) -> str:
    """TREC qrels text (`qid 0 docid grade`), or JSON {qid: {docid: grade}} with `as_json`."""
    if as_json:
        return json.dumps(qrels, indent=2, ensure_ascii=False) + "\n"
    return "".join(
        f"{qid} 0 {doc_id} {grade}\n" for qid, judged in qrels.items() for doc_id, grade in judged.items()
    )


def format_run(run: Mapping[str, Sequence[Hit]], tag: str, *, as_json: bool = False) -> str:
    """A six-column TREC run (`qid Q0 docid rank score tag`), or JSON {qid: {docid: score}}.

    Hits are written in `trec_order`, with 1-based ranks that match that order, so trec_eval,
    ranx and this project all read the same ranking back. Scores are written in full
    precision (`repr`), so no two scores become equal on the way.
    """
    if as_json:
        data = {qid: {hit.doc_id: hit.score for hit in trec_order(hits)} for qid, hits in run.items()}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return "".join(
        f"{qid} Q0 {hit.doc_id} {rank} {hit.score!r} {tag}\n"
        for qid, hits in run.items()
        for rank, hit in enumerate(trec_order(hits), start=1)
    )

"""Load and validate the corpus and the golden set (JSON Lines, one object per line).

Anything wrong raises EvalInputError naming the file, the line and the fix, so a typo in a
golden question never turns into a silently wrong number.

corpus.jsonl:  {"id": "sso-saml", "title": "Single sign-on", "text": "..."}   (title optional,
               text may be empty)
golden.jsonl:  {"id": "q01", "question": "...", "relevant": {"sso-saml": 3},
                "must_include": ["Business plan"], "answerable": true,
                "tags": ["security"], "must_pass": false}

Grades in `relevant` are positive integers: 3 answers the question, 2 helps substantially,
1 is related; at most MAX_GRADE (30), so that `ndcg_exp`'s gain 2**grade - 1 stays an exact,
finite number: summed over the deepest ranking (depth 10,000) it stays below 2**53, the
largest integer a float64 holds exactly (a grade of 1,024 made the gain infinite and the
metric NaN). An unanswerable question has `"answerable": false`, no relevant documents and
no `must_include`: the right answer to it is to abstain. `must_include` lists the key facts
an answer must contain (compared ignoring case and runs of whitespace; by default also with
numbers and units read as values: [judge] match, docs/metrics.md).

A later turn of a conversation carries the turns before it, "history" (inputs/conversation.py).

An answerable question may carry what a right answer says, for the correctness checks:
  "reference": "Turn it on under Profile > Security with an authenticator app.",
  "nuggets": [{"text": "Profile > Security", "vital": true}, {"text": "authenticator app"}]
`reference` is a short answer (a non-empty string); `nuggets` are the facts a complete answer
states, each vital (the default) or not ("okay" in TREC's terms). An unanswerable question has
neither: the right answer to it is to abstain.

Judgments beyond the relevant documents: `"not_relevant": ["doc-id", ...]` lists documents a
person judged and found not relevant (trec_eval's grade 0). A document in neither is
*unjudged*: the metrics count it as not relevant, as trec_eval does, and every report shows
what share of each top k was judged (judged@k), since a retriever that surfaces unjudged
documents may be better than its numbers say. `"provenance": [{"by": ..., "at": ...}]` records
who judged what and when (`add-judgments` writes both); the metrics ignore it.

A question may also name the passages that answer it, inside its relevant documents:
  "passages": [{"doc": "sso-saml", "quote": "Settings > Security > SSO", "grade": 3},
               {"doc": "sso-saml", "start": 120, "end": 245}]
A passage is a quote of the document's text (found after collapsing runs of whitespace,
case kept; it must occur exactly once) or character offsets into the text (`text[start:end]`,
0 <= start < end <= len(text)). Its document must be one of the question's relevant
documents; its grade (1 to MAX_GRADE) defaults to that document's. Passages feed the
passage metrics (retrieval/passages.py); document metrics ignore them. Offsets found for a
quote are offsets into the original text, so chunk offsets and passages compare directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import Document
from ..errors import EvalInputError
from .conversation import TURN_TAG, Said, Turn, as_asked, check_tags, read_history, turn_number
from .lines import Line, NonEmpty, Text, checked
from .reading import CORPUS_LIMIT, QUESTIONS_LIMIT, parse_json, read_data

MAX_GRADE = 30  # 10,000 * (2**30 - 1) < 2**53: gains stay exact (module docstring)


@dataclass(frozen=True)
class Passage:
    """A relevant passage: characters [start, end) of document `doc`'s text, and its grade."""

    doc: str
    start: int
    end: int
    grade: int


@dataclass(frozen=True)
class Nugget:
    """A fact a complete answer states; a vital one is one no right answer leaves out."""

    text: str
    vital: bool = True


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    relevant: dict[str, int]
    must_include: list[str] = field(default_factory=list)
    answerable: bool = True
    tags: list[str] = field(default_factory=list)
    must_pass: bool = False
    line: int = 0  # where it was defined, for error messages
    passages: list[Passage] = field(default_factory=list)  # none: no passage metrics for it
    reference: str | None = None  # a short right answer (answer correctness)
    nuggets: list[Nugget] = field(default_factory=list)  # facts a complete answer states
    not_relevant: list[str] = field(default_factory=list)  # judged, and not relevant (grade 0)
    provenance: list[dict[str, Any]] = field(default_factory=list)  # who judged what, when
    history: tuple[Said, ...] = ()  # the conversation before it (conversation.py); none: turn 1

    @property
    def asked(self) -> Turn:
        """The question as the team's code is asked it, with its conversation."""
        return as_asked(self.question, self.history)

    @property
    def qrels(self) -> dict[str, int]:
        """Every judgment, as trec_eval's qrels: relevant documents with their grades, documents
        judged not relevant with 0. A document absent from it is unjudged."""
        return {**dict.fromkeys(self.not_relevant, 0), **self.relevant}


# A \u escape of a surrogate (U+D800 to U+DFFF), paired or not: the one way a decoded line can
# hold a lone surrogate, so lines without one skip the check that re-encodes the whole value.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


ONE_OBJECT_A_LINE = "write exactly one JSON object per line"


def json_lines(
    path: Path,
    what: str,
    limit: int = QUESTIONS_LIMIT,
    missing_fix: str = "create it, or point [data] in eval.toml at it",
    fix: str = ONE_OBJECT_A_LINE,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of the JSON Lines file `path`;
    reject anything else (`parse_json_lines`, with `fix`), and a path that is not a regular
    file of at most `limit` bytes (reading.py)."""
    yield from parse_json_lines(read_data(path, what, limit=limit, missing_fix=missing_fix), path, fix)


def parse_json_lines(
    raw: bytes, path: Path, fix: str = ONE_OBJECT_A_LINE
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of `raw`, the bytes of `path`:
    EvalInputError at the first line that is not UTF-8, not strict JSON, not an object, or
    holds a lone surrogate. Lines end at \n and \r only (bytes.splitlines), so U+2028
    inside a JSON string stays in its line."""
    for number, line in enumerate(raw.splitlines(), start=1):
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]  # tolerate a UTF-8 byte-order mark
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise EvalInputError(
                path, f"line is not valid UTF-8 (byte {error.start + 1})", "save the file as UTF-8", number
            ) from None
        # Strict: a key twice, NaN, a number too long for int(), nesting too deep (reading.py).
        value = parse_json(text, path, fix, number)
        try:  # "\ud800"-style escapes decode to text that can never be written back as UTF-8
            if _SURROGATE_ESCAPE.search(line):  # only such an escape makes one: UTF-8 cannot
                json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise EvalInputError(
                path, "holds a \\u escape of a lone surrogate, which is not a character", "remove it", number
            ) from None
        if not isinstance(value, dict):
            raise EvalInputError(path, f"expected a JSON object, got {type(value).__name__}", fix, number)
        yield number, value


def _check_keys(
    path: Path, number: int, item: dict[str, Any], required: set[str], optional: set[str]
) -> None:
    missing = sorted(required - item.keys())
    if missing:
        raise EvalInputError(path, f"missing key(s): {', '.join(missing)}", f"add {missing[0]!r}", number)
    unknown = sorted(item.keys() - required - optional)
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise EvalInputError(
            path, f"unknown key(s): {', '.join(unknown)}", f"use only these keys: {allowed}", number
        )


def _text(path: Path, number: int, item: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = item[key]
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        kind = "a string" if allow_empty else "a non-empty string"
        raise EvalInputError(
            path, f"{key!r} must be {kind}, got {value!r}", f"write a string for {key!r}", number
        )
    return value


def _flag(path: Path, number: int, item: dict[str, Any], key: str, default: bool) -> bool:
    value = item.get(key, default)
    if not isinstance(value, bool):
        raise EvalInputError(
            path, f"{key!r} must be true or false, got {value!r}", f"write {key}: true or false", number
        )
    return value


def _strings(path: Path, number: int, item: dict[str, Any], key: str) -> list[str]:
    value = item.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise EvalInputError(
            path,
            f"{key!r} must be a list of non-empty strings, got {value!r}",
            f'write e.g. "{key}": ["..."]',
            number,
        )
    return value


def _nuggets(path: Path, number: int, item: dict[str, Any]) -> list[Nugget]:
    """`nuggets`: a list of {"text": "...", "vital": true|false} (vital by default)."""
    value = item.get("nuggets", [])
    example = 'write e.g. "nuggets": [{"text": "30 days"}, {"text": "by card", "vital": false}]'
    if not isinstance(value, list):
        raise EvalInputError(path, f"'nuggets' must be a list, got {value!r:.60}", example, number)
    found: list[Nugget] = []
    for entry in value:
        if not isinstance(entry, dict) or set(entry) - {"text", "vital"} or "text" not in entry:
            raise EvalInputError(
                path, f'each nugget must be {{"text": ..., "vital": ...}}, got {entry!r:.60}', example, number
            )
        text, vital = entry["text"], entry.get("vital", True)
        if not isinstance(text, str) or not text.strip() or not isinstance(vital, bool):
            raise EvalInputError(
                path,
                f"a nugget's text must be a non-empty string and vital true or false, got {entry!r:.60}",
                example,
                number,
            )
        found.append(Nugget(text, vital))
    return found


def _not_relevant(
    path: Path, number: int, item: dict[str, Any], relevant: dict[str, int], corpus: dict[str, Document]
) -> list[str]:
    """`not_relevant`: ids of documents judged not relevant (trec_eval's grade 0)."""
    ids = _strings(path, number, item, "not_relevant")
    for doc_id in ids:
        if doc_id in relevant:
            raise EvalInputError(
                path,
                f"{doc_id!r} is both relevant and not_relevant",
                "keep it in one of the two (`add-judgments` resolves such conflicts)",
                number,
            )
        if doc_id not in corpus:
            raise EvalInputError(
                path,
                f"not_relevant document {doc_id!r} is not in the corpus",
                "fix the id, or add the document to the corpus",
                number,
            )
    if len(set(ids)) != len(ids):
        raise EvalInputError(path, "'not_relevant' lists a document twice", "list each id once", number)
    return ids


def _provenance(path: Path, number: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """`provenance`: who judged what and when ({"by", "at", ...} each; `add-judgments` writes it)."""
    value = item.get("provenance", [])
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise EvalInputError(
            path,
            f"'provenance' must be a list of objects, got {value!r:.60}",
            'write e.g. "provenance": [{"by": "ana", "at": "2026-12-03T10:00:00Z"}], or leave it out',
            number,
        )
    return value


def _unique(path: Path, number: int, ident: Any, seen: dict[str, int]) -> str:
    if not isinstance(ident, str) or not ident.strip():
        raise EvalInputError(
            path, f"'id' must be a non-empty string, got {ident!r}", "give every line a unique id", number
        )
    if ident in seen:
        raise EvalInputError(
            path,
            f"duplicate id {ident!r} (first used on line {seen[ident]})",
            "give every line a unique id",
            number,
        )
    seen[ident] = number
    return ident


_SPACE = re.compile(r"\s+")


def find_quote(text: str, quote: str) -> list[tuple[int, int]]:
    """Every place `quote` occurs in `text` once runs of whitespace count as one space
    (line breaks and double spaces in either do not matter; case does), as (start, end)
    offsets into the original `text`."""
    wanted = " ".join(quote.split())
    if not wanted:
        return []
    # The text with each run of whitespace as one space, and where each character came from.
    flat: list[str] = []
    origin: list[int] = []  # origin[i]: where the i-th flat character is in `text`
    position = 0
    for match in _SPACE.finditer(text):
        flat.append(text[position : match.start()])
        origin += range(position, match.start())
        flat.append(" ")
        origin.append(match.start())
        position = match.end()
    flat.append(text[position:])
    origin += range(position, len(text))
    joined = "".join(flat)
    found = []
    at = joined.find(wanted)
    while at != -1:
        last = at + len(wanted) - 1
        found.append((origin[at], origin[last] + 1))
        at = joined.find(wanted, at + 1)
    return found


def _passages(
    path: Path, number: int, item: dict[str, Any], relevant: dict[str, int], corpus: dict[str, Document]
) -> list[Passage]:
    """The question's "passages" (module docstring), each checked against its document."""
    value = item.get("passages", [])
    example = '"passages": [{"doc": "doc-id", "quote": "words from its text", "grade": 3}]'
    if not isinstance(value, list):
        raise EvalInputError(
            path, f"'passages' must be a list, got {value!r:.60}", f"write {example}", number
        )
    passages = []
    for index, entry in enumerate(value, start=1):
        where = f"passage {index}"
        if not isinstance(entry, dict):
            raise EvalInputError(
                path, f"{where} must be an object, got {entry!r:.60}", f"write {example}", number
            )
        keys = set(entry)
        unknown = sorted(keys - {"doc", "quote", "start", "end", "grade"})
        if unknown or "doc" not in keys or ("quote" in keys) == bool(keys & {"start", "end"}):
            raise EvalInputError(
                path,
                f"{where} must have 'doc' and either 'quote' or 'start' and 'end' (and optionally "
                f"'grade'), got keys {', '.join(sorted(keys)) or 'none'}",
                'write {"doc": "doc-id", "quote": "..."} or {"doc": "doc-id", "start": 0, "end": 80}',
                number,
            )
        doc = entry["doc"]
        if not isinstance(doc, str) or doc not in relevant:
            raise EvalInputError(
                path,
                f"{where}: document {doc!r:.60} is not one of this question's relevant documents",
                "name a document listed in 'relevant', or add it there with its grade",
                number,
            )
        text = corpus[doc].text
        if "quote" in entry:
            quote = entry["quote"]
            found = find_quote(text, quote) if isinstance(quote, str) else []
            if not isinstance(quote, str) or not quote.strip() or not found:
                raise EvalInputError(
                    path,
                    f"{where}: the quote {quote!r:.80} is not in the text of {doc!r}",
                    "copy the words exactly from the document's text (case and punctuation count; "
                    "runs of whitespace do not)",
                    number,
                )
            if len(found) > 1:
                raise EvalInputError(
                    path,
                    f"{where}: the quote {quote!r:.80} occurs {len(found)} times in {doc!r}, so the "
                    "passage is ambiguous",
                    "quote more of the passage, or give its 'start' and 'end' offsets",
                    number,
                )
            start, end = found[0]
        else:
            first: Any = entry.get("start")  # checked on the next lines
            last: Any = entry.get("end")
            whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (first, last))
            if not whole or not 0 <= first < last <= len(text):
                raise EvalInputError(
                    path,
                    f"{where}: offsets start={first!r:.20}, end={last!r:.20} are not inside the text of "
                    f"{doc!r} ({len(text)} characters)",
                    f"use whole numbers with 0 <= start < end <= {len(text)} (character offsets), "
                    "or a 'quote'",
                    number,
                )
            start, end = first, last
        grade = entry.get("grade", relevant[doc])
        if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
            raise EvalInputError(
                path,
                f"{where}: grade must be a whole number from 1 to {MAX_GRADE}, got {grade!r:.40}",
                "use 3 for 'answers it', 2 for 'helps substantially', 1 for 'related', or leave it "
                "out to use the document's grade",
                number,
            )
        passages.append(Passage(doc, start, end, grade))
    return passages


class _DocumentLine(Line):
    id: NonEmpty
    # An empty text is accepted: classic test collections judge such documents relevant
    # (only their title can match), and `import` warns about them once.
    text: Text
    title: Text = ""


def load_corpus(path: Path) -> dict[str, Document]:
    """Read corpus.jsonl into {document id: Document}, in file order."""
    documents: dict[str, Document] = {}
    seen: dict[str, int] = {}
    for number, item in json_lines(path, "corpus", CORPUS_LIMIT):
        line = checked(_DocumentLine, item, path, number)
        doc_id = _unique(path, number, line.id, seen)
        documents[doc_id] = Document(doc_id, line.text, line.title)
    if not documents:
        raise EvalInputError(
            path, "the corpus is empty", "add at least one document, one JSON object per line"
        )
    return documents


def load_golden(path: Path, corpus: dict[str, Document], what: str = "golden set") -> list[Question]:
    """Read golden.jsonl; every relevant document must exist in `corpus`. `what` names the
    file in errors ("holdout" for the hidden split, which has the same format)."""
    questions: list[Question] = []
    seen: dict[str, int] = {}
    required = {"id", "question", "relevant"}
    optional = {"must_include", "answerable", "tags", "must_pass", "passages", "reference", "nuggets"}
    optional |= {"not_relevant", "provenance", "history"}
    for number, item in json_lines(path, what):
        _check_keys(path, number, item, required, optional)
        qid = _unique(path, number, item["id"], seen)
        relevant = item["relevant"]
        if not isinstance(relevant, dict):
            raise EvalInputError(
                path,
                f"'relevant' must be an object mapping document ids to grades, got {relevant!r}",
                'write e.g. "relevant": {"doc-id": 3}',
                number,
            )
        for doc_id, grade in relevant.items():
            if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
                raise EvalInputError(
                    path,
                    f"grade of {doc_id!r} must be a whole number from 1 to {MAX_GRADE} (usually 1, 2 "
                    f"or 3), got {grade!r:.40}",
                    "use 3 for 'answers it', 2 for 'helps substantially', 1 for 'related'; "
                    "list documents judged not relevant under not_relevant",
                    number,
                )
            if doc_id not in corpus:
                raise EvalInputError(
                    path,
                    f"relevant document {doc_id!r} is not in the corpus",
                    "fix the id, or add the document to the corpus",
                    number,
                )
        answerable = _flag(path, number, item, "answerable", default=True)
        if answerable and not relevant:
            raise EvalInputError(
                path,
                "an answerable question needs at least one relevant document",
                'add "relevant": {"doc-id": 3}, or set "answerable": false',
                number,
            )
        if not answerable and relevant:
            raise EvalInputError(
                path,
                "an unanswerable question cannot have relevant documents",
                'empty "relevant", or set "answerable": true',
                number,
            )
        must_include = _strings(path, number, item, "must_include")
        if must_include and not answerable:
            raise EvalInputError(
                path,
                "an unanswerable question cannot have must_include facts (the right answer is to abstain)",
                'empty "must_include", or set "answerable": true',
                number,
            )
        reference = _text(path, number, item, "reference") if "reference" in item else None
        nuggets = _nuggets(path, number, item)
        if (reference is not None or nuggets) and not answerable:
            raise EvalInputError(
                path,
                "an unanswerable question cannot have a reference or nuggets (its right answer: abstain)",
                'remove "reference" and "nuggets", or set "answerable": true',
                number,
            )
        must_pass = _flag(path, number, item, "must_pass", default=False)
        if must_pass and not answerable:
            raise EvalInputError(
                path,
                "a must-pass question must be answerable (it must retrieve its documents)",
                'set "must_pass": false',
                number,
            )
        tags = _strings(path, number, item, "tags")
        check_tags(path, number, tags)
        questions.append(
            Question(
                id=qid,
                question=_text(path, number, item, "question"),
                relevant=dict(relevant),
                must_include=must_include,
                answerable=answerable,
                tags=tags,
                must_pass=must_pass,
                line=number,
                passages=_passages(path, number, item, relevant, corpus),
                reference=reference,
                nuggets=nuggets,
                not_relevant=_not_relevant(path, number, item, relevant, corpus),
                provenance=_provenance(path, number, item),
                history=read_history(path, number, item),
            )
        )
    if not questions:
        raise EvalInputError(
            path, f"the {what} is empty", "add at least one question, one JSON object per line"
        )
    if any(question.history for question in questions):  # each turn a slice (conversation.py)
        for question in questions:
            question.tags.append(f"{TURN_TAG}{turn_number(question.history)}")
    return questions

"""Load and validate the corpus and the golden set (JSON Lines, one object per line).

Anything wrong raises EvalInputError naming the file, the line and the fix, so a typo in a
golden question never turns into a silently wrong number. Each line's keys and types are
its format's model (`_DocumentLine`, `_QuestionLine`: inputs/lines.py); what a type cannot
say (grades, ids the corpus lacks, the rules between keys) is checked after.

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
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from ..api import Document
from ..errors import EvalInputError
from .conversation import TURN_TAG, Said, Turn, as_asked, check_tags, read_history, turn_number
from .lines import Flag, Line, NonEmpty, NotNull, Objects, Strings, Text, checked
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

    __pydantic_config__ = ConfigDict(extra="forbid")  # read as a part of a golden line

    text: NonEmpty
    vital: Flag = True


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


def _not_relevant(
    path: Path, number: int, ids: list[str], relevant: dict[str, int], corpus: dict[str, Document]
) -> list[str]:
    """`not_relevant`: ids of documents judged not relevant (trec_eval's grade 0)."""
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


# A line's documents and their grades: each grade is checked by the reader, with the corpus.
Grades = Annotated[
    dict[str, Any], Field(description="an object mapping document ids to grades", examples=[{"doc-id": 3}])
]
Nuggets = Annotated[
    list[Nugget],
    Field(
        description='a list of {"text": ..., "vital": true or false} (vital by default)',
        examples=[[{"text": "30 days"}, {"text": "by card", "vital": False}]],
    ),
]


class _QuestionLine(Line):
    """A line of the golden set (module docstring); `passages` and `history` are read by their
    own readers, against the documents and the turns."""

    id: NonEmpty
    question: NonEmpty
    relevant: Grades
    must_include: Strings = Field(default_factory=list)
    answerable: Flag = True
    tags: Strings = Field(default_factory=list)
    must_pass: Flag = False
    passages: Annotated[Any, Field(description="a list of passages, checked against their documents")] = None
    reference: Annotated[NonEmpty | None, NotNull] = None
    nuggets: Nuggets = Field(default_factory=list)
    not_relevant: Strings = Field(default_factory=list)
    provenance: Annotated[Objects, Field(examples=[[{"by": "ana", "at": "2026-12-03T10:00:00Z"}]])] = Field(
        default_factory=list
    )
    history: Annotated[Any, Field(description="a list of turns, checked as a conversation")] = None


def load_golden(path: Path, corpus: dict[str, Document], what: str = "golden set") -> list[Question]:
    """Read golden.jsonl; every relevant document must exist in `corpus`. `what` names the
    file in errors ("holdout" for the hidden split, which has the same format)."""
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, item in json_lines(path, what):
        line = checked(_QuestionLine, item, path, number)
        qid = _unique(path, number, line.id, seen)
        relevant = line.relevant
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
        answerable = line.answerable
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
        if line.must_include and not answerable:
            raise EvalInputError(
                path,
                "an unanswerable question cannot have must_include facts (the right answer is to abstain)",
                'empty "must_include", or set "answerable": true',
                number,
            )
        if (line.reference is not None or line.nuggets) and not answerable:
            raise EvalInputError(
                path,
                "an unanswerable question cannot have a reference or nuggets (its right answer: abstain)",
                'remove "reference" and "nuggets", or set "answerable": true',
                number,
            )
        if line.must_pass and not answerable:
            raise EvalInputError(
                path,
                "a must-pass question must be answerable (it must retrieve its documents)",
                'set "must_pass": false',
                number,
            )
        check_tags(path, number, line.tags)
        questions.append(
            Question(
                id=qid,
                question=line.question,
                relevant=dict(relevant),
                must_include=list(line.must_include),
                answerable=answerable,
                tags=list(line.tags),
                must_pass=line.must_pass,
                line=number,
                passages=_passages(path, number, item, relevant, corpus),
                reference=line.reference,
                nuggets=list(line.nuggets),
                not_relevant=_not_relevant(path, number, list(line.not_relevant), relevant, corpus),
                provenance=list(line.provenance),
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

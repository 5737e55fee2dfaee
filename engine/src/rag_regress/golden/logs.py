"""`golden import-logs FILE`: real questions from a log export, written as candidates that the
grading page (`grade --candidates`) and `add-judgments` take as they take generated ones.

What is read ([logs] in eval.toml names the fields):
  jsonl  one JSON object a line: the question ([logs] question), and optionally the answer,
         the documents shown (a list of ids, or of objects with an "id"), the feedback and the
         timestamp. A field name with dots ("request.question") also reaches inside objects.
  csv    a header row, then one row a question (the csv module's dialect: commas, double
         quotes); the documents cell is a JSON list, or ids split on [logs] separator (";").
  otel   an OpenTelemetry span export with OpenInference attributes: JSON lines of OTLP JSON
         (`{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`, attributes as
         `[{"key", "value": {"stringValue": ...}}]`), a whole file of it, or one span a line
         with an `attributes` object (flat dotted keys or nested). Spans are grouped by trace
         id. The question is the root span's `input.value` (the first root; one with JSON
         input gives its "question", "query" or "input" text), else the last user message
         (`llm.input_messages.N.message.role` "user", `.content`) of the root or of the
         trace's first span that has one. The documents are `retrieval.documents.N.document.id`
         of the trace's spans, in order; the answer the root's `output.value`; feedback,
         timestamp and strata are the root's attributes of those names, the timestamp else its
         start time.
--format says which; without it a .csv file is CSV, and a JSON file whose first object holds
`resourceSpans`, or a trace id and attributes, is a span export.

A malformed line (not UTF-8, not JSON, not an object or a span, no question, a question that
is not text or is empty; a CSV row of more or fewer fields than the header; a trace without
user input) is skipped, counted, and named by its line number and reason (never its content:
it may hold personal data), the first [display] max_listed of them. A file that is missing, is
not a regular file, is larger than LOG_LIMIT, or yields no question at all is exit 2.

Then, in this order:
  redact      every match of each [logs] redact pattern in a question, an answer, a feedback,
              timestamp or stratum value becomes "[redacted]", as it is read: nothing
              unredacted is compared, shown or written
  known       a question whose normalised text (SQuAD: lower case, no punctuation or
              articles) is a golden question's ([data] golden and holdout) is left out, and so
              is one a candidate of the output file already holds
  documents   ids not in the corpus are left out, counted and named; a question with no
              document left is not sampled (counted): the page grades documents, and an
              accepted question needs one
  duplicates  a question whose token set (those SQuAD tokens) has a Jaccard similarity of at
              least [logs] near_duplicate with an earlier kept question's is a near-duplicate:
              the first in the file is kept, the rest counted
  sample      stratified by the [logs] strata field's value ("(none)" when absent): each
              stratum's questions shuffled by random.Random(seed), the strata visited
              round-robin in a seeded order, `count` at most. The sequence does not depend on
              count: a larger --count extends the same sample
Each sampled question becomes one line in the format `golden generate` writes: id "log-NNNN"
(numbered after every log-N id of the golden set and the output file), slot NNNN, status
"candidate", kind "logs", answerable true, the logged answer as `reference` (the grader
checks or clears it on the page: it is what the system said, not a verified answer), no
nuggets, the documents shown as `relevant` at grade SHOWN_GRADE (1, "related": the grader
grades each), no passages, and provenance: generator, file, line, timestamp, trace, feedback,
stratum, seed and slot.

Writing. The output is [golden] candidates, or --output (never an input: the golden set, the
corpus, the log itself ... refused). A file that exists is read first: a bad line is exit 2
naming it, and a line import-logs did not write (one of `golden generate`'s: that command
resumes its file by slot and seed) is refused with the fix to write elsewhere; the file is
then left byte for byte. Otherwise its lines are kept as they are and the new ones appended,
the whole file replaced in one step (write_atomic), after checking it did not change since it
was read. --dry-run writes nothing. The summary goes to stdout.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ..answers.reference import squad_tokens
from ..api import Document
from ..errors import EvalInputError, ExitCode, shown_path
from ..inputs.data import load_corpus, parse_json_lines
from ..inputs.files import write_atomic
from ..inputs.reading import QUESTIONS_LIMIT, STRICT_JSON, read_data
from ..settings.config import Config
from ..settings.schema import LogSettings
from .generate import GENERATOR as GENERATE
from .generate import candidates_output, check_count_and_seed, golden_questions, jaccard, token_set

GENERATOR = "rag-regress golden import-logs"
KIND = "logs"
FORMATS = ("jsonl", "csv", "otel")
LOG_LIMIT = QUESTIONS_LIMIT  # 256 MiB: the export is parsed in memory
SHOWN_GRADE = 1  # "related": a document the system showed, until the grader says more
REDACTED = "[redacted]"
NO_VALUE = "(none)"  # the stratum of a question without the strata field
LOG_ID = re.compile(r"log-(\d+)")
USER_INPUT_KEYS = ("question", "query", "input")  # what JSON input.value may hold the question in
_DOCUMENT_ID = re.compile(r"retrieval\.documents\.(\d+)\.document\.id")
_MESSAGE = re.compile(r"llm\.input_messages\.(\d+)\.message\.(role|content)")

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """One question read from the log, redacted."""

    line: int
    question: str
    answer: str | None
    documents: list[str]
    feedback: str | None
    timestamp: str | None
    stratum: str
    trace: str | None = None


@dataclass
class Reading:
    """What a reader found: the questions, and each line skipped with its reason."""

    entries: list[Entry] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)


class Redactor:
    """[logs] redact: each match of each pattern becomes REDACTED; the matches counted."""

    def __init__(self, patterns: Sequence[str]):
        self.patterns = [re.compile(pattern) for pattern in patterns]
        self.matches = 0

    def __call__(self, text: str) -> str:
        for pattern in self.patterns:
            text, found = pattern.subn(REDACTED, text)
            self.matches += found
        return text

    def quiet(self, text: str) -> str:
        """`text` redacted without counting: what the summary names (document ids)."""
        for pattern in self.patterns:
            text = pattern.sub(REDACTED, text)
        return text


# -- fields -----------------------------------------------------------------------------------


def _get(record: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    """(found, value) of field `name`: the key itself, else a dotted path into objects."""
    if name in record:
        return True, record[name]
    value: Any = record
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _scalar(value: Any) -> str | None:
    """A feedback, timestamp or stratum value as text; None for none (or an object, a list)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _ids(value: Any, separator: str) -> list[str]:
    """Document ids from a field: a list of ids (or of objects with an "id"), a JSON list in
    text, or text split on `separator`; in order, without repeats or blanks."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                value = text.split(separator)
        else:
            value = text.split(separator)
    if not isinstance(value, list):
        value = [value]
    found = []
    for item in value:
        ident = item.get("id") if isinstance(item, dict) else item
        if isinstance(ident, int) and not isinstance(ident, bool):
            ident = str(ident)
        if isinstance(ident, str) and ident.strip():
            found.append(ident.strip())
    return list(dict.fromkeys(found))


def _entry(
    record: Mapping[str, Any], line: int, settings: LogSettings, clean: Redactor, trace: str | None = None
) -> Entry | str:
    """The entry of one record, or why it is skipped (never quoting its content)."""
    name = settings.question
    found, question = _get(record, name)
    if not found:
        return f"no {name!r} field"
    if not isinstance(question, str):
        return f"{name!r} is not text (a {type(question).__name__})"
    if not question.strip():
        return f"{name!r} is empty"
    answer = _get(record, settings.answer)[1]
    answer = clean(" ".join(answer.split())) if isinstance(answer, str) and answer.strip() else None
    scalars = {}  # each field once (strata is often the feedback field), redacted
    for key in dict.fromkeys((settings.feedback, settings.timestamp, settings.strata)):
        value = _scalar(_get(record, key)[1])
        scalars[key] = None if value is None else clean(value)
    stratum = scalars[settings.strata]
    return Entry(
        line=line,
        question=clean(" ".join(question.split())),
        answer=answer,
        documents=_ids(_get(record, settings.documents)[1], settings.separator),
        feedback=scalars[settings.feedback],
        timestamp=scalars[settings.timestamp],
        stratum=NO_VALUE if stratum is None else stratum,
        trace=trace,
    )


def _take(reading: Reading, result: Entry | str, line: int) -> None:
    if isinstance(result, str):
        reading.skipped.append((line, result))
    else:
        reading.entries.append(result)


# -- readers ----------------------------------------------------------------------------------


def _json_lines(raw: bytes) -> Iterator[tuple[int, Any | str]]:
    """(line number, parsed value or why not) for each non-blank line of `raw`."""
    for number, line in enumerate(raw.splitlines(), start=1):
        if number == 1:
            line = line.removeprefix(b"\xef\xbb\xbf")
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            yield number, "not UTF-8"
            continue
        try:
            yield number, [STRICT_JSON.decode(text)]  # in a list: a value is never mistaken for a reason
        except (ValueError, RecursionError):
            yield number, "not JSON"


def read_jsonl(raw: bytes, settings: LogSettings, clean: Redactor) -> Reading:
    reading = Reading()
    for number, parsed in _json_lines(raw):
        if isinstance(parsed, str):
            reading.skipped.append((number, parsed))
        elif not isinstance(parsed[0], dict):
            reading.skipped.append((number, "not a JSON object"))
        else:
            _take(reading, _entry(parsed[0], number, settings, clean), number)
    return reading


def read_csv(raw: bytes, path: Path, settings: LogSettings, clean: Redactor) -> Reading:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise EvalInputError(
            path, f"not UTF-8 text (byte {error.start + 1})", "export the log as UTF-8 CSV"
        ) from None
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(rows, None)
    except csv.Error as error:
        raise EvalInputError(
            path, f"the header row is not CSV: {error}", "export the log as CSV", 1
        ) from None
    if not header or settings.question not in header:
        has = ", ".join(repr(name) for name in header or []) or "nothing"
        raise EvalInputError(
            path,
            f"the header row has no column {settings.question!r} (it has {has})",
            "set [logs] question to the column holding the questions, or give a header row",
            1,
        )
    reading = Reading()
    start = rows.line_num + 1
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as error:
            reading.skipped.append((start, f"not CSV ({error})"))
            start = rows.line_num + 1
            continue
        line, start = start, rows.line_num + 1
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            more = "more" if len(row) > len(header) else "fewer"
            reading.skipped.append((line, f"{len(row)} fields, {more} than the header's {len(header)}"))
            continue
        _take(reading, _entry(dict(zip(header, row, strict=True)), line, settings, clean), line)
    return reading


@dataclass(frozen=True)
class Span:
    line: int
    trace: str
    id: str
    parent: str
    attributes: dict[str, Any]
    start: str | None


def _value(value: Any) -> Any:
    """An OTLP AnyValue ({"stringValue": ...}, {"intValue": "3"}, {"arrayValue": {"values"}} ...)
    as a plain value; anything else as it is."""
    if not isinstance(value, dict) or len(value) != 1:
        return value
    [(kind, inner)] = value.items()
    if kind == "intValue" and isinstance(inner, str | int):
        return int(inner) if str(inner).lstrip("-").isdigit() else inner
    if kind == "arrayValue":
        return [_value(item) for item in (inner or {}).get("values", [])] if isinstance(inner, dict) else []
    if kind == "kvlistValue":
        return _attributes((inner or {}).get("values", [])) if isinstance(inner, dict) else {}
    if kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        return inner
    return value


def _attributes(value: Any) -> dict[str, Any]:
    """Attributes as flat dotted keys: from OTLP's [{"key", "value"}] list, or an object (nested
    objects and lists flattened: {"input": {"value": "x"}} is "input.value")."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, item: Any) -> None:
        if isinstance(item, dict) and item:
            for key, inner in item.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(item, list) and item and prefix and all(isinstance(i, dict) for i in item):
            for index, inner in enumerate(item):
                walk(f"{prefix}.{index}", inner)
        elif prefix:
            flat[prefix] = item

    if isinstance(value, list):
        for pair in value:
            if isinstance(pair, dict) and isinstance(pair.get("key"), str):
                walk(pair["key"], _value(pair.get("value")))
    elif isinstance(value, dict):
        walk("", value)
    return flat


def _start(span: Mapping[str, Any]) -> str | None:
    nanos = span.get("startTimeUnixNano")
    if isinstance(nanos, str | int) and str(nanos).isdigit() and int(nanos) > 0:
        moment = datetime.fromtimestamp(int(nanos) / 1e9, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    given = span.get("start_time")
    return given if isinstance(given, str) else None


def _span(value: Any, line: int) -> Span | str:
    """One span, OTLP JSON or flat (module doc), or why it is not one."""
    if not isinstance(value, dict):
        return "not a span (a JSON object)"
    given = value.get("context")
    context: dict[str, Any] = given if isinstance(given, dict) else {}
    trace = value.get("traceId", value.get("trace_id", context.get("trace_id")))
    if not isinstance(trace, str) or not trace.strip():
        return "a span without a trace id (traceId)"
    ident = value.get("spanId", value.get("span_id", context.get("span_id")))
    parent = value.get("parentSpanId", value.get("parent_id", value.get("parent_span_id")))
    return Span(
        line=line,
        trace=trace.strip(),
        id=ident if isinstance(ident, str) else "",
        parent=parent if isinstance(parent, str) else "",
        attributes=_attributes(value.get("attributes")),
        start=_start(value),
    )


def _spans_of(value: Any, line: int) -> Iterator[Span | str]:
    if isinstance(value, list):
        for item in value:
            yield from _spans_of(item, line)
        return
    if isinstance(value, dict) and "resourceSpans" in value:
        for resource in value["resourceSpans"] if isinstance(value["resourceSpans"], list) else []:
            scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans", []))
            for scope in scopes if isinstance(scopes, list) else []:
                spans = scope.get("spans", []) if isinstance(scope, dict) else []
                for span in spans if isinstance(spans, list) else []:
                    yield _span(span, line)
        return
    yield _span(value, line)


def _json_input(text: str) -> str | None:
    """The question inside a JSON input.value: its "question", "query" or "input" text."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict):
        for key in USER_INPUT_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key])
    return None


def _user_message(attributes: Mapping[str, Any]) -> str | None:
    """The last user message of a span's llm.input_messages."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        found = _MESSAGE.fullmatch(key)
        if found:
            messages.setdefault(int(found.group(1)), {})[found.group(2)] = value
    users = [m["content"] for _, m in sorted(messages.items()) if m.get("role") == "user"]
    texts = [text for text in users if isinstance(text, str) and text.strip()]
    return texts[-1] if texts else None


def _trace_record(spans: list[Span], settings: LogSettings) -> tuple[Span, dict[str, Any]] | str:
    """The root span of a trace and the record it stands for (module doc), or why none."""
    ids = {span.id for span in spans if span.id}
    roots = [span for span in spans if not span.parent or span.parent not in ids]
    root = roots[0] if roots else spans[0]
    attributes = root.attributes
    question: str | None = None
    given = attributes.get("input.value")
    if isinstance(given, str) and given.strip():
        is_json = attributes.get("input.mime_type") == "application/json" or given.lstrip().startswith("{")
        question = _json_input(given) if is_json else given
    if question is None:
        for span in [root, *spans]:
            question = _user_message(span.attributes)
            if question is not None:
                break
    if question is None:
        return f"trace {root.trace[:32]}: no user input (input.value or a user message)"
    documents: list[str] = []
    for span in spans:
        found = sorted(
            (int(match.group(1)), value)
            for key, value in span.attributes.items()
            if (match := _DOCUMENT_ID.fullmatch(key))
        )
        documents += [str(value) for _, value in found if isinstance(value, str | int)]
    output = attributes.get("output.value")
    answer = (
        output
        if isinstance(output, str) and attributes.get("output.mime_type") != "application/json"
        else None
    )
    record: dict[str, Any] = {
        key: attributes[key]
        for key in (settings.feedback, settings.timestamp, settings.strata)
        if key in attributes
    }
    record.setdefault(settings.timestamp, root.start)
    record |= {settings.question: question, settings.answer: answer, settings.documents: documents}
    return root, record


def read_otel(raw: bytes, settings: LogSettings, clean: Redactor) -> Reading:
    reading = Reading()
    documents: list[tuple[int, Any]] = []
    try:  # a whole file of one JSON value (pretty-printed OTLP JSON)
        documents = [(1, STRICT_JSON.decode(raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")))]
    except (ValueError, RecursionError):
        for number, parsed in _json_lines(raw):
            if isinstance(parsed, str):
                reading.skipped.append((number, parsed))
            else:
                documents.append((number, parsed[0]))
    traces: dict[str, list[Span]] = {}
    for number, value in documents:
        for span in _spans_of(value, number):
            if isinstance(span, str):
                reading.skipped.append((number, span))
            else:
                traces.setdefault(span.trace, []).append(span)
    for trace, spans in traces.items():
        found = _trace_record(spans, settings)
        if isinstance(found, str):
            reading.skipped.append((spans[0].line, found))
            continue
        root, record = found
        _take(reading, _entry(record, root.line, settings, clean, trace), root.line)
    reading.skipped.sort()
    return reading


def detect(path: Path, raw: bytes) -> str:
    """The format of a log file given without --format (module doc)."""
    if path.suffix.lower() == ".csv":
        return "csv"
    for _, parsed in _json_lines(raw[: 1 << 20]):
        if isinstance(parsed, str):
            continue
        value = parsed[0]
        if isinstance(value, dict) and (
            "resourceSpans" in value
            or ("attributes" in value and any(k in value for k in ("traceId", "trace_id", "context")))
        ):
            return "otel"
        return "jsonl"
    if raw.lstrip().startswith(b"{") and b'"resourceSpans"' in raw[:4096]:
        return "otel"  # a pretty-printed OTLP JSON file
    return "jsonl"


# -- choosing ---------------------------------------------------------------------------------


def normalised(question: str) -> str:
    """A question as `known` compares it (module doc): its SQuAD tokens."""
    return " ".join(squad_tokens(question))


def near_duplicates(sets: Sequence[frozenset[str]], threshold: float) -> list[int | None]:
    """For each token set in order: the index of an earlier kept set it is a near-duplicate of
    (Jaccard >= threshold), or None when it is kept. Prefix filtering (tokens in a global order
    of rarity; two sets this similar share a token among the first |S| - ceil(t |S|) + 1 of
    each) keeps this near linear on a large log."""
    frequency = Counter(token for tokens in sets for token in tokens)
    index: dict[str, list[int]] = {}
    empty: int | None = None  # the first kept question with no token
    found: list[int | None] = []
    for number, tokens in enumerate(sets):
        match: int | None = None
        ordered = sorted(tokens, key=lambda token: (frequency[token], token))
        prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - 1e-9) + 1]
        if not tokens:
            match = empty
        for token in prefix:
            match = next((j for j in index.get(token, []) if jaccard(tokens, sets[j]) >= threshold), None)
            if match is not None:
                break
        if match is None:
            if not tokens and empty is None:
                empty = number
            for token in prefix:
                index.setdefault(token, []).append(number)
        found.append(match)
    return found


def stratified(groups: Mapping[str, Sequence[T]], count: int, seed: int) -> list[T]:
    """At most `count` items, round-robin over the strata in a seeded order, each stratum
    shuffled by the same generator (its name order first, so the input's order of strata does
    not matter). The order does not depend on `count`: a larger one extends it."""
    rng = random.Random(seed)
    queues = {name: rng.sample(list(groups[name]), len(groups[name])) for name in sorted(groups)}
    order = sorted(queues)
    rng.shuffle(order)
    picked: list[T] = []
    for depth in range(max((len(queue) for queue in queues.values()), default=0)):
        for name in order:
            if depth < len(queues[name]) and len(picked) < count:
                picked.append(queues[name][depth])
    return picked


@dataclass
class Choice:
    """What `choose` kept and left out, for the candidates and the summary."""

    sampled: list[Entry] = field(default_factory=list)
    in_golden: int = 0
    in_candidates: int = 0
    duplicates: int = 0
    no_documents: int = 0
    unknown: Counter[str] = field(default_factory=Counter)  # ids not in the corpus, how often
    strata: Counter[str] = field(default_factory=Counter)  # sampled per stratum
    eligible: int = 0


def choose(
    entries: Sequence[Entry],
    corpus: Mapping[str, Document],
    known_golden: set[str],
    known_candidates: set[str],
    settings: LogSettings,
    count: int,
    seed: int,
) -> Choice:
    """Known questions, unknown documents and near-duplicates left out, then the sample
    (module doc: known, documents, duplicates, sample)."""
    done = Choice()
    usable: list[Entry] = []
    for entry in entries:
        text = normalised(entry.question)
        if text in known_golden:
            done.in_golden += 1
            continue
        if text in known_candidates:
            done.in_candidates += 1
            continue
        shown = [doc for doc in entry.documents if doc in corpus]
        done.unknown.update(doc for doc in entry.documents if doc not in corpus)
        if not shown:
            done.no_documents += 1
            continue
        usable.append(dataclasses.replace(entry, documents=shown))
    duplicates = near_duplicates([token_set(entry.question) for entry in usable], settings.near_duplicate)
    kept = [entry for entry, match in zip(usable, duplicates, strict=True) if match is None]
    done.duplicates = len(usable) - len(kept)
    done.eligible = len(kept)
    groups: dict[str, list[Entry]] = {}
    for entry in kept:
        groups.setdefault(entry.stratum, []).append(entry)
    done.sampled = stratified(groups, count, seed)
    done.strata = Counter(entry.stratum for entry in done.sampled)
    return done


# -- writing ----------------------------------------------------------------------------------


def record(entry: Entry, number: int, source: str, seed: int) -> dict[str, Any]:
    """The candidate line of a sampled entry: `golden generate`'s keys, in its order."""
    provenance: dict[str, Any] = {"generator": GENERATOR, "file": source, "line": entry.line}
    provenance |= {"timestamp": entry.timestamp} if entry.timestamp else {}
    provenance |= {"trace": entry.trace} if entry.trace else {}
    provenance |= {"feedback": entry.feedback} if entry.feedback is not None else {}
    provenance |= {"stratum": entry.stratum, "seed": seed, "slot": number}
    return {
        "id": f"log-{number:04d}",
        "slot": number,
        "status": "candidate",
        "why": None,
        "kind": KIND,
        "question": entry.question,
        "answerable": True,
        "reference": entry.answer,
        "nuggets": [],
        "relevant": dict.fromkeys(entry.documents, SHOWN_GRADE),
        "passages": [],
        "provenance": provenance,
    }


@dataclass(frozen=True)
class Existing:
    """The output file as read: its bytes (None: no file), its candidates' normalised
    questions, and the log-N numbers it uses."""

    raw: bytes | None
    questions: set[str]
    numbers: set[int]


def read_existing(path: Path) -> Existing:
    """The output file (module doc: writing); EvalInputError naming a line that is not JSON or
    that import-logs did not write."""
    if not path.exists():
        return Existing(None, set(), set())
    raw = read_data(path, "candidates", limit=QUESTIONS_LIMIT)
    questions, numbers = set(), set()
    fix = "pass --output another file for the imported questions (e.g. evals/log-candidates.jsonl)"
    for number, line in parse_json_lines(raw, path, f"fix or remove that line, or {fix}"):
        provenance = line.get("provenance")
        generator = provenance.get("generator") if isinstance(provenance, dict) else None
        if generator != GENERATOR:
            whose = "`golden generate`'s" if generator == GENERATE else "not written by `golden import-logs`"
            raise EvalInputError(
                path,
                f"this line is {whose}: import-logs appends only to a file of its own (`golden generate` "
                "resumes its file by seed and slot), so the file was left as it is",
                fix,
                number,
            )
        if isinstance(line.get("question"), str):
            questions.add(normalised(line["question"]))
        found = LOG_ID.fullmatch(str(line.get("id", "")))
        if found:
            numbers.add(int(found.group(1)))
    return Existing(raw, questions, numbers)


def write_candidates(path: Path, existing: Existing, records: Iterable[dict[str, Any]]) -> None:
    """The file's lines as read, then `records`, in one step; EvalInputError, writing nothing,
    when the file changed since it was read."""
    try:
        now = read_data(path, "candidates", limit=QUESTIONS_LIMIT) if path.exists() else None
    except EvalInputError:
        now = b""
    if now != existing.raw:
        raise EvalInputError(
            path,
            "the file changed while `golden import-logs` was reading it; it was left as it is",
            "run one command at a time on a candidates file, then run import-logs again",
        )
    before = (existing.raw or b"").decode("utf-8")
    if before and not before.endswith("\n"):
        before += "\n"  # a whole last line missing only its newline
    write_atomic(path, before + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


# -- the command ------------------------------------------------------------------------------


def _read(path: Path, raw: bytes, form: str, settings: LogSettings, clean: Redactor) -> Reading:
    if form == "csv":
        return read_csv(raw, path, settings, clean)
    if form == "otel":
        return read_otel(raw, settings, clean)
    return read_jsonl(raw, settings, clean)


def _listed(items: Sequence[str], limit: int) -> str:
    more = f"; ... and {len(items) - limit} more" if len(items) > limit else ""
    return "; ".join(items[:limit]) + more


def _nothing_read(
    path: Path, form: str, reading: Reading, settings: LogSettings, limit: int
) -> EvalInputError:
    reasons = _listed([f"line {line}: {why}" for line, why in reading.skipped], limit)
    said = f" ({len(reading.skipped)} line(s) skipped: {reasons})" if reading.skipped else ""
    fix = {
        "otel": "export the traces with OpenInference attributes (input.value on the root span), or pass "
        "--format for another kind of file",
        "csv": f"set [logs] question to the column holding the questions (now {settings.question!r})",
        "jsonl": f"set [logs] question to the field holding the questions (now {settings.question!r}), or "
        "pass --format csv or otel",
    }[form]
    return EvalInputError(path, f"no question read from this {form} file{said}", fix)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('ch') else 's'}"


def summary(
    path: Path,
    form: str,
    reading: Reading,
    clean: Redactor,
    done: Choice,
    written: int,
    output: Path,
    dry_run: bool,
    settings: LogSettings,
    limit: int,
    seed: int,
) -> list[str]:
    """What the run did, for the console (module doc)."""
    lines = [
        f"golden import-logs: read {_plural(len(reading.entries), 'question')} from "
        f"{shown_path(path)} ({form})"
    ]
    if reading.skipped:
        why = _listed([f"line {line}: {reason}" for line, reason in reading.skipped], limit)
        lines.append(f"  skipped {_plural(len(reading.skipped), 'line')}: {why}")
    lines.append(
        f"  redacted {_plural(clean.matches, 'match')} of [logs] redact ({len(clean.patterns)} pattern(s))"
    )
    lines.append(
        f"  left out: {_plural(done.in_golden, 'question')} already in the golden set, {done.in_candidates} "
        f"already candidates, {done.no_documents} with no document in the corpus, "
        f"{_plural(done.duplicates, 'near-duplicate')} (Jaccard >= {settings.near_duplicate:g})"
    )
    if done.unknown:
        names = _listed([f"{clean.quiet(doc)} ({n}x)" for doc, n in sorted(done.unknown.items())], limit)
        lines.append(f"  {_plural(len(done.unknown), 'document id')} not in the corpus, left out: {names}")
    per = ", ".join(f"{name} {n}" for name, n in sorted(done.strata.items())) or "none"
    lines.append(
        f"  sampled {len(done.sampled)} of {done.eligible} (seed {seed}), by {settings.strata}: {per}"
    )
    shown = shown_path(output)
    if dry_run:
        lines.append(f"--dry-run: {_plural(written, 'candidate')} not written to {shown}")
    else:
        lines.append(f"wrote {_plural(written, 'candidate')} to {shown}")
    if written and not dry_run:
        lines.append(
            f"next: rag-regress grade --candidates {shown}, grade them in the page, then "
            "rag-regress add-judgments <the downloaded file>"
        )
    return lines


def _golden_questions(config: Config, corpus: dict[str, Document]) -> tuple[set[str], set[int]]:
    """The normalised questions of the golden set and the holdout, and the log-N numbers of
    their ids (a merged log question keeps its id)."""
    found = golden_questions(config, corpus)
    numbers = {int(match.group(1)) for qid, _ in found if (match := LOG_ID.fullmatch(qid))}
    return {normalised(question) for _, question in found}, numbers


def run_import_logs(
    config: Config,
    path: Path,
    *,
    form: str | None = None,
    count: int | None = None,
    seed: int | None = None,
    output: Path | None = None,
    dry_run: bool = False,
    echo: Callable[[str], None] = print,
) -> int:
    """`rag-regress golden import-logs FILE` (module doc). Returns 0; EvalInputError (exit 2)
    for a log that cannot be read or yields no question, a bad output file, or settings."""
    settings = config.logs
    count = settings.count if count is None else count
    seed = settings.seed if seed is None else seed
    check_count_and_seed(config, "logs", count, seed)
    target = candidates_output(config, output, (path, "the log file"))
    raw = read_data(
        path,
        "log",
        limit=LOG_LIMIT,
        missing_fix="give the path of the exported log: JSON Lines, CSV or an OpenTelemetry span export",
    )
    form = form or detect(path, raw)
    clean = Redactor(settings.redact)
    reading = _read(path, raw, form, settings, clean)
    limit = config.display.max_listed
    if not reading.entries:
        raise _nothing_read(path, form, reading, settings, limit)
    corpus = load_corpus(config.corpus)
    golden, golden_numbers = _golden_questions(config, corpus)
    existing = read_existing(target)
    done = choose(reading.entries, corpus, golden, existing.questions, settings, count, seed)
    if done.eligible == 0 and not (done.in_golden or done.in_candidates):
        for text in summary(path, form, reading, clean, done, 0, target, True, settings, limit, seed):
            print(text, file=sys.stderr)
        raise EvalInputError(
            path,
            f"none of its {_plural(len(reading.entries), 'question')} has a document of the corpus: the "
            "grading page grades documents, so there is nothing to grade",
            f"set [logs] documents to the field holding the ids of the documents shown (now "
            f"{settings.documents!r}); they must be ids of [data] corpus",
        )
    first = max(existing.numbers | golden_numbers, default=0) + 1
    records = [record(entry, first + i, path.name, seed) for i, entry in enumerate(done.sampled)]
    if records and not dry_run:
        write_candidates(target, existing, records)
    for text in summary(
        path, form, reading, clean, done, len(records), target, dry_run, settings, limit, seed
    ):
        echo(text)
    return int(ExitCode.OK)

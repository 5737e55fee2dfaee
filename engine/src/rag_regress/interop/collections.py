"""Test collections in: a BEIR folder or TREC files become this project's corpus and golden set.

`import beir DIR --split test` and `import trec --qrels F --topics F --corpus F` read a
collection, keep every document (a retriever needs the non-relevant ones too) and each
question with at least one relevant judgment, and write the [data] corpus and golden set.

What is read:
  BEIR  DIR/corpus.jsonl         {"_id" or "id", "title", "text"} per line; other keys ignored
                                 (or DIR/corpus.tsv, read as TREC's corpus below)
        DIR/queries.jsonl        {"_id" or "id", "text"} per line (or DIR/queries.tsv:
                                 id<TAB>text, read as TREC's topics below)
        DIR/qrels/<split>.tsv    qrels as below; without a qrels/ folder, DIR/qrels.tsv (the
                                 layout many copies of BEIR data use); --qrels FILE: that file
  TREC  qrels    3 columns (BEIR: query-id corpus-id score) or 4 (TREC: qid iteration docid
                 grade), separated by tabs or spaces, with or without a header row
        topics   `qid<TAB>text` per line (a header row such as `query-id<TAB>text` is
                 skipped), JSON Lines as BEIR's, or TREC SGML (<top> <num> Number: 301
                 <title> ... <desc> ... </top>, inner tags unclosed): the title is the question
        corpus   JSON Lines as BEIR's, or TSV: id<TAB>text or id<TAB>title<TAB>text (a header
                 row naming the columns id, title, text, in any order, is read as such)

Graded relevance is kept: grades of 1 and more are copied as they are; 0 and negative grades
(judged not relevant) are left out of `relevant`, as trec_eval leaves them out. A question
with no relevant judgment cannot be scored and is left out, with a count. A document with
empty text is kept (classic collections judge some of them relevant), with one warning.
Anything unreadable raises EvalInputError with file, line and fix, and nothing is written.

After writing, `import` lists the settings of eval.toml the new data cannot use (the demo's
[judge] names, [generation] min_score, answer checks with nothing to check, slices of tags the
new golden set lacks: gate/fit.py's `data_findings`, which `baseline --fit-floors` clears) and
suggests the depth and metrics a test collection is scored with (printed, never applied).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import Document
from ..errors import EvalInputError, ExitCode
from ..gate.fit import data_findings, location
from ..inputs.data import Question
from ..inputs.files import write_atomic
from ..settings.config import Config
from .trec import GRADE_FIX, GRADES, read_text

CORPUS_FIX = 'write {"id", "title", "text"} per line (JSON Lines), or id<TAB>text or id<TAB>title<TAB>text'
QUERIES_FIX = 'write {"_id": "...", "text": "..."} per line'
TOPICS_FIX = "write `qid<TAB>question` per line, or TREC topics (<top> <num> ... <title> ... </top>)"
SHORT_INTEGER = re.compile(r"[+-]?[0-9]{1,4}")  # int() of it is cheap and cannot fail
SGML_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z]+)[^<>\n]*>")  # on one line: "a < b" in a text is no tag
# A topics header row's column names, lowercased without - _ and spaces
TOPIC_ID_NAMES = {"id", "qid", "queryid", "query", "topic", "topicid", "num", "number"}
TOPIC_TEXT_NAMES = {"text", "query", "question", "title", "querytext", "topic", "description"}
QRELS_LAYOUTS = {3: "query-id corpus-id score", 4: "qid iteration docid grade"}
QRELS_FIX = "write `query-id<TAB>corpus-id<TAB>score` (BEIR) or `qid 0 docid grade` (TREC) per line"


@dataclass(frozen=True)
class Judgment:
    grade: int
    line: int  # where it was read, for error messages


@dataclass(frozen=True)
class Collection:
    """A test collection as read, each part in file order, and the files it came from."""

    documents: dict[str, Document]
    questions: dict[str, tuple[str, int]]  # {question id: (text, line)}
    judgments: dict[str, dict[str, Judgment]]  # {question id: {document id: judgment}}
    corpus_path: Path
    questions_path: Path
    qrels_path: Path
    qrels_layout: str = ""  # how the qrels were read: "3 columns, a header row"


@dataclass(frozen=True)
class Imported:
    """What an import keeps, and the counts its summary prints."""

    documents: list[Document]
    golden: list[dict[str, Any]]  # the rows of golden.jsonl
    left_out: int  # questions with no relevant judgment
    judgments: int  # relevant judgments kept
    sampled_from: int | None  # how many questions a --sample chose from (None: no sample)
    warnings: list[str] = field(default_factory=list)


# --- reading -----------------------------------------------------------------------------


def _read(path: Path, what: str) -> str:
    """The file as text (see trec.read_text), \r\n or \n line ends; an empty file is refused."""
    text = read_text(path, what)
    if not text.strip():
        raise EvalInputError(path, f"the {what} file is empty", "check the path")
    return text.replace("\r\n", "\n")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of each non-blank line, numbered as editors number them. Lines end
    at \\n only: a text may hold other separators (U+2028) inside a line."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, line


def _objects(path: Path, text: str, fix: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line of a JSON Lines file; anything else is refused."""
    for number, line in _lines(text):
        try:
            value = json.loads(line)
            json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone "\ud800" cannot be written
        except json.JSONDecodeError as error:
            raise EvalInputError(
                path, f"not valid JSON: {error.msg} (column {error.colno})", fix, number
            ) from None
        except UnicodeEncodeError:
            raise EvalInputError(
                path, "holds a \\u escape of a lone surrogate", "remove it", number
            ) from None
        except (ValueError, RecursionError) as error:  # a number too long for int(), nesting too deep
            raise EvalInputError(path, f"not usable JSON: {error}", fix, number) from None
        if not isinstance(value, dict):
            raise EvalInputError(path, f"expected a JSON object, got {type(value).__name__}", fix, number)
        yield number, value


def _new_id(path: Path, line: int, value: Any, what: str, seen: dict[str, int]) -> str:
    """A non-empty id not seen before in this file (`seen`: id -> line, updated)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # some collections write numeric ids as JSON numbers
    if not isinstance(value, str) or not value.strip():
        raise EvalInputError(
            path, f"{what} must be a non-empty string, got {value!r}", f"give every line a {what}", line
        )
    if value in seen:
        raise EvalInputError(
            path,
            f"{what} {value!r} appears twice (first on line {seen[value]})",
            f"keep one line per {what}",
            line,
        )
    seen[value] = line
    return value


def _json_id(path: Path, line: int, item: dict[str, Any], fix: str) -> Any:
    for key in ("_id", "id"):  # BEIR writes _id; this project and many others, id
        if key in item:
            return item[key]
    raise EvalInputError(path, "missing key: _id (or id)", fix, line)


def _string(path: Path, line: int, value: Any, key: str, fix: str) -> str:
    if not isinstance(value, str):
        raise EvalInputError(path, f"{key!r} must be a string, got {value!r}", fix, line)
    return value


def _jsonl_corpus(path: Path, text: str) -> dict[str, Document]:
    documents: dict[str, Document] = {}
    seen: dict[str, int] = {}
    for number, item in _objects(path, text, CORPUS_FIX):
        doc_id = _new_id(path, number, _json_id(path, number, item, CORPUS_FIX), "document id", seen)
        title = _string(path, number, item.get("title") or "", "title", CORPUS_FIX)  # "" or null: none
        if "text" not in item:
            raise EvalInputError(path, "missing key: text", 'add "text" (it may be "")', number)
        documents[doc_id] = Document(doc_id, _string(path, number, item["text"], "text", CORPUS_FIX), title)
    return documents


def _tsv_corpus(path: Path, text: str) -> dict[str, Document]:
    documents: dict[str, Document] = {}
    seen: dict[str, int] = {}
    columns: list[str] | None = None  # from a header row, else from the first line's width
    for number, line in _lines(text):
        if columns is None:
            names = [name.strip().lower().removeprefix("_") for name in line.split("\t")]
            if {"id", "text"} <= set(names) <= {"id", "title", "text"} and len(set(names)) == len(names):
                columns = names  # a header row, not a document
                continue
            if len(names) not in (2, 3):
                raise EvalInputError(
                    path, f"expected 2 or 3 tab-separated columns, got {len(names)}", CORPUS_FIX, number
                )
            columns = ["id", "text"] if len(names) == 2 else ["id", "title", "text"]
        # the last column takes any further tabs: a text may hold tabs of its own
        fields = line.split("\t", len(columns) - 1) if columns[-1] == "text" else line.split("\t")
        if len(fields) != len(columns):
            raise EvalInputError(
                path,
                f"expected {len(columns)} tab-separated columns ({', '.join(columns)}), got {len(fields)}",
                CORPUS_FIX,
                number,
            )
        row = dict(zip(columns, fields, strict=True))
        doc_id = _new_id(path, number, row["id"].strip(), "document id", seen)
        documents[doc_id] = Document(doc_id, row["text"], row.get("title", ""))
    return documents


def read_corpus(path: Path) -> dict[str, Document]:
    """A corpus as JSON Lines (its first line starts with `{`) or TSV, in file order."""
    text = _read(path, "corpus")
    return _jsonl_corpus(path, text) if text.lstrip().startswith("{") else _tsv_corpus(path, text)


def _jsonl_questions(path: Path, text: str) -> dict[str, tuple[str, int]]:
    questions: dict[str, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    for number, item in _objects(path, text, QUERIES_FIX):
        qid = _new_id(path, number, _json_id(path, number, item, QUERIES_FIX), "question id", seen)
        questions[qid] = (_string(path, number, item.get("text"), "text", QUERIES_FIX), number)
    return questions


def _is_topics_header(line: str) -> bool:
    """Whether a topics file's first line names its columns (`query-id<TAB>text`, `qid<TAB>query`)."""
    names = [re.sub(r"[-_ ]", "", name.strip().lower()) for name in line.split("\t")]
    return len(names) == 2 and names[0] in TOPIC_ID_NAMES and names[1] in TOPIC_TEXT_NAMES


def _tsv_questions(path: Path, text: str) -> dict[str, tuple[str, int]]:
    questions: dict[str, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    for index, (number, line) in enumerate(_lines(text)):
        if index == 0 and _is_topics_header(line):
            continue
        if "\t" not in line:
            raise EvalInputError(path, "expected `qid<TAB>question`, found no tab", TOPICS_FIX, number)
        qid, question = line.split("\t", 1)
        questions[_new_id(path, number, qid.strip(), "question id", seen)] = (question, number)
    return questions


def _sgml_questions(path: Path, text: str) -> dict[str, tuple[str, int]]:
    """TREC topics: <top> ... </top> blocks whose inner tags (<num>, <title>, <desc>,
    <narr>) are usually never closed, so a field runs to the next tag. The title is the
    question; the `Number:` and `Topic:` labels some years write are dropped."""
    questions: dict[str, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    fields: dict[str, str] | None = None  # the open topic's fields
    start = 0  # the open topic's line
    tags = list(SGML_TAG.finditer(text))
    for position, tag in enumerate(tags):
        closing, name = tag.group(1) == "/", tag.group(2).lower()
        line = text.count("\n", 0, tag.start()) + 1
        if name == "top" and not closing:
            if fields is not None:
                raise EvalInputError(path, f"<top> of line {start} is not closed", "end it with </top>", line)
            fields, start = {}, line
        elif name == "top":
            if fields is None:
                raise EvalInputError(path, "</top> without a <top>", TOPICS_FIX, line)
            qid = re.sub(r"^\s*number\s*:", "", fields.get("num", ""), flags=re.IGNORECASE).strip()
            title = re.sub(r"^\s*topic\s*:", "", fields.get("title", ""), flags=re.IGNORECASE)
            if not qid:
                raise EvalInputError(path, "a topic without a <num>", "add `<num> Number: <id>`", start)
            questions[_new_id(path, start, qid, "question id", seen)] = (" ".join(title.split()), start)
            fields = None
        elif fields is not None and not closing:
            end = tags[position + 1].start() if position + 1 < len(tags) else len(text)
            fields[name] = text[tag.end() : end]
    if fields is not None:
        raise EvalInputError(path, "the last <top> is never closed", "end it with </top>", start)
    if not questions:
        raise EvalInputError(path, "holds no <top> topic", TOPICS_FIX, 1)
    return questions


def read_topics(path: Path) -> dict[str, tuple[str, int]]:
    """Topics as TREC SGML (the file starts with `<`), JSON Lines (`{`) or `qid<TAB>text`."""
    text = _read(path, "topics")
    first = text.lstrip()[:1]
    if first == "<":
        return _sgml_questions(path, text)
    return _jsonl_questions(path, text) if first == "{" else _tsv_questions(path, text)


def _is_qrels_header(fields: list[str]) -> bool:
    """A first line that names the columns (`query-id corpus-id score`): its grade column
    holds no digit. A grade such as "2.5" or "1e3" is refused as a grade instead."""
    return not any(character.isdigit() for character in fields[-1])


def read_qrels(path: Path) -> tuple[dict[str, dict[str, Judgment]], str]:
    """Qrels of 3 (BEIR: query-id corpus-id score) or 4 whitespace-separated columns (TREC:
    qid iteration docid grade), as the first line has them, after an optional header row;
    with each judgment's line, and how the file was read (for the summary)."""
    judgments: dict[str, dict[str, Judgment]] = {}
    columns: int | None = None
    header = False
    for index, (number, line) in enumerate(_lines(_read(path, "qrels"))):
        fields = line.split()
        if columns is None:
            if len(fields) not in QRELS_LAYOUTS:
                raise EvalInputError(
                    path,
                    f"expected 3 columns ({QRELS_LAYOUTS[3]}) or 4 ({QRELS_LAYOUTS[4]}), "
                    f"got {len(fields)}: {line.strip()[:80]!r}",
                    QRELS_FIX,
                    number,
                )
            columns = len(fields)
            if index == 0 and _is_qrels_header(fields):
                header = True
                continue  # a header row, e.g. BEIR's: query-id corpus-id score
        layout = QRELS_LAYOUTS[columns]
        if len(fields) != columns:
            first = "the header row" if header else "the first line"
            raise EvalInputError(
                path,
                f"expected {columns} columns ({layout}) as on {first}, got {len(fields)}: "
                f"{line.strip()[:80]!r}",
                f"write `{layout}` on every line",
                number,
            )
        qid, doc_id, grade = fields[0], fields[-2], fields[-1]
        # bounded as trec.py bounds grades, so that nDCG's exponential gains stay finite
        if not SHORT_INTEGER.fullmatch(grade) or not -1000 <= int(grade) <= 1000:
            raise EvalInputError(path, f"grade must be {GRADES}, got {grade!r}", GRADE_FIX, number)
        judged = judgments.setdefault(qid, {})
        if doc_id in judged:
            raise EvalInputError(
                path,
                f"question {qid!r} judges {doc_id!r} twice (first on line {judged[doc_id].line})",
                "keep one judgment per question and document",
                number,
            )
        judged[doc_id] = Judgment(int(grade), number)
    if columns is None or not judgments:
        raise EvalInputError(path, "holds no judgments, only a header row", QRELS_FIX)
    return judgments, f"{columns} columns, {'a header row' if header else 'no header row'}"


def _beir_qrels(folder: Path, split: str | None, qrels: Path | None) -> Path:
    """The qrels file of a BEIR folder: `qrels` when given; else qrels/<split>.tsv; else,
    with no qrels/ folder and no --split, the top-level qrels.tsv."""
    if qrels is not None:
        return qrels
    chosen = split or "test"
    in_folder = folder / "qrels" / f"{chosen}.tsv"
    if in_folder.is_file():
        return in_folder
    top = folder / "qrels.tsv"
    if not (folder / "qrels").is_dir() and top.is_file():
        if split is None:
            return top
        raise EvalInputError(
            in_folder,
            f"split {split!r} has no qrels file; the folder has one qrels.tsv, of no named split",
            f"leave out --split to read {top.name}, or pass --qrels FILE",
        )
    splits = sorted(path.stem for path in (folder / "qrels").glob("*.tsv"))
    fix = (
        f"choose one with --split: {', '.join(splits)}, or pass --qrels FILE"
        if splits
        else "put the qrels in qrels/<split>.tsv or qrels.tsv, or pass --qrels FILE"
    )
    raise EvalInputError(in_folder, f"split {chosen!r} has no qrels file", fix)


def _beir_file(folder: Path, stem: str) -> Path:
    """DIR/<stem>.jsonl, else DIR/<stem>.tsv when only that exists (the .jsonl is named when
    neither does: its error says what BEIR expects)."""
    jsonl, tsv = folder / f"{stem}.jsonl", folder / f"{stem}.tsv"
    return tsv if not jsonl.exists() and tsv.is_file() else jsonl


def read_beir(folder: Path, split: str | None = None, qrels: Path | None = None) -> Collection:
    """A BEIR folder: corpus.jsonl, queries.jsonl and the qrels `_beir_qrels` chooses."""
    if not folder.is_dir():
        raise EvalInputError(
            folder, "is not a folder", "pass the BEIR dataset's folder (it holds corpus.jsonl)"
        )
    qrels_path = _beir_qrels(folder, split, qrels)
    corpus, queries = _beir_file(folder, "corpus"), _beir_file(folder, "queries")
    judgments, layout = read_qrels(qrels_path)
    # a .jsonl file is read as JSON Lines, whatever its first line
    jsonl = corpus.suffix == ".jsonl", queries.suffix == ".jsonl"
    return Collection(
        documents=_jsonl_corpus(corpus, _read(corpus, "corpus")) if jsonl[0] else read_corpus(corpus),
        questions=_jsonl_questions(queries, _read(queries, "queries")) if jsonl[1] else read_topics(queries),
        judgments=judgments,
        corpus_path=corpus,
        questions_path=queries,
        qrels_path=qrels_path,
        qrels_layout=layout,
    )


def read_trec(qrels: Path, topics: Path, corpus: Path) -> Collection:
    """TREC files: qrels of 3 or 4 columns, topics (SGML, JSON Lines or TSV), a corpus (JSON
    Lines or TSV)."""
    judgments, layout = read_qrels(qrels)
    return Collection(
        documents=read_corpus(corpus),
        questions=read_topics(topics),
        judgments=judgments,
        corpus_path=corpus,
        questions_path=topics,
        qrels_path=qrels,
        qrels_layout=layout,
    )


# --- choosing what to keep -----------------------------------------------------------------


def sample(ids: list[str], size: int, seed: int) -> list[str]:
    """`size` of `ids`, in their given order. Each id is ranked by the SHA-256 of the seed and
    the id, so the same size and seed pick the same questions on any machine, Python version
    or file order (random.sample would depend on all three)."""
    ranked = sorted(ids, key=lambda qid: hashlib.sha256(f"{seed}\0{qid}".encode()).digest())
    chosen = set(ranked[:size])
    return [qid for qid in ids if qid in chosen]


def _examples(ids: list[str]) -> str:
    shown = ", ".join(repr(ident) for ident in ids[:3])
    return shown + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")


def keep(collection: Collection, size: int | None = None, seed: int = 0) -> Imported:
    """Every document, and each question with a relevant judgment (a sample of them with
    `size`), as golden rows with graded `relevant` and, for judgments of grade 0 or below,
    `not_relevant` (bpref, the `_j` metrics and judged@k read them). Raises EvalInputError when the parts do
    not belong together: a judged question missing from the topics, a relevant document
    missing from the corpus, an empty question."""
    documents, qrels = collection.documents, collection.qrels_path
    warnings: list[str] = []
    unknown_documents: list[str] = []  # judged not relevant and not in the corpus: harmless
    rows: list[dict[str, Any]] = []
    for qid, judged in collection.judgments.items():
        if qid not in collection.questions:
            raise EvalInputError(
                qrels,
                f"judges question {qid!r}, which is not in {collection.questions_path.name}",
                "pass the topics (queries) file that goes with these qrels",
                min(judgment.line for judgment in judged.values()),
            )
    for qid, (question, line) in collection.questions.items():
        relevant: dict[str, int] = {}
        not_relevant: list[str] = []  # judged, grade 0 or below: trec_eval's judged non-relevant
        for doc_id, judgment in collection.judgments.get(qid, {}).items():
            if doc_id not in documents:
                if judgment.grade >= 1:
                    raise EvalInputError(
                        qrels,
                        f"relevant document {doc_id!r} of question {qid!r} is not in the corpus",
                        f"pass the corpus that goes with these qrels (read {collection.corpus_path.name})",
                        judgment.line,
                    )
                unknown_documents.append(doc_id)
            elif judgment.grade >= 1:
                relevant[doc_id] = judgment.grade
            else:
                not_relevant.append(doc_id)
        if not relevant:
            continue
        if not question.strip():
            raise EvalInputError(
                collection.questions_path, f"question {qid!r} has no text", "write the question", line
            )
        row: dict[str, Any] = {"id": qid, "question": question.strip(), "relevant": relevant}
        if not_relevant:
            row["not_relevant"] = not_relevant
        rows.append(row)
    left_out = len(collection.questions) - len(rows)
    sampled_from = None
    if size is not None:
        if size >= len(rows):
            warnings.append(
                f"--sample {size} asks for all {len(rows)} judged questions or more: kept them all"
            )
        else:
            sampled_from, chosen = len(rows), set(sample([row["id"] for row in rows], size, seed))
            rows = [row for row in rows if row["id"] in chosen]
    empty = [doc.id for doc in documents.values() if not doc.text.strip()]
    if empty:
        warnings.append(
            f"{len(empty)} document(s) with empty text kept ({_examples(empty)}): only their title can match"
        )
    if unknown_documents:
        warnings.append(
            f"{len(unknown_documents)} not-relevant judgment(s) of documents not in the corpus: ignored"
        )
    return Imported(
        documents=list(documents.values()),
        golden=rows,
        left_out=left_out,
        judgments=sum(len(row["relevant"]) for row in rows),
        sampled_from=sampled_from,
        warnings=warnings,
    )


# --- writing -------------------------------------------------------------------------------


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _shown(path: Path) -> str:
    try:  # as the errors show paths: relative to where the command runs
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def refuse_overwrite(targets: list[Path]) -> None:
    """Raise EvalInputError for the first target that exists (the team's data: never lost by
    a mistyped command). Checked before reading anything, so a refusal is immediate."""
    for target in targets:
        if target.exists():
            raise EvalInputError(
                target,
                "already exists; import does not replace it",
                "pass --force to replace it, or point [data] corpus and golden in eval.toml at new files",
            )


def write(imported: Imported, corpus: Path, golden: Path) -> None:
    """Write the corpus, then the golden set (each atomically), as inputs/data.py reads them."""
    documents = [{"id": doc.id, "title": doc.title, "text": doc.text} for doc in imported.documents]
    write_atomic(corpus, _jsonl(documents))
    write_atomic(golden, _jsonl(imported.golden))


def summary(imported: Imported, corpus: Path, golden: Path, seed: int, read_from: str = "") -> str:
    """What was written, in the counts a team checks against the collection's own."""
    chosen = len(imported.golden)
    if imported.sampled_from is not None:
        chosen_from = f" (a sample, seed {seed}, of {imported.sampled_from} judged questions)"
    else:
        chosen_from = ""
    return "\n".join(
        [
            *([read_from] if read_from else []),
            f"wrote {_shown(corpus)} and {_shown(golden)}",
            f"  documents            {len(imported.documents)}",
            f"  questions kept       {chosen}{chosen_from}",
            f"  questions left out   {imported.left_out} (no relevant judgment)",
            f"  relevant judgments   {imported.judgments}",
            f"  warnings             {len(imported.warnings)}",
            "next: `nox -s baseline -- --fit-floors` records this data's baseline and fits the gate's"
            " settings to it (review both), then `nox -s gate`",
        ]
    )


def _read_from(collection: Collection) -> str:
    """The files read, as the summary's first line: which qrels file, and how it was read."""
    layout = f" ({collection.qrels_layout})" if collection.qrels_layout else ""
    return (
        f"read {_shown(collection.corpus_path)}, {_shown(collection.questions_path)} and "
        f"{_shown(collection.qrels_path)}{layout}"
    )


# --- the settings that do not fit the new data -----------------------------------------------

# What a test collection is scored with (BEIR: nDCG@10 and recall@100; TREC and Anserini: map
# and recall@1000, over runs 1000 deep, trec_eval's default), each with why.
COLLECTION_METRICS = {
    "ndcg@10": "BEIR's headline figure",
    "recall@100": "how much a reranker could still find",
    "map": "TREC's, over the whole ranking",
}
COLLECTION_DEPTH = 1000


def _listed(config: Config, key: tuple[str, ...], setting: str, problem: str, fix: str) -> list[str]:
    line = config.line_of(*key)
    return [f"  {config.path.name}{f':{line}' if line else ''}: {setting}: {problem}", f"    fix: {fix}"]


def stale_settings(config: Config, imported: Imported) -> list[str]:
    """The settings of eval.toml the imported data cannot use (`baseline --fit-floors` removes
    them) and those made for other data (to review), each with why and its fix: the lines
    `import` prints (none when all fit)."""
    questions = [Question(row["id"], row["question"], row["relevant"]) for row in imported.golden]
    findings = data_findings(config, questions, imported.documents)
    lines = []
    if findings:
        lines.append(
            f"{len(findings)} setting(s) of {config.path.name} the new data cannot use; "
            "`nox -s baseline -- --fit-floors` makes each fix:"
        )
        for finding in findings:
            lines += [
                f"  {location(finding, config)}: {finding.setting}: {finding.problem}",
                f"    fix: {finding.fix}",
            ]
    review: list[str] = []
    min_score = config.generation.get("min_score")
    if isinstance(min_score, int | float) and not isinstance(min_score, bool):
        fit = "removes it (there is no unanswerable question to fit it to)"
        if any(not question.answerable for question in questions):
            fit = "sets the value that misjudges the fewest questions"
        review += _listed(
            config,
            ("generation", "min_score"),
            f"[generation] min_score = {min_score:g}",
            "the stand-in's abstention threshold, in the score units of the retriever on the data "
            "it was fitted to",
            f"with the stand-in generator, `nox -s baseline -- --fit-floors` {fit}; "
            "with a generator of your own, edit the line",
        )
    removed = {finding.key[:3] for finding in findings}
    floors = [
        f"{metric} = {floor:g}"
        for metric, floor in config.gate.floors.items()
        if ("gate", "floors", str(metric)) not in removed
    ]
    floors += [
        f'slice "{tag}" {metric} = {floor:g}'
        for tag, sliced in config.gate.slice_floors.items()
        if ("gate", "slices", tag) not in removed
        for metric, floor in sliced.items()
    ]
    if floors:
        review += _listed(
            config,
            ("gate", "floors"),
            f"[gate.floors] {', '.join(floors)}",
            "minimums set for the previous data",
            "`nox -s baseline -- --fit-floors` lowers those the new baseline does not meet; "
            "raise those it beats by hand",
        )
    if config.judge.labels.is_file():
        review += _listed(
            config,
            ("judge", "labels"),
            f"[judge] labels = {_shown(config.judge.labels)}",
            "human labels of claims about the previous data: `calibrate` measures the judge on them",
            "label claims of answers on the new data (docs/judges.md), or keep them knowingly",
        )
    if review:
        lines += ["made for the previous data, to review:", *review]
    return lines


def collection_suggestions(config: Config) -> list[str]:
    """The depth and metrics a test collection is usually scored with, where eval.toml has
    others: printed by `import`, never applied (they change every number the gate compares)."""
    lines = []
    depth = config.retrieval.depth
    if depth < COLLECTION_DEPTH:
        lines += _listed(
            config,
            ("retrieval", "depth"),
            f"[retrieval] depth = {depth}",
            f"map and recall look only this deep; trec_eval scores runs {COLLECTION_DEPTH} deep",
            f"set depth = {COLLECTION_DEPTH} (as published figures), or 100 when recall@100 is enough "
            "(faster; a deeper run changes no metric of the top 10)",
        )
    have = {str(metric) for metric in config.metrics}
    missing = [name for name in COLLECTION_METRICS if name not in have]
    if missing:
        why = "; ".join(f"{name}: {COLLECTION_METRICS[name]}" for name in missing)
        wanted = ", ".join(f'"{name}"' for name in missing)
        lines += _listed(
            config,
            ("retrieval", "metrics"),
            "[retrieval] metrics",
            f"lacks what test collections publish ({why})",
            f"add {wanted} to the list, and to [gate] metrics those the gate should compare",
        )
    if config.k < 10:
        lines += _listed(
            config,
            ("retrieval", "k"),
            f"[retrieval] k = {config.k}",
            "the cutoff of the table, found/missing and the @k checks; collections report @10",
            "set k = 10 to read the table at the cutoff of nDCG@10",
        )
    if not lines:
        return []
    return ["suggested for a test collection (printed only; edit eval.toml to apply):", *lines]


def run_import(
    read: Callable[[], Collection], config: Config, size: int | None, seed: int, force: bool
) -> ExitCode:
    """`import`: refuse to overwrite (unless `force`), read, keep, write, print the summary,
    the settings the new data cannot use (which `baseline --fit-floors` clears) and the depth
    and metrics suggested for a test collection. Warnings go to stderr, one line each; the
    rest to stdout."""
    corpus, golden = config.corpus, config.golden
    if not force:
        refuse_overwrite([corpus, golden])
    collection = read()
    imported = keep(collection, size, seed)
    write(imported, corpus, golden)
    for warning in imported.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(summary(imported, corpus, golden, seed, _read_from(collection)))
    for line in [*stale_settings(config, imported), *collection_suggestions(config)]:
        print(line)
    return ExitCode.OK

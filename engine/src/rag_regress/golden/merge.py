"""`add-judgments FILE [FILE ...]`: merge graded judgments into the golden set, with who and when.

A judgments file is what the grading page downloads (golden/page.py): a header line
{"format": "rag-regress-judgments", "version": 1, "by": ..., "at": ...}, then one line per
item the grader touched:

  {"id", "origin": "question" | "candidate" | "added", "status": "judged" | "accepted" |
   "rejected", "question", "judgments": {doc id: grade 0-3}, ...}

Merging, in the order the files are given:
  question items   each grade joins the golden question it names: 1 and up under `relevant`,
                   0 under `not_relevant`; an unknown question id is an error
  candidates       an accepted one becomes a new golden question (its edited text, reference,
                   nuggets, its source passages on documents still graded relevant), a
                   rejected one is counted and left out; one already merged (same id, same
                   question) is left as it is
  added            a question the grader wrote: a new golden question, as an accepted candidate
Every question that changes gets a `provenance` entry: who graded (the header's `by`), when
(`at`), from which file, which documents, and for a generated question its generator's record.

Conflicts are refused (exit 2, each listed) unless `--on-conflict` says how to settle them: a
pair graded differently by the golden set and a file, or by two files; `keep` keeps the golden
set's grade (between files, the first file's), `replace` takes the last file's, `max` and
`min` the highest and lowest grade. A grade of 1 or more on an unanswerable question, and an
accepted answerable question with no relevant document, are errors whatever the option.

With two or more files, the figures of agreement are printed first: Cohen's kappa on the
pairs both graded (grades as given, and relevant or not at the golden set's relevance level
1), and each disagreement. Nothing is written with --dry-run, or when anything is wrong: the
merged golden set is checked as `eval` reads it before it replaces the file, in one step,
and lines that did not change keep their bytes.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..api import Document
from ..errors import EvalInputError, ExitCode
from ..inputs.data import MAX_GRADE, json_lines, load_corpus, load_golden
from ..inputs.files import write_atomic
from ..inputs.reading import QUESTIONS_LIMIT, read_data
from ..settings.config import Config
from .agreement import cohen_kappa

FORMAT = "rag-regress-judgments"
VERSION = 1
ORIGINS = {"question": {"judged"}, "candidate": {"accepted", "rejected"}, "added": {"accepted", "rejected"}}
Resolve = Literal["keep", "replace", "max", "min"]
RESOLVE: tuple[Resolve, ...] = ("keep", "replace", "max", "min")
SHOWN = 20  # disagreements and conflicts printed at most


@dataclass(frozen=True)
class Item:
    """One graded item of a judgments file."""

    id: str
    origin: str
    status: str
    question: str
    judgments: dict[str, int]
    line: int
    extra: dict[str, Any]  # answerable, reference, nuggets, passages, provenance, kind, tags


@dataclass(frozen=True)
class Judgments:
    path: Path
    by: str
    at: str
    items: list[Item]


def _fail(path: Path, line: int, problem: str, fix: str) -> EvalInputError:
    return EvalInputError(path, problem, fix, line)


def read_judgments(path: Path, corpus: dict[str, Document]) -> Judgments:
    """Read and check a judgments file; EvalInputError names the line of the first problem."""
    fix = "download it again from the grading page (`rag-regress grade`)"
    missing = "give the file the page downloaded"
    parsed = list(json_lines(path, "judgments", missing_fix=missing, fix=fix))
    if not parsed:
        raise _fail(path, 1, "the judgments file is empty", fix)
    number, header = parsed[0]
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise _fail(path, number, f"the first line is not a {FORMAT} version {VERSION} header", fix)
    by, at = header.get("by"), header.get("at")
    if not isinstance(by, str) or not by.strip() or not isinstance(at, str) or not at.strip():
        raise _fail(
            path, number, "the header names no grader ('by') or time ('at')", "fill in your name on the page"
        )
    items, seen = [], set()
    for number, value in parsed[1:]:
        item = _item(path, number, value, corpus)
        if item.id in seen:
            raise _fail(path, number, f"item {item.id!r} appears twice", "keep one line per item")
        seen.add(item.id)
        items.append(item)
    return Judgments(path, by.strip(), at.strip(), items)


def _item(path: Path, number: int, value: dict[str, Any], corpus: dict[str, Document]) -> Item:
    ident, origin, status, question = (value.get(key) for key in ("id", "origin", "status", "question"))
    if not isinstance(ident, str) or not ident.strip():
        raise _fail(path, number, "'id' must be a non-empty string", "keep the id the page wrote")
    if origin not in ORIGINS or status not in ORIGINS[origin]:
        allowed = "; ".join(f"{o}: {', '.join(sorted(s))}" for o, s in ORIGINS.items())
        raise _fail(path, number, f"origin {origin!r} with status {status!r}", f"use one of {allowed}")
    if not isinstance(question, str) or not question.strip():
        raise _fail(
            path, number, f"item {ident!r}: 'question' must be a non-empty string", "write the question"
        )
    grades = value.get("judgments", {})
    if not isinstance(grades, dict):
        raise _fail(path, number, f"item {ident!r}: 'judgments' must be an object", 'e.g. {"doc-id": 2}')
    for doc_id, grade in grades.items():
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
            raise _fail(path, number, f"item {ident!r}: grade of {doc_id!r} is {grade!r}", "grade 0 to 3")
        if doc_id not in corpus:
            raise _fail(
                path, number, f"item {ident!r}: document {doc_id!r} is not in the corpus", "fix the id"
            )
    extra = {
        key: value[key] for key in value if key not in {"id", "origin", "status", "question", "judgments"}
    }
    return Item(ident, origin, status, question.strip(), dict(grades), number, extra)


# -- agreement between files ------------------------------------------------------------------


def agreement_lines(files: list[Judgments]) -> list[str]:
    """Cohen's kappa and the disagreements, for each two files grading the same pairs."""
    lines = []
    for first, second in itertools.combinations(files, 2):
        a = {(item.id, doc): g for item in first.items for doc, g in item.judgments.items()}
        b = {(item.id, doc): g for item in second.items for doc, g in item.judgments.items()}
        shared = sorted(a.keys() & b.keys())
        title = f"{first.path.name} ({first.by}) and {second.path.name} ({second.by})"
        if not shared:
            lines.append(f"agreement of {title}: no pair graded by both")
            continue
        graded = cohen_kappa([a[p] for p in shared], [b[p] for p in shared])
        binary = cohen_kappa([a[p] >= 1 for p in shared], [b[p] >= 1 for p in shared])
        apart = [p for p in shared if a[p] != b[p]]
        lines.append(
            f"agreement of {title} on {len(shared)} pair(s): kappa {_kappa(graded)} on grades, "
            f"{_kappa(binary)} on relevant or not; {len(apart)} disagreement(s)"
        )
        lines += [f"  {qid} {doc}: {a[(qid, doc)]} vs {b[(qid, doc)]}" for qid, doc in apart[:SHOWN]]
        if len(apart) > SHOWN:
            lines.append(f"  ... and {len(apart) - SHOWN} more")
    return lines


def _kappa(value: float | None) -> str:
    return "undefined (one grade throughout)" if value is None else f"{value:.3f}"


# -- merging ----------------------------------------------------------------------------------


@dataclass
class _Question:
    """A golden question being merged: its line as read (or built), and what changed."""

    data: dict[str, Any]
    raw: str | None  # its line as read; None for a new question
    docs: dict[str, list[str]] = field(default_factory=dict)  # file name -> documents it changed
    new: bool = False

    def grade(self, doc_id: str) -> int | None:
        if doc_id in self.data.get("relevant", {}):
            return int(self.data["relevant"][doc_id])
        return 0 if doc_id in self.data.get("not_relevant", []) else None

    def set_grade(self, doc_id: str, grade: int) -> None:
        relevant: dict[str, int] = self.data.setdefault("relevant", {})
        not_relevant: list[str] = self.data.get("not_relevant", [])
        relevant.pop(doc_id, None)
        if doc_id in not_relevant:
            not_relevant.remove(doc_id)
        if grade >= 1:
            relevant[doc_id] = grade
        else:
            not_relevant.append(doc_id)
        if not_relevant:
            self.data["not_relevant"] = not_relevant
        else:
            self.data.pop("not_relevant", None)


@dataclass
class Merge:
    questions: dict[str, _Question]
    added: int = 0
    new_questions: int = 0
    rejected: int = 0
    unchanged: int = 0
    conflicts: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _settle(old: int, new: int, how: Resolve | None) -> int | None:
    """The grade a conflict settles on, or None when it is not settled."""
    if how is None:
        return None
    return {"keep": old, "replace": new, "max": max(old, new), "min": min(old, new)}[how]


def merge(golden: dict[str, _Question], files: list[Judgments], how: Resolve | None) -> Merge:
    """Apply every file's items to `golden` (module docstring); conflicts listed, not applied."""
    done = Merge(golden)
    for judgments in files:
        for item in judgments.items:
            if item.status == "rejected":
                done.rejected += 1
                continue
            target = _target(done, judgments, item)
            if target.new:  # a new question's provenance names each file that accepted it
                target.docs.setdefault(judgments.path.name, [])
            for doc_id, grade in sorted(item.judgments.items()):
                _apply(done, target, judgments, item, doc_id, grade, how)
            if target.new and target.data.get("answerable", True) and not target.data.get("relevant"):
                raise _fail(
                    judgments.path,
                    item.line,
                    f"accepted question {item.id!r} has no document graded 1 or more",
                    "grade its source document on the page, or reject it (r)",
                )
    return done


def _target(done: Merge, judgments: Judgments, item: Item) -> _Question:
    """The golden question an item grades: an existing one, or a new one built from it."""
    existing = done.questions.get(item.id)
    if item.origin == "question":
        if existing is None:
            raise _fail(
                judgments.path,
                item.line,
                f"question {item.id!r} is not in the golden set",
                "grade the golden set this page was made from, or add the question first",
            )
        if existing.data.get("question") != item.question:
            done.notes.append(f"{item.id}: the edited question text was not merged (edit golden.jsonl)")
        return existing
    if existing is not None and not existing.new:
        if existing.data.get("question") == item.question:
            done.unchanged += 1  # merged before: its grades still join below, as any question's
            return existing
        raise _fail(
            judgments.path,
            item.line,
            f"new question {item.id!r} has the id of another golden question",
            "give it another id in the file",
        )
    if existing is not None:  # the same candidate accepted in an earlier file of this merge
        return existing
    data = _new_question(item)
    done.questions[item.id] = question = _Question(data, None, new=True)
    done.new_questions += 1
    return question


def _new_question(item: Item) -> dict[str, Any]:
    extra = item.extra
    answerable = extra.get("answerable", True)
    data: dict[str, Any] = {"id": item.id, "question": item.question, "relevant": {}}
    if isinstance(extra.get("reference"), str) and extra["reference"].strip() and answerable:
        data["reference"] = extra["reference"].strip()
    if isinstance(extra.get("nuggets"), list) and extra["nuggets"] and answerable:
        data["nuggets"] = extra["nuggets"]
    data["answerable"] = bool(answerable)
    tags = ["generated" if item.origin == "candidate" else "added"]
    if isinstance(extra.get("kind"), str):
        tags.append(extra["kind"])
    data["tags"] = tags
    if isinstance(extra.get("passages"), list):
        data["passages"] = extra["passages"]  # kept where its document ends up relevant (_finish)
    if isinstance(extra.get("provenance"), dict):
        data["_generated"] = extra["provenance"]
    return data


def _apply(
    done: Merge,
    target: _Question,
    judgments: Judgments,
    item: Item,
    doc_id: str,
    grade: int,
    how: Resolve | None,
) -> None:
    if grade >= 1 and not target.data.get("answerable", True):
        raise _fail(
            judgments.path,
            item.line,
            f"{item.id} is unanswerable, but {doc_id!r} is graded {grade}",
            "grade it 0, or make the question answerable in golden.jsonl first",
        )
    old = target.grade(doc_id)
    if old == grade:
        done.unchanged += 1
        return
    if old is not None:
        settled = _settle(old, grade, how)
        where = f"{item.id} {doc_id}: {old} in the golden set or an earlier file, {grade} in "
        where += judgments.path.name
        if settled is None:
            done.conflicts.append(where)
            return
        done.settled.append(f"{where} -> {settled} ({how})")
        if settled == old:
            return
        grade = settled
    target.set_grade(doc_id, grade)
    target.docs.setdefault(judgments.path.name, []).append(doc_id)
    done.added += 1


def _finish(question: _Question, files: dict[str, Judgments]) -> dict[str, Any]:
    """The question's line with its provenance entries; passages only on relevant documents."""
    data = dict(question.data)
    generated = data.pop("_generated", None)
    if "passages" in data:
        passages = [p for p in data["passages"] if isinstance(p, dict) and p.get("doc") in data["relevant"]]
        if passages:
            data["passages"] = passages
        else:
            del data["passages"]
    provenance = list(data.get("provenance", []))
    for name, docs in question.docs.items():
        judgments = files[name]
        entry: dict[str, Any] = {"by": judgments.by, "at": judgments.at, "file": name, "docs": sorted(docs)}
        if question.new and generated is not None:
            entry["generated"] = generated
            generated = None  # once, with the first file that graded it
        provenance.append(entry)
    data["provenance"] = provenance
    return data


def _read_golden_lines(path: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """Each line of golden.jsonl as read, parsed (None for a blank line): lines that do not
    change are written back as they were."""
    raw = read_data(path, "golden set", limit=QUESTIONS_LIMIT).removeprefix(b"\xef\xbb\xbf")
    lines = []
    # Split as load_golden does (bytes: at \n and \r only), so U+2028 inside a string stays put.
    for line in (data.decode("utf-8") for data in raw.splitlines()):
        lines.append((line, json.loads(line) if line.strip() else None))
    return lines


def run_add_judgments(config: Config, paths: list[Path], how: Resolve | None, dry_run: bool) -> int:
    """The command: read, report agreement, merge, check, write (module docstring)."""
    corpus = load_corpus(config.corpus)
    load_golden(config.golden, corpus)  # the golden set is valid before anything joins it
    files = [read_judgments(path, corpus) for path in paths]
    names = [j.path.name for j in files]
    if len(set(names)) != len(names):
        raise EvalInputError(
            paths[0], "two judgments files share a name", "rename one: provenance names the file"
        )
    for line in agreement_lines(files) if len(files) > 1 else []:
        print(line)
    lines = _read_golden_lines(config.golden)
    questions = {data["id"]: _Question(data, raw) for raw, data in lines if data is not None}
    done = merge(questions, files, how)
    if done.conflicts:
        shown = "\n  ".join(done.conflicts[:SHOWN]) + (
            f"\n  ... and {len(done.conflicts) - SHOWN} more" if len(done.conflicts) > SHOWN else ""
        )
        raise EvalInputError(
            config.golden,
            f"{len(done.conflicts)} conflicting grade(s), nothing merged:\n  {shown}\n",
            "settle them by hand, or say how: --on-conflict keep|replace|max|min",
        )
    by_name = {j.path.name: j for j in files}
    out = []
    for raw, data in lines:
        question = questions.get(data["id"]) if data is not None else None
        out.append(raw if question is None or not question.docs else _dumps(_finish(question, by_name)))
    out += [_dumps(_finish(q, by_name)) for q in questions.values() if q.new]
    text = "\n".join(out) + "\n"
    with tempfile.TemporaryDirectory() as folder:  # the merged set must load as `eval` loads it
        trial = Path(folder) / config.golden.name
        trial.write_text(text, encoding="utf-8")
        load_golden(trial, corpus)
    for line in [*done.settled, *done.notes]:
        print(f"note: {line}", file=sys.stderr)
    changed = sum(1 for q in questions.values() if q.docs or q.new)
    summary = (
        f"{done.added} grade(s) merged into {changed} question(s) ({done.new_questions} new), "
        f"{done.rejected} rejected candidate(s) left out, {done.unchanged} already there"
    )
    if dry_run:
        print(f"--dry-run: {summary}; {config.golden} not written")
        return ExitCode.OK
    if changed:
        write_atomic(config.golden, text)
    print(f"{summary}; wrote {config.golden}" if changed else f"{summary}; {config.golden} unchanged")
    if changed:
        print("the golden set changed: remake the baseline (`nox -s baseline`), review its diff, commit both")
    return ExitCode.OK


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)

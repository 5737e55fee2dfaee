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
                   nuggets, its source passages on documents still graded relevant, tagged
                   `generated` and its kind), a rejected one is counted and left out; one
                   already merged (same id: same question, or a `generated` one) is left as it
                   is and its grades join
  added            a question the grader wrote: a new golden question, as an accepted candidate,
                   tagged `added`. The same question (same text) added before joins that one;
                   otherwise its id, when taken, becomes the next free `new-N` (said on stderr):
                   every grading round's page starts at new-1
Every question that changes gets a `provenance` entry: who graded (the header's `by`), when
(`at`), from which file, which documents, and for a generated question its generator's record.

Conflicts are refused (exit 2, nothing written, each listed) unless `--on-conflict` settles
them:
  grades     a pair graded differently by the golden set and a file, or by two files: `keep`
             keeps the golden set's grade (between files, the first file's), `replace` takes
             the last file's, `max` and `min` the highest and lowest grade
  decisions  a candidate accepted by one file and rejected by another: `keep` takes the first
             file's decision, `replace` the last file's. One the golden set holds (accepted in
             an earlier merge) and a file rejects: only `keep` settles it, as the merge never
             removes a golden question
  edits      a candidate accepted with a different question, reference or nuggets by two files
             (or by the golden set and a file): `keep` takes the golden set's or first file's
             text, `replace` the last file's
`max` and `min` settle grades only. A grade of 1 or more on an unanswerable question, and an
accepted answerable question with no relevant document, are errors whatever the option.

With two or more files, the figures of agreement are printed first: Cohen's kappa on the
pairs both graded (grades as given, and relevant or not at the golden set's relevance level
1), and each disagreement: a grade, a decision, or an edit.

Writing. Nothing is written with --dry-run, or when anything is wrong: the merged golden set is
checked as `eval` reads it (an error names the golden set's line, or the judgments file and
line of the question that joined it) before it replaces the file in one step, and lines that
did not change keep their bytes. The golden set is written where [data] golden names it, and
never through a symlink (as `baseline` refuses to: the replace would cut the link). While
merging, the command holds an exclusive lock (`.NAME.lock` beside the golden set, LOCK_PATTERN
in the project's .gitignore), so a second add-judgments waits; and just before the replace it
checks that the file is still, byte for byte, what it read. When another writer changed it,
it reads it again and merges again (up to ATTEMPTS times, then exit 2): the other writer's
grades are never lost.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..answers.settings import JudgeTable
from ..api import Document
from ..errors import EvalInputError, ExitCode
from ..inputs.data import MAX_GRADE, Grades, json_lines, load_corpus, load_golden
from ..inputs.files import check_output, write_atomic
from ..inputs.lines import Line, NonEmpty, Text, checked
from ..inputs.reading import QUESTIONS_LIMIT, read_data
from ..run_files import named_inputs
from ..settings.config import Config
from ..settings.schema import DataSettings
from . import Resolve
from .agreement import cohen_kappa

FORMAT = "rag-regress-judgments"
VERSION = 1
ORIGINS = {"question": {"judged"}, "candidate": {"accepted", "rejected"}, "added": {"accepted", "rejected"}}
SHOWN = 20  # disagreements and conflicts printed at most
ATTEMPTS = 3  # merges tried while another writer keeps changing the golden set under us
LOCK_WAIT = 120.0  # seconds a second add-judgments waits for the first before giving up
LOCK_PATTERN = ".*.lock"  # the lock file's name (.golden.jsonl.lock), as a .gitignore pattern
EDITABLE = ("question", "reference", "nuggets")  # what the page lets a grader edit in a candidate
NEW_ID = re.compile(r"new-(\d+)")


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


def read_download(
    path: Path, kind: str, header: tuple[str, int], fix: str, other: tuple[str, str, str]
) -> tuple[list[tuple[int, dict[str, Any]]], str, str]:
    """A file the grading page downloaded (`kind`: "judgments", or "labels" for golden/labels.py),
    read and checked up to its header: not empty, not the other kind's download (`other`: its
    format, the problem and the fix to name), a header of `header` (format, version) naming a
    grader and a time. Returns (its lines parsed, header first; the grader; the time)."""
    parsed = list(json_lines(path, kind, missing_fix="give the file the page downloaded", fix=fix))
    if not parsed:
        raise _fail(path, 1, f"the {kind} file is empty", fix)
    number, first = parsed[0]
    (other_format, other_problem, other_fix), (format_, version) = other, header
    if first.get("format") == other_format:
        raise _fail(path, number, other_problem, other_fix)
    if first.get("format") != format_ or first.get("version") != version:
        raise _fail(path, number, f"the first line is not a {format_} version {version} header", fix)
    by, at = first.get("by"), first.get("at")
    if not isinstance(by, str) or not by.strip() or not isinstance(at, str) or not at.strip():
        raise _fail(
            path, number, "the header names no grader ('by') or time ('at')", "fill in your name on the page"
        )
    return parsed, by.strip(), at.strip()


def read_judgments(path: Path, corpus: dict[str, Document]) -> Judgments:
    """Read and check a judgments file; EvalInputError names the line of the first problem."""
    labels = (
        "rag-regress-labels",  # golden/labels.py FORMAT: a page of answers'
        "this is a labels file (answer sentences graded on a `grade --answers` page), not judgments",
        f"merge it into the judge's labels: rag-regress add-labels {path}",
    )
    fix = "download it again from the grading page (`rag-regress grade`)"
    parsed, by, at = read_download(path, "judgments", (FORMAT, VERSION), fix, labels)
    items, seen = [], set()
    for number, value in parsed[1:]:
        item = _item(path, number, value, corpus)
        if item.id in seen:
            raise _fail(path, number, f"item {item.id!r} appears twice", "keep one line per item")
        seen.add(item.id)
        items.append(item)
    return Judgments(path, by, at, items)


class _ItemLine(Line):
    """A graded item of a judgments file. Keys beyond these (answerable, reference, nuggets,
    passages, provenance, kind, tags: what the page carried or a grader edited) are kept as
    the item's `extra`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: NonEmpty
    origin: Text
    status: Text
    question: NonEmpty
    judgments: Grades = Field(default_factory=dict)


def _item(path: Path, number: int, value: dict[str, Any], corpus: dict[str, Document]) -> Item:
    line = checked(_ItemLine, value, path, number)
    ident, origin, status = line.id, line.origin, line.status
    if origin not in ORIGINS or status not in ORIGINS[origin]:
        allowed = "; ".join(f"{o}: {', '.join(sorted(s))}" for o, s in ORIGINS.items())
        raise _fail(path, number, f"origin {origin!r} with status {status!r}", f"use one of {allowed}")
    for doc_id, grade in line.judgments.items():
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
            raise _fail(path, number, f"item {ident!r}: grade of {doc_id!r} is {grade!r}", "grade 0 to 3")
        if doc_id not in corpus:
            raise _fail(
                path, number, f"item {ident!r}: document {doc_id!r} is not in the corpus", "fix the id"
            )
    extra = dict(line.model_extra or {})
    return Item(ident, origin, status, line.question.strip(), dict(line.judgments), number, extra)


# -- agreement between files ------------------------------------------------------------------


def agreement_lines(files: list[Judgments]) -> list[str]:
    """Cohen's kappa and the disagreements, for each two files grading the same pairs or deciding
    the same candidates. A disagreement is a pair graded differently, a candidate accepted by
    one and rejected by the other, or one both accepted with different edits."""
    lines = []
    for first, second in itertools.combinations(files, 2):
        a = {(item.id, doc): g for item in first.items for doc, g in item.judgments.items()}
        b = {(item.id, doc): g for item in second.items for doc, g in item.judgments.items()}
        shared = sorted(a.keys() & b.keys())
        title = f"{first.path.name} ({first.by}) and {second.path.name} ({second.by})"
        apart = [
            f"{qid} {doc}: {a[(qid, doc)]} vs {b[(qid, doc)]}"
            for qid, doc in shared
            if a[(qid, doc)] != b[(qid, doc)]
        ]
        decided, differ = _decisions_apart(first, second)
        if not shared and not decided:
            lines.append(f"agreement of {title}: no pair graded by both")
            continue
        head = f"agreement of {title}"
        if shared:
            graded = cohen_kappa([a[p] for p in shared], [b[p] for p in shared])
            binary = cohen_kappa([a[p] >= 1 for p in shared], [b[p] >= 1 for p in shared])
            head += (
                f" on {len(shared)} pair(s): kappa {_kappa(graded)} on grades, "
                f"{_kappa(binary)} on relevant or not"
            )
        else:
            head += ": no pair graded by both"
        if decided:
            head += f"; {decided} candidate(s) decided by both"
        apart += differ
        lines.append(f"{head}; {len(apart)} disagreement(s)")
        lines += [f"  {line}" for line in apart[:SHOWN]]
        if len(apart) > SHOWN:
            lines.append(f"  ... and {len(apart) - SHOWN} more")
    return lines


def _decisions_apart(first: Judgments, second: Judgments) -> tuple[int, list[str]]:
    """How many candidates both files decided, and each they decided differently: accepted
    against rejected, or accepted by both with different edits."""
    mine = {item.id: item for item in first.items if item.origin == "candidate"}
    theirs = {item.id: item for item in second.items if item.origin == "candidate"}
    both = sorted(mine.keys() & theirs.keys())
    apart = []
    for ident in both:
        one, other = mine[ident], theirs[ident]
        if one.status != other.status:
            apart.append(f"{ident}: {one.status} vs {other.status}")
        elif one.status == "accepted":
            edited = [key for key in EDITABLE if _content(one)[key] != _content(other)[key]]
            if edited:
                apart.append(f"{ident}: accepted by both, edited differently ({', '.join(edited)})")
    return len(both), apart


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
    source: tuple[Path, int] | None = None  # a new question's judgments file and line

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


@dataclass(frozen=True)
class Conflict:
    """What two sources (the golden set, the files) say differently, in words."""

    kind: Literal["grade", "decision", "edit"]
    text: str


@dataclass(frozen=True)
class _Decision:
    """How a candidate comes out of the merge: accepted or not, and the item whose text it takes
    (None: the golden set's, which already holds it)."""

    accepted: bool
    chosen: tuple[Judgments, Item] | None


@dataclass
class Merge:
    questions: dict[str, _Question]
    added: int = 0
    new_questions: int = 0
    rejected: int = 0
    unchanged: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
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
    decisions = _decide(done, files, how)
    candidates = set(decisions)
    for judgments in files:
        for item in judgments.items:
            if item.status == "rejected" or (item.origin == "candidate" and not decisions[item.id].accepted):
                done.rejected += 1  # rejected here, or by the decision that settled a conflict
                continue
            if item.origin == "candidate":
                target = _candidate(done, judgments, item, decisions[item.id])
            elif item.origin == "added":
                target = _added(done, judgments, item, candidates)
            else:
                target = _graded(done, judgments, item)
            if target.new:  # a new question's provenance names each file that accepted it
                target.docs.setdefault(judgments.path.name, [])
            for doc_id, grade in sorted(item.judgments.items()):
                _apply(done, target, judgments, item, doc_id, grade, how)
    for question in done.questions.values():
        if question.new and question.data.get("answerable", True) and not question.data.get("relevant"):
            path, line = question.source or (files[0].path, None)
            raise EvalInputError(
                path,
                f"accepted question {question.data['id']!r} has no document graded 1 or more",
                "grade its source document on the page, or reject it (r)",
                line,
            )
    return done


# -- candidates: who accepted, who rejected, with which text ----------------------------------


def _content(item: Item) -> dict[str, Any]:
    """What a grader may edit in a candidate, as the merged question would hold it."""
    data = _new_question(item, item.id)
    return {key: data.get(key) for key in EDITABLE}


def _decide(done: Merge, files: list[Judgments], how: Resolve | None) -> dict[str, _Decision]:
    """Each candidate's outcome over every file, and the golden set when it holds it already;
    a decision or edit the files disagree on is a conflict unless `how` settles it."""
    said: dict[str, list[tuple[Judgments, Item]]] = {}
    for judgments in files:
        for item in judgments.items:
            if item.origin == "candidate":
                said.setdefault(item.id, []).append((judgments, item))
    return {ident: _decision(done, ident, entries, how) for ident, entries in said.items()}


def _held(done: Merge, entries: list[tuple[Judgments, Item]]) -> _Question | None:
    """The golden question that is this candidate, merged before (same id, and the same text or
    tagged `generated`); EvalInputError when its id names another golden question."""
    judgments, item = entries[0]
    existing = done.questions.get(item.id)
    if existing is None:
        return None
    text = existing.data.get("question")
    if "generated" in existing.data.get("tags", []) or any(i.question == text for _, i in entries):
        return existing
    raise _fail(
        judgments.path,
        item.line,
        f"new question {item.id!r} has the id of another golden question",
        "give it another id in the file",
    )


def _decision(
    done: Merge, ident: str, entries: list[tuple[Judgments, Item]], how: Resolve | None
) -> _Decision:
    """Whether candidate `ident` is accepted, from what every file (`entries`, in order) and the
    golden set say (module doc: decisions), and with which text (`_edits`)."""
    held = _held(done, entries)
    accepting = [(j, i) for j, i in entries if i.status == "accepted"]
    rejecting = [j.path.name for j, i in entries if i.status == "rejected"]
    accepted = bool(accepting) or held is not None
    if held is not None and rejecting:
        where = f"{ident}: accepted in the golden set (an earlier merge), rejected in {', '.join(rejecting)}"
        if how == "keep":
            done.settled.append(f"{where} -> stays (keep)")
        else:
            done.conflicts.append(
                Conflict("decision", where + ": add-judgments never removes a golden question")
            )
    elif accepting and rejecting:
        where = f"{ident}: " + ", ".join(f"{i.status} in {j.path.name}" for j, i in entries)
        if how in ("keep", "replace"):
            accepted = entries[0 if how == "keep" else -1][1].status == "accepted"
            done.settled.append(f"{where} -> {'accepted' if accepted else 'rejected'} ({how})")
        else:
            done.conflicts.append(Conflict("decision", where))
    if not accepted:
        return _Decision(False, None)
    return _Decision(True, _edits(done, ident, held, accepting, how))


def _edits(
    done: Merge,
    ident: str,
    held: _Question | None,
    accepting: list[tuple[Judgments, Item]],
    how: Resolve | None,
) -> tuple[Judgments, Item] | None:
    """The accepted text a candidate takes: the golden set's (None) or an item's. Two files (or
    the golden set and a file) that edited it differently are a conflict unless `how` is keep
    (the golden set's, or the first file's) or replace (the last file's)."""
    versions: list[tuple[str, dict[str, Any], tuple[Judgments, Item] | None]] = []
    if held is not None:
        versions.append(("the golden set", {key: held.data.get(key) for key in EDITABLE}, None))
    versions += [(j.path.name, _content(i), (j, i)) for j, i in accepting]
    edited = [key for key in EDITABLE if any(v[1][key] != versions[0][1][key] for v in versions)]
    if not edited:
        return versions[0][2]
    where = f"{ident}: accepted with different edits of {', '.join(edited)}: " + "; ".join(
        f"{_shown(content, edited)} in {name}" for name, content, _ in versions
    )
    if how in ("keep", "replace"):
        chosen = versions[0 if how == "keep" else -1]
        done.settled.append(f"{where} -> the text in {chosen[0]} ({how})")
        return chosen[2]
    done.conflicts.append(Conflict("edit", where))
    return versions[0][2]


def _shown(content: dict[str, Any], keys: list[str]) -> str:
    return ", ".join(
        f"{len(content[key] or [])} nugget(s)" if key == "nuggets" else f"{key} {content[key]!r:.60}"
        for key in keys
    )


def _candidate(done: Merge, judgments: Judgments, item: Item, decision: _Decision) -> _Question:
    """The golden question an accepted candidate becomes: the one the golden set holds (its text
    replaced when the decision took a file's), or a new one built from the chosen text."""
    existing = done.questions.get(item.id)
    chosen = decision.chosen
    if existing is not None and not existing.new:
        if chosen is not None and chosen[1] is item:
            for key, value in _content(item).items():
                if value is None:
                    existing.data.pop(key, None)
                else:
                    existing.data[key] = value
            existing.docs.setdefault(judgments.path.name, [])
        elif existing.data.get("question") == item.question:
            done.unchanged += 1  # merged before: its grades still join, as any question's
        return existing
    if existing is not None:  # accepted by an earlier file of this merge
        return existing
    source_file, source = chosen or (judgments, item)
    done.questions[item.id] = question = _Question(
        _new_question(source, item.id), None, new=True, source=(source_file.path, source.line)
    )
    done.new_questions += 1
    return question


def _added(done: Merge, judgments: Judgments, item: Item, candidates: set[str]) -> _Question:
    """The golden question a question added on the page becomes: the same question added before
    (same text, its id or tagged `added`), else a new one under its id, or, when that id is
    taken (every round's page starts at new-1), under the next free new-N."""
    for question in done.questions.values():
        data = question.data
        if data.get("question") == item.question and (
            data["id"] == item.id or "added" in data.get("tags", [])
        ):
            if not question.new:
                done.unchanged += 1
            return question
    ident = item.id
    if ident in done.questions or ident in candidates:
        numbers = [int(m.group(1)) for m in map(NEW_ID.fullmatch, [*done.questions, *candidates]) if m]
        ident = f"new-{max(numbers, default=0) + 1}"
        done.notes.append(
            f"{item.id} of {judgments.path.name} (line {item.line}) joins as {ident}: {item.id} is taken"
        )
    done.questions[ident] = question = _Question(
        _new_question(item, ident), None, new=True, source=(judgments.path, item.line)
    )
    done.new_questions += 1
    return question


def _graded(done: Merge, judgments: Judgments, item: Item) -> _Question:
    """The golden question a question item grades."""
    existing = done.questions.get(item.id)
    if existing is None or existing.new:
        raise _fail(
            judgments.path,
            item.line,
            f"question {item.id!r} is not in the golden set",
            "grade the golden set this page was made from, or add the question first",
        )
    if existing.data.get("question") != item.question:
        done.notes.append(f"{item.id}: the edited question text was not merged (edit golden.jsonl)")
    return existing


def _new_question(item: Item, ident: str) -> dict[str, Any]:
    extra = item.extra
    answerable = extra.get("answerable", True)
    data: dict[str, Any] = {"id": ident, "question": item.question, "relevant": {}}
    if isinstance(extra.get("reference"), str) and extra["reference"].strip() and answerable:
        data["reference"] = extra["reference"].strip()
    if isinstance(extra.get("nuggets"), list) and extra["nuggets"] and answerable:
        data["nuggets"] = extra["nuggets"]
    data["answerable"] = bool(answerable)
    tags = ["generated" if item.origin == "candidate" else "added"]
    if isinstance(extra.get("kind"), str) and extra["kind"].strip() and extra["kind"] not in tags:
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
    ident = target.data["id"]
    if grade >= 1 and not target.data.get("answerable", True):
        raise _fail(
            judgments.path,
            item.line,
            f"{ident} is unanswerable, but {doc_id!r} is graded {grade}",
            "grade it 0, or make the question answerable in golden.jsonl first",
        )
    old = target.grade(doc_id)
    if old == grade:
        done.unchanged += 1
        return
    if old is not None:
        settled = _settle(old, grade, how)
        where = f"{ident} {doc_id}: {old} in the golden set or an earlier file, {grade} in "
        where += judgments.path.name
        if settled is None:
            done.conflicts.append(Conflict("grade", where))
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
    if "passages" in data and question.new:
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


CONFLICT_FIX = {
    "grade": "settle grades by hand, or say how: --on-conflict keep|replace|max|min",
    "decision": "agree on accept or reject and edit one download to say it, or take the first file's "
    "(--on-conflict keep) or the last file's (--on-conflict replace)",
    "edit": "agree on one text and edit the other download to hold it, or take the golden set's or first "
    "file's (--on-conflict keep) or the last file's (--on-conflict replace)",
}
CONFLICT_NAMES = {
    "grade": "conflicting grade(s)",
    "decision": "candidate(s) accepted and rejected",
    "edit": "candidate(s) accepted with different edits",
}


def _refuse(golden: Path, conflicts: list[Conflict]) -> EvalInputError:
    """The error listing every conflict (SHOWN at most), with a fix for each kind found."""
    kinds = [kind for kind in CONFLICT_NAMES if any(c.kind == kind for c in conflicts)]
    counts = ", ".join(
        f"{sum(1 for c in conflicts if c.kind == kind)} {CONFLICT_NAMES[kind]}" for kind in kinds
    )
    shown = "\n  ".join(c.text for c in conflicts[:SHOWN])
    if len(conflicts) > SHOWN:
        shown += f"\n  ... and {len(conflicts) - SHOWN} more"
    return EvalInputError(
        golden, f"{counts}, nothing merged:\n  {shown}\n", "; ".join(CONFLICT_FIX[kind] for kind in kinds)
    )


# -- reading, checking and writing the golden set ---------------------------------------------


def kept_lines(raw: bytes) -> list[tuple[str, dict[str, Any] | None]]:
    """Each line of a JSON Lines file's bytes `raw` (golden.jsonl, checked: _check_as_eval_reads;
    the judge's labels), parsed (None for a blank line): lines that do not change are written
    back as they were."""
    lines = []
    # Split as load_golden does (bytes: at \n and \r only), so U+2028 inside a string stays put.
    for line in (data.decode("utf-8") for data in raw.removeprefix(b"\xef\xbb\xbf").splitlines()):
        lines.append((line, json.loads(line) if line.strip() else None))
    return lines


Origins = dict[int, tuple[Path, int, str]]  # merged line -> (file, line, what it is) for errors


def _check_as_eval_reads(
    data: bytes, golden: Path, corpus: dict[str, Document], origins: Origins | None = None
) -> None:
    """`data` loads as `eval` loads the golden set. It is checked in a temporary file, but an
    error names where its line came from (`origins`; by default the golden set's own line):
    the user's file, never the temporary one, which is gone by the time it is read."""
    with tempfile.TemporaryDirectory() as folder:
        trial = Path(folder) / golden.name
        trial.write_bytes(data)
        try:
            load_golden(trial, corpus)
        except EvalInputError as error:
            line = error.line
            path, number, what = (origins or {}).get(line or 0, (golden, line or 0, ""))
            problem = what + error.problem.replace(str(trial), str(golden))
            raise EvalInputError(path, problem, error.fix, number if line is not None else None) from None


_TABLES: dict[str, Any] = {"data": DataSettings, "judge": JudgeTable}  # the files merges write


def _as_written(config: Config, table: str = "data", key: str = "golden") -> Path:
    """A file setting ([data] golden, [judge] labels) as eval.toml writes it, joined to its folder
    with symlinks not followed (Config's paths are resolved): where a merge writes."""
    value = config.written_value(table, key)
    if not isinstance(value, str):
        value = str(getattr(_TABLES[table], "__pydantic_fields__")[key].default)  # noqa: B009
    return Path(os.path.normpath(config.path.parent / value))


def check_writable(
    config: Config,
    table: str = "data",
    key: str = "golden",
    what: str = "golden set",
    command: str = "add-judgments",
    given: Path | None = None,
) -> None:
    """The golden set (or another file a merge replaces: [table] key, or `given` on the command
    line) may be replaced as `baseline` replaces the baseline (inputs/files.py check_output):
    not written through a symlink, which os.replace would cut (leaving the linked file as it
    was), nor onto another input."""
    written = given if given is not None else _as_written(config, table, key)
    resolved = given.resolve() if given is not None else getattr(getattr(config, table), key)
    project = config.path.parent
    inputs = {path: name for path, name in named_inputs(config).items() if path != resolved}
    what = f"{what} ([{table}] {key})" if given is None else what
    try:
        if given is None and written.is_relative_to(project):
            check_output(written, what, inputs, project=project)
        elif written.is_symlink():
            raise EvalInputError(written, f"the {what} would be written through the symlink {written}", "")
        else:
            check_output(written, what, inputs)
    except EvalInputError as error:
        setting = f"[{table}] {key}" if given is None else "the path given"
        name = what.split(" (")[0]
        raise EvalInputError(
            error.path,
            error.problem,
            f"point {setting} at the file itself ({resolved}), or put the file in place of "
            f"the symlink: {command} replaces the {name} in one step, which would cut the link",
            error.line,
        ) from None


@contextmanager
def _locked(golden: Path, command: str = "add-judgments") -> Iterator[None]:
    """Hold an exclusive lock on the golden set (or the file `command` merges into: flock on
    `.NAME.lock` beside it) while merging: a second add-judgments waits for the first, up to
    LOCK_WAIT seconds. Where there is no flock (Windows, some network file systems) the check
    before the replace still guards."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    lock = golden.with_name(f".{golden.name}.lock")
    try:
        handle = open(lock, "a+b")  # noqa: SIM115 (closed below, after the lock is let go)
    except OSError as error:
        raise EvalInputError(
            golden,
            f"cannot create its lock file {lock.name}: {error.strerror or error}",
            f"fix the permissions of its folder ({command} writes there anyway)",
        ) from None
    with handle:
        deadline, told = time.monotonic() + LOCK_WAIT, False
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EvalInputError(
                        golden,
                        f"another {command} has held {lock.name} for {LOCK_WAIT:.0f} s: nothing merged",
                        "wait for it to finish (or end it), then run again",
                    ) from None
                if not told:
                    print(f"waiting for another {command} to finish with {golden} ...", file=sys.stderr)
                    told = True
                time.sleep(0.05)
            except OSError:  # no flock here (NFS without locking): the check before replacing guards
                break
        try:
            yield
        finally:
            with suppress(OSError):
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(golden: Path) -> bytes:
    return read_data(golden, "golden set", limit=QUESTIONS_LIMIT)


def replace_if_unchanged(path: Path, before: bytes, text: str, read: Callable[[Path], bytes]) -> bool:
    """Just before the replace: write `text` to `path` in one step when the file is still, byte
    for byte, `before` (what the merge read); False when another writer (an editor, a script, an
    older merge) changed it since, and nothing is written: merge again."""
    try:
        now = _digest(read(path))
    except EvalInputError:
        now = ""
    if now != _digest(before):
        return False
    write_atomic(path, text)
    return True


@dataclass(frozen=True)
class _Merged:
    raw: bytes  # the golden set as read
    text: str | None  # the merged golden set; None when nothing changed
    done: Merge
    changed: int


def _merged(
    config: Config, corpus: dict[str, Document], files: list[Judgments], how: Resolve | None
) -> _Merged:
    """Read the golden set once, merge the files into it and check the result (module doc)."""
    raw = _read(config.golden)
    _check_as_eval_reads(raw, config.golden, corpus)  # valid before anything joins it
    lines = kept_lines(raw)
    questions = {data["id"]: _Question(data, line) for line, data in lines if data is not None}
    done = merge(questions, files, how)
    if done.conflicts:
        raise _refuse(config.golden, done.conflicts)
    by_name = {j.path.name: j for j in files}
    out: list[str] = []
    origins: Origins = {}
    names = ", ".join(by_name)
    for number, (line, data) in enumerate(lines, start=1):
        question = questions.get(data["id"]) if data is not None else None
        if question is None or not question.docs:
            out.append(line)
            continue
        out.append(_dumps(_finish(question, by_name)))
        origins[number] = (config.golden, number, f"{question.data['id']}, as merged with {names}: ")
    for question in questions.values():
        if question.new:
            out.append(_dumps(_finish(question, by_name)))
            path, line_number = question.source or (config.golden, len(out))
            origins[len(out)] = (path, line_number, f"{question.data['id']}, as a new golden question: ")
    changed = sum(1 for q in questions.values() if q.docs or q.new)
    if not changed:
        return _Merged(raw, None, done, 0)
    text = "\n".join(out) + "\n"
    _check_as_eval_reads(text.encode("utf-8"), config.golden, corpus, origins)
    return _Merged(raw, text, done, changed)


def run_add_judgments(config: Config, paths: list[Path], how: Resolve | None, dry_run: bool) -> int:
    """The command: read, report agreement, merge, check, write (module docstring)."""
    corpus = load_corpus(config.corpus)
    check_writable(config)
    files = [read_judgments(path, corpus) for path in paths]
    names = [j.path.name for j in files]
    if len(set(names)) != len(names):
        raise EvalInputError(
            paths[0], "two judgments files share a name", "rename one: provenance names the file"
        )
    for line in agreement_lines(files) if len(files) > 1 else []:
        print(line)
    with nullcontext() if dry_run else _locked(config.golden):
        for _ in range(ATTEMPTS):
            merged = _merged(config, corpus, files, how)
            if dry_run or merged.text is None:
                return _report(config, merged, dry_run, wrote=False)
            # Just before the replace: the file is what was read, or another writer (an editor,
            # a script, an older add-judgments) changed it since, and it is merged again.
            if replace_if_unchanged(config.golden, merged.raw, merged.text, _read):
                return _report(config, merged, dry_run, wrote=True)
            print(
                f"note: {config.golden} changed while merging (another writer): merging again",
                file=sys.stderr,
            )
    raise EvalInputError(
        config.golden,
        f"it changed while add-judgments was merging, {ATTEMPTS} times in a row: nothing written (the "
        "other writer's changes are all there)",
        "run add-judgments again once nothing else is writing the golden set",
    )


def _report(config: Config, merged: _Merged, dry_run: bool, wrote: bool) -> int:
    done = merged.done
    for line in [*done.settled, *done.notes]:
        print(f"note: {line}", file=sys.stderr)
    summary = (
        f"{done.added} grade(s) merged into {merged.changed} question(s) ({done.new_questions} new), "
        f"{done.rejected} rejected candidate(s) left out, {done.unchanged} already there"
    )
    if dry_run:
        print(f"--dry-run: {summary}; {config.golden} not written")
    elif wrote:
        print(f"{summary}; wrote {config.golden}")
        print("the golden set changed: remake the baseline (`nox -s baseline`), review its diff, commit both")
    else:
        print(f"{summary}; {config.golden} unchanged")
    return ExitCode.OK


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)

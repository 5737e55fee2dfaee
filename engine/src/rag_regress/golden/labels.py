"""`add-labels FILE [FILE ...]`: merge the labels graded on a `grade --answers` page (golden/
answers.py) into the judge's labels, [judge] labels (or `--labels FILE`), which `calibrate`
reads: the judge measured on the team's own answers.

A labels file is what the page downloads (golden/page.py): a header {"format":
"rag-regress-labels", "version": 1, "by", "at", "page", "report": {"path", "sha256"[, "commit",
"engine", "judge"]}}, then one line per sentence graded: {"id", "question_id", "question",
"tags", "claim", "context", "label": "supported" | "not supported" | "cannot tell"[, "note"]}.
Every line is checked: its id must be the one the page derives from its question, sentence and
context (answers.label_id), so a sentence or context edited by hand is refused, not merged.

Each sentence labelled supported or not supported becomes (or confirms) one line of the labels
file, in the format answers/calibration.py reads:

  {"id", "claim", "context", "supported", ["kind": the question's first tag,] "split": "dev" |
   "check", "domain": "team", "question": its id, "tags": its tags,
   "provenance": [{"by", "at", "file", "report", "report_sha256"[, "commit", "engine", "judge"],
                   "supported"[, "note"]}, ...]}

"split" comes from a digest of the id (answers.split_of: half dev, half check), "domain" is
DOMAIN, so `calibrate` reports the team's labels apart from any others the file holds. Each
grader who labelled the sentence adds a provenance entry (what they said, and their note). A
sentence graded "cannot tell" is never a label: it is counted and listed with its note (the
download keeps it).

Merging, in the order the files are given: a sentence not in the labels file joins it; one
that is there gets the grader's provenance entry when they agree; the same file merged again
changes nothing. Two graders (or a grader and the labels file) who disagree on a sentence are
a conflict: nothing is written and each is listed, naming both graders (exit 2), unless
`--on-conflict keep` (the labels file's, or the first file's, label stays) or `replace` (the
last file's). Either way the dissenting grader's entry is kept in the provenance. A label the
file holds is never removed, nor is any line of it rewritten but those that gain an entry.

Agreement: for every two files that label the same sentences, and for each file against the
labels the file already holds from other graders, Cohen's kappa on supported or not (the
sentences both labelled) and each disagreement are printed first.

Writing is add-judgments' (golden/merge.py): the labels file as read is checked as `calibrate`
reads it, and so is the result before it replaces the file in one step; the command holds a
lock (`.NAME.lock` beside it) and, just before the replace, checks the file is byte for byte
what it read, merging again when another writer changed it. Never through a symlink.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from ..answers.calibration import TEAM_DOMAIN, load_labels
from ..errors import EvalInputError, ExitCode
from ..inputs.lines import Line, NonEmpty, Text, checked
from ..inputs.reading import QUESTIONS_LIMIT, read_data
from ..settings.config import Config
from .agreement import cohen_kappa
from .answers import label_id, split_of
from .merge import (
    ATTEMPTS,
    SHOWN,
    _kappa,
    _locked,
    check_writable,
    kept_lines,
    read_download,
    replace_if_unchanged,
)
from .merge import (
    FORMAT as JUDGMENTS_FORMAT,
)

FORMAT = "rag-regress-labels"
VERSION = 1
DOMAIN = TEAM_DOMAIN  # the labels' domain in calibrate's tables (answers/calibration.py): first in each
LABELS = {"supported": True, "not supported": False, "cannot tell": None}
Settle = Literal["keep", "replace"]
_REPORT_KEYS = ("commit", "engine", "judge")  # recorded when the report's receipt held them


@dataclass(frozen=True)
class Graded:
    """One sentence of a labels file, as its grader labelled it."""

    id: str
    question_id: str
    question: str
    tags: list[str]
    claim: str
    context: str
    label: bool | None  # None: cannot tell
    note: str
    line: int


@dataclass(frozen=True)
class LabelsFile:
    path: Path
    by: str
    at: str
    report: dict[str, str]
    items: list[Graded]


def _fail(path: Path, line: int, problem: str, fix: str) -> EvalInputError:
    return EvalInputError(path, problem, fix, line)


def read_labels_file(path: Path) -> LabelsFile:
    """Read and check a labels file the page downloaded; EvalInputError names the line."""
    judgments = (
        JUDGMENTS_FORMAT,
        "this is a judgments file (documents graded), not labels of answer sentences",
        f"merge it into the golden set: rag-regress add-judgments {path}",
    )
    fix = "download it again from the page (`rag-regress grade --answers`)"
    parsed, by, at = read_download(path, "labels", (FORMAT, VERSION), fix, judgments)
    number, header = parsed[0]
    report = header.get("report")
    if not isinstance(report, dict) or not all(
        isinstance(report.get(key), str) for key in ("path", "sha256")
    ):
        raise _fail(path, number, "the header names no report ('report': {path, sha256})", fix)
    kept = {key: report[key] for key in ("path", "sha256", *_REPORT_KEYS) if isinstance(report.get(key), str)}
    items: list[Graded] = []
    seen: dict[str, int] = {}
    for number, value in parsed[1:]:
        item = _graded(path, number, value, fix)
        if item.id in seen:
            raise _fail(path, number, f"sentence {item.id!r} appears twice (line {seen[item.id]})", fix)
        seen[item.id] = number
        items.append(item)
    return LabelsFile(path, by, at, kept, items)


class _GradedLine(Line):
    """A sentence's line of a labels file; keys the page may add besides are kept out of it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: NonEmpty
    question_id: NonEmpty
    question: NonEmpty
    tags: Annotated[list[Text], Field(description="a list of strings")] = Field(default_factory=list)
    claim: NonEmpty
    context: Text
    label: Annotated[
        Literal["supported", "not supported", "cannot tell"],
        Field(description='"supported", "not supported" or "cannot tell"'),
    ]
    note: Text = ""


def _graded(path: Path, number: int, value: dict[str, Any], fix: str) -> Graded:
    line = checked(_GradedLine, value, path, number, fix)
    if line.id != label_id(line.question_id, line.claim, line.context):
        raise _fail(
            path,
            number,
            f"sentence {line.id!r}: its claim or context is not what the page showed (the id is theirs)",
            fix + "; a label is about exactly the text its grader read",
        )
    return Graded(
        line.id,
        line.question_id,
        line.question,
        list(line.tags),
        line.claim,
        line.context,
        LABELS[line.label],
        line.note.strip(),
        number,
    )


# -- agreement --------------------------------------------------------------------------------


def _said(value: bool) -> str:
    return "supported" if value else "not supported"


def _agreement(title: str, pairs: list[tuple[str, bool, bool]], unsure: int) -> list[str]:
    """The kappa line of two sets of labels on the same sentences, and each disagreement."""
    if not pairs:
        return [f"agreement of {title}: no sentence labelled by both"]
    kappa = cohen_kappa([a for _, a, _ in pairs], [b for _, _, b in pairs])
    apart = [f"{ident}: {_said(a)} vs {_said(b)}" for ident, a, b in pairs if a != b]
    unsure_text = f"; {unsure} more that one of them could not tell" if unsure else ""
    lines = [
        f"agreement of {title} on {len(pairs)} sentence(s): kappa {_kappa(kappa)} on supported or not; "
        f"{len(apart)} disagreement(s){unsure_text}"
    ]
    lines += [f"  {line}" for line in apart[:SHOWN]]
    if len(apart) > SHOWN:
        lines.append(f"  ... and {len(apart) - SHOWN} more")
    return lines


def agreement_lines(files: list[LabelsFile], held: dict[str, dict[str, Any]], labels: Path) -> list[str]:
    """Cohen's kappa for every two files labelling the same sentences, and for each file against
    the labels the labels file holds from other graders (`held`: id -> its line)."""
    lines = []
    for first, second in itertools.combinations(files, 2):
        a = {item.id: item.label for item in first.items}
        b = {item.id: item.label for item in second.items}
        both = sorted(a.keys() & b.keys())
        pairs = [(i, x, y) for i in both if (x := a[i]) is not None and (y := b[i]) is not None]
        title = f"{first.path.name} ({first.by}) and {second.path.name} ({second.by})"
        lines += _agreement(title, pairs, len(both) - len(pairs))
    for file in files:
        theirs: list[tuple[str, bool, bool]] = []
        graders: set[str] = set()
        for item in file.items:
            line = held.get(item.id)
            by = {entry.get("by") for entry in _entries(line)} if line is not None else set()
            if line is None or item.label is None or not by - {file.by}:
                continue
            graders |= {str(name) for name in by - {file.by}}
            theirs.append((item.id, bool(line["supported"]), item.label))
        if theirs:
            title = f"{labels.name} ({', '.join(sorted(graders))}) and {file.path.name} ({file.by})"
            lines += _agreement(title, theirs, 0)
    return lines


def _entries(line: dict[str, Any]) -> list[dict[str, Any]]:
    provenance = line.get("provenance")
    return [entry for entry in provenance if isinstance(entry, dict)] if isinstance(provenance, list) else []


# -- merging ----------------------------------------------------------------------------------


@dataclass
class LabelsMerge:
    labels: dict[str, dict[str, Any]]  # id -> its line, as read or built
    new: list[str] = field(default_factory=list)  # ids that join, in order
    changed: set[str] = field(default_factory=set)  # ids of lines read that gain an entry
    sources: dict[str, str] = field(default_factory=dict)  # id -> who said its label, in words
    agreed: int = 0
    replaced: int = 0
    unchanged: int = 0
    unsure: list[tuple[LabelsFile, Graded]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    settled: list[str] = field(default_factory=list)


def _entry(file: LabelsFile, item: Graded) -> dict[str, Any]:
    """The provenance entry of `item`'s grader."""
    report = file.report
    entry: dict[str, Any] = {"by": file.by, "at": file.at, "file": file.path.name}
    entry |= {"report": report["path"], "report_sha256": report["sha256"]}
    entry |= {key: report[key] for key in _REPORT_KEYS if key in report}
    entry["supported"] = item.label
    if item.note:
        entry["note"] = item.note
    return entry


def _new_label(item: Graded, entry: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item.id,
        "claim": item.claim,
        "context": item.context,
        "supported": item.label,
    }
    if item.tags:
        data["kind"] = item.tags[0]
    data |= {"split": split_of(item.id), "domain": DOMAIN, "question": item.question_id, "tags": item.tags}
    data["provenance"] = [entry]
    return data


def merge_labels(
    held: dict[str, dict[str, Any]],
    lines: dict[str, int],
    files: list[LabelsFile],
    how: Settle | None,
    path: Path,
) -> LabelsMerge:
    """Apply every file's labels to `held` (the labels file's lines by id; `lines`: their line
    numbers); conflicts listed, not applied (module docstring)."""
    done = LabelsMerge(held)
    for ident, number in lines.items():
        graders = (
            ", ".join(dict.fromkeys(str(e.get("by")) for e in _entries(held[ident]))) or "no grader named"
        )
        done.sources[ident] = f"in {path.name} line {number} ({graders})"
    for file in files:
        for item in file.items:
            if item.label is None:
                done.unsure.append((file, item))
                continue
            entry = _entry(file, item)
            said = f"{_said(item.label)} by {file.by} ({file.path.name})"
            label = done.labels.get(item.id)
            if label is None:
                done.labels[item.id] = _new_label(item, entry)
                done.new.append(item.id)
                done.sources[item.id] = f"by {file.by} ({file.path.name})"
                continue
            if label.get("claim") != item.claim or label.get("context") != item.context:
                raise _fail(
                    file.path,
                    item.line,
                    f"sentence {item.id!r}: the label {done.sources[item.id]} has another claim or "
                    "context under this id",
                    f"give that line of {path.name} another id",
                )
            entries = _entries(label)
            if any(all(e.get(k) == entry[k] for k in ("by", "at", "file")) for e in entries):
                done.unchanged += 1  # this file was merged before
                continue
            if label["supported"] != item.label:
                where = f"{item.id}: {_said(bool(label['supported']))} {done.sources[item.id]}, {said}"
                if how is None:
                    done.conflicts.append(where)
                    continue
                if how == "replace":
                    label["supported"] = item.label
                    done.sources[item.id] = f"by {file.by} ({file.path.name})"
                    done.replaced += 1
                done.settled.append(f"{where} -> {_said(bool(label['supported']))} ({how})")
            else:
                done.agreed += 1
            label["provenance"] = [*entries, entry]
            if item.id not in done.new:
                done.changed.add(item.id)
    return done


# -- reading, checking and writing the labels file --------------------------------------------


def _read(path: Path) -> bytes:
    """The labels file's bytes; none when there is no file yet (add-labels creates it)."""
    if not path.exists() and not path.is_symlink():
        return b""
    return read_data(path, "judge labels", limit=QUESTIONS_LIMIT)


def _check_as_calibrate_reads(data: bytes, path: Path) -> None:
    """`data` loads as `calibrate` loads labels (answers/calibration.load_labels); an error names
    `path`, the user's file, never the temporary one it was checked in."""
    if not data.strip():
        return
    with tempfile.TemporaryDirectory() as folder:
        trial = Path(folder) / path.name
        trial.write_bytes(data)
        try:
            load_labels(trial)
        except EvalInputError as error:
            raise EvalInputError(
                path, error.problem.replace(str(trial), str(path)), error.fix, error.line
            ) from None


@dataclass(frozen=True)
class _Merged:
    raw: bytes
    text: str | None  # None: nothing changed
    done: LabelsMerge


def _merged(path: Path, files: list[LabelsFile], how: Settle | None) -> _Merged:
    raw = _read(path)
    _check_as_calibrate_reads(raw, path)  # valid before anything joins it
    lines = kept_lines(raw)
    held = {str(data["id"]): data for _, data in lines if data is not None}
    numbers = {str(data["id"]): n for n, (_, data) in enumerate(lines, start=1) if data is not None}
    done = merge_labels(held, numbers, files, how, path)
    if done.conflicts:
        shown = "\n  ".join(done.conflicts[:SHOWN])
        if len(done.conflicts) > SHOWN:
            shown += f"\n  ... and {len(done.conflicts) - SHOWN} more"
        raise EvalInputError(
            path,
            f"{len(done.conflicts)} sentence(s) labelled both ways, nothing merged:\n  {shown}\n",
            "agree, and edit one download to say it, or take the labels file's or first file's "
            "(--on-conflict keep) or the last file's (--on-conflict replace)",
        )
    if not done.new and not done.changed:
        return _Merged(raw, None, done)
    out = [
        json.dumps(data, ensure_ascii=False) if data is not None and str(data["id"]) in done.changed else line
        for line, data in lines
    ]
    out += [json.dumps(done.labels[ident], ensure_ascii=False) for ident in done.new]
    text = "\n".join(out) + "\n"
    _check_as_calibrate_reads(text.encode("utf-8"), path)
    written = [str(json.loads(line)["id"]) for line in out if line.strip()]
    if sorted(written) != sorted([*numbers, *done.new]):  # never a label lost or made up
        raise RuntimeError(f"add-labels would not write exactly the labels of {path} and the new ones")
    return _Merged(raw, text, done)


def run_add_labels(
    config: Config, paths: list[Path], labels: Path | None, how: Settle | None, dry_run: bool
) -> int:
    """The command: read, report agreement, merge, check, write (module docstring)."""
    path = labels if labels is not None else config.judge.labels
    check_writable(config, "judge", "labels", "judge labels", "add-labels", given=labels)
    files = [read_labels_file(file) for file in paths]
    names = [file.path.name for file in files]
    if len(set(names)) != len(names):
        raise EvalInputError(
            paths[0], "two labels files share a name", "rename one: provenance names the file"
        )
    raw = _read(path)
    _check_as_calibrate_reads(raw, path)
    held = {str(data["id"]): data for _, data in kept_lines(raw) if data is not None}
    for line in agreement_lines(files, held, path):
        print(line)
    if not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)  # the lock goes beside it
    with nullcontext() if dry_run else _locked(path, "add-labels"):
        for _ in range(ATTEMPTS):
            merged = _merged(path, files, how)
            if dry_run or merged.text is None:
                return _report(path, merged, dry_run, wrote=False, default=labels is None)
            if replace_if_unchanged(path, merged.raw, merged.text, _read):
                return _report(path, merged, dry_run, wrote=True, default=labels is None)
            print(f"note: {path} changed while merging (another writer): merging again", file=sys.stderr)
    raise EvalInputError(
        path,
        f"it changed while add-labels was merging, {ATTEMPTS} times in a row: nothing written (the "
        "other writer's changes are all there)",
        "run add-labels again once nothing else is writing the labels file",
    )


def _report(path: Path, merged: _Merged, dry_run: bool, wrote: bool, default: bool) -> int:
    done = merged.done
    for line in done.settled:
        print(f"note: {line}", file=sys.stderr)
    if done.unsure:
        print(f"cannot tell: {len(done.unsure)} sentence(s), never a label (the downloads keep them):")
        for file, item in done.unsure[:SHOWN]:
            print(f"  {item.id} ({file.by}){': ' + item.note if item.note else ''}")
        if len(done.unsure) > SHOWN:
            print(f"  ... and {len(done.unsure) - SHOWN} more")
    summary = (
        f"{len(done.new)} label(s) added, {done.agreed} confirmed by another grader, {done.replaced} "
        f"replaced, {done.unchanged} already there"
    )
    if dry_run:
        print(f"--dry-run: {summary}; {path} not written")
    elif wrote:
        print(f"{summary}; wrote {path}")
        calibrate = "rag-regress calibrate" + ("" if default else f" --labels {path}")
        print(f"measure the judge on them: {calibrate} (the team's labels are domain {DOMAIN!r})")
    else:
        print(f"{summary}; {path} unchanged")
    return ExitCode.OK

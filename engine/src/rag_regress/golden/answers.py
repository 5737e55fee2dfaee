"""`grade --answers`: grade the judge's own work. A sample of the answer sentences a report's
judge judged goes on the grading page (golden/page.py): the question, the answer with the
sentence marked, its contexts (from the corpus, by the report's document ids) with the judge's
evidence marked where the report holds any, and keys for supported / not supported / cannot
tell, with a note. The page downloads a labels file for `add-labels` (golden/labels.py), which
merges it into the judge's labels ([judge] labels), read by `calibrate`.

The sentences are the judge's own: the answer's text cut as the faithfulness check cut it
(answers/citations.cited_sentences: split_sentences once the citation markers are out; for a
generator whose markers are text, `Answer.citations` false, split_sentences of the text as it
is: an answer with markers but no citation checked, `citation_precision` null, is read so
first), the cut that lines up with the report: as many sentences as it judged (`claims`) and
every sentence it listed unsupported or not judged among them. An answer neither cut lines up
with is left out, counted.
Each sentence's verdict is the report's: unsupported when listed under `unsupported`, not
judged (left out: there is no verdict to grade against) when listed under `not_judged` for
faithfulness, supported otherwise. A sentence said twice in one answer is graded once.
A sentence's item carries its row's "history" (if any): [{"role", "content"}], as asked.

Sampling (seeded: the same report, count and seed give the same sentences, in the same order)
is stratified by the judge's verdict and by tag: each (verdict, tag) is a stratum, and a
sentence is in one, its verdict's and its question's rarest tag (the tag fewest judged
sentences carry; "(untagged)" for none), so a question of a rare tag is not swamped by the tags
it shares with many. Strata take turns, each giving its next sentence (in a seeded order): the
tags in a seeded order, verdicts alternating, then every tag again with the other verdict, and
so on, until `count` are picked or none is left. The first picks cover every tag and both
verdicts; small strata are all there, large ones share the rest equally. The sample is then
shuffled, so the page's order says nothing of the verdicts.

Evidence. For an unsupported sentence, the quotes of its reason in the report ("where the
context says 'Y'") name words of the contexts; for a supported one, the window the configured
judge's verdict rests on (the report keeps none: it is read through the verdict cache, so the
judge is asked only for what it has not judged). Each is marked where a context holds it (whole
words, any case). Both verdicts have evidence, so a mark does not give the verdict away, but a
grader may lean on it: `--blind` marks none. The judge's verdict itself is never shown.

A sentence's label id is its question's id and a digest of the sentence and the contexts' text
as the page shows them (`label_id`): two graders' pages of the same report give the same ids,
and a label is about exactly what its grader read. Its split is a digest of the id
(`split_of`): half "dev" (tuning), half "check" (held out), the same on every machine.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answers.checks import judge_all
from ..answers.citations import cited_sentences
from ..answers.judges import Item
from ..answers.judges.claims import split_sentences
from ..answers.verdicts import judged as has_verdict
from ..api import Document
from ..errors import EvalInputError, ExitCode
from ..inputs.data import load_corpus
from ..inputs.files import sha256_file
from ..inputs.reading import REPORT_LIMIT, parse_json, read_data
from ..inputs.reports import QuestionResult, Report
from ..settings.config import Config
from .page import _doc, history_field, write_page

TEXT_LIMIT = 20_000  # characters of a context shown (and labelled), from its start
SUPPORTED, UNSUPPORTED = "supported", "unsupported"
UNTAGGED = "(untagged)"
MARKS = 20  # evidence marks at most per context
_QUOTED = re.compile(r"'([^'\n]{2,200})'")
# A citation marker, as answers/citations.py reads one: the judge read the sentence without it.
_MARKER = r"(?:[ \t]*\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\])*"
_BETWEEN = r"(?:\s|\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\])+"


@dataclass(frozen=True)
class Judged:
    """One sentence of an answer the judge judged, and its verdict as the report records it."""

    row: QuestionResult
    claim: str  # the sentence as the judge read it
    verdict: str  # SUPPORTED or UNSUPPORTED
    why: str  # the judge's reason ("" for a supported sentence)


def label_id(question_id: str, claim: str, context: str) -> str:
    """The id of the label of `claim` read against `context` in an answer to `question_id`."""
    digest = hashlib.sha256(f"{question_id}\0{claim}\0{context}".encode()).hexdigest()
    return f"{question_id}-{digest[:12]}"


def split_of(ident: str) -> str:
    """The split of label `ident`: "dev" or "check", half each, from a digest of the id alone."""
    return ("dev", "check")[int(hashlib.sha256(ident.encode()).hexdigest()[:8], 16) % 2]


def judged_sentences(row: QuestionResult) -> list[Judged] | None:
    """The sentences of `row`'s answer the judge judged, each with its verdict (none for no
    answer, an abstention, or an answer without its text: a baseline's); None when neither
    cut of the text lines up with the report (module docstring)."""
    answer = row.answer
    if answer is None or answer.abstained or not answer.text.strip() or not answer.claims:
        return []
    unsupported = {u.claim: u.why for u in answer.unsupported}
    skipped = {f.text for f in answer.not_judged if f.why.startswith("faithfulness")}
    cited = cited_sentences(answer.text)
    cuts = [[s.text for s in cited], split_sentences(answer.text)]
    if any(s.cites for s in cited) and answer.citation_precision is None:
        cuts.reverse()  # markers, but no citation checked: the generator's markers were its text
    for sentences in cuts:
        found = set(sentences)
        if len(sentences) == answer.claims and unsupported.keys() <= found and skipped <= found:
            break
    else:
        return None
    judged = []
    for claim in dict.fromkeys(sentences):
        if claim in unsupported:
            judged.append(Judged(row, claim, UNSUPPORTED, unsupported[claim]))
        elif claim not in skipped:
            judged.append(Judged(row, claim, SUPPORTED, ""))
    return judged


def stratum_tag(sentence: Judged, carried: Counter[str]) -> str:
    """The tag whose stratum holds `sentence`: its question's rarest (`carried`: sentences per
    tag), the first in name order among equals; UNTAGGED for none."""
    return min(sentence.row.tags or [UNTAGGED], key=lambda tag: (carried[tag], tag))


def sample(sentences: list[Judged], count: int, seed: int) -> list[Judged]:
    """`count` of `sentences`, stratified by verdict and tag (module docstring); seeded."""
    rng = random.Random(seed)
    carried = Counter(tag for s in sentences for tag in dict.fromkeys(s.row.tags or [UNTAGGED]))
    strata: dict[tuple[str, str], list[Judged]] = {}
    for sentence in sentences:
        strata.setdefault((sentence.verdict, stratum_tag(sentence, carried)), []).append(sentence)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    tags = sorted({tag for _, tag in strata})
    rng.shuffle(tags)
    verdicts = (SUPPORTED, UNSUPPORTED)
    turns = [(verdicts[(i + r) % 2], tag) for r in range(2) for i, tag in enumerate(tags)]
    queues = [strata[turn] for turn in turns if turn in strata]
    picked: list[Judged] = []
    while len(picked) < count and any(queues):
        for queue in queues:
            if queue and len(picked) < count:
                picked.append(queue.pop(0))
    rng.shuffle(picked)
    return picked


def locate(text: str, claim: str) -> list[int] | None:
    """Where `claim` is in the answer `text` as [start, end] (code points), citation markers
    inside it included; None when it cannot be found (the page then shows it on its own)."""
    at = text.find(claim)
    if at >= 0:
        return [at, at + len(claim)]
    words = []
    for word in claim.split():
        core = word.rstrip(".!?,;:")
        words.append(re.escape(core) + _MARKER + re.escape(word[len(core) :]))
    found = re.search(_BETWEEN.join(words), text) if words else None
    return [found.start(), found.end()] if found else None


def quotes(why: str) -> list[str]:
    """The quoted pieces of a judge's reason ("... where the context says 'Y'")."""
    return list(dict.fromkeys(piece.strip() for piece in _QUOTED.findall(why) if piece.strip()))


def evidence_spans(text: str, pieces: list[str]) -> list[tuple[int, int]]:
    """Where the `pieces` occur in `text` (whole words, any case), merged where they overlap;
    MARKS at most."""
    spans: list[tuple[int, int]] = []
    for piece in pieces:
        for found in re.finditer(rf"(?<!\w){re.escape(piece)}(?!\w)", text, re.IGNORECASE):
            spans.append(found.span())
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged[:MARKS]


def context_text(docs: list[dict[str, Any]]) -> str:
    """The label's context: the texts of the contexts as the page shows them, a blank line
    between two (the page joins them alike for the download)."""
    return "\n\n".join(doc["text"] for doc in docs)


def sentence_item(
    judged: Judged, corpus: dict[str, Document], evidence: bool, window: str = ""
) -> dict[str, Any]:
    """The page's item for one sampled sentence (every context document is in `corpus`);
    `window`: the text the judge's verdict of a supported sentence rests on, marked too."""
    row = judged.row
    assert row.answer is not None
    answer = row.answer
    pieces = [*quotes(judged.why), *([window.strip()] if window.strip() else [])] if evidence else []
    positions: dict[str, list[int]] = {}
    for number, doc_id in enumerate(answer.contexts, start=1):
        positions.setdefault(doc_id, []).append(number)
    docs = []
    for doc_id, numbers in positions.items():
        document = corpus[doc_id]
        where = f"context {', '.join(map(str, numbers))} of the answer"
        # Cut where no evidence decides (its first TEXT_LIMIT characters): the label, and so its
        # id, is the same whether the evidence is marked or not (--blind).
        doc = _doc(document, None, [where], [], TEXT_LIMIT)
        first, shown = doc["start"], len(doc["text"])
        spans = evidence_spans(document.text, pieces)
        doc["marks"] = [[s - first, e - first] for s, e in spans if first <= s and e <= first + shown]
        docs.append(doc)
    return {
        "id": label_id(row.id, judged.claim, context_text(docs)),
        "origin": "sentence",
        "question_id": row.id,
        "question": row.question,
        "tags": list(row.tags),
        "answer": answer.text,
        "at": locate(answer.text, judged.claim),
        "claim": judged.claim,
        "docs": docs,
        **history_field(row.history),
    }


@dataclass(frozen=True)
class Sampled:
    """What `answer_items` found in a report and took from it."""

    items: list[dict[str, Any]]
    sentences: int  # judged sentences there were to sample from
    answers: int  # answers they came from
    not_lined_up: list[str]  # questions whose answer neither cut lines up with
    missing: dict[str, list[str]]  # question -> its context documents the corpus no longer holds
    verdicts: dict[str, int]  # the judge's verdict -> sentences sampled
    tags: dict[str, int]  # tag -> sentences sampled (a sentence counts under each of its tags)


def answer_items(
    report: Report,
    corpus: dict[str, Document],
    count: int,
    seed: int,
    evidence: bool = True,
    windows: Callable[[list[Item]], list[str]] | None = None,
) -> Sampled:
    """The page's items for `count` sentences of `report`'s answers (module docstring).
    `windows` gives, for (claim, contexts) items, the window each verdict rests on: the
    evidence of the sampled supported sentences (none without it, or with `evidence` off)."""
    sentences: list[Judged] = []
    not_lined_up: list[str] = []
    missing: dict[str, list[str]] = {}
    answers = 0
    for row in report.questions:
        found = judged_sentences(row)
        if found is None:
            not_lined_up.append(row.id)
            continue
        gone = [doc for doc in (row.answer.contexts if row.answer else []) if doc not in corpus]
        if found and gone:
            missing[row.id] = list(dict.fromkeys(gone))
            continue
        answers += bool(found)
        sentences += found
    chosen = sample(sentences, count, seed)
    verdicts = Counter(judged.verdict for judged in chosen)
    tags = Counter(tag for judged in chosen for tag in dict.fromkeys(judged.row.tags or [UNTAGGED]))
    marked = [""] * len(chosen)
    supported = [i for i, one in enumerate(chosen) if one.verdict == SUPPORTED]
    if evidence and windows is not None and supported:
        asked = [(chosen[i].claim, _contexts(chosen[i].row, corpus)) for i in supported]
        for i, window in zip(supported, windows(asked), strict=True):
            marked[i] = window
    items = [
        sentence_item(judged, corpus, evidence, window) for judged, window in zip(chosen, marked, strict=True)
    ]
    return Sampled(
        items,
        len(sentences),
        answers,
        not_lined_up,
        missing,
        dict(sorted(verdicts.items())),
        dict(sorted(tags.items())),
    )


def _contexts(row: QuestionResult, corpus: dict[str, Document]) -> tuple[str, ...]:
    """The texts of the answer's contexts, from the corpus, once each, in the answer's order."""
    assert row.answer is not None
    return tuple(corpus[doc_id].text for doc_id in dict.fromkeys(row.answer.contexts))


def judge_windows(config: Config) -> Callable[[list[Item]], list[str]]:
    """The configured judge's window for each item, through the verdict cache (the verdicts
    the run judged are there, so the judge is asked only for what it has not judged)."""

    def windows(items: list[Item]) -> list[str]:
        verdicts, _ = judge_all(items, config.judge, config.path)
        return [verdict.window if has_verdict(verdict) else "" for verdict in verdicts]

    return windows


def read_run_report(path: Path) -> tuple[Report, str]:
    """A run report ([data] report, what `eval` writes) and the sha256 of its bytes."""
    fix = "run `rag-regress eval` (`nox -s eval`), or give the report's path: --answers FILE"
    raw = read_data(path, "report", limit=REPORT_LIMIT, missing_fix=fix)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise EvalInputError(path, "the report is not valid UTF-8", fix, line) from None
    data = parse_json(text, path, fix, prefix="the report is ")
    return Report.from_dict(data, path, "run"), hashlib.sha256(raw).hexdigest()


def report_record(config: Config, path: Path, report: Report, digest: str) -> dict[str, Any]:
    """What the page (and so every label from it) records of the report: its path (from the
    project's folder when inside it), its sha256, and the system's commit, the engine's version
    and the judge, when the report's receipt and settings hold them."""
    folder = config.path.parent.resolve()
    try:
        shown = Path(os.path.relpath(path.resolve(), folder)).as_posix()
        shown = shown if not shown.startswith("..") else str(path.resolve())
    except (ValueError, OSError):
        shown = str(path)
    record: dict[str, Any] = {"path": shown, "sha256": digest}
    receipt = report.receipt
    if isinstance(receipt.get("git_commit"), str):
        record["commit"] = receipt["git_commit"]
    engine = receipt.get("engine")
    if isinstance(engine, dict) and isinstance(engine.get("version"), str):
        record["engine"] = engine["version"]
    judge = report.settings.get("judge") or receipt.get("judge")
    if isinstance(judge, dict) and isinstance(judge.get("name"), str):
        record["judge"] = " ".join(str(judge[key]) for key in ("name", "version") if judge.get(key))
    return record


def run_grade_answers(
    config: Config,
    report_path: Path,
    output: Path,
    count: int,
    seed: int,
    title: str | None,
    evidence: bool = True,
) -> ExitCode:
    """`grade --answers`: the page of `count` sampled sentences of the report's answers."""
    report, digest = read_run_report(report_path)
    corpus = load_corpus(config.corpus)
    recorded = report.receipt.get("sha256")
    if isinstance(recorded, dict) and recorded.get("corpus") not in (None, sha256_file(config.corpus)):
        print(
            f"note: the corpus changed since {report_path} was made: its contexts are shown as the "
            "corpus holds them today",
            file=sys.stderr,
        )
    if not any(row.answer is not None and row.answer.text.strip() for row in report.questions):
        raise EvalInputError(
            report_path,
            "the report holds no answer text (a baseline's form keeps none)",
            "grade the report `rag-regress eval` writes ([data] report), not the baseline",
        )
    sampled = answer_items(report, corpus, count, seed, evidence, judge_windows(config))
    for qid, docs in sampled.missing.items():
        print(
            f"note: {qid} left out: its context(s) {', '.join(docs)} are not in the corpus", file=sys.stderr
        )
    if sampled.not_lined_up:
        print(
            f"note: {len(sampled.not_lined_up)} answer(s) left out, their sentences not those the report "
            f"judged: {', '.join(sampled.not_lined_up[:10])}"
            + (" ..." if len(sampled.not_lined_up) > 10 else ""),
            file=sys.stderr,
        )
    if not sampled.items:
        raise EvalInputError(
            report_path,
            "no sentence the judge judged to grade: every answer abstained, was left out, or has none",
            "evaluate answers first (`rag-regress eval` with a generator)",
        )
    name = config.path.parent.resolve().name
    record = report_record(config, report_path, report, digest)
    write_page(
        output, sampled.items, corpus, title or f"Answer grading: {name}", mode="answers", report=record
    )
    verdicts = ", ".join(f"{n} {verdict}" for verdict, n in sampled.verdicts.items())
    tags = ", ".join(f"{tag} {n}" for tag, n in sampled.tags.items())
    print(
        f"wrote {output}: {len(sampled.items)} of the {sampled.sentences} sentence(s) the judge judged in "
        f"{sampled.answers} answer(s), seed {seed}: by the judge's verdict {verdicts}; by tag {tags}"
    )
    print("open it in a browser (no server needed); the page shows no verdict of the judge")
    print("download your labels from the page, then: rag-regress add-labels <downloaded file>")
    return ExitCode.OK

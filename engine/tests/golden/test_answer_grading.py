"""Trust measured on the team's own answers: `grade --answers` samples the sentences the judge
judged in a report (seeded, stratified by verdict and tag) onto the grading page, a grader
labels them in a real headless Chromium, and `add-labels` merges the download into the judge's
labels, which `calibrate` reads; two graders' conflicting labels are refused, their kappa
printed.

The browser test needs Chromium and the playwright package (as tests/golden/test_page.py);
without either it is skipped, saying which.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import run_cli, write_jsonl, write_project
from rag_regress.answers.calibration import load_labels
from rag_regress.answers.judges import JUDGE_VERSIONS
from rag_regress.api import ABSTENTION, Answer, Context, Document, Retriever, System
from rag_regress.errors import EvalInputError
from rag_regress.golden.answers import (
    SUPPORTED,
    UNSUPPORTED,
    answer_items,
    judged_sentences,
    label_id,
    read_run_report,
    split_of,
)
from rag_regress.golden.labels import DOMAIN
from rag_regress.inputs.data import load_corpus
from rag_regress.inputs.reports import Report, Unsupported
from rag_regress.retrieval.retrievers import bm25

if TYPE_CHECKING:
    from playwright.sync_api import Page

INVENTED = ("The plan costs 40 dollars a month.", "Support replies within 2 hours.")
DATA = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)


class Inventing:
    """A generator whose answers hold one sentence of their best passage (cited) and two that
    no passage says: every answer has sentences the judge supports and sentences it does not."""

    def __init__(self, retriever: Retriever, documents: list[Document], options: dict[str, Any]):
        self.retriever = retriever
        self.texts = {document.id: document.text for document in documents}

    def answer(self, question: str) -> Answer:
        hits = self.retriever.search(question, 2)
        if not hits:
            return Answer(ABSTENTION, [], abstained=True)
        contexts = [Context(hit.doc_id, self.texts[hit.doc_id]) for hit in hits]
        best = contexts[0].text.rstrip(".")
        return Answer(f"{best} [1]. {INVENTED[0]} {INVENTED[1][:-1]} [2].", contexts)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny project, evaluated once with the inventing generator: its eval.toml (the report
    is build/report.json beside it). Tests only read it; labels go to files of their own."""
    config = write_project(tmp_path_factory.mktemp("answers") / "project")
    assert run_cli(["--config", str(config), "eval", "--quiet"], System(bm25.build, Inventing)) == 0
    return config


@pytest.fixture(scope="module")
def report(evaluated: Path) -> Report:
    return read_run_report(evaluated.parent / "build" / "report.json")[0]


@pytest.fixture(scope="module")
def corpus(evaluated: Path) -> dict[str, Document]:
    return load_corpus(evaluated.parent / "corpus.jsonl")


# ---- the sentences and the sample ----


def test_the_sentences_are_those_the_judge_judged_with_the_reports_verdicts(report: Report) -> None:
    for row in report.questions:
        assert row.answer is not None
        found = judged_sentences(row)
        assert found is not None and len(found) == row.answer.claims == 3
        # markers out, as the judge read them
        assert [j.claim for j in found][1:] == list(INVENTED)
        verdicts = {j.claim: j.verdict for j in found}
        assert {u.claim for u in row.answer.unsupported} == {
            c for c, v in verdicts.items() if v == UNSUPPORTED
        }
        assert found[0].verdict == SUPPORTED and "[1]" not in found[0].claim
    # A report whose sentences are not the text's (counted otherwise) is not guessed at.
    row = report.questions[0]
    assert row.answer is not None
    off = dataclasses.replace(row, answer=dataclasses.replace(row.answer, claims=2))
    assert judged_sentences(off) is None
    # A generator without citations: "[2]" is its text, and the judge read it so.
    text = "Enable 2FA with an authenticator app [2]. It is free."
    plain = dataclasses.replace(
        row.answer,
        text=text,
        claims=2,
        unsupported=[Unsupported("It is free.", "why")],
        not_judged=[],
        citation_precision=None,  # no marker was read as a citation
    )
    found = judged_sentences(dataclasses.replace(row, answer=plain))
    assert found is not None
    assert [(j.claim, j.verdict) for j in found] == [
        ("Enable 2FA with an authenticator app [2].", SUPPORTED),
        ("It is free.", UNSUPPORTED),
    ]


def test_sampling_is_seeded_and_stratified_by_verdict_and_tag(
    report: Report, corpus: dict[str, Document]
) -> None:
    first = answer_items(report, corpus, count=4, seed=7)
    again = answer_items(report, corpus, count=4, seed=7)
    assert [item["id"] for item in first.items] == [item["id"] for item in again.items]
    others = [[item["id"] for item in answer_items(report, corpus, 4, seed).items] for seed in range(5)]
    assert len({tuple(ids) for ids in others}) > 1, "the seed chooses the sample"
    # 5 sentences the judge supports, 10 it does not: both verdicts, and 3 of the 4 tags, in 4 picks
    assert (first.sentences, first.answers) == (15, 5)
    for seed in range(5):  # the first picks: both verdicts alike, and every tag
        sampled = answer_items(report, corpus, count=4, seed=seed)
        assert sampled.verdicts == {SUPPORTED: 2, UNSUPPORTED: 2}
        assert set(sampled.tags) == {"acronym", "security", "billing", "unanswerable"}
    everything = answer_items(report, corpus, count=100, seed=0)
    assert len(everything.items) == 15 and len({item["id"] for item in everything.items}) == 15
    assert set(everything.tags) == {"acronym", "security", "billing", "unanswerable"}
    for item in everything.items:  # what the page shows and labels
        assert (
            item["answer"][item["at"][0] : item["at"][1]].replace(" [1]", "").replace(" [2]", "")
            == (item["claim"])
        )
        context = "\n\n".join(doc["text"] for doc in item["docs"])
        assert item["id"] == label_id(item["question_id"], item["claim"], context)
        assert "verdict" not in json.dumps(item), "the page never shows the judge's verdict"


def test_the_judges_evidence_is_marked_unless_blind(report: Report, corpus: dict[str, Document]) -> None:
    row = report.questions[0]  # q1: SSO, contexts sso-setup and password-policy
    assert row.answer is not None
    why = "'40 dollars' is not what the context says (it says 'SAML')"
    answer = dataclasses.replace(
        row.answer, unsupported=[Unsupported(INVENTED[0], why), *row.answer.unsupported[1:]]
    )
    only = dataclasses.replace(report, questions=[dataclasses.replace(row, answer=answer)])
    [item] = [i for i in answer_items(only, corpus, 10, 0).items if i["claim"] == INVENTED[0]]
    marked = {doc["id"]: [doc["text"][s:e] for s, e in doc["marks"]] for doc in item["docs"]}
    assert marked == {"sso-setup": ["SAML"], "password-policy": []}
    [blind] = [
        i for i in answer_items(only, corpus, 10, 0, evidence=False).items if i["claim"] == INVENTED[0]
    ]
    assert all(doc["marks"] == [] for doc in blind["docs"]) and blind["id"] == item["id"]


def test_a_supported_sentence_is_marked_where_the_judges_window_is(
    report: Report, corpus: dict[str, Document]
) -> None:
    """The window each supported verdict rests on (the judge's, through the verdict cache) is
    marked in its context; blind, nothing is, and the judge is not asked."""
    asked: list[tuple[str, tuple[str, ...]]] = []

    def windows(items: list[tuple[str, tuple[str, ...]]]) -> list[str]:
        asked.extend(items)
        return ["Enable 2FA with an authenticator app." if "2FA" in claim else "" for claim, _ in items]

    items = answer_items(report, corpus, 15, 0, windows=windows).items
    supported = [claim for claim, _ in asked]
    assert supported and all(claim not in INVENTED for claim in supported)
    [item] = [i for i in items if i["question_id"] == "q2" and i["claim"] not in INVENTED]
    marks = {doc["id"]: [doc["text"][s:e] for s, e in doc["marks"]] for doc in item["docs"]}
    assert marks["2fa-setup"] == ["Enable 2FA with an authenticator app."]
    asked.clear()
    blind = answer_items(report, corpus, 15, 0, evidence=False, windows=windows).items
    assert asked == [] and all(doc["marks"] == [] for i in blind for doc in i["docs"])


def test_the_split_is_a_digest_of_the_id() -> None:
    ids = [f"q{n}-{n:012x}" for n in range(2_000)]
    splits = [split_of(ident) for ident in ids]
    assert splits == [split_of(ident) for ident in ids]
    assert set(splits) == {"dev", "check"} and 900 < splits.count("dev") < 1_100
    assert split_of("q1-000000000000") == split_of("q1-000000000000")
    assert [split_of(f"q{n}") for n in range(6)] == ["dev", "check", "check", "check", "dev", "check"]


# ---- merging labels ----


def download(items: list[dict[str, Any]], by: str, labels: list[str], record: dict[str, Any]) -> list[Any]:
    """The lines the page downloads when `by` labels `items` (in order) with `labels`."""
    header = {"format": "rag-regress-labels", "version": 1, "by": by, "at": "2026-12-03T10:00:00Z"}
    lines: list[Any] = [{**header, "page": "Answer grading", "report": record}]
    for item, label in zip(items, labels, strict=False):
        context = "\n\n".join(doc["text"] for doc in item["docs"])
        line = {key: item[key] for key in ("id", "question_id", "question", "tags", "claim")}
        lines.append({**line, "context": context, "label": label})
    return lines


RECORD = {"path": "build/report.json", "sha256": "ab" * 32, "engine": "2.3.0", "judge": "lexical 2.0"}


def add_labels(config: Path, *args: str | Path) -> int:
    return run_cli(["--config", str(config), "add-labels", *map(str, args)])


Graders = Callable[[int, int, dict[str, list[str]]], tuple[list[dict[str, Any]], list[Path]]]


@pytest.fixture
def graders(report: Report, corpus: dict[str, Document], tmp_path: Path) -> Graders:
    """A function: `count` sentences of the report sampled under `seed`, and each grader's
    download of them (`said`: grader -> their labels, in order) written to tmp_path/GRADER.jsonl;
    returns (the sentences, the files in the order of `said`)."""

    def graded(count: int, seed: int, said: dict[str, list[str]]) -> tuple[list[dict[str, Any]], list[Path]]:
        items = answer_items(report, corpus, count=count, seed=seed).items
        files = [write_jsonl(tmp_path / f"{by}.jsonl", download(items, by, said[by], RECORD)) for by in said]
        return items, files

    return graded


def test_two_graders_conflicting_labels_are_refused_naming_both_and_their_kappa_printed(
    evaluated: Path, graders: Graders, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = {
        "ana": ["supported", "not supported", "supported", "not supported", "supported", "cannot tell"],
        "ben": ["supported", "supported", "supported", "not supported", "not supported", "supported"],
    }
    items, files = graders(6, 0, said)
    labels = tmp_path / "labels.jsonl"
    assert add_labels(evaluated, *files, "--labels", labels) == 2
    out, err = capsys.readouterr()
    pairs = [(a, b) for a, b in zip(said["ana"], said["ben"], strict=True) if "cannot tell" not in (a, b)]
    kappa = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    assert f"ana.jsonl (ana) and ben.jsonl (ben) on 5 sentence(s): kappa {kappa:.3f}" in out
    assert "2 disagreement(s); 1 more that one of them could not tell" in out
    assert f"{items[1]['id']}: not supported by ana (ana.jsonl), supported by ben (ben.jsonl)" in err
    assert "2 sentence(s) labelled both ways, nothing merged" in err and "--on-conflict" in err
    assert not labels.exists(), "nothing written"

    assert add_labels(evaluated, *files, "--labels", labels, "--on-conflict", "replace") == 0
    merged = {label.id: label for label in load_labels(labels)}
    assert len(merged) == 6, "ana's cannot tell is no label; ben's label of that sentence is"
    assert merged[items[1]["id"]].supported is True and merged[items[4]["id"]].supported is False
    lines = {line["id"]: line for line in map(json.loads, labels.read_text(encoding="utf-8").splitlines())}
    assert [(e["by"], e["supported"]) for e in lines[items[1]["id"]]["provenance"]] == [
        ("ana", False),
        ("ben", True),
    ]
    assert [e["by"] for e in lines[items[5]["id"]]["provenance"]] == ["ben"]
    before = labels.read_bytes()
    assert add_labels(evaluated, files[0], "--labels", labels) == 0, "a file merged again: nothing new"
    assert labels.read_bytes() == before
    out = capsys.readouterr().out
    assert "0 label(s) added" in out and "5 already there" in out
    # against the labels others gave (ben's, which replaced ana's): the same kappa
    assert f"labels.jsonl (ben) and ana.jsonl (ana) on 5 sentence(s): kappa {kappa:.3f}" in out


def test_a_later_graders_labels_meet_those_already_merged(
    evaluated: Path, graders: Graders, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, (ana, ben) = graders(
        3, 1, {"ana": ["supported"] * 3, "ben": ["supported", "supported", "not supported"]}
    )
    labels = tmp_path / "labels.jsonl"
    assert add_labels(evaluated, ana, "--labels", labels) == 0
    capsys.readouterr()
    assert add_labels(evaluated, ben, "--labels", labels) == 2
    out, err = capsys.readouterr()
    assert "labels.jsonl (ana) and ben.jsonl (ben) on 3 sentence(s)" in out and "1 disagreement(s)" in out
    assert (
        f"{items[2]['id']}: supported in labels.jsonl line 3 (ana), not supported by ben (ben.jsonl)" in err
    )
    assert add_labels(evaluated, ben, "--labels", labels, "--on-conflict", "keep") == 0
    assert all(label.supported for label in load_labels(labels)), "keep: the labels file's label stays"


def test_a_sentence_edited_after_the_page_made_it_is_refused(
    evaluated: Path, report: Report, corpus: dict[str, Document], tmp_path: Path
) -> None:
    items = answer_items(report, corpus, count=2, seed=0).items
    lines = download(items, "ana", ["supported", "supported"], RECORD)
    lines[2]["claim"] = lines[2]["claim"].rstrip(".") + ", always."
    path = write_jsonl(tmp_path / "ana.jsonl", lines)
    with pytest.raises(EvalInputError, match="not what the page showed") as caught:
        from rag_regress.golden.labels import read_labels_file

        read_labels_file(path)
    assert caught.value.line == 3
    # and add-judgments names the command that reads it
    assert run_cli(["--config", str(evaluated), "add-judgments", str(path)]) == 2


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("label", "maybe", """'label' must be "supported", "not supported" or "cannot tell", got 'maybe'"""),
        ("claim", "  ", "'claim' must be a non-empty string"),
        ("tags", "billing", "'tags' must be a list of strings, got 'billing'"),
    ],
)
def test_a_downloaded_line_of_the_wrong_type_is_refused_at_its_line(
    report: Report, corpus: dict[str, Document], tmp_path: Path, key: str, value: object, says: str
) -> None:
    from rag_regress.golden.labels import read_labels_file

    items = answer_items(report, corpus, count=2, seed=0).items
    lines = download(items, "ana", ["supported", "supported"], RECORD)
    lines[2][key] = value
    with pytest.raises(EvalInputError) as caught:
        read_labels_file(write_jsonl(tmp_path / "ana.jsonl", lines))
    assert caught.value.line == 3 and says in caught.value.problem
    assert "download it again from the page" in caught.value.fix


def test_load_labels_reads_the_provenance_keys_and_checks_them(tmp_path: Path) -> None:
    line = {"id": "c1", "claim": "A.", "context": "A.", "supported": True, "split": "check", "domain": "team"}
    extra = {
        "question": "q1",
        "tags": ["billing"],
        "provenance": [{"by": "ana", "at": "2026-12-03T10:00:00Z"}],
    }
    [label] = load_labels(write_jsonl(tmp_path / "ok.jsonl", [{**line, **extra}]))
    assert (label.id, label.split, label.domain, label.supported) == ("c1", "check", "team", True)
    with pytest.raises(EvalInputError, match="'provenance' must be a list of objects"):
        load_labels(write_jsonl(tmp_path / "bad.jsonl", [{**line, "provenance": "ana"}]))
    with pytest.raises(EvalInputError, match="unknown key"):
        load_labels(write_jsonl(tmp_path / "other.jsonl", [{**line, "grader": "ana"}]))


# ---- in a real browser ----


def test_a_grader_labels_sentences_with_keys_and_the_download_calibrates_the_judge(
    evaluated: Path, tmp_path: Path, page: Page, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "answers.html"
    grade = ["--config", str(evaluated), "grade", "--answers", "--count", "4", "--output", str(html)]
    assert run_cli(grade) == 0
    assert "4 of the 15 sentence(s)" in capsys.readouterr().out
    data = json.loads(DATA.findall(html.read_text(encoding="utf-8"))[0])
    items = data["items"]
    assert data["mode"] == "answers" and data["report"]["path"] == "build/report.json"
    page.goto(html.as_uri())
    assert page.text_content("#progress") == "0 of 4 graded"
    assert page.is_hidden("#add-open"), "a page of answers adds no question"
    page.locator("#name").press_sequentially("Ana Sucu")  # s, u, c typed in a field are letters
    page.keyboard.press("Escape")
    first = items[0]
    assert page.text_content("#question") == first["question"]
    assert page.text_content("#answer mark") == first["answer"][first["at"][0] : first["at"][1]]
    assert first["claim"] in (page.text_content("#claim") or "")

    page.keyboard.press("s")  # supported, and on to the next sentence
    assert first["claim"] not in (page.text_content("#claim") or "")
    page.keyboard.press("u")
    page.keyboard.press("e")  # a note on the third sentence, then cannot tell
    page.keyboard.type("the contexts are about something else")
    page.keyboard.press("Escape")
    page.keyboard.press("c")
    assert page.text_content("#progress") == "3 of 4 graded (3 by you)"
    page.reload()  # kept in the browser
    assert page.text_content("#progress") == "3 of 4 graded (3 by you)"

    with page.expect_download() as started:
        page.click("#download")
    assert started.value.suggested_filename == f"labels-{datetime.now():%Y-%m-%d}.jsonl"
    saved = tmp_path / "ana.jsonl"
    shutil.copy(started.value.path(), saved)
    header, *lines = map(json.loads, saved.read_text(encoding="utf-8").splitlines())
    assert header["format"] == "rag-regress-labels" and header["by"] == "Ana Sucu"
    assert header["report"] == data["report"] and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", header["at"]
    )
    assert [(line["id"], line["label"]) for line in lines] == [
        (items[0]["id"], "supported"),
        (items[1]["id"], "not supported"),
        (items[2]["id"], "cannot tell"),
    ]
    assert lines[2]["note"] == "the contexts are about something else" and "note" not in lines[0]
    assert lines[0]["context"] == "\n\n".join(doc["text"] for doc in items[0]["docs"])

    # add-labels: into [judge] labels by default (the project's evals/judge_labels.jsonl)
    project = write_project(tmp_path / "project")
    assert add_labels(project, saved) == 0
    out = capsys.readouterr().out
    assert "2 label(s) added" in out and "cannot tell: 1 sentence(s)" in out
    assert f"{items[2]['id']} (Ana Sucu): the contexts are about something else" in out
    written = project.parent / "evals" / "judge_labels.jsonl"
    labels = load_labels(written)
    assert [(label.id, label.supported) for label in labels] == [
        (items[0]["id"], True),
        (items[1]["id"], False),
    ]
    for label, item in zip(labels, items, strict=False):
        assert (label.domain, label.split, label.kind) == (DOMAIN, split_of(label.id), item["tags"][0])
        assert label.claim == item["claim"]
    line = json.loads(written.read_text(encoding="utf-8").splitlines()[0])
    assert line["provenance"] == [
        {
            "by": "Ana Sucu",
            "at": header["at"],
            "file": "ana.jsonl",
            "report": "build/report.json",
            "report_sha256": data["report"]["sha256"],
            "engine": data["report"]["engine"],
            "judge": f"lexical {JUDGE_VERSIONS['lexical']}",
            "supported": True,
        }
    ]
    assert run_cli(["--config", str(project), "calibrate", "--labels", str(written)]) == 0
    out = capsys.readouterr().out
    assert "judge_labels.jsonl" in out and "examples" in out


def test_a_sentence_of_a_later_turn_shows_the_conversation_the_system_was_asked_in(
    evaluated: Path, tmp_path: Path, page: Page
) -> None:
    """A run report's row with history (as `eval` writes it): its sentences' page shows the
    turns above the question, markup as text; a row without history shows none."""
    data = json.loads((evaluated.parent / "build" / "report.json").read_text(encoding="utf-8"))
    said = [
        {"role": "user", "content": "Which plans have SSO? <b>now</b> <script>alert(3)</script>"},
        {"role": "assistant", "content": "SSO is on the Business plan."},
    ]
    first = data["questions"][0]
    first["history"] = said
    report = write_jsonl(tmp_path / "report.json", [data])
    html = tmp_path / "answers.html"
    grade = [
        "--config",
        str(evaluated),
        "grade",
        "--answers",
        str(report),
        "--count",
        "15",
        "--output",
        str(html),
    ]
    assert run_cli(grade) == 0
    items = json.loads(DATA.findall(html.read_text(encoding="utf-8"))[0])["items"]
    assert {i["question_id"] for i in items if "history" in i} == {first["id"]}
    assert all(i["history"] == said for i in items if "history" in i)
    turned = next(n for n, i in enumerate(items) if "history" in i)
    plain = next(n for n, i in enumerate(items) if "history" not in i)

    page.goto(html.as_uri())
    for _ in range(turned):
        page.keyboard.press("n")
    assert page.text_content("#question") == first["question"]
    turns = page.locator("#history li")
    shown = [
        (turns.nth(n).locator(".role").text_content(), turns.nth(n).locator(".said").text_content())
        for n in range(2)
    ]
    assert turns.count() == 2 and shown == [(turn["role"], turn["content"]) for turn in said]
    assert page.locator("#history b, #history script").count() == 0  # an alert would fail the fixture
    for _ in range(abs(plain - turned)):
        page.keyboard.press("n" if plain > turned else "p")
    assert page.text_content("#question") == items[plain]["question"]
    assert page.locator("#history").count() == 0

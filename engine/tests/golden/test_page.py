"""The grading page: what page_items gathers and refuses, that write_page's page keeps data
inert, and, in a real headless Chromium, that a grader's keys, clicks and form end up in the
downloaded judgments file exactly as the format says (and survive a reload).

The browser tests need Chromium (`apt-get install chromium`; Playwright's own download is
never used) and the playwright package; without either they are skipped, saying which.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conftest import run_cli
from rag_regress.api import Document
from rag_regress.errors import EvalInputError
from rag_regress.golden.page import TEXT_LIMIT, page_items, write_page
from rag_regress.inputs.data import Passage, Question, load_corpus, load_golden

if TYPE_CHECKING:
    from playwright.sync_api import Page

DEMO = Path(__file__).parents[1] / "demo" / "evals"
TWO_FA, LOST, SSO, SCIM = (
    "set-up-two-factor-authentication",
    "recover-account-lost-2fa-device",
    "single-sign-on-saml",
    "scim-user-provisioning",
)
EVIL = "</script><script>alert(1)</script>"
CLEAR_QUESTION = "Clear every grade"  # how "Clear saved work" asks before it forgets


@pytest.fixture(scope="module")
def corpus() -> dict[str, Document]:
    return load_corpus(DEMO / "corpus.jsonl")


@pytest.fixture(scope="module")
def golden(corpus: dict[str, Document]) -> list[Question]:
    return load_golden(DEMO / "golden.jsonl", corpus)


def candidate(ident: str, relevant: dict[str, int], **keys: Any) -> dict[str, Any]:
    """A candidates-file line as `rag-regress golden generate` writes it."""
    line: dict[str, Any] = {
        "id": ident,
        "slot": int(ident[-4:]),
        "status": "candidate",
        "why": None,
        "kind": "single",
        "question": f"question of {ident}",
        "answerable": True,
        "reference": f"reference of {ident}",
        "nuggets": [{"text": "a fact", "vital": True}],
        "relevant": relevant,
        "passages": [],
        "provenance": {"generator": "rag-regress golden generate", "model": "m", "seed": 0, "slot": 1},
    }
    return line | keys


def jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def candidates(tmp_path: Path, corpus: dict[str, Document]) -> Path:
    start = corpus[TWO_FA].text.index("Profile > Security")
    passage = {"doc": TWO_FA, "start": start, "end": start + 18, "grade": 3}
    return jsonl(
        tmp_path / "candidates.jsonl",
        [
            candidate("cand-0001", {TWO_FA: 3}, passages=[passage], question="Where do I turn on 2FA?"),
            candidate("cand-0002", {}, status="dropped", why="a near duplicate of q01"),
            candidate("cand-0003", {SSO: 3, SCIM: 3}, kind="two-passage"),
        ],
    )


@pytest.fixture(scope="module")
def pooled(corpus: dict[str, Document], golden: list[Question]) -> list[str]:
    """Four documents nobody judged for q01, the pool file's question."""
    return [doc for doc in corpus if doc not in golden[0].qrels][:4]


@pytest.fixture
def pool(tmp_path: Path, pooled: list[str]) -> Path:
    docs = [{"doc": pooled[0], "in": ["baseline"]}, {"doc": pooled[1], "in": ["candidate"]}]
    docs += [{"doc": pooled[2], "in": ["baseline", "candidate"]}, {"doc": pooled[3], "in": ["baseline"]}]
    return jsonl(tmp_path / "pool.jsonl", [{"id": "q01", "question": "turn on 2FA", "docs": docs}])


# ---- page_items ----


def test_items_are_candidates_then_pooled_then_golden_questions(
    corpus: dict[str, Document], golden: list[Question], candidates: Path, pool: Path, pooled: list[str]
) -> None:
    items = page_items(corpus, golden, candidates=candidates, pool=pool, include_golden=True)
    assert [item["id"] for item in items[:4]] == ["cand-0001", "cand-0003", "q01", "q02"]  # dropped: skipped
    assert len(items) == 2 + len(golden)
    first = items[0]
    assert first["origin"] == "candidate" and first["question"] == "Where do I turn on 2FA?"
    [doc] = first["docs"]
    assert (doc["id"], doc["grade"], doc["why"]) == (TWO_FA, 3, ["source passage"])
    assert [doc["text"][s:e] for s, e in doc["marks"]] == ["Profile > Security"]
    assert doc["title"] == corpus[TWO_FA].title and doc["text"] == corpus[TWO_FA].text
    shown = {doc["id"]: (doc["grade"], doc["why"]) for doc in items[2]["docs"]}
    assert shown == {
        pooled[0]: (None, ["in the baseline's top k"]),
        pooled[1]: (None, ["in the candidate's top k"]),
        pooled[2]: (None, ["in the baseline's top k", "in the candidate's top k"]),
        pooled[3]: (None, ["in the baseline's top k"]),
        **{doc: (grade, ["judged"]) for doc, grade in golden[0].qrels.items()},  # 0: judged not relevant
    }
    assert shown[TWO_FA] == (3, ["judged"])
    assert items[2]["reference"] == golden[0].reference  # shown to the grader as context


def test_a_pooled_document_judged_since_shows_as_judged(
    corpus: dict[str, Document], golden: list[Question], pool: Path, pooled: list[str]
) -> None:
    first = golden[0]
    golden = [dataclasses.replace(first, not_relevant=[*first.not_relevant, pooled[1]]), *golden[1:]]
    [item] = page_items(corpus, golden, pool=pool)
    grades = {doc["id"]: doc["grade"] for doc in item["docs"]}
    assert grades == {pooled[0]: None, pooled[2]: None, pooled[3]: None, **first.qrels, pooled[1]: 0}
    assert page_items(corpus, golden) == []  # nothing asked for, nothing shown


def test_a_long_text_is_cut_around_its_passage(tmp_path: Path) -> None:
    text = "".join(f"sentence {n}. " for n in range(2_000))  # about 27,000 characters
    start = text.index("sentence 1500.")
    corpus = {"long": Document("long", text, "A long page")}
    question = Question("q1", "where is 1500?", {"long": 3}, passages=[Passage("long", start, start + 14, 3)])
    [item] = page_items(corpus, [question], include_golden=True)
    [doc] = item["docs"]
    assert len(doc["text"]) == TEXT_LIMIT and doc["length"] == len(text)
    assert doc["text"] == text[doc["start"] : doc["start"] + TEXT_LIMIT]
    assert [doc["text"][s:e] for s, e in doc["marks"]] == ["sentence 1500."]


MARKUP = "<b>bold</b> and <script>alert(2)</script>"
HISTORY: tuple[tuple[str, str | None], ...] = (
    ("user", f"How much is the Team plan? {MARKUP}"),
    ("assistant", None),
    ("user", "And Business?"),
    ("assistant", "40 dollars a user.\nBilled monthly."),
)


def conversation() -> Question:
    """Turn 3 of a conversation: the first assistant turn blank (the system writes it in a run),
    markup in the first user turn."""
    return Question("c1-3", "And on the annual plan?", {TWO_FA: 3}, history=HISTORY)


def test_a_questions_item_carries_its_history_and_one_without_none(
    corpus: dict[str, Document], golden: list[Question]
) -> None:
    with_history, without = page_items(corpus, [conversation(), golden[0]], include_golden=True)
    assert with_history["history"] == [
        {"role": "user", "content": f"How much is the Team plan? {MARKUP}"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "And Business?"},
        {"role": "assistant", "content": "40 dollars a user.\nBilled monthly."},
    ]
    # No key at all, rather than an empty list: the page key of a golden set without
    # conversations is the one its pages had before, so saved work is still found.
    assert "history" not in without
    assert list(without) == ["id", "origin", "question", "answerable", "reference", "nuggets", "docs"]


BAD_CANDIDATES = [
    ("{not json", "not valid JSON"),
    (json.dumps({"id": "cand-0009", "status": "candidate", "relevant": {}}), "missing key(s): question"),
    (json.dumps(candidate("cand-0009", {"no-such-doc": 3})), "'no-such-doc' is not in the corpus"),
    (
        json.dumps(candidate("cand-0009", {TWO_FA: 3}, passages=[{"doc": TWO_FA, "start": 5, "end": 9999}])),
        "offsets",
    ),
    (
        json.dumps(candidate("cand-0009", {TWO_FA: 3}, status="maybe")),
        """'status' must be "candidate" or "dropped", got 'maybe'""",
    ),
    (json.dumps(candidate("cand-0009", {TWO_FA: 3}) | {"question": " "}), "'question' must be a non-empty"),
    (json.dumps(candidate("cand-0009", {TWO_FA: 3}) | {"nuggets": ["x"]}), "'nuggets' must be a list of"),
    (json.dumps(candidate("cand-0009", {TWO_FA: 3}) | {"answerable": "yes"}), "'answerable' must be true or"),
    (json.dumps(candidate("cand-0001", {TWO_FA: 3})), "first used on line 1"),
]


@pytest.mark.parametrize(("bad", "problem"), BAD_CANDIDATES)
def test_a_bad_candidate_line_names_the_file_the_line_and_a_fix(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question], bad: str, problem: str
) -> None:
    path = tmp_path / "candidates.jsonl"
    path.write_text(json.dumps(candidate("cand-0001", {TWO_FA: 3})) + "\n\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(EvalInputError) as caught:
        page_items(corpus, golden, candidates=path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert problem in caught.value.problem and caught.value.fix
    assert "candidates.jsonl:3: " in str(caught.value)


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"id": "q999", "question": "?", "docs": []}, "'q999' is not in the golden set"),
        ({"id": "q01", "question": "?"}, "missing key(s): docs"),
        ({"id": "q01", "docs": [{"doc": "gone", "in": ["baseline"]}]}, "'gone' is not in the corpus"),
        ({"id": "q01", "docs": [{"doc": SSO, "in": ["mine"]}]}, "baseline and/or candidate"),
    ],
)
def test_a_bad_pool_line_names_the_file_the_line_and_a_fix(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question], bad: dict[str, Any], problem: str
) -> None:
    path = jsonl(tmp_path / "pool.jsonl", [{"id": "q02", "docs": [{"doc": SSO, "in": ["baseline"]}]}, bad])
    with pytest.raises(EvalInputError) as caught:
        page_items(corpus, golden, pool=path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert problem in caught.value.problem and "rag-regress pool" in caught.value.fix


def test_a_missing_candidates_file_says_how_to_make_one(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question]
) -> None:
    with pytest.raises(EvalInputError, match="does not exist") as caught:
        page_items(corpus, golden, candidates=tmp_path / "nope.jsonl")
    assert "golden generate" in caught.value.fix


# ---- write_page ----

DATA = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)


def evil_page(tmp_path: Path, corpus: dict[str, Document], golden: list[Question]) -> Path:
    """A page whose data holds `</script>` in a document's text, a title and a question."""
    corpus = {**corpus, "evil": Document("evil", f"before {EVIL} after & \u2028 done", f"title {EVIL}")}
    question = Question("q-evil", f"what about {EVIL}?", {"evil": 3, TWO_FA: 1})
    path = tmp_path / "page.html"
    write_page(
        path, page_items(corpus, [question, *golden[:2]], include_golden=True), corpus, f"Grading {EVIL}"
    )
    return path


def test_data_holding_script_tags_stays_inert(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question]
) -> None:
    path = evil_page(tmp_path, corpus, golden)
    html = path.read_text(encoding="utf-8")
    template = (Path(__file__).parents[2] / "src/rag_regress/golden/page.html").read_text(encoding="utf-8")
    assert html.count("<script") == template.count("<script") == 2  # the data's and the page's own
    assert "alert(1)</script>" not in html and "\u2028" not in html
    assert "<title>Grading &lt;/script&gt;&lt;script&gt;" in html
    [raw] = DATA.findall(html)
    data = json.loads(raw)
    assert data["title"] == f"Grading {EVIL}"
    [evil] = [doc for doc in data["items"][0]["docs"] if doc["id"] == "evil"]
    assert evil["text"] == f"before {EVIL} after & \u2028 done"
    assert ["evil", f"title {EVIL}"] in data["corpus"] and data["corpus_size"] == len(corpus) + 1


def test_the_page_is_replaced_in_one_step(tmp_path: Path, corpus: dict[str, Document]) -> None:
    path = tmp_path / "out" / "page.html"
    path.parent.mkdir()
    path.write_text("old", encoding="utf-8")
    write_page(path, [], corpus, "Empty")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in path.parent.iterdir()] == ["page.html"]  # no temporary file left


# ---- in a real browser ----


@pytest.fixture
def accepted_dialogs() -> tuple[str, ...]:
    """The page fixture (tests/golden/conftest.py) accepts "Clear saved work"'s question."""
    return (CLEAR_QUESTION,)


def download(page: Page) -> tuple[str, list[dict[str, Any]]]:
    """Click "Download JSONL": the file's suggested name and its lines, parsed."""
    with page.expect_download() as started:
        page.click("#download")
    saved = started.value.path()
    lines = Path(saved).read_text(encoding="utf-8").splitlines()
    return started.value.suggested_filename, [json.loads(line) for line in lines]


def test_grading_with_keys_and_the_form_downloads_exact_judgments(
    tmp_path: Path,
    corpus: dict[str, Document],
    golden: list[Question],
    candidates: Path,
    pool: Path,
    pooled: list[str],
    page: Page,
) -> None:
    path = tmp_path / "grade.html"
    write_page(path, page_items(corpus, golden, candidates=candidates, pool=pool), corpus, "Demo grading")
    page.goto(path.as_uri())
    assert page.text_content("#progress") == "0 of 3 graded"
    # Typed into a field, "a", "r" and "n" are letters of a name, not commands.
    page.locator("#name").press_sequentially("Ana Rn")
    page.keyboard.press("Escape")

    # cand-0001: edit the question and the reference in place, then accept.
    page.keyboard.press("e")
    page.fill("#edit-question", "How do I turn on two-factor authentication?")
    page.fill("#edit-reference", "Under Profile > Security.")
    page.fill("#edit-nuggets", "Profile > Security\n~ authenticator app")
    page.keyboard.press("Escape")
    assert page.text_content("#question") == "How do I turn on two-factor authentication?"
    page.keyboard.press("a")
    # cand-0003: SSO is not relevant after all (0 moves on to SCIM), then reject the candidate.
    page.keyboard.press("n")
    page.keyboard.press("0")
    page.keyboard.press("r")
    # q01: grade the pooled documents by key: 3, 0, skip one, 2 (each grade moves the focus on).
    page.keyboard.press("n")
    for key in ["3", "0", "j", "2"]:
        page.keyboard.press(key)
    judged_first = next(iter(golden[0].qrels))  # shown after the pooled documents
    assert page.locator(".doc.current h3").text_content() == corpus[judged_first].title  # focus moved on
    page.keyboard.press("ArrowUp")
    assert page.locator(".doc.current h3").text_content() == corpus[pooled[3]].title
    assert page.locator(".doc.current").evaluate("card => card === document.activeElement")

    # A question of one's own, from the form, its documents picked by id.
    page.click("#add-open")
    page.fill("#add-question", "Can owners force 2FA for everyone?")
    page.fill("#add-reference", "Yes, on the Business plan and above.")
    page.locator("#add-docs .pick input").nth(0).fill(TWO_FA)
    page.click("#add-doc")
    page.locator("#add-docs .pick input").nth(1).fill(LOST)
    page.locator("#add-docs .pick select").nth(1).select_option("0")
    page.click('#add-form button[type="submit"]')
    assert page.locator("#add").evaluate("dialog => dialog.open") is False
    assert page.text_content("#question") == "Can owners force 2FA for everyone?"
    # Three of four: q01 still has the document skipped with "j" to grade.
    assert page.text_content("#progress") == "3 of 4 graded (4 by you)"

    name, lines = download(page)
    assert re.fullmatch(r"judgments-\d{4}-\d\d-\d\d\.jsonl", name)
    header, *items = lines
    at = header.pop("at")
    assert datetime.fromisoformat(at).tzinfo is not None
    assert header == {"format": "rag-regress-judgments", "version": 1, "by": "Ana Rn", "page": "Demo grading"}
    source = [json.loads(line) for line in candidates.read_text(encoding="utf-8").splitlines()]
    assert items == [
        {
            "id": "cand-0001",
            "origin": "candidate",
            "status": "accepted",
            "question": "How do I turn on two-factor authentication?",
            "answerable": True,
            "reference": "Under Profile > Security.",
            "nuggets": [
                {"text": "Profile > Security", "vital": True},
                {"text": "authenticator app", "vital": False},
            ],
            "judgments": {TWO_FA: 3},
            "kind": "single",  # travels to the merged question's tags
            "passages": source[0]["passages"],
            "provenance": source[0]["provenance"],
        },
        {
            "id": "cand-0003",
            "origin": "candidate",
            "status": "rejected",
            "question": "question of cand-0003",
            "answerable": True,
            "reference": "reference of cand-0003",
            "nuggets": [{"text": "a fact", "vital": True}],
            "judgments": {SSO: 0, SCIM: 3},
            "kind": "two-passage",
            "passages": [],
            "provenance": source[2]["provenance"],
        },
        {
            "id": "q01",
            "origin": "question",
            "status": "judged",
            "question": "turn on 2FA",
            "answerable": True,
            "judgments": {pooled[0]: 3, pooled[1]: 0, pooled[3]: 2},
        },
        {
            "id": "new-1",
            "origin": "added",
            "status": "accepted",
            "question": "Can owners force 2FA for everyone?",
            "answerable": True,
            "reference": "Yes, on the Business plan and above.",
            "nuggets": [],
            "judgments": {TWO_FA: 3, LOST: 0},
        },
    ]

    # The work in progress lives in localStorage: a reload keeps all of it.
    page.reload()
    assert page.input_value("#name") == "Ana Rn"
    assert page.text_content("#progress") == "3 of 4 graded (4 by you)"
    assert download(page)[1][1:] == items


def accept_and_add(page: Page) -> None:
    """As Ana: accept the first item (a) and add a question on the 2FA document."""
    page.fill("#name", "Ana")
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.click("#add-open")
    page.fill("#add-question", "Can owners force 2FA for everyone?")
    page.locator("#add-docs .pick input").nth(0).fill(TWO_FA)
    page.click('#add-form button[type="submit"]')


def test_the_page_refuses_to_download_without_a_name_and_shows_script_tags_as_text(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question], page: Page
) -> None:
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto(evil_page(tmp_path, corpus, golden).as_uri())
    assert page.evaluate("document.scripts.length") == 2  # no script element came out of the data
    assert page.title() == f"Grading {EVIL}"
    assert page.locator(".doc h3").first.text_content() == f"title {EVIL}"
    assert EVIL in (page.locator(".doc .text").first.text_content() or "")
    assert page.evaluate("document.documentElement.scrollWidth") <= 400  # no sideways scrolling
    page.keyboard.press("1")
    assert page.text_content("#progress") == "3 of 3 graded (1 by you)"
    downloads: list[object] = []
    page.on("download", lambda started: downloads.append(started))
    page.click("#download")
    assert "Type your name" in (page.text_content("#message") or "")
    assert page.evaluate("document.activeElement.id") == "name" and downloads == []
    page.click("#clear")  # asks first (the fixture says yes), then forgets the grade
    assert page.text_content("#progress") == "3 of 3 graded"


def test_the_conversation_shows_above_the_question_turn_by_turn_as_text(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question], page: Page
) -> None:
    path = tmp_path / "grade.html"
    write_page(path, page_items(corpus, [conversation(), golden[0]], include_golden=True), corpus, "Turns")
    page.goto(path.as_uri())
    turns = page.locator("#history li")
    assert [turns.nth(n).locator(".role").text_content() for n in range(4)] == ["user", "assistant"] * 2
    assert [turns.nth(n).locator(".said").text_content() for n in range(4)] == [
        f"How much is the Team plan? {MARKUP}",  # the markup as typed: inert text
        "(written by the system during a run)",
        "And Business?",
        "40 dollars a user.\nBilled monthly.",
    ]
    assert turns.count() == 4
    # Above the question, and nothing of the markup became an element (an alert would fail
    # the page fixture).
    assert page.locator("#history + h2#question").text_content() == "And on the annual plan?"
    assert page.locator("#history b, #history script").count() == 0
    assert page.evaluate("document.scripts.length") == 2
    page.keyboard.press("n")  # q01: no conversation, no block
    assert page.text_content("#question") == golden[0].question
    assert page.locator("#history").count() == 0


def test_two_pages_of_one_title_never_share_saved_work(
    tmp_path: Path,
    corpus: dict[str, Document],
    golden: list[Question],
    candidates: Path,
    pool: Path,
    page: Page,
) -> None:
    """Work is kept per title and per items graded (their digest): a second page of the same
    default title opens empty, and the first still finds its work."""
    from playwright.sync_api import expect  # waits for the page's script (a loaded CI machine is slow)

    first, second = tmp_path / "first.html", tmp_path / "second.html"
    write_page(first, page_items(corpus, golden, candidates=candidates), corpus, "Grading: demo")
    write_page(second, page_items(corpus, golden, pool=pool), corpus, "Grading: demo")
    page.goto(first.as_uri())
    accept_and_add(page)
    expect(page.locator("#progress")).to_have_text("2 of 3 graded (2 by you)")

    page.goto(second.as_uri())
    expect(page.locator("#progress")).to_have_text("0 of 1 graded")  # not the first page's added question
    assert page.input_value("#name") == "" and page.locator("#list li").count() == 1
    page.goto(first.as_uri())
    expect(page.locator("#progress")).to_have_text("2 of 3 graded (2 by you)")
    expect(page.locator("#name")).to_have_value("Ana")


def test_an_unanswerable_questions_documents_can_only_be_graded_0(
    tmp_path: Path, corpus: dict[str, Document], golden: list[Question], pooled: list[str], page: Page
) -> None:
    [unanswerable] = [question for question in golden if not question.answerable][:1]
    docs = [{"doc": doc, "in": ["candidate"]} for doc in pooled[:2]]
    pool = jsonl(tmp_path / "pool.jsonl", [{"id": unanswerable.id, "docs": docs}])
    path = tmp_path / "grade.html"
    write_page(path, page_items(corpus, golden, pool=pool), corpus, "Unanswerable")
    page.goto(path.as_uri())
    page.fill("#name", "Ana")
    page.keyboard.press("Escape")
    page.keyboard.press("2")  # refused, saying why
    assert "unanswerable: a document can only be graded 0" in (page.text_content("#message") or "")
    assert page.text_content("#progress") == "0 of 1 graded"
    buttons = page.locator(".doc").first.locator(".grades button")
    assert [buttons.nth(n).is_disabled() for n in range(4)] == [False, True, True, True]
    page.keyboard.press("0")
    page.keyboard.press("3")  # the second document: refused too
    _, [_, item] = download(page)
    assert item["judgments"] == {pooled[0]: 0}


def test_the_download_merges_with_the_candidates_kind_and_an_added_question_under_a_free_id(
    tmp_path: Path, candidates: Path, page: Page, capsys: pytest.CaptureFixture[str]
) -> None:
    """A round after one that merged new-1: the page's added question is new-2, and the accepted
    candidate's kind reaches its tags, through `grade` and `add-judgments` on a demo project."""
    root = tmp_path / "project"
    shutil.copytree(DEMO, root / "evals")
    shutil.copy(DEMO.parent / "eval.toml", root / "eval.toml")
    earlier = {
        "id": "new-1",
        "question": "merged in an earlier round",
        "relevant": {TWO_FA: 2},
        "tags": ["added"],
    }
    with (root / "evals" / "golden.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(earlier) + "\n")
    config = ["--config", str(root / "eval.toml")]
    grade = root / "build" / "grade.html"
    assert run_cli([*config, "grade", "--candidates", str(candidates), "--output", str(grade)]) == 0
    page.goto(grade.as_uri())
    accept_and_add(page)
    assert "Added new-2." in (page.text_content("#message") or "")
    with page.expect_download() as started:
        page.click("#download")
    downloaded = tmp_path / "judgments.jsonl"
    started.value.save_as(downloaded)
    assert run_cli([*config, "add-judgments", str(downloaded)]) == 0, capsys.readouterr().err
    merged = {
        line["id"]: line
        for line in map(
            json.loads, (root / "evals" / "golden.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    assert merged["cand-0001"]["tags"] == ["generated", "single"]
    assert merged["new-1"]["question"] == "merged in an earlier round"
    assert merged["new-2"]["question"] == "Can owners force 2FA for everyone?"

"""Answers and their checks end to end on the tiny project: the stand-in generator,
abstention, key facts, faithfulness, the gate's answer rules, the verdict cache and the
refusal to compare verdicts of different judges."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import SHIPPED, TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, evaluate_shipped, run_cli, write_project
from rag_regress.answers.contract import found_in
from rag_regress.answers.facts import find
from rag_regress.answers.judges import JUDGE_VERSIONS, rules_digest
from rag_regress.answers.judges.lexical import FAIL_ON
from rag_regress.answers.stand_in import cite
from rag_regress.api import ABSTENTION, Answer, Context, Document, Hit, System, looks_like_abstention
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import load_corpus
from rag_regress.settings.config import load_config

TEXTS = {doc["id"]: doc["text"] for doc in TINY_CORPUS}


def run(config_path: Path, *args: str) -> int:
    return run_cli(["--config", str(config_path), *args])


def set_option(config_path: Path, old: str, new: str) -> None:
    text = config_path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    config_path.write_text(text.replace(old, new), encoding="utf-8")


class FixedRetriever:
    def __init__(self, hits: list[Hit]):
        self.hits = hits

    def search(self, question: str, depth: int) -> list[Hit]:
        return self.hits[:depth]


def test_stand_in_answers_with_the_best_passage_and_its_contexts(project: Path) -> None:
    """Verbatim, each sentence citing the passage: "... from the Billing page [1]." """
    documents = list(load_corpus(project.parent / "corpus.jsonl").values())
    hits = [Hit("invoices", 2.0), Hit("export-data", 1.0)]
    generator = SHIPPED.build_generator(FixedRetriever(hits), documents, {"min_score": 1.5, "contexts": 2})
    assert cite("One. Two two!", 2) == "One [2]. Two two [2]!"
    assert (
        cite("Mice differed [12]. As before [3, 4].", 1) == "Mice differed [1]. As before [1]."
    )  # a paper's own
    assert generator.answer("download invoices") == Answer(
        cite(TEXTS["invoices"], 1),
        [Context("invoices", TEXTS["invoices"]), Context("export-data", TEXTS["export-data"])],
    )


@pytest.mark.parametrize("hits", [[Hit("invoices", 1.4)], []], ids=["below min_score", "nothing found"])
def test_stand_in_abstains_below_min_score(project: Path, hits: list[Hit]) -> None:
    documents = list(load_corpus(project.parent / "corpus.jsonl").values())
    answer = SHIPPED.build_generator(FixedRetriever(hits), documents, {"min_score": 1.5}).answer("q")
    assert answer == Answer(ABSTENTION, [], abstained=True)
    assert looks_like_abstention(answer.text)


def test_key_facts_ignore_case_and_runs_of_whitespace() -> None:
    answer = "Open  Settings >\n Security and choose\tSAML 2.0."
    facts = ["settings > security", "SAML 2.0", "Okta"]
    assert [fact for fact in facts if find(fact, answer, "literal") is None] == ["Okta"]


def test_report_rows_hold_each_answer_and_its_checks(project: Path) -> None:
    report = evaluate_shipped(load_config(project))
    rows = {row["id"]: row["answer"] for row in report["questions"]}
    assert rows["q4"]["text"] == cite(TEXTS["invoices"], 1) and rows["q4"]["contexts"][0] == "invoices"
    assert (rows["q4"]["abstention"], rows["q4"]["key_facts"], rows["q4"]["faithfulness"]) == (1.0, 1.0, 1.0)
    assert rows["q5"]["abstained"] is False and rows["q5"]["abstention"] == 0.0  # answered, unanswerable
    assert rows["q5"]["key_facts"] is None  # nothing to include: the right answer was to abstain
    # abstention over all 5 questions; key facts over the 4 answerable; faithfulness over answered
    assert report["aggregate"]["abstention"] == pytest.approx(4 / 5)
    assert report["aggregate"]["key_facts"] == 1.0 and report["aggregate"]["faithfulness"] == 1.0
    assert report["settings"]["judge"] == {
        "name": "lexical",
        "version": JUDGE_VERSIONS["lexical"],
        "rules": rules_digest("lexical"),
        "model": None,
        "revision": None,
        "threshold": 0.5,
        "fail_on": list(FAIL_ON),
    }


def test_unsupported_sentences_are_listed_with_the_reason(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generator that changes a number: faithfulness 1/2, the changed sentence listed."""

    class Hallucinating:
        def answer(self, question: str) -> Answer:
            text = "Download invoices as PDF files from the Billing page. Invoices are due within 60 days."
            return Answer(text, [Context("invoices", TEXTS["invoices"])])

    system = System(SHIPPED.build_retriever, lambda *args: Hallucinating())
    row = evaluate_shipped(load_config(project), system=system)["questions"][0]["answer"]
    assert row["faithfulness"] == 0.5 and row["claims"] == 2
    assert [entry["claim"] for entry in row["unsupported"]] == ["Invoices are due within 60 days."]
    assert row["unsupported"][0]["why"]


def test_seed_002_raising_min_score_fails_on_abstention_and_key_facts_only(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refusing answerable questions: exit 3 (the key-facts floor), each one listed as a newly
    failing answer, retrieval metrics unchanged. (Four questions are too few for the paired
    test: on the demo set the drop is also a significant regression.)"""
    assert run(project, "baseline") == 0
    set_option(project, "min_score = 0.0", "min_score = 100.0")
    set_option(project, '"hit@5" = 0.5', '"hit@5" = 0.5\nkey_facts = 0.5')
    capsys.readouterr()
    assert run(project, "gate") == 3
    out = capsys.readouterr().out
    for qid in ["q1", "q2", "q3", "q4"]:
        assert f"[newly failing answer] {qid} " in out
    assert "abstention 1.000 -> 0.000" in out and "key_facts 1.000 -> 0.000" in out
    assert "[floor] key_facts = 0.000 is below its floor 0.500" in out
    assert "[newly failing answer] q5" not in out  # it now abstains, which is right
    before = json.loads((project.parent / "baseline.json").read_text(encoding="utf-8"))
    after = json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))
    retrieval = before["settings"]["metrics"]
    assert {m: after["aggregate"][m] for m in retrieval} == {m: before["aggregate"][m] for m in retrieval}
    assert after["aggregate"]["key_facts"] == 0.0 and before["aggregate"]["key_facts"] == 1.0


def test_second_run_makes_no_judge_call(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first: dict[str, int] = {}
    baseline = evaluate_shipped(load_config(project), first)
    assert first["hits"] == 0 and first["misses"] > 0 and first["judged"] == first["misses"]
    assert "answers" not in baseline, "run statistics stay out of the report"
    assert run(project, "baseline") == 0
    capsys.readouterr()
    assert run(project, "gate") == 0
    out = capsys.readouterr().out
    assert f"Verdict cache: {first['misses']} hits, 0 misses; sentences judged this run: 0" in out
    # a different threshold is a different judge: nothing cached applies
    set_option(project, "[generation]", "[judge]\nthreshold = 0.6\n\n[generation]")
    second: dict[str, int] = {}
    evaluate_shipped(load_config(project), second)
    assert second == {
        "hits": 0,
        "misses": first["misses"],
        "judged": first["misses"],
        "not_judged": 0,
        "rejected": 0,
    }


def test_unreadable_cache_is_rebuilt(project: Path) -> None:
    cache = project.parent / ".cache" / "verdicts.json"
    cache.parent.mkdir()
    cache.write_text("{not json", encoding="utf-8")
    stats: dict[str, int] = {}
    evaluate_shipped(load_config(project), stats)
    assert stats["hits"] == 0
    assert json.loads(cache.read_text(encoding="utf-8"))["format"] == "rag-eval-verdicts"


@pytest.mark.parametrize(
    "content",
    [
        '{"format": "rag-eval-verdicts", "verdicts": [1]}',
        "[]",
        '{"format": "rag-eval-verdicts", "verdicts": {"k": 1}}',
    ],
)
def test_a_cache_of_the_wrong_shape_is_ignored_without_a_traceback(project: Path, content: str) -> None:
    cache = project.parent / ".cache" / "verdicts.json"
    cache.parent.mkdir()
    cache.write_text(content, encoding="utf-8")
    stats: dict[str, int] = {}
    evaluate_shipped(load_config(project), stats)
    assert stats["hits"] == 0 and stats["judged"] > 0
    assert json.loads(cache.read_text(encoding="utf-8"))["format"] == "rag-eval-verdicts"


def test_a_cache_path_that_is_not_a_file_is_refused_without_hanging(project: Path) -> None:
    cache = project.parent / ".cache" / "verdicts.json"
    cache.parent.mkdir()
    os.mkfifo(cache)  # reading a FIFO would wait for a writer forever
    with pytest.raises(EvalInputError, match="verdict cache path is a named pipe"):
        evaluate_shipped(load_config(project))


def test_a_hand_edited_cache_cannot_make_an_unsupported_sentence_pass(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Hallucinating:  # one faithful sentence, one invented
        def answer(self, question: str) -> Answer:
            text = "Download invoices as PDF files. Invoices can also be paid in gold bars."
            return Answer(text, [Context("invoices", TEXTS["invoices"])])

    system = System(SHIPPED.build_retriever, lambda *args: Hallucinating())
    config = load_config(project)
    first = evaluate_shipped(config, system=system)["questions"][0]["answer"]
    assert first["faithfulness"] == 0.5
    cache = project.parent / ".cache" / "verdicts.json"
    document = json.loads(cache.read_text(encoding="utf-8"))
    for entry in document["verdicts"].values():  # flip every verdict to supported, as an editor would
        entry["verdict"].update(supported=True, score=1.0, reason="")
    cache.write_text(json.dumps(document), encoding="utf-8")

    stats: dict[str, int] = {}
    again = evaluate_shipped(config, stats, system=system)["questions"][0]["answer"]
    assert again["faithfulness"] == 0.5 and again["unsupported"] == first["unsupported"]
    assert stats["rejected"] >= 1 and stats["judged"] > 0
    # copying a signed "supported" entry onto the unsupported claim's key does not verify either
    document = json.loads(cache.read_text(encoding="utf-8"))
    entries = list(document["verdicts"].values())
    good = next(e for e in entries if e["verdict"]["supported"])
    for entry in entries:
        entry.update(good)
    cache.write_text(json.dumps(document), encoding="utf-8")
    third = evaluate_shipped(config, system=system)["questions"][0]["answer"]
    assert third["faithfulness"] == 0.5


def test_gate_refuses_a_baseline_of_another_judge(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(project, "baseline") == 0
    set_option(project, "[generation]", "[judge]\nthreshold = 0.8\n\n[generation]")
    capsys.readouterr()
    assert run(project, "gate") == 2
    err = capsys.readouterr().err
    assert "baseline was judged by a different judge (threshold 0.5 -> 0.8)" in err
    assert "nox -s baseline" in err
    assert run(project, "baseline") == 0 and run(project, "gate") == 0


def test_gate_refuses_a_baseline_judged_with_other_names(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[judge] names change verdicts, so a baseline made with them is not compared with a report
    made without them, either way round."""
    assert run(project, "baseline") == 0
    set_option(project, "[generation]", '[judge]\nnames = ["Tidemark"]\n\n[generation]')
    capsys.readouterr()
    assert run(project, "gate") == 2
    assert "different judge (names None -> ['Tidemark'])" in capsys.readouterr().err
    assert run(project, "baseline") == 0
    set_option(project, 'names = ["Tidemark"]', "")
    assert run(project, "gate") == 2
    assert "different judge (names ['Tidemark'] -> None)" in capsys.readouterr().err


def test_generator_crash_names_the_question(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def answer(self, question: str) -> Answer:
            raise RuntimeError("LLM timeout")

    system = System(SHIPPED.build_retriever, lambda *args: Broken())
    with pytest.raises(EvalInputError) as caught:
        evaluate_shipped(load_config(project), system=system)
    assert "question 'q1': the generator raised RuntimeError: LLM timeout" in str(caught.value)
    assert "golden.jsonl:1:" in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("just text", "answer() must return an Answer, got str"),
        (Answer("x", [Context("no-such-doc", "x")]), "context 'no-such-doc' is not a document in the corpus"),
        (Answer("x", citations="no"), "Answer.citations must be True or False"),  # type: ignore[arg-type]  # the same
        (Answer("x", notes="cut"), "Answer.notes must be a tuple of strings"),  # type: ignore[arg-type]  # the same
        # a generator cannot vouch for itself: the context must be the document's own text
        (
            Answer(
                "Tidemark gives every customer a free pony.",
                [Context("invoices", "Every customer gets a pony.")],
            ),
            "the text of context 'invoices' is not in that document",
        ),
        (Answer("x", [Context("invoices", None)]), "the text of context 'invoices' must be a string"),  # type: ignore[arg-type]  # a generator's bad output, on purpose
        (Answer("x", abstained="false"), "Answer.abstained must be True or False, got 'false'"),  # type: ignore[arg-type]  # the same
        (Answer("x", contexts=None), "Answer.contexts must be a list of Context"),  # type: ignore[arg-type]  # the same
    ],
)
def test_bad_generator_output_is_invalid_input(
    project: Path, monkeypatch: pytest.MonkeyPatch, answer: object, problem: str
) -> None:
    class Fixed:
        def answer(self, question: str) -> object:
            return answer

    system = System(SHIPPED.build_retriever, lambda *args: Fixed())
    with pytest.raises(EvalInputError, match="bad output of the generator") as caught:
        evaluate_shipped(load_config(project), system=system)
    assert problem in str(caught.value)


@pytest.mark.parametrize(
    "passage",
    [
        "Download invoices as PDF files from the Billing page.",
        "download   invoices as PDF files",  # case and whitespace
        "<p>Download <b>invoices</b> as **PDF** files</p>",  # markup
        "Invoices",  # the title
    ],
)
def test_a_passage_of_its_document_is_a_valid_context(project: Path, passage: str) -> None:
    class Quoting:
        def answer(self, question: str) -> Answer:
            return Answer("Download invoices as PDF files.", [Context("invoices", passage)])

    system = System(SHIPPED.build_retriever, lambda *args: Quoting())
    row = evaluate_shipped(load_config(project), system=system)["questions"][0]["answer"]
    assert row["contexts"] == ["invoices"]


@pytest.mark.parametrize(
    ("text", "chunk"),
    [
        (
            "Levels fell (p < 0.05) and the result of the deficiency was > 10 in all.",
            "the result of the deficiency",
        ),
        ("<p>Download <b>invoices</b> as PDF.</p>", "b>invoices</b> as PDF"),  # cut inside a tag
        ("Download invoices as PDF.", "<i>invoices</i> as PDF"),  # markup on one side only
    ],
)
def test_a_chunk_is_found_in_its_document_whatever_the_punctuation(text: str, chunk: str) -> None:
    document = Document("d", text)
    assert found_in(chunk, document)
    assert not found_in("invoices are free", document)


def test_unknown_generation_option_is_invalid_input(tmp_path: Path) -> None:
    path = write_project(tmp_path, config=TINY_CONFIG.replace("min_score = 0.0", "min_scor = 0.0"))
    with pytest.raises(EvalInputError, match=r"unknown option 'min_scor'"):
        evaluate_shipped(load_config(path))


def test_unknown_judge_backend_names_the_line(tmp_path: Path) -> None:
    path = write_project(tmp_path, config=TINY_CONFIG + '\n[judge]\nbackend = "gpt"\n')
    with pytest.raises(EvalInputError, match="unknown judge 'gpt'") as caught:
        load_config(path)
    assert caught.value.line == TINY_CONFIG.count("\n") + 3


def test_unanswerable_question_with_key_facts_is_invalid(tmp_path: Path) -> None:
    golden = [*TINY_GOLDEN[:4], {**TINY_GOLDEN[4], "must_include": ["mobile"]}]
    path = write_project(tmp_path, golden=golden)
    with pytest.raises(EvalInputError, match="unanswerable question cannot have must_include") as caught:
        evaluate_shipped(load_config(path))
    assert caught.value.line == 5

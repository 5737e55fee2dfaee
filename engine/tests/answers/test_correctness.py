"""Answers that are right, not only grounded: the reference checks (correctness, token F1,
exact match), nuggets, key facts in other words, citations and relevance, each shown both
ways on small labelled examples, and the definitions' properties."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_regress.answers.checks import evaluate_answers
from rag_regress.answers.citations import Sentence, cited_sentences, strip_markers
from rag_regress.answers.facts import find
from rag_regress.answers.reference import exact_match, share, squad_tokens, token_f1
from rag_regress.answers.relevance import relevance
from rag_regress.answers.settings import JudgeSettings
from rag_regress.answers.stand_in import cite
from rag_regress.api import Answer, Context, Document
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import Nugget, Question, load_corpus, load_golden

REFUNDS = "Refunds are paid to the original card within 30 days. A refund needs the order number."
EXPORT = "Export your timesheets as a CSV file from the Reports page. The file lists every entry."
CORPUS = {
    "refunds": Document("refunds", REFUNDS, "Refunds"),
    "export": Document("export", EXPORT, "Export"),
}
QUESTION = Question(
    "q1",
    "How long do refunds take?",
    {"refunds": 3},
    must_include=["30 days"],
    line=1,
    reference="Refunds are paid within 30 days to the original card.",
    nuggets=[Nugget("within 30 days"), Nugget("original card", vital=False)],
)


class Replying:
    """A generator that always gives `answer`."""

    def __init__(self, answer: Answer):
        self.reply = answer

    def answer(self, question: str) -> Answer:
        return self.reply


def checked(tmp_path: Path, answer: Answer, question: Question = QUESTION, match: str = "normalised") -> dict:
    judge = JudgeSettings(cache=tmp_path / "verdicts.json", match=match)
    results = evaluate_answers(
        Replying(answer), [question], CORPUS, judge, golden=tmp_path / "golden.jsonl", config_path=tmp_path
    )
    return vars(results.rows[0]) | {"aggregate": results.aggregate}


RIGHT = Answer(cite(REFUNDS, 1), [Context("refunds", REFUNDS), Context("export", EXPORT)])
# Faithful but wrong: every sentence is supported by its (real, unrelated) passage.
WRONG = Answer(cite(EXPORT, 1), [Context("export", EXPORT)])


# -- the reference, both ways ---------------------------------------------------------------


def test_a_right_answer_states_its_reference(tmp_path: Path) -> None:
    row = checked(tmp_path, RIGHT)
    assert row["faithfulness"] == 1.0 and row["correctness"] == 1.0 and row["not_stated"] == []
    assert row["nugget_recall"] == 1.0 and row["vital_recall"] == 1.0 and row["key_facts"] == 1.0
    assert 0 < row["answer_f1"] < 1 and row["exact_match"] == 0.0  # the passage says more than it


def test_a_faithful_answer_from_the_wrong_passage_is_not_correct(tmp_path: Path) -> None:
    row = checked(tmp_path, WRONG)
    assert row["faithfulness"] == 1.0  # every sentence is in its context ...
    assert row["correctness"] == 0.0  # ... and none says what the reference says
    assert [f.text for f in row["not_stated"]] == [QUESTION.reference]
    assert row["nugget_recall"] == 0.0 and row["missing_nuggets"] == ["within 30 days", "original card"]
    assert row["key_facts"] == 0.0 and row["answer_f1"] < 0.3


def test_a_refusal_of_an_answerable_question_scores_zero_on_the_reference(tmp_path: Path) -> None:
    row = checked(tmp_path, Answer("I don't know.", [], abstained=True))
    assert (row["correctness"], row["answer_f1"], row["exact_match"], row["nugget_recall"]) == (0, 0, 0, 0)
    assert row["answer_precision"] is None and row["relevance"] is None and row["citation_recall"] is None


def test_a_question_without_a_reference_has_no_reference_checks(tmp_path: Path) -> None:
    bare = Question("q1", "How long do refunds take?", {"refunds": 3}, line=1)
    row = checked(tmp_path, RIGHT, bare)
    assert row["correctness"] is row["answer_f1"] is row["nugget_recall"] is row["vital_recall"] is None
    assert row["aggregate"]["correctness"] == 0.0  # applies nowhere: a floor on it fails


# -- key facts in other words ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "answer", "held"),
    [
        ("48 hours", "Refunds arrive within two days.", True),
        ("1,000 requests", "You may send one thousand requests a minute.", True),
        ("90 minutes", "The session ends after 1.5 hours idle.", True),
        ("Business plan", "Available on the Business plans only.", True),
        ("30 days", "Refunds take 60 days.", False),
        ("48 hours", "Refunds arrive within two weeks.", False),
        ("Profile > Security", "Open Security, then Profile.", False),  # the fact's order kept
    ],
)
def test_key_facts_are_found_in_other_words_with_numbers_as_values(
    fact: str, answer: str, held: bool
) -> None:
    found = find(fact, answer, "normalised")
    assert (found is not None) is held
    if found is not None and found.how != "literal":
        assert found.span in answer  # the sentence that holds it is shown


def test_literal_matching_refuses_a_paraphrase(tmp_path: Path) -> None:
    said = "Refunds are paid to the original card within thirty days [1]."
    answer = Answer(said, [Context("refunds", REFUNDS)])
    assert checked(tmp_path, answer, match="literal")["key_facts"] == 0.0
    row = checked(tmp_path / "b", answer)
    assert row["key_facts"] == 1.0
    assert [f.text for f in row["matched"]][:1] == ["30 days"] and "thirty days" in row["matched"][0].why


def test_the_judge_match_accepts_what_the_judge_accepts(tmp_path: Path) -> None:
    question = Question(
        "q1", "How are refunds paid?", {"refunds": 3}, must_include=["paid to the card"], line=1
    )
    said = "Refunds are paid to the original card."
    answer = Answer(said, [Context("refunds", REFUNDS)])
    assert checked(tmp_path, answer, question, match="normalised")["key_facts"] == 1.0  # stems in order
    question = Question("q1", "How are refunds paid?", {"refunds": 3}, must_include=["card refund"], line=1)
    assert checked(tmp_path / "a", answer, question, match="normalised")["key_facts"] == 0.0
    row = checked(tmp_path / "b", answer, question, match="judge")
    assert row["key_facts"] == 1.0 and "(judge)" in row["matched"][0].why


# -- citations -------------------------------------------------------------------------------


def test_markers_belong_to_their_sentence_wherever_the_full_stop_is() -> None:
    assert cited_sentences("Paid in 30 days [1]. Ask support. [2][3] Or use [1, 3] the form.") == [
        Sentence("Paid in 30 days.", (1,)),
        Sentence("Ask support.", (2, 3)),
        Sentence("Or use the form.", (1, 3)),
    ]
    assert cited_sentences("Founded in 2019 [2019].") == [Sentence("Founded in 2019 [2019].", ())]
    assert strip_markers("Paid [1]. Done [2].") == "Paid. Done."


def test_a_citation_of_a_passage_that_does_not_support_its_sentence_is_named(tmp_path: Path) -> None:
    said = "Refunds are paid to the original card within 30 days [2]. A refund needs the order number [1]."
    row = checked(tmp_path, Answer(said, [Context("refunds", REFUNDS), Context("export", EXPORT)]))
    assert row["faithfulness"] == 1.0  # the contexts support both sentences ...
    assert row["citation_precision"] == 0.5  # ... but the first cites the export passage
    assert row["citation_recall"] == 0.5
    assert [(f.text, f.why) for f in row["miscited"]] == [
        (
            "Refunds are paid to the original card within 30 days.",
            "cites [2] (export), which does not support it",
        )
    ]
    assert row["uncited"] == ["Refunds are paid to the original card within 30 days."]
    right = checked(tmp_path / "b", RIGHT)
    assert (right["citation_precision"], right["citation_recall"], right["miscited"]) == (1.0, 1.0, [])


def test_a_citation_of_no_context_is_a_miscitation_measured_not_refused(tmp_path: Path) -> None:
    row = checked(tmp_path, Answer("Refunds are paid in 30 days [3].", [Context("refunds", REFUNDS)]))
    assert row["citation_precision"] == 0.0 and row["faithfulness"] == 1.0
    assert [f.why for f in row["miscited"]] == [
        "cites [3], but the answer was given 1 context: a passage it never had"
    ]


def test_with_citations_off_brackets_are_the_models_text(tmp_path: Path) -> None:
    answer = Answer("Refunds are paid in 30 days [3].", [Context("refunds", REFUNDS)], citations=False)
    row = checked(tmp_path, answer)
    assert row["citation_precision"] is None and row["miscited"] == []


def test_a_run_where_nothing_cites_has_no_citation_checks(tmp_path: Path) -> None:
    row = checked(tmp_path, Answer(REFUNDS, [Context("refunds", REFUNDS)]))
    assert row["citation_precision"] is None and row["citation_recall"] is None


# -- relevance -------------------------------------------------------------------------------


def test_relevance_is_the_share_of_the_question_terms_the_answer_says() -> None:
    assert relevance("How long do refunds take?", REFUNDS) == pytest.approx(1 / 3)  # refund; not long, take
    assert relevance("Can I export timesheets?", EXPORT) == 1.0
    assert relevance("Can I export timesheets?", REFUNDS) == 0.0  # about something else
    assert relevance("Does Acme export?", EXPORT, names=["Acme"]) == 1.0  # the product's name aside
    assert relevance("How is it?", EXPORT) is None  # no key term to measure by


# -- definitions -------------------------------------------------------------------------------

words = st.lists(
    st.sampled_from(["the", "a", "card", "Card,", "30", "days", "refund", "paid", "."]), max_size=8
)


@given(words, words)
def test_token_f1_is_symmetric_and_in_unit_range(a: list[str], b: list[str]) -> None:
    first, second = " ".join(a), " ".join(b)
    assert token_f1(first, second) == pytest.approx(token_f1(second, first))
    assert 0.0 <= token_f1(first, second) <= 1.0
    if exact_match(first, second):
        assert token_f1(first, second) == 1.0


def test_squad_normalisation_drops_case_punctuation_and_articles() -> None:
    assert squad_tokens("The Card, a refund!") == ["card", "refund"]
    assert exact_match("The card.", "card") == 1.0 and token_f1("", "") == 1.0 and token_f1("x", "") == 0.0
    assert token_f1("paid to the card", "card paid") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


@given(st.lists(st.booleans(), min_size=1), st.booleans())
def test_nugget_recall_never_falls_when_a_found_nugget_is_added(found: list[bool], extra: bool) -> None:
    before, after = share(found), share([*found, extra])
    assert before is not None and after is not None
    assert (after >= before) if extra else (after <= before)


# -- the golden set ------------------------------------------------------------------------------


def write(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_golden_questions_carry_references_and_nuggets(tmp_path: Path) -> None:
    corpus = load_corpus(write(tmp_path / "corpus.jsonl", {"id": "refunds", "text": REFUNDS}))
    line = {"id": "q1", "question": "?", "relevant": {"refunds": 3}, "reference": "In 30 days."}
    nuggets = [{"text": "30 days"}, {"text": "card", "vital": False}]
    (question,) = load_golden(write(tmp_path / "g.jsonl", line | {"nuggets": nuggets}), corpus)
    assert question.reference == "In 30 days." and question.nuggets == [
        Nugget("30 days"),
        Nugget("card", False),
    ]
    for bad, says in [
        ({"nuggets": ["30 days"]}, """nuggets' must be a list of {"text": ..., "vital": true or false}"""),
        ({"nuggets": [{"text": "x", "vital": "yes"}]}, "got [{'text': 'x', 'vital': 'yes'}]"),
        ({"nuggets": [{"text": "x", "weight": 2}]}, "'nuggets' must be"),
        ({"reference": ""}, "'reference' must be a non-empty string"),
        ({"reference": None}, "'reference' must be a non-empty string, got None"),
        ({"answerable": False, "relevant": {}}, "an unanswerable question cannot have a reference"),
    ]:
        with pytest.raises(EvalInputError) as caught:
            load_golden(write(tmp_path / "bad.jsonl", line | bad), corpus)
        assert says in str(caught.value) and "bad.jsonl:1:" in str(caught.value)

"""The lexical judge and the narrow checks every judge reports: known hallucinations are
caught by the check made for them, faithful rewordings pass, and each verdict says why in the
words of the claim and the context."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from judge_cases import FAITHFUL, HALLUCINATIONS, KINDS, REFUND_60_DAYS, REFUND_FAITHFUL, REFUNDS

from conftest import SHIPPED, TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, run_cli, write_project
from rag_regress.answers.judges import Verdict, settle
from rag_regress.answers.judges.claims import clauses, split_sentences, windows
from rag_regress.answers.judges.findings import FINDINGS, derivable, findings
from rag_regress.answers.judges.lexical import FAIL_ON, LexicalJudge, coverage
from rag_regress.answers.judges.reading import quantities
from rag_regress.api import Answer, Context, System

JUDGE = LexicalJudge(threshold=0.5)


def faithfulness(claims: list[str], context: str) -> float:
    verdicts = JUDGE.verdicts([(claim, (context,)) for claim in claims])
    return sum(v.supported for v in verdicts) / len(verdicts)


def test_refund_window_30_to_60_days_is_caught_naming_both_numbers() -> None:
    """The seed's known hallucination, as a one-sentence answer."""
    assert faithfulness([REFUND_60_DAYS[0]], REFUNDS) == 0.0
    assert faithfulness([REFUND_FAITHFUL[0]], REFUNDS) == 1.0
    (verdict,) = JUDGE.verdicts([(REFUND_60_DAYS[0], (REFUNDS,))])
    assert verdict.reason == "'60 days' is not what the context says (it says '30 days')"
    assert verdict.findings == (f"number: {verdict.reason}",)


@pytest.mark.parametrize(("kind", "claim", "context"), HALLUCINATIONS, ids=[c[0] for c in HALLUCINATIONS])
def test_known_hallucinations_are_unsupported(kind: str, claim: str, context: str) -> None:
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert not verdict.supported, f"{kind}: {claim!r} judged supported by {verdict.window!r}"
    assert verdict.reason


@pytest.mark.parametrize(("kind", "claim", "context"), FAITHFUL, ids=[c[0] for c in FAITHFUL])
def test_faithful_rewordings_are_supported(kind: str, claim: str, context: str) -> None:
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert verdict.supported, f"{kind}: {claim!r} unsupported: {verdict.reason}"


@pytest.mark.parametrize(("finding", "wrong", "right", "context"), KINDS, ids=[k[0] for k in KINDS])
def test_each_check_catches_its_kind_and_lets_the_rewording_pass(
    finding: str, wrong: str, right: str, context: str
) -> None:
    """The finding is the check's own, whatever the claim's coverage: the claim reuses the
    context's words, as an LLM's minimal edit does."""
    assert finding in FINDINGS
    caught = findings(wrong, JUDGE.verdicts([(wrong, (context,))])[0].window, context)
    assert finding in {f.name for f in caught}, caught
    (passed,) = JUDGE.verdicts([(right, (context,))])
    assert passed.supported and finding not in {f.split(":")[0] for f in passed.findings}, passed


def test_findings_are_reported_whether_or_not_they_fail_a_claim() -> None:
    """fail_on decides: with none, the 30 -> 60 days claim passes on its coverage and its
    number finding is still in the verdict; with only `name`, the same."""
    claim, context = REFUND_60_DAYS
    for fail_on in [(), ("name",)]:
        (verdict,) = LexicalJudge(0.5, fail_on=fail_on).verdicts([(claim, (context,))])
        assert verdict.supported and verdict.findings[0].startswith("number: '60 days'")
    (verdict,) = LexicalJudge(0.5, fail_on=("number",)).verdicts([(claim, (context,))])
    assert not verdict.supported and LexicalJudge(0.5, fail_on=()).identity["fail_on"] == []
    assert set(FAIL_ON) <= set(FINDINGS) and "order" not in FAIL_ON and "condition" not in FAIL_ON


def test_reasons_quote_the_claim_and_the_context_never_stems() -> None:
    context = "Guests who can only view reports do not use a seat."
    (verdict,) = JUDGE.verdicts([("Guests who can only view reports use a seat.", (context,))])
    assert verdict.reason == "says 'use' where the context says 'not use'"
    (verdict,) = JUDGE.verdicts([("Refunds are always approved.", ("Refunds may be approved.",))])
    assert "modality: says 'always' where the context says 'may'" in verdict.findings


def test_half_faithful_answer_scores_one_half() -> None:
    assert faithfulness([REFUND_FAITHFUL[0], REFUND_60_DAYS[0]], REFUNDS) == 0.5


def test_a_claim_with_no_context_is_unsupported() -> None:
    (verdict,) = JUDGE.verdicts([("Anything at all.", ())])
    assert not verdict.supported and verdict.reason == "no context to check it against"


def test_verdicts_are_deterministic_and_in_order() -> None:
    items = [(claim, (context,)) for _, claim, context in HALLUCINATIONS + FAITHFUL]
    assert JUDGE.verdicts(items) == JUDGE.verdicts(items)
    assert [v.supported for v in JUDGE.verdicts(items)] == [False] * len(HALLUCINATIONS) + [True] * len(
        FAITHFUL
    )


def test_threshold_decides_partial_coverage() -> None:
    """Half of the claim's content words are in the window: supported at 0.5, not at 0.6."""
    claim, context = "Refunds reach customers quickly.", "Refunds reach your bank."
    assert coverage(claim, context) == pytest.approx(0.5)
    assert LexicalJudge(0.5).verdicts([(claim, (context,))])[0].supported
    assert not LexicalJudge(0.6).verdicts([(claim, (context,))])[0].supported


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("within 5 to 10 business days", [(5 * 86400, "time"), (10 * 86400, "time")]),
        ("90 minutes", [(5400, "time")]),
        ("an hour and a half", [(5400, "time")]),
        ("one and a half hours", [(5400, "time")]),
        ("a 76 x 45 mm antenna", [(0.076, "length"), (0.045, "length")]),
        ("one hundred fifty samples", [(150, "")]),
        ("costs sixteen pounds", [(16, "£")]),
        ("the £16 fee", [(16, "£")]),
        ("98.6 °F", [(37.0, "temperature")]),
        ("2 p.m.", [(840, "")]),
        ("14:00", [(840, "")]),
        ("half of the fare", [(50, "%")]),
        ("once a week", [(604800, "time")]),
        ("50 km/h", [(50 / 3.6, "speed")]),
        ("take the next one", []),
    ],
)
def test_quantities_read_units_ranges_and_number_words(text: str, read: list[tuple[float, str]]) -> None:
    found = [(q.value, q.dimension) for q in quantities(text)]
    assert [d for _, d in found] == [d for _, d in read]
    assert [v for v, _ in found] == pytest.approx([v for v, _ in read])


@pytest.mark.parametrize(
    ("claim", "context", "follows"),
    [
        ("two weeks", "within 14 days", True),  # a conversion
        ("10 extra hours", "up to 30 hours with it on and 40 hours with it off", True),  # a difference
        ("0.1%", "up to 1 in 1,000 people", True),  # a ratio as a share
        ("75%", "a discount of 25%", True),  # the complement of a share
        ("18 years", "coined in 1842; described in 1824", True),  # between two years
        ("1818", "completed in 1824 after six years", True),  # a year less a span
        ("60 days", "within 30 days", False),
        ("4 weeks", "2 weeks after", False),  # no number doubles it
        ("0 °F", "between 0 °C and 35 °C", False),  # 0 times anything is no evidence
    ],
)
def test_a_number_follows_from_the_contexts_only_by_a_conversion_or_one_operation(
    claim: str, context: str, follows: bool
) -> None:
    (claimed,) = quantities(claim)
    assert derivable(claimed, quantities(context)) is follows


def test_judge_names_may_be_used_by_any_context_and_no_other_name_may() -> None:
    context = "Exports hold up to 100,000 rows."
    claim = "Exports from Tidemark hold up to 100,000 rows."
    assert not JUDGE.verdicts([(claim, (context,))])[0].supported
    named = LexicalJudge(0.5, names=("Tidemark",))
    assert named.verdicts([(claim, (context,))])[0].supported
    assert named.identity["names"] == ["Tidemark"]
    assert not named.verdicts([("Exports from Acme hold up to 100,000 rows.", (context,))])[0].supported


def test_two_facts_of_two_sentences_joined_in_one_claim_are_supported() -> None:
    context = "The bridge was completed in 1824. It was designed by Maria Holt."
    assert JUDGE.verdicts([("The bridge, designed by Maria Holt, was completed in 1824.", (context,))])[
        0
    ].supported


def test_a_clause_appended_to_a_true_sentence_is_judged_on_its_own() -> None:
    assert clauses("Exports hold up to 100,000 rows, which includes archived projects.") == [
        "Exports hold up to 100,000 rows",
        "which includes archived projects.",
    ]
    assert clauses("Export to CSV, PDF, or XLSX.") == [
        "Export to CSV, PDF, or XLSX."
    ]  # a list is one statement
    context = "Exports hold up to 100,000 rows. Archived projects are never exported."
    (verdict,) = JUDGE.verdicts(
        [("Exports hold up to 100,000 rows, and they include billing history.", (context,))]
    )
    assert not verdict.supported and "billing history" in verdict.reason


def test_settle_supports_a_copied_sentence_whatever_the_scores_and_prefers_the_shorter_window() -> None:
    short, long = (
        "Annual plans can be refunded.",
        "Annual plans can be refunded. No refund is given after that.",
    )
    assert settle(
        "Annual plans can be refunded.", [(1.0, long), (1.0, short)], 0.5, long, FAIL_ON
    ) == Verdict(True, 1.0, short, "")
    doubting = [(0.0, window) for window in windows([long])]
    assert settle("No refund is given after that.", doubting, 0.9, long, FAIL_ON).supported


# -- any sentence is supported by a context that holds it -----------------------------------

SENTENCE = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=80
).filter(lambda text: split_sentences(text) == [text.strip()])


@settings(max_examples=150, deadline=None)
@given(
    sentence=SENTENCE,
    before=st.sampled_from(["", "Some other sentence. "]),
    after=st.sampled_from(["", " Then more."]),
)
def test_any_sentence_is_supported_by_a_context_that_holds_it(sentence: str, before: str, after: str) -> None:
    """For any judge: the lexical one, and decide() over any scores (a model that doubts it)."""
    context = f"{before}{sentence}{after}"
    claim = sentence.strip()
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert verdict.supported, verdict.reason
    doubting = [(0.0, window) for window in windows([context])]
    assert settle(claim, doubting, 0.9, context, FINDINGS).supported


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The fee is 5.", "The fee is 50 euros a month."),  # an answer cut inside a number
        ("The fee is 3.", "The fee is 3.5 euros a month."),  # at a decimal point
        ("Exports hold up to 1", "Exports hold up to 1,000 rows."),  # at a thousands separator
        ("The plan is free", "The plan is freezing in winter."),  # inside a word
    ],
)
def test_a_claim_cut_inside_a_number_or_a_word_is_not_copied(claim: str, context: str) -> None:
    """Part of a word or number is not the context's own words: settle() judges it on its
    scores, and the lexical judge reads it as any claim."""
    assert not settle(claim, [(0.0, context)], 0.9, context, FINDINGS).supported
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert (verdict.supported, verdict.score) != (True, 1.0), verdict  # what a copy is given


def test_every_demo_sentence_cut_inside_a_number_is_judged_not_copied() -> None:
    """Each sentence of the demo corpus cut after the first digit of each of its numbers of
    two digits or more (an answer stopped at max_tokens there): none is taken as copied from
    its own document, so a model that doubts it is believed."""
    cuts = [
        (sentence[: number.start() + 1], text)
        for sentence, text in _sentences_of(Path(__file__).parents[1] / "demo" / "evals" / "corpus.jsonl")
        for number in re.finditer(r"\d{2,}", sentence)
    ]
    assert len(cuts) > 20
    taken = [
        cut
        for cut, text in cuts
        if settle(cut, [(0.0, w) for w in windows([text])], 0.9, text, FINDINGS).supported
    ]
    assert not taken, taken


def _sentences_of(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        text = document.get("text") or ""
        found += [(sentence, text) for sentence in split_sentences(text)]
    return found


def _assert_self_supported(pairs: list[tuple[str, str]]) -> None:
    """Each sentence against itself and its own document, without the shortcut for copied
    text: every term and number is found and no check finds anything, so claims and contexts
    read alike."""
    wrong = [
        (sentence, problem)
        for sentence, text in pairs
        if (
            problem := [f.message for f in findings(sentence, sentence, text)]
            or (None if coverage(sentence, sentence, text) == 1.0 else "coverage")
        )
    ]
    assert not wrong, (
        f"{len(wrong)} of {len(pairs)} sentences not supported by their own document: {wrong[:5]}"
    )


def test_every_sentence_of_the_demo_corpus_is_supported_by_its_own_document() -> None:
    _assert_self_supported(_sentences_of(Path(__file__).parents[1] / "demo" / "evals" / "corpus.jsonl"))


# Any corpus, every sentence against its own document: BEIR SciFact's 44,922 sentences take
# about a minute; point it at your own corpus.jsonl.
SELF_SUPPORT = Path(os.environ.get("RAG_EVAL_SELF_SUPPORT_CORPUS", "") or "no-corpus-given")


@pytest.mark.skipif(
    not SELF_SUPPORT.is_file(),
    reason="set RAG_EVAL_SELF_SUPPORT_CORPUS to a corpus.jsonl (e.g. BEIR SciFact's) to check every sentence",
)
def test_every_sentence_of_a_given_corpus_is_supported_by_its_own_document() -> None:
    _assert_self_supported(_sentences_of(SELF_SUPPORT))


# -- claims and windows ---------------------------------------------------------------------


def test_sentences_split_at_sentence_ends_only() -> None:
    text = "Open Settings > Security. Choose e.g. SAML 2.0 here! Does it work? Yes."
    assert split_sentences(text) == [
        "Open Settings > Security.",
        "Choose e.g. SAML 2.0 here!",
        "Does it work?",
        "Yes.",
    ]
    assert split_sentences("Ok. Fine.") == ["Fine."]  # three characters or fewer: not a claim


def test_windows_are_one_and_two_sentences_within_each_context() -> None:
    found = windows(["First one. Second one. Third one.", "Other doc."])
    assert found == [
        "First one.",
        "Second one.",
        "Third one.",
        "First one. Second one.",
        "Second one. Third one.",
        "Other doc.",
    ]


def test_one_batch_of_many_answers_judges_each_claim_as_alone() -> None:
    """verdicts() reuses an answer's windows across its claims: a batch mixing answers and
    contexts (the same contexts again after others) gives every claim its verdict alone."""
    cases = [*HALLUCINATIONS, *FAITHFUL]
    items = [(claim, (context,)) for _, claim, context in cases]
    items += [(claim, (context, REFUNDS)) for _, claim, context in reversed(cases)]
    items += [(claim, (REFUNDS,)) for _, claim, _ in cases]  # one answer's many claims
    assert JUDGE.verdicts(items) == [JUDGE.verdicts([item])[0] for item in items]


# -- the judge reads alone: [tokenizer] is the retriever's ----------------------------------


CASE_DOCUMENTS = [
    {"id": f"case-{i}", "title": "", "text": text}
    for i, text in enumerate(dict.fromkeys(context for _, _, context in HALLUCINATIONS + FAITHFUL))
]


class CasesByContext:
    """A generator that ignores retrieval: each golden question is answered with every case
    (hallucinated and faithful) written about one context, judged against that context."""

    def __init__(self) -> None:
        by_context: dict[str, list[str]] = {}
        for _, claim, context in HALLUCINATIONS + FAITHFUL:
            by_context.setdefault(context, []).append(claim)
        # Each context is a document of the corpus (CASE_DOCUMENTS), as the contract requires.
        answers = [
            Answer(" ".join(claims), [Context(f"case-{i}", text)])
            for i, (text, claims) in enumerate(by_context.items())
        ]
        self.answers = {q["question"]: answers[i % len(answers)] for i, q in enumerate(TINY_GOLDEN)}

    def answer(self, question: str) -> Answer:
        return self.answers[question]


@pytest.mark.keyword
def test_tokenizer_settings_never_change_a_verdict(tmp_path: Path) -> None:
    """A project whose [tokenizer] sets min_length = 4 and stemmer = "porter" retrieves
    differently, but its answers get exactly the verdicts (supported, score, window, reason)
    they get with the defaults: the judge never reads [tokenizer]. The verdict cache's key
    leaves [tokenizer] out, so it relies on this too."""
    system = System(SHIPPED.build_retriever, lambda *args: CasesByContext())
    reports, caches = [], []
    for name, tokenizer in [("defaults", "min_length = 1"), ("tuned", 'min_length = 4\nstemmer = "porter"')]:
        config = write_project(
            tmp_path / name, TINY_CONFIG.replace("min_length = 1", tokenizer), [*TINY_CORPUS, *CASE_DOCUMENTS]
        )
        assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
        reports.append(json.loads((tmp_path / name / "build" / "report.json").read_text(encoding="utf-8")))
        caches.append((tmp_path / name / ".cache" / "verdicts.json").read_text(encoding="utf-8"))
    defaults, tuned = reports
    assert tuned["settings"]["tokenizer"]["stemmer"] == "porter"
    assert tuned["aggregate"]["hit@5"] < defaults["aggregate"]["hit@5"]  # the retriever read them
    answers = [row["answer"] for row in defaults["questions"]]
    assert [row["answer"] for row in tuned["questions"]] == answers
    verdicts = [
        sorted(
            json.dumps(entry["verdict"], sort_keys=True) for entry in json.loads(cache)["verdicts"].values()
        )
        for cache in caches
    ]
    assert verdicts[0] == verdicts[1]  # every verdict, in full
    assert any(a["unsupported"] for a in answers) and any(a["faithfulness"] > 0 for a in answers)

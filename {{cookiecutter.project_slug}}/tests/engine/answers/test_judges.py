# Engine test (the template's: `cruft update` keeps it current). It runs the shipped retriever
# and the stand-in generator, never your retriever.py or generator.py: see tests/conftest.py.
"""The lexical judge and the guard both judges share: known hallucinations are caught,
faithful paraphrases pass, and each verdict says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHIPPED, TINY_CONFIG, TINY_GOLDEN, run_cli, write_project
from judge_cases import FAITHFUL, HALLUCINATIONS, REFUND_60_DAYS, REFUND_FAITHFUL, REFUNDS

from {{ cookiecutter.package_name }}.answers.judges import Verdict, decide
from {{ cookiecutter.package_name }}.answers.judges.claims import split_sentences, windows
from {{ cookiecutter.package_name }}.answers.judges.guard import guard, negated, quantities
from {{ cookiecutter.package_name }}.answers.judges.lexical import LexicalJudge, coverage, names
from {{ cookiecutter.package_name }}.api import Answer, Context, System

JUDGE = LexicalJudge(threshold=0.55)


def faithfulness(claims: list[str], context: str) -> float:
    verdicts = JUDGE.verdicts([(claim, (context,)) for claim in claims])
    return sum(v.supported for v in verdicts) / len(verdicts)


def test_refund_window_30_to_60_days_scores_0_and_the_faithful_sentence_1() -> None:
    """A known hallucination, as a one-sentence answer."""
    assert faithfulness([REFUND_60_DAYS[0]], REFUNDS) == 0.0
    assert faithfulness([REFUND_FAITHFUL[0]], REFUNDS) == 1.0
    (verdict,) = JUDGE.verdicts([(REFUND_60_DAYS[0], (REFUNDS,))])
    assert "60 day" in verdict.reason and verdict.score == 0.0


@pytest.mark.parametrize(("kind", "claim", "context"), HALLUCINATIONS, ids=[c[0] for c in HALLUCINATIONS])
def test_known_hallucinations_are_unsupported(kind: str, claim: str, context: str) -> None:
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert not verdict.supported, f"{kind}: {claim!r} judged supported by {verdict.window!r}"
    assert verdict.reason


@pytest.mark.parametrize(("kind", "claim", "context"), FAITHFUL, ids=[c[0] for c in FAITHFUL])
def test_faithful_paraphrases_are_supported(kind: str, claim: str, context: str) -> None:
    (verdict,) = JUDGE.verdicts([(claim, (context,))])
    assert verdict.supported, f"{kind}: {claim!r} unsupported: {verdict.reason}"


def test_the_kinds_cover_what_the_issue_names() -> None:
    kinds = {kind for kind, _, _ in HALLUCINATIONS}
    assert {"number change", "entity swap", "negation flip", "unit change", "invented feature"} <= kinds
    assert "wrong plan name" in kinds and len(FAITHFUL) >= 5


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


# -- the guard, on its own ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "window", "problem"),
    [
        ("Refunds within 60 days.", "Refunds within 30 days.", "states 60 day, which the context does not"),
        (
            "It expires after 60 hours.",
            "It expires after 60 minutes.",
            "states 60 hour, the context says 60 minute",
        ),
        (
            "Business costs $25.",
            "Business costs $20, minimum 25 seats.",
            "states $25, the context says 25 seat",
        ),
        ("Saves 15% yearly.", "Saves 20% yearly.", "states 15%, which the context does not"),
        (
            "Reports go out on Friday.",
            "Reports go out on Monday.",
            "names the date friday, which the context does not",
        ),
        (
            "Monthly plans are refundable.",
            "Monthly plans are not refundable.",
            "states 'refund', the context negates it",
        ),
        (
            "Exports are not emailed.",
            "Exports are emailed within 24 hours.",
            "negates 'email', the context does not",
        ),
    ],
)
def test_guard_names_the_problem(claim: str, window: str, problem: str) -> None:
    assert guard(claim, window) == problem


@pytest.mark.parametrize(
    ("claim", "window"),
    [
        ("A 14-day trial.", "Every workspace gets a 14 day trial."),
        ("Twelve characters at least.", "At least 12 characters."),
        ("Up to 2 business days.", "Verification takes up to 2 business days."),
        # a negation elsewhere in the window does not contradict a plain clause
        ("Annual plans can be refunded.", "Annual plans can be refunded, but after that no refund is given."),
        ("No credit card is needed.", "A free trial, and no credit card is needed to sign up."),
    ],
)
def test_guard_lets_agreeing_windows_through(claim: str, window: str) -> None:
    assert guard(claim, window) is None


def test_quantities_read_units_signs_and_number_words() -> None:
    found = quantities(
        "a 14-day trial, $20 per seat, 20% off, 100,000 rows, twelve characters, 2 business days"
    )
    assert found == {
        ("14", "day"),
        ("20", "$"),
        ("20", "%"),
        ("100000", "row"),
        ("12", "charact"),
        ("2", "day"),
    }


def test_negated_finds_what_each_negation_applies_to() -> None:
    assert negated("Monthly plans aren't refundable and you can no longer sign in without a code") == {
        "refund",
        "sign",
        "code",
    }


def test_names_are_capitalised_words_acronyms_and_alphanumerics() -> None:
    assert names("Tidemark supports SSO with Okta, 2FA and SHA256 on the Team plan.") == {
        "sso",
        "okta",
        "2fa",
        "sha256",
        "team",
    }


def test_decide_prefers_the_shorter_of_equally_good_windows() -> None:
    short, long = (
        "Annual plans can be refunded.",
        "Annual plans can be refunded. No refund is given after that.",
    )
    assert decide("Annual plans can be refunded.", [(1.0, long), (1.0, short)], 0.5) == Verdict(
        True, 1.0, short, ""
    )


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


class CasesByContext:
    """A generator that ignores retrieval: each golden question is answered with every case
    (hallucinated and faithful) written about one context, judged against that context."""

    def __init__(self) -> None:
        by_context: dict[str, list[str]] = {}
        for _, claim, context in HALLUCINATIONS + FAITHFUL:
            by_context.setdefault(context, []).append(claim)
        # The context's doc_id only has to be in the corpus: the judge reads the text.
        answers = [
            Answer(" ".join(claims), [Context("sso-setup", text)]) for text, claims in by_context.items()
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
        config = write_project(tmp_path / name, TINY_CONFIG.replace("min_length = 1", tokenizer))
        assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
        reports.append(json.loads((tmp_path / name / "build" / "report.json").read_text(encoding="utf-8")))
        caches.append((tmp_path / name / ".cache" / "verdicts.json").read_text(encoding="utf-8"))
    defaults, tuned = reports
    assert tuned["settings"]["tokenizer"]["stemmer"] == "porter"
    assert tuned["aggregate"]["hit@5"] < defaults["aggregate"]["hit@5"]  # the retriever read them
    answers = [row["answer"] for row in defaults["questions"]]
    assert [row["answer"] for row in tuned["questions"]] == answers
    assert caches[0] == caches[1]  # every verdict, in full
    assert any(a["unsupported"] for a in answers) and any(a["faithfulness"] > 0 for a in answers)

"""The lexical judge and the guard both judges share: known hallucinations are caught,
faithful paraphrases pass, and each verdict says why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from judge_cases import FAITHFUL, HALLUCINATIONS, KINDS, REFUND_60_DAYS, REFUND_FAITHFUL, REFUNDS, VAT

from conftest import SHIPPED, TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, run_cli, write_project
from rag_regress.answers.judges import Verdict, decide
from rag_regress.answers.judges.claims import clauses, split_sentences, windows
from rag_regress.answers.judges.guard import compare, guard, names
from rag_regress.answers.judges.lexical import LexicalJudge, coverage
from rag_regress.answers.judges.words import content_terms, quantities, read
from rag_regress.api import Answer, Context, System

JUDGE = LexicalJudge(threshold=0.5)


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
        ("Refunds within 60 days.", "Refunds within 30 days.", "states 60 days, the context says 30 days"),
        (
            "It expires after 60 hours.",
            "It expires after 60 minutes.",
            "states 60 hours, the context says 60 minutes",
        ),
        ("Saves 15% yearly.", "Saves 20% yearly.", "states 15%, the context says 20%"),
        (
            "Reports go out on Friday.",
            "Reports go out on Monday.",
            "names the date friday, which the context does not",
        ),
        (
            "Monthly plans are refundable.",
            "Monthly plans are not refundable.",
            "says the opposite of the context about 'refund'",
        ),
        (
            "Exports are not emailed.",
            "Exports are emailed within 24 hours.",
            "says the opposite of the context about 'email'",
        ),
        ("Refunds arrive after 10 days.", "Refunds arrive within 10 days.", "bounds 10 days the other way"),
    ],
)
def test_guard_names_the_problem(claim: str, window: str, problem: str) -> None:
    found = guard(claim, window)
    assert found is not None and found.startswith(problem), found


@pytest.mark.parametrize(
    ("claim", "window"),
    [
        ("A 14-day trial.", "Every workspace gets a 14 day trial."),
        ("Twelve characters at least.", "At least 12 characters."),
        ("Up to 2 business days.", "Verification takes up to 2 business days."),
        # a negation elsewhere in the window does not contradict a plain clause
        ("Annual plans can be refunded.", "Annual plans can be refunded, but after that no refund is given."),
        ("No credit card is needed.", "A free trial, and no credit card is needed to sign up."),
        ("It takes an hour and a half.", "It takes 90 minutes."),
        ("Sessions end after two days.", "Sessions end after 48 hours."),
        ("Uploads are limited to 500MB.", "Uploads are limited to 500 MB."),
        ("The feature is not enabled.", "The feature is disabled."),
        ("B is smaller than A.", "A is larger than B."),
        # "two-factor" is a word, not the number 2; "takes up to" is "takes" + "up to"
        (
            "After you turn on two-factor authentication, you get 10 codes.",
            "After you enable 2FA, you get 10 codes.",
        ),
        (
            "Verification can take up to 2 days.",
            "Owners must call support, and verification takes up to 2 days.",
        ),
        # "without X" says what "unless you provide X" says; "a second time" is not a duration
        ("Without a valid VAT number, you pay VAT at your local rate.", VAT),
        ("Billed entries are never charged a second time.", "Billed entries are never charged twice."),
        ("Each key can make 30 requests a minute.", "Each key can make 30 requests per minute."),
        # "a week" is what a window that speaks of "that week" means; people are recipients;
        # what is not needed, you can do without; "to avoid locking" is "so you don't lock"
        (
            "The expected hours for a week drop on holidays.",
            "Holidays reduce the expected hours for that week.",
        ),
        ("You can send it to at most twenty people.", "You can send it to up to 20 recipients."),
        ("You can sign up without entering a credit card.", "No credit card is needed to sign up."),
        (
            "Add your own IP first so you don't lock yourself out.",
            "Add your own IP first to avoid locking yourself out.",
        ),
        (
            "It signs you out at 14 days or 12 idle hours, whichever is sooner.",
            "It signs you out after 14 days or 12 idle hours, whichever comes first.",
        ),
        # "only one" is a number; steps are no list; "and higher" is "and above"; anyone is someone
        ("Each company gets only one trial.", "Each company gets one trial."),
        ("Scan the QR code first and then enter the code.", "Scan the QR code, then enter the code."),
        (
            "Owners on the Business plan and higher can require 2FA.",
            "Owners on the Business plan and above can require 2FA.",
        ),
        (
            "When a member is unassigned, their seat is freed.",
            "When someone is unassigned in the identity provider, their seat is freed.",
        ),
        (
            "Enterprise keys get ten times the requests of Solo keys.",
            "Solo keys get 30 requests and Enterprise keys 300.",
        ),
        # "a day" of "a day in the last 60 days" is no duration; "at any given time" is "at a time"
        (
            "You can add an entry for a day in the last 60 days.",
            "You can add entries up to 60 days in the past.",
        ),
        ("No more than one timer can run at any given time.", "Only one timer can run at a time."),
        # an answer's "No," denies no word; "times as many" says no "some"
        ("No, cancelling your subscription won't remove your data.", "Cancelling does not delete your data."),
        (
            "Enterprise keys get three times as many requests as Team keys.",
            "Each key on Team gets 100 requests, and on Enterprise 300.",
        ),
        # a time of day belongs to no party
        ("Slack can remind members at 5 p.m.", "Members can get a Slack reminder at 17:00."),
        # a ratio is not a count; "once X, you ..." puts X before what follows
        ("Enterprise keys get three times as many requests.", "Team keys get 100 requests, Enterprise 300."),
        (
            "SSO has to be verified before you can switch on Enforce SSO.",
            "Once SSO is verified you can switch on Enforce SSO.",
        ),
    ],
)
def test_guard_lets_agreeing_windows_through(claim: str, window: str) -> None:
    assert guard(claim, window) is None


def test_quantities_read_units_bounds_and_number_words() -> None:
    found = quantities(
        read("a 14-day trial, $20 per seat, 20% off, up to 100,000 rows, twelve characters, 2 business days")
    )
    assert [(q.value, q.dimension, q.bound) for q in found] == [
        (14 * 86400, "time", ""),
        (20, "$", ""),
        (20, "%", ""),
        (100000, "row", "at_most"),
        (12, "charact", ""),
        (2 * 86400, "workdays", ""),  # business days are not 48 hours
    ]
    assert [q.value for q in quantities(read("an hour and a half, half a day, five hundred entries"))] == [
        5400,
        43200,
        500,
    ]
    # Numbers in words, times of day, money in words; a rate's "a minute" and "a second time"
    # are not durations of one minute or one second.
    found = quantities(read("twenty-five seats, at 5 p.m., at 17:00, twelve dollars, 30 requests a minute"))
    assert [(q.value, q.dimension) for q in found] == [
        (25, "seat"),
        (17 * 60, "clock"),
        (17 * 60, "clock"),
        (12, "$"),
        (30, "request"),
    ]
    assert quantities(read("It is charged a second time, twice a day.")) == []
    assert [q.value for q in quantities(read("one and a half hours, an hour and three quarters"))] == [
        5400,
        6300,
    ]
    assert [q.bound for q in quantities(read("iOS 16 or later, Android 10 or earlier"))] == [
        "at_least",
        "at_most",
    ]
    assert [q.value for q in quantities(read("from a quarter of an hour to a full day"))] == [900, 86400]


@pytest.mark.parametrize(
    "text",
    [
        "Uploads are limited to 500MB.",
        "The program started in the early 1960s.",
        "53BP1 binds at Baltimore's lab.",
        "Sessions can't exceed 10GB.",
        "Beta-cells in the caf\u00e9\u2019s \u201cbest\u201d mode.",
        "Das Gerät zählt Schritte.",
    ],
)
def test_a_sentence_reads_the_same_alone_and_in_its_context(text: str) -> None:
    """Digits glued to letters, possessives, hyphens, curly quotes, non-ASCII letters: the
    words of a sentence are the same whether it stands alone or sits in a passage."""
    context = f"Something else first. {text} And something after it."
    assert compare(text, text, context) is None
    assert set(content_terms(text)) <= set(content_terms(context))
    assert coverage(text, context) == 1.0


def test_names_are_capitalised_words_acronyms_and_alphanumerics() -> None:
    assert names("Tidemark supports SSO with Okta, 2FA and SHA256 on the Team plan.") == {
        "sso",
        "okta",
        "2fa",
        "sha256",
        "team",
    }


def test_judge_names_may_be_used_by_any_context_and_no_other_name_may() -> None:
    """[judge] names (the product's) pass where the context never says them, under both
    judges' decision, and only those: another name is still the context's to give. The
    judge's identity records them, so a cache or a baseline of other names is not reused."""
    context = "A workspace must always have at least one Owner, who controls billing."
    ours, theirs = (
        "Each Tidemark workspace must always have one or more Owners.",
        "Each Acme workspace must always have one or more Owners.",
    )
    named = LexicalJudge(0.5, ("Tidemark",))
    assert [v.supported for v in JUDGE.verdicts([(ours, (context,))])] == [False]
    assert [v.supported for v in named.verdicts([(ours, (context,)), (theirs, (context,))])] == [True, False]
    believe = [(1.0, window) for window in windows([context])]
    assert decide(ours, believe, 0.5, context=context, names=("Tidemark",)).supported
    assert not decide(ours, believe, 0.5, context=context).supported
    assert named.identity["names"] == ["Tidemark"] and "names" not in JUDGE.identity


# [judge] tiers: a team's own ordered plans (or roles), not the demo's
PLANS = ("Starter", "Growth", "Scale")
AUDIT = "Every change is kept in the audit log. The audit log is available on the Growth plan and above."
PRICES = "Starter is free, Growth is $15 per seat per month and Scale is $40 per seat per month."
ROLES = ("Viewer", "Editor", "Admin")
EXPORTS = "Exports can be started by anyone with the Editor role or higher."
ROLE_LIST = "Each member has one of three roles: Viewer, Editor or Admin."


@pytest.mark.parametrize(
    ("tiers", "contexts", "right", "wrong"),
    [
        (PLANS, (AUDIT,), "The audit log is available on the Scale plan.", None),
        (PLANS, (AUDIT,), "The audit log is available on the Growth and Scale plans.", None),
        (
            PLANS,
            (AUDIT, PRICES),
            "The audit log comes with Growth or higher.",
            "The audit log is available on the Starter plan.",
        ),
        (
            PLANS,
            (AUDIT, PRICES),
            "The audit log is available on the Growth and Scale plans.",
            "The audit log is available on the Starter, Growth and Scale plans.",
        ),
        (PLANS, (AUDIT, PRICES), None, "The audit log is available on the Growth plan and below."),
        (PLANS, (AUDIT,), "The audit log is included in Scale.", "The audit log is limited to Growth."),
        (ROLES, (EXPORTS,), "Exports can be started by an Admin.", None),
        (ROLES, (EXPORTS, ROLE_LIST), None, "Exports can be started by any Viewer or higher."),
    ],
)
def test_judge_tiers_reach_what_a_bound_says_and_no_further(
    tiers: tuple[str, ...], contexts: tuple[str, ...], right: str | None, wrong: str | None
) -> None:
    """With [judge] tiers (lowest first), "the Growth plan and above" names Growth and every
    tier above it: a claim may name any of them or list them, under the lexical judge and
    under a judge that believes everything; a tier it leaves out, named where the context puts
    the bound, is caught even where another sentence of the context names that tier."""
    tiered = LexicalJudge(0.5, (), tiers)
    context = "\n".join(contexts)
    believe = [(1.0, window) for window in windows(contexts)]
    if right is not None:
        (verdict,) = tiered.verdicts([(right, contexts)])
        assert verdict.supported, verdict.reason
        assert decide(right, believe, 0.5, context=context, tiers=tiers).supported
    if wrong is not None:
        (verdict,) = tiered.verdicts([(wrong, contexts)])
        assert not verdict.supported and "leaves out" in verdict.reason, verdict.reason
        assert not decide(wrong, believe, 0.5, context=context, tiers=tiers).supported


def test_judge_tiers_are_needed_for_a_tier_the_context_reaches_and_are_in_the_identity() -> None:
    """Without [judge] tiers a tier the context only reaches is a name it does not use; the
    judge's identity records the tiers in their order, so a cache or baseline of other tiers
    (or none) is not reused."""
    claim = "The audit log is available on the Scale plan."
    (verdict,) = JUDGE.verdicts([(claim, (AUDIT,))])
    assert not verdict.supported and "names 'scal'" in verdict.reason
    assert LexicalJudge(0.5, (), PLANS).identity["tiers"] == list(PLANS)
    assert "tiers" not in JUDGE.identity


BOARDS = (
    "Pausing a board keeps all of its cards in search results. Paused boards stop sending notifications. "
    "You can resume a paused board at any time, whereas archiving a board removes its cards from search "
    "results."
)


def test_two_facts_of_two_sentences_joined_in_one_claim_are_judged_each_on_its_own() -> None:
    """The window that best covers a claim joining two sentences' facts can hold one of them and
    the opposite of the other; the lexical judge then judges each clause on its own window,
    and a clause its own window contradicts is still caught."""
    joined = (
        "Pausing a board keeps its cards in search results, whereas archiving a board removes its "
        "cards from search results."
    )
    wrong = joined.replace("removes its cards from", "keeps its cards in")
    right, caught = JUDGE.verdicts([(joined, (BOARDS,)), (wrong, (BOARDS,))])
    assert right.supported, right.reason
    assert not caught.supported and "opposite" in caught.reason, caught.reason


# -- each kind of hallucination, both ways --------------------------------------------------


@pytest.mark.parametrize(("kind", "context", "wrong", "right"), KINDS, ids=[c[0] for c in KINDS])
def test_each_kind_is_caught_and_its_faithful_paraphrase_passes(
    kind: str, context: str, wrong: str, right: str
) -> None:
    caught, passed = JUDGE.verdicts([(wrong, (context,)), (right, (context,))])
    assert not caught.supported, f"{kind}: {wrong!r} judged supported"
    assert passed.supported, f"{kind}: {right!r} unsupported: {passed.reason}"


@pytest.mark.parametrize(("kind", "context", "wrong", "right"), KINDS, ids=[c[0] for c in KINDS])
def test_the_guard_holds_under_a_judge_that_believes_everything(
    kind: str, context: str, wrong: str, right: str
) -> None:
    """What an NLI model gets wrong, the guard still catches: give every window the top score
    (a model sure of everything) and each hallucination is still unsupported, each faithful
    paraphrase still supported."""
    split = windows([context])
    believe = [(1.0, window) for window in split]
    assert not decide(wrong, believe, 0.5, context=context).supported, kind
    assert decide(right, believe, 0.5, context=context).supported, kind


def test_a_clause_appended_to_a_true_sentence_is_judged_on_its_own() -> None:
    assert clauses("Exports hold up to 100,000 rows, which includes archived projects.") == [
        "Exports hold up to 100,000 rows",
        "which includes archived projects.",
    ]
    assert clauses("Export to CSV, PDF, or XLSX.") == [
        "Export to CSV, PDF, or XLSX."
    ]  # a list is one statement


def test_a_number_another_sentence_gives_something_else_is_not_the_claims() -> None:
    context = (
        "Reset links expire after 60 minutes. Check your spam folder if the email has not arrived. "
        "You can sign in again once the password is changed."
    )
    invented, faithful = (
        "Once the password is changed, you can sign in again within 60 minutes.",
        "Once the password is changed, you can sign in again.",
    )
    wrong, right = JUDGE.verdicts([(invented, (context,)), (faithful, (context,))])
    assert not wrong.supported and "60 minutes" in wrong.reason, wrong
    assert right.supported, right


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
    assert decide(claim, doubting, 0.9, context=context).supported


def _sentences_of(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        text = document.get("text") or ""
        found += [(sentence, text) for sentence in split_sentences(text)]
    return found


def _assert_self_supported(pairs: list[tuple[str, str]]) -> None:
    """Each sentence against its own document, without the shortcut for copied text: every
    term is found and no check of the guard objects, so claims and contexts read alike."""
    wrong = [
        (sentence, problem)
        for sentence, text in pairs
        if (
            problem := compare(sentence, sentence, text)
            or (None if coverage(sentence, text) == 1.0 else "coverage")
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

"""A judge's version says which rules made its verdicts: reports record it, the gate compares it."""

from __future__ import annotations

from rag_regress.answers.judges import JUDGE_VERSION, RULES_DIGEST, rules_digest
from rag_regress.answers.judges.lexical import LexicalJudge


def test_the_rules_are_the_ones_the_judge_version_names() -> None:
    """A change to the judges' code or word lists ships only with a new JUDGE_VERSION, so a
    team's gate refuses its old baseline (exit 2) instead of comparing two judges' verdicts."""
    now = rules_digest()
    assert now == RULES_DIGEST, (
        f"the judges' rules changed (digest {RULES_DIGEST} -> {now}): bump JUDGE_VERSION "
        f"(now {JUDGE_VERSION}) in answers/judges/__init__.py, set RULES_DIGEST = {now!r}, "
        "and say what changed in CHANGELOG.md"
    )


def test_the_identity_reports_record_carries_the_version_and_the_rules() -> None:
    identity = LexicalJudge(0.5).identity
    assert identity["name"] == "lexical"
    assert identity["version"] == JUDGE_VERSION and identity["rules"] == rules_digest()

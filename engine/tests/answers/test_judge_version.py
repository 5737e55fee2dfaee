"""A judge's version says which rules made its verdicts: reports record it, the gate compares it."""

from __future__ import annotations

import pytest

from rag_regress.answers.judges import BUILTIN, JUDGE_VERSIONS, RULES_DIGEST, backends, rules_digest
from rag_regress.answers.judges.lexical import LexicalJudge


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_the_rules_are_the_ones_the_judge_version_names(name: str) -> None:
    """A change to a judge's code or word lists ships only with a new version, so a team's gate
    refuses its old baseline (exit 2) instead of comparing two judges' verdicts."""
    now = rules_digest(name)
    assert now == RULES_DIGEST[name], (
        f"the {name} judge's rules changed (digest {RULES_DIGEST[name]} -> {now}): bump its version "
        f"(now {JUDGE_VERSIONS[name]}) in JUDGE_VERSIONS, answers/judges/__init__.py, set its "
        f"RULES_DIGEST to {now!r}, and say what changed in CHANGELOG.md"
    )


def test_a_backend_module_is_no_rule_of_another_backend(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each backend's digest leaves the other backends' modules out: adding or changing the
    NLI judge never moves the lexical judge's version."""
    assert rules_digest("lexical") != rules_digest("nli")


def test_the_identity_reports_record_carries_the_version_and_the_rules() -> None:
    identity = LexicalJudge(0.5).identity
    assert identity["name"] == "lexical"
    assert identity["version"] == JUDGE_VERSIONS["lexical"] and identity["rules"] == rules_digest("lexical")


def test_backends_are_the_builtin_ones_and_those_packages_register() -> None:
    assert set(BUILTIN) <= set(backends())

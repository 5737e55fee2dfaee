"""[gate] flip_rule = "net": a per-question check fails on a net loss (newly failing beyond
newly passing by more than allowed_net_loss, or a significant one-sided exact sign test of its
flips, min-P adjusted over the checks), else its newly failing questions are listed for review.
Must-pass questions and floors fail whatever the rule. On small hand-built reports; the exact
tests' numbers worked out by hand."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats

from conftest import TINY_CONFIG, as_report, run_cli, write_project
from flip_reports import report, row
from rag_regress.gate.flipped import NET, STRICT
from rag_regress.gate.rules import GateResult
from rag_regress.gate.rules import compare as compare_reports
from rag_regress.gate.stats import flip_p, min_p_flips
from rag_regress.retrieval.names import parse_metric
from rag_regress.settings.config import GateSettings, load_config

BASELINE_PATH = Path("evals/baseline.json")


def gate(
    rule: str = NET,
    allowed_net_loss: int | float = 0,
    checks: tuple[str, ...] = ("recall@5",),
    floors: dict[str, float] | None = None,
) -> GateSettings:
    """Only mrr is gated, with a tolerance no drop crosses: the flip rule decides alone."""
    return GateSettings(
        metrics=[parse_metric("mrr")],
        tolerance=1.0,
        floors={parse_metric(m): v for m, v in (floors or {}).items()},
        checks={parse_metric(name): 1.0 for name in checks},
        flip_rule=rule,  # type: ignore[arg-type]  # a Literal, validated
        allowed_net_loss=allowed_net_loss,
    )


def flipped(n: int, failing: range, passing: range) -> tuple[dict[str, Any], dict[str, Any]]:
    """(now, baseline) of n questions: those in `failing` pass recall@5 in the baseline and
    fail it now, those in `passing` the other way round; the rest pass in both."""
    before = [row(f"q{i:02d}", 0.0 if i in passing else 1.0) for i in range(n)]
    after = [row(f"q{i:02d}", 0.0 if i in failing else 1.0) for i in range(n)]
    return report(*after), report(*before)


def judged(now: dict[str, Any], before: dict[str, Any], settings: GateSettings) -> GateResult:
    return compare_reports(as_report(now), as_report(before), settings, BASELINE_PATH)


def blocking(result: GateResult) -> set[str]:
    return {failure.subject for failure in result.problems}


def test_a_few_flips_both_ways_pass_the_net_rule_listed_for_review_and_fail_the_strict_one() -> None:
    """3 of 20 questions newly fail recall@5 and 3 newly pass: no net loss, p = P(X >= 3),
    X ~ Bin(6, 1/2) = 42/64. The strict rule fails all three; the net rule passes the check
    and lists the three for review, with every number in its verdict."""
    now, before = flipped(20, range(0, 3), range(3, 6))
    assert blocking(judged(now, before, gate(STRICT))) == {"q00", "q01", "q02"}

    result = judged(now, before, gate(NET))
    assert result.passed
    (flips,) = result.flips
    assert flips.rule == NET and not flips.over and flips.net_loss == 0
    assert flips.p == pytest.approx(42 / 64) and flips.p_adjusted == pytest.approx(42 / 64)
    assert flips.summary() == (
        "recall@5: 3 newly failing, 3 newly passing of 20; net rule: net loss b - c = 3 - 3 = 0, within "
        "the 0 allowed; exact one-sided sign test p=0.6562, adjusted p=0.6562, not significant at alpha "
        "0.05: passes; its newly failing questions are listed for review"
    )
    review = [(f.kind, f.subject, f.blocking) for f in result.failures]
    assert review == [("newly failing", q, False) for q in ("q00", "q01", "q02")]
    (entry,) = result.to_dict()["flips"]
    assert entry["rule"] == "net" and entry["fails"] is False and entry["net_loss"] == 0
    assert entry["newly_failing"] == ["q00", "q01", "q02"] and entry["newly_passing"] == ["q03", "q04", "q05"]


def test_a_net_gain_passes_the_net_rule() -> None:
    """2 newly failing, 9 newly passing: a net gain; p = P(X >= 2 | Bin(11, 1/2)) = 0.9941."""
    now, before = flipped(30, range(0, 2), range(2, 11))
    result = judged(now, before, gate(NET))
    assert result.passed
    assert "net loss b - c = 2 - 9 = -7 (a net gain), within the 0 allowed" in result.flips[0].summary()


@pytest.mark.parametrize(
    ("allowance", "passes"), [(0, False), (1, False), (2, True), (0.1, True), (0.09, False)]
)
def test_a_net_loss_beyond_the_allowance_fails(allowance: int | float, passes: bool) -> None:
    """3 newly failing, 1 newly passing of 20: a net loss of 2 (p = 5/16, not significant).
    It fails beyond an allowance of 0 or 1, passes at 2 or at a share of 0.1 (2 of 20 questions);
    0.09 of 20 is 1.8, rounded down to 1: fails."""
    now, before = flipped(20, range(0, 3), range(3, 4))
    result = judged(now, before, gate(NET, allowance))
    (flips,) = result.flips
    assert flips.p == pytest.approx(5 / 16) and not flips.significant
    assert result.passed is passes and flips.over is not passes
    assert ("beyond" if not passes else "within") in flips.summary()
    assert blocking(result) == (set() if passes else {"q00", "q01", "q02"})


def test_a_significant_exact_test_fails_within_the_allowance() -> None:
    """6 newly failing and none newly passing of 40, with 10 allowed: within the allowance, but
    p = 1 / 2**6 = 0.0156 <= 0.05 (one check: adjusted p = p). A consistent loss fails."""
    now, before = flipped(40, range(0, 6), range(0))
    result = judged(now, before, gate(NET, 10))
    (flips,) = result.flips
    assert flips.p == flips.p_adjusted == pytest.approx(1 / 64)
    assert flips.over and not result.passed
    assert blocking(result) == {f"q{i:02d}" for i in range(6)}
    assert (
        "within the 10 allowed" in flips.summary() and "significant at alpha 0.05: fails" in flips.summary()
    )


def test_the_exact_test_is_adjusted_across_the_checks() -> None:
    """5 questions newly fail recall@5 and 5 others hit@5, none newly pass (allowance 10): each
    p = 1/32 = 0.031. Alone, a check fails. Together, on different questions, the min-P
    adjustment over both is 1 - (1 - 1/32)**2 = 0.0615 > 0.05: both pass, for review. On the
    same questions (the checks move together) it costs nothing: 1/32 again, both fail."""
    before = [row(f"q{i:02d}") for i in range(30)]
    apart = [row(f"q{i:02d}", 0.0 if i < 5 else 1.0, 0.0 if 5 <= i < 10 else 1.0) for i in range(30)]
    now, baseline = report(*apart), report(*before)

    alone = judged(now, baseline, gate(NET, 10, ("recall@5",)))
    assert alone.flips[0].p_adjusted == pytest.approx(1 / 32) and not alone.passed

    both = judged(now, baseline, gate(NET, 10, ("recall@5", "hit@5")))
    assert [f.p for f in both.flips] == [pytest.approx(1 / 32)] * 2
    assert [f.p_adjusted for f in both.flips] == [pytest.approx(1 - (31 / 32) ** 2)] * 2
    assert both.passed and len(both.failures) == 10
    assert "adjusted p=0.0615, not significant" in both.flips[0].summary()

    together = [row(f"q{i:02d}", 0.0 if i < 5 else 1.0) for i in range(30)]
    same = judged(report(*together), baseline, gate(NET, 10, ("recall@5", "hit@5")))
    assert [f.p_adjusted for f in same.flips] == [pytest.approx(1 / 32)] * 2 and not same.passed


def test_a_broken_must_pass_question_fails_whatever_the_net_rule_says() -> None:
    """q00 is must-pass and newly fails recall@5 (and finds nothing), while two others newly
    pass: a net gain, so the check holds, but the must-pass question fails the gate."""
    before = [row("q00", must_pass=True), *(row(f"q{i:02d}", 0.0 if i < 3 else 1.0) for i in range(1, 20))]
    after = [row("q00", 0.0, must_pass=True), *(row(f"q{i:02d}") for i in range(1, 20))]
    result = judged(report(*after), report(*before), gate(NET))
    assert not result.flips[0].over
    assert blocking(result) == {"q00"}
    (failure,) = result.problems
    assert failure.kind == "must-pass, newly failing"


def test_a_must_pass_question_that_newly_fails_a_check_is_never_traded() -> None:
    """q00 is must-pass and still finds its document (hit@5 holds) but newly fails recall@5;
    two others newly pass it. The net rule passes the check; q00 fails the gate anyway."""
    before = [row("q00", must_pass=True), *(row(f"q{i:02d}", 0.0 if i < 3 else 1.0) for i in range(1, 20))]
    after = [row("q00", 0.5, 1.0, must_pass=True), *(row(f"q{i:02d}") for i in range(1, 20))]
    result = judged(report(*after), report(*before), gate(NET))
    assert not result.flips[0].over and blocking(result) == {"q00"}
    (failure,) = result.problems
    assert failure.kind == "newly failing"
    assert "must-pass: fails whatever the flip rule allows" in failure.message


def test_a_floor_fails_whatever_the_net_rule_says() -> None:
    """Flips both ways (no net loss) pass the net rule, but recall@5 = 0.85 is below its 0.9
    floor: exit 3 all the same."""
    now, before = flipped(20, range(0, 3), range(3, 6))
    result = judged(now, before, gate(NET, floors={"recall@5": 0.9}))
    assert not result.flips[0].over
    assert [(f.kind, f.subject) for f in result.problems] == [("floor", "recall@5")]


def test_flip_rule_and_allowed_net_loss_are_read_from_eval_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default is the strict rule with no net loss allowed; a rule the gate does not know
    is exit 2 at its line, naming both rules."""
    assert (load_config(write_project(tmp_path / "default")).gate.flip_rule, 0) == ("strict", 0)
    net = TINY_CONFIG.replace(
        "tolerance = 0.02\n", 'tolerance = 0.02\nflip_rule = "net"\nallowed_net_loss = 0.05\n'
    )
    config = load_config(write_project(tmp_path / "net", config=net)).gate
    assert (config.flip_rule, config.allowed_net_loss) == ("net", 0.05)
    wrong = TINY_CONFIG.replace("tolerance = 0.02\n", 'tolerance = 0.02\nflip_rule = "loose"\n')
    assert run_cli(["--config", str(write_project(tmp_path / "wrong", config=wrong)), "eval"]) == 2
    err = capsys.readouterr().err
    assert "gate.flip_rule" in err and '"strict"' in err and '"net"' in err


# -- the exact test and its adjustment (stats.py) ---------------------------------------------------


@pytest.mark.parametrize(("b", "c"), [(1, 0), (3, 3), (6, 0), (2, 9), (12, 4), (40, 25)])
def test_flip_p_is_the_exact_one_sided_binomial_test(b: int, c: int) -> None:
    want = scipy.stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue
    assert flip_p(b, c) == pytest.approx(want, rel=1e-12)


def test_no_newly_failing_question_is_no_evidence_of_a_loss() -> None:
    assert flip_p(0, 0) == flip_p(0, 7) == 1.0


def test_min_p_adjustment_is_exact_for_a_few_questions_and_never_below_the_raw_p() -> None:
    """Enumerated (10 changed questions <= exact_limit): one check's adjusted p is its raw p;
    checks on different questions combine as independent discrete tests. Drawn at random (40
    questions), every adjusted p stays at or above its raw p, and the order of the raw ps."""
    changes = np.zeros((10, 2))
    changes[:4, 0], changes[4:6, 0] = -1, 1  # b = 4, c = 2
    changes[6:10, 1] = -1  # b = 4, c = 0
    raw, adjusted = min_p_flips(changes, seed=1, resamples=1000)
    assert raw == [pytest.approx(22 / 64), pytest.approx(1 / 16)]
    # Step-down: hit@5's p = 1/16 first: a pattern reaches it when check 2 keeps all 4 drops
    # (1/16) or check 1 gets 6 drops of 6 (p' = 1/64; 5 of 6 gives 7/64 > 1/16): 1 - 15/16 * 63/64.
    assert adjusted == [pytest.approx(22 / 64), pytest.approx(1 - (15 / 16) * (63 / 64))]
    one, one_adjusted = min_p_flips(changes[:, :1], seed=1, resamples=1000)
    assert one == one_adjusted

    rng = np.random.default_rng(7)
    drawn = rng.choice([-1.0, 0.0, 1.0], size=(40, 3), p=[0.2, 0.6, 0.2])
    raw, adjusted = min_p_flips(drawn, seed=3, resamples=2000, exact_limit=16)
    assert all(q >= p - 1e-12 for p, q in zip(raw, adjusted, strict=True))
    order = np.argsort(raw, kind="stable")
    assert all(adjusted[a] <= adjusted[b] + 1e-12 for a, b in itertools.pairwise(order))

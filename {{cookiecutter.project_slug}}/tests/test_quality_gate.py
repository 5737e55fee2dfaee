# YOUR TESTS (team-owned: `cruft update` never touches this file). They test your system,
# your data and your baseline; tests/engine/ tests the template's engine.
"""YOUR TESTS (team-owned): the quality gate as tests, on your system (retriever.py and
generator.py), your eval.toml, your golden set and your committed baseline.

Run with `pytest -m gate` (the default run skips these: they test your data and retriever,
not the code). Each test checks one of the gate's rules and, when it fails, lists the
failures with the gate's own messages and details, so CI output names what broke. Newly
failing questions are listed by `nox -s gate` but, as there, do not fail on their own.
"""

from __future__ import annotations

import pytest
from conftest import PROJECT_ROOT

from {{ cookiecutter.package_name }}.cli import team_system
from {{ cookiecutter.package_name }}.errors import EvalInputError
from {{ cookiecutter.package_name }}.gate.receipt import check_same_data
from {{ cookiecutter.package_name }}.gate.rules import Failure, GateResult, compare
from {{ cookiecutter.package_name }}.inputs.reports import Report, read_report
from {{ cookiecutter.package_name }}.run import evaluate
from {{ cookiecutter.package_name }}.settings.config import load_config

pytestmark = pytest.mark.gate


@pytest.fixture(scope="module")
def gate_run() -> tuple[Report, GateResult]:
    """Evaluate your system and compare it with the committed baseline, once."""
    try:
        config = load_config(PROJECT_ROOT / "eval.toml")
        baseline = read_report(config.baseline)
        check_same_data(baseline, config, config.baseline, accept=False)
        report = evaluate(config, team_system())
        return report, compare(report, baseline, config.gate, config.baseline, config.stats)
    except EvalInputError as error:
        pytest.fail(f"the gate cannot run (exit code 2 in `nox -s gate`):\n{error}", pytrace=False)


@pytest.fixture(scope="module")
def gate_result(gate_run: tuple[Report, GateResult]) -> GateResult:
    return gate_run[1]


def describe(failures: list[Failure]) -> str:
    """Every failure with its details, one per block, as `nox -s gate` prints them."""
    blocks = []
    for failure in failures:
        blocks.append(
            "\n".join([f"[{failure.kind}] {failure.message}", *(f"    {d}" for d in failure.details)])
        )
    return f"{len(failures)} failure(s):\n" + "\n".join(blocks)


def of_kind(result: GateResult, kind: str) -> list[Failure]:
    """Failures of one kind that fail the gate (a question can be both 'must-pass' and
    'newly failing')."""
    return [failure for failure in result.problems if kind in failure.kind.split(", ")]


def test_aggregates_meet_their_floors(gate_result: GateResult) -> None:
    """No aggregate metric is below its floor in [gate.floors], no tag below [gate.slices]."""
    failures = of_kind(gate_result, "floor")
    assert not failures, describe(failures)


def test_no_significant_regression(gate_result: GateResult) -> None:
    """No gated mean (overall or per tag) dropped beyond the tolerance with Holm p <= alpha."""
    failures = of_kind(gate_result, "regression")
    assert not failures, describe(failures)


def test_must_pass_questions_pass(gate_result: GateResult) -> None:
    """Every must-pass question retrieves a relevant document in the top k."""
    failures = of_kind(gate_result, "must-pass")
    assert not failures, describe(failures)


# Your own examples: the questions your users rely on most, each pinned to a document that
# must be in its top k whatever the averages do. Empty in a new project; add yours, e.g.
#     "q03": "single-sign-on-saml",
PINNED: dict[str, str] = {}


@pytest.mark.parametrize(("qid", "doc_id"), sorted(PINNED.items()))
def test_pinned_question_retrieves_its_document(
    gate_run: tuple[Report, GateResult], qid: str, doc_id: str
) -> None:
    """Each pinned question has its document in the top k."""
    report, _ = gate_run
    rows = {row.id: row for row in report.questions}
    assert qid in rows, f"{qid} is not in the golden set: update PINNED"
    rank = rows[qid].rank_of(doc_id)
    top = report.k
    assert rank is not None and rank <= top, f"{qid}: {doc_id} is at rank {rank}, not in the top {top}"

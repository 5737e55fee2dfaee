"""`baseline` checks the gate's settings against the baseline it wrote, and `baseline
--fit-floors` fixes exactly those it lists: on the tiny project and on a team-like copy of
it (floors the data cannot meet, a tag that is gone, a must-pass question that fails, a
check no question passes, no unanswerable question)."""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, TINY_CONFIG, TINY_GOLDEN, run_cli, write_project
from rag_regress.answers import stand_in
from rag_regress.api import ABSTENTION, Answer, Hit, System
from rag_regress.gate.fit import fitted_floor
from rag_regress.settings.config import load_config

# The tiny project as a team might leave it after changing retriever or data: every kind of
# setting `baseline` must flag, next to settings that hold and must stay as written.
TEAM_CONFIG = (
    TINY_CONFIG.replace(
        '"hit@5" = 0.5', '"hit@5" = 0.5                  # holds: kept\n"recall@5" = 0.95   # unmet'
    ).replace('"recall@5" = 1.0', '"recall@5" = 1.0\n"precision@5" = 0.5              # nobody passes')
    + """
[gate.slices.billing]              # one answerable question: q4, recall@5 0.5
"recall@5" = 0.9

[gate.slices.gone]                 # no question has this tag any more
"hit@5" = 0.5

[gate.slices.acronym]              # holds: kept
"hit@5" = 0.5
"""
)
# The fixes below are worked out by hand from BM25's scores on the tiny project (which
# settings hold, the fitted min_score); another shipped retriever scores differently.
BM25_NUMBERS = pytest.mark.skipif(
    not SHIPPED.build_retriever.__module__.endswith(".bm25"),
    reason="hand-worked numbers for BM25's scores on the tiny project; this project ships another retriever",
)

# "Export projects" retrieves export-data only: this must-pass question fails.
FAILING_MUST_PASS = {
    "id": "q6",
    "question": "Export projects",
    "relevant": {"api-keys": 1},
    "must_pass": True,
}


def toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def baseline(config: Path, capsys: pytest.CaptureFixture[str], *flags: str, system: System = SHIPPED) -> str:
    """Run `baseline` (exit 0: it wrote the file); return what it printed, stdout + stderr."""
    capsys.readouterr()
    assert run_cli(["--config", str(config), "baseline", "--quiet", *flags], system) == 0
    said = capsys.readouterr()
    return said.out + said.err


def abstained(config: Path) -> list[str]:
    report = json.loads(load_config(config).baseline.read_text(encoding="utf-8"))
    return [row["id"] for row in report["questions"] if row["answer"]["abstained"]]


def test_fitted_floor_is_the_baseline_minus_the_tolerance_rounded_down() -> None:
    assert fitted_floor(0.797, 0.02) == 0.77
    assert fitted_floor(0.875, 0.02) == 0.85
    assert fitted_floor(0.81, 0.01) == 0.8  # exact: no float noise rounds it to 0.79
    assert fitted_floor(0.01, 0.02) == 0.0


@pytest.mark.keyword
def test_baseline_of_the_tiny_project_warns_about_nothing_once_fitted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tiny project's gate settings hold on its baseline; `min_score` depends on the
    retriever's score scale, so it may need fitting once, and then nothing is left to fit."""
    said = baseline(project, capsys)
    assert "[gate." not in said and "must_pass" not in said
    baseline(project, capsys, "--fit-floors")
    assert "warning" not in baseline(project, capsys)
    assert "every setting holds" in baseline(project, capsys, "--fit-floors")


@BM25_NUMBERS
def test_baseline_lists_each_setting_it_does_not_meet_with_its_fix_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path, config=TEAM_CONFIG, golden=[*TINY_GOLDEN, FAILING_MUST_PASS])
    before = config.read_text(encoding="utf-8"), (tmp_path / "golden.jsonl").read_bytes()
    said = baseline(config, capsys)
    assert "warning: 5 of the gate's settings do not hold on the new baseline" in said
    expected = [
        "[gate.floors] recall@5 = 0.95: the new baseline's recall@5 is 0.700, below it",
        "fix: set it to 0.68 (the baseline minus the tolerance 0.02, rounded down)",
        "[gate.slices.billing] recall@5 = 0.9: the new baseline's recall@5 on tag 'billing' is 0.500",
        "fix: set it to 0.48",
        "[gate.slices.gone]: no answerable question of the golden set has the tag 'gone'",
        "[gate.checks] precision@5 = 0.5: no question passes it",
        "must-pass question q6: no relevant document in the top 5",
        "`nox -s baseline -- --fit-floors` applies these fixes",
    ]
    for text in expected:
        assert text in said, text
    line = TEAM_CONFIG.splitlines().index('"recall@5" = 0.95   # unmet') + 1
    assert f"eval.toml:{line}: [gate.floors] recall@5" in said
    assert "hit@5 = 0.5" not in said and "acronym" not in said, "settings that hold are not listed"
    assert (config.read_text(encoding="utf-8"), (tmp_path / "golden.jsonl").read_bytes()) == before


@BM25_NUMBERS
def test_fit_floors_applies_exactly_those_fixes_keeps_the_rest_and_the_gate_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path, config=TEAM_CONFIG, golden=[*TINY_GOLDEN, FAILING_MUST_PASS])
    old_text = config.read_text(encoding="utf-8")
    said = baseline(config, capsys, "--fit-floors")
    for change in [
        "golden.jsonl: q6 must_pass true -> false (re-flag it when fixed)",
        "eval.toml: [gate.floors] recall@5 = 0.95 -> 0.68",
        "eval.toml: [gate.slices.billing] recall@5 = 0.9 -> 0.48",
        "eval.toml: [gate.slices.gone] -> removed",
        "eval.toml: [gate.checks] precision@5 = 0.5 -> removed",
    ]:
        assert change in said, change
    assert "warning" not in said, "nothing is left to fix"
    gate = toml(config)["gate"]
    assert gate["floors"] == {"hit@5": 0.5, "recall@5": 0.68}
    assert gate["slices"] == {"billing": {"recall@5": 0.48}, "acronym": {"hit@5": 0.5}}
    assert "precision@5" not in gate["checks"] and gate["checks"]["recall@5"] == 1.0
    assert {key: value for key, value in toml(config).items() if key != "gate"} == {
        key: value for key, value in tomllib.loads(old_text).items() if key != "gate"
    }
    # Comments and layout stay: only the changed lines differ.
    new_lines = config.read_text(encoding="utf-8").splitlines()
    assert '"hit@5" = 0.5                  # holds: kept' in new_lines
    assert '"recall@5" = 0.68   # unmet' in new_lines, "a changed value keeps its comment's column"
    assert "[gate.slices.acronym]              # holds: kept" in new_lines
    diff = list(difflib.ndiff(old_text.splitlines(), new_lines))
    assert sorted(line[2:] for line in diff if line.startswith("- ")) == sorted(
        [
            '"recall@5" = 0.95   # unmet',
            '"precision@5" = 0.5              # nobody passes',
            '"recall@5" = 0.9',
            "[gate.slices.gone]                 # no question has this tag any more",
            '"hit@5" = 0.5',
            "",
        ]
    )
    added = sorted(line[2:] for line in diff if line.startswith("+ "))
    assert added == ['"recall@5" = 0.48', '"recall@5" = 0.68   # unmet']
    # The remade baseline matches the edited files: the gate passes on it, with no flag.
    golden = (tmp_path / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    assert [q["id"] for q in map(json.loads, golden) if q.get("must_pass")] == ["q1"]
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"]) == 0, capsys.readouterr().out
    # Run again: every setting holds now, nothing changes.
    fitted = config.read_text(encoding="utf-8")
    assert "every setting holds" in baseline(config, capsys, "--fit-floors")
    assert config.read_text(encoding="utf-8") == fitted


@BM25_NUMBERS
def test_fit_floors_removes_what_a_golden_set_without_unanswerable_questions_or_facts_cannot_evaluate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like a test collection imported from BEIR: every question answerable, no key facts."""
    golden = [
        {key: value for key, value in question.items() if key != "must_include"}
        for question in TINY_GOLDEN
        if question.get("answerable", True)
    ]
    text = TINY_CONFIG.replace('"hit@5" = 0.5', '"hit@5" = 0.5\nabstention = 0.8\nkey_facts = 0.7')
    config = write_project(tmp_path, config=text.replace("min_score = 0.0", "min_score = 1.8"), golden=golden)
    said = baseline(config, capsys)
    assert "[generation] min_score = 1.8: it misjudges 1 question(s) of the golden set (refuses 1" in said
    assert "fix: remove it: with no unanswerable question, never abstain" in said
    assert "[gate.floors] abstention = 0.8: the golden set has no unanswerable question" in said
    assert "[gate.floors] key_facts = 0.7: no question of the golden set has `must_include`" in said
    assert abstained(config) == ["q1"]

    said = baseline(config, capsys, "--fit-floors")
    assert "eval.toml: [generation] min_score = 1.8 -> removed" in said
    settings = toml(config)
    assert "min_score" not in settings["generation"]
    assert settings["gate"]["floors"] == {"hit@5": 0.5}
    assert abstained(config) == [], "without min_score the stand-in never abstains"
    assert "warning" not in said


@pytest.mark.keyword  # q6 misses its document only for a keyword retriever
def test_must_pass_flags_are_cleared_keeping_every_other_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        '{"id": "q1",  "question": "SSO", "relevant": {"sso-setup": 3}, "must_pass": true}\r\n',
        '{"must_pass":true,"id":"q6","question":"Export projects","relevant":{"api-keys":1},"tags":[]}\r\n',
        '{"id": "q4", "question": "download invoices", "relevant": {"invoices": 3}}\r\n',
    ]
    config = write_project(tmp_path)
    (tmp_path / "golden.jsonl").write_bytes("".join(lines).encode("utf-8"))
    baseline(config, capsys, "--fit-floors")
    after = (tmp_path / "golden.jsonl").read_bytes().decode("utf-8").splitlines(keepends=True)
    assert after == [lines[0], lines[1].replace('"must_pass":true', '"must_pass":false'), lines[2]]


class Scaled:
    """The shipped retriever with every score multiplied by `factor`: another scale."""

    def __init__(self, inner: Any, factor: float):
        self.inner, self.factor = inner, factor

    def search(self, question: str, depth: int) -> list[Hit]:
        return [Hit(hit.doc_id, hit.score * self.factor) for hit in self.inner.search(question, depth)]


@pytest.mark.keyword
def test_the_stand_in_abstains_the_same_way_whatever_the_scale_of_the_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """min_score is fitted to the golden set by `baseline --fit-floors`: scores 100 times
    larger give a threshold 100 times larger and the same questions refused."""
    unanswerable = [
        {"id": "q6", "question": "Is there a yearly plan?", "relevant": {}, "answerable": False},
        {"id": "q7", "question": "Are files encrypted?", "relevant": {}, "answerable": False},
    ]
    build = SHIPPED.build_retriever
    fitted = {}
    for factor in (1.0, 100.0):
        root = tmp_path / f"x{factor:g}"
        config = write_project(root, golden=[*TINY_GOLDEN, *unanswerable])
        system = System(lambda *a, f=factor: Scaled(build(*a), f), SHIPPED.build_generator)
        said = baseline(config, capsys, "--fit-floors", system=system)
        assert "[generation] min_score = 0 ->" in said, said
        fitted[factor] = (toml(config)["generation"]["min_score"], abstained(config))
    (low, refused_low), (high, refused_high) = fitted[1.0], fitted[100.0]
    assert refused_low == refused_high and refused_low, "the same questions refused at both scales"
    assert math.isclose(high, 100 * low, rel_tol=0.1)


def test_fit_min_score_misjudges_the_fewest_and_never_abstains_without_unanswerable_questions() -> None:
    pairs = [(1.0, False), (2.0, True), (3.0, False), (4.0, True), (None, True)]
    best = stand_in.fit_min_score(pairs)
    assert (best.refused, best.answered) == (1, 1) and 1.0 < best.min_score <= 2.0  # abstains on 1.0 and None
    scaled = stand_in.fit_min_score([(None if top is None else top * 100, ok) for top, ok in pairs])
    assert [stand_in.abstains(top, best.min_score) for top, _ in pairs] == [
        stand_in.abstains(None if top is None else top * 100, scaled.min_score) for top, _ in pairs
    ]
    assert stand_in.fit_min_score([(0.5, True), (9.0, True)]).min_score == -math.inf


@pytest.mark.keyword
def test_an_abstention_that_fails_a_check_names_the_setting_to_change(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline(project, capsys)
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace("min_score = 0.0", "min_score = 100.0"), encoding="utf-8")
    setting = "no hit, or top score below [generation] min_score = 100: `nox -s baseline -- --fit-floors`"
    assert run_cli(["--config", str(project), "gate"]) == 3
    assert f"abstained now ({setting} fits it)" in capsys.readouterr().out
    assert run_cli(["--config", str(project), "eval"]) == 0
    assert f"abstained on an answerable question ({setting} fits it)" in capsys.readouterr().out


@pytest.mark.keyword
def test_answers_of_a_team_generator_never_point_at_min_score(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A team's own generator that keeps the demo's min_score in [generation] decides by its
    own rule: neither the messages nor --fit-floors point at min_score."""

    class Refuses:
        def answer(self, question: str) -> Answer:
            return Answer(ABSTENTION, [], abstained=True)

    refuses = System(SHIPPED.build_retriever, lambda *args: Refuses())
    said = baseline(project, capsys, "--fit-floors", system=refuses)
    assert "min_score" not in said and "min_score = 0.0" in project.read_text(encoding="utf-8")
    assert run_cli(["--config", str(project), "eval"], refuses) == 0
    out = capsys.readouterr().out
    assert "abstained on an answerable question\n" in out and "min_score" not in out


def test_fit_floors_clears_a_vacuous_key_facts_check_with_its_allowed_flips_and_an_unsaid_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No question has `must_include`: every answer passes key_facts, so the check, its
    allowed flips and its place in [gate] metrics go (that list keeps its comment's column).
    abstention stays: q5 is unanswerable. A [judge] name no document says goes; one the
    corpus says stays."""
    golden = [{key: value for key, value in q.items() if key != "must_include"} for q in TINY_GOLDEN]
    text = TINY_CONFIG.replace(
        'metrics = ["recall@5", "hit@5", "mrr"]',
        'metrics = ["recall@5", "hit@5", "mrr", "key_facts", "abstention"]  # gated',
    )
    text += (
        '\n[gate.allowed_flips]\nkey_facts = 1\n"hit@5" = 1\n\n[judge]\nnames = ["Acme", "SAML"]  # names\n'
    )
    config = write_project(tmp_path, config=text, golden=golden)
    said = baseline(config, capsys)
    assert "[gate.checks] key_facts = 1: no question of the golden set has `must_include`" in said
    assert '[gate] metrics: "key_facts": no question' in said
    assert '[judge] names: "Acme": no document of the corpus says it' in said
    assert "abstention" not in said and '"SAML"' not in said

    said = baseline(config, capsys, "--fit-floors")
    for change in [
        "eval.toml: [gate.checks] key_facts = 1 -> removed",
        'eval.toml: [gate] metrics: "key_facts" -> removed',
        'eval.toml: [judge] names: "Acme" -> removed',
    ]:
        assert change in said, change
    assert "warning" not in said
    settings = toml(config)
    assert "key_facts" not in settings["gate"]["checks"] and settings["gate"]["checks"]["abstention"] == 1.0
    assert settings["gate"]["allowed_flips"] == {"hit@5": 1}
    assert settings["gate"]["metrics"] == ["recall@5", "hit@5", "mrr", "abstention"]
    assert settings["judge"]["names"] == ["SAML"]
    lines = config.read_text(encoding="utf-8").splitlines()
    assert 'metrics = ["recall@5", "hit@5", "mrr", "abstention"]               # gated' in lines
    assert 'names = ["SAML"]          # names' in lines
    assert "every setting holds" in baseline(config, capsys, "--fit-floors")


class Refusing:
    """A generator that refuses everything, as an LLM behind a broken prompt or a dead service
    does: abstention 0.2 on the tiny project (only q5 is right), key facts 0."""

    def __init__(self, *args: object):
        pass

    def answer(self, question: str) -> Answer:
        return Answer(ABSTENTION, [], abstained=True)


def test_fit_floors_warns_when_it_cuts_a_floor_below_half_naming_the_questions_that_pull_it_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The floors are still fitted (the gate then passes on this baseline), but a floor cut to
    less than half the one it replaces is a warning with the old and new floor, the questions
    below the old floor (lowest first, ids and text) and the checks removed for it."""
    text = TINY_CONFIG.replace('"hit@5" = 0.5', '"hit@5" = 0.5\nabstention = 0.8\nkey_facts = 0.7')
    config = write_project(tmp_path, config=text)
    said = baseline(config, capsys, "--fit-floors", system=System(SHIPPED.build_retriever, Refusing))
    assert "eval.toml: [gate.floors] abstention = 0.8 -> 0.18" in said
    assert "warning: --fit-floors set 2 floor(s) below half of the floor each replaces" in said
    assert "[gate.floors] abstention: 0.8 -> 0.18; 4 of 5 questions are below 0.8, the lowest:" in said
    assert "[gate.floors] key_facts: 0.7 -> 0; 4 of 4 questions are below 0.7, the lowest:" in said
    listed = said.split("[gate.floors] abstention:")[1].splitlines()[1:5]
    assert listed == [
        '    q1  0.000  "SSO"',
        '    q2  0.000  "2FA"',
        '    q3  0.000  "API"',
        '    q4  0.000  "download invoices"',
    ]
    assert "[gate.checks] key_facts = 1: removed, no question passes it" in said
    assert "hit@5: 0.5 ->" not in said, "a floor that holds is not listed"
    assert "the judge's verdicts make" not in said, "neither floor is the judge's"


class Unfounded:
    """A generator whose every answer says what no document says."""

    def __init__(self, *args: object):
        pass

    def answer(self, question: str) -> Answer:
        return Answer("Bananas are purple on Tuesdays.")


def test_a_steep_cut_of_a_judge_based_floor_says_the_judge_may_be_what_does_not_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Faithfulness 0 is an unfaithful system or a judge that does not work: the warning
    names the floors that rest on the judge's verdicts, and how to measure the judge."""
    text = TINY_CONFIG.replace('"hit@5" = 0.5', '"hit@5" = 0.5\nfaithfulness = 0.9')
    config = write_project(tmp_path, config=text)
    said = baseline(config, capsys, "--fit-floors", system=System(SHIPPED.build_retriever, Unfounded))
    assert "[gate.floors] faithfulness: 0.9 -> 0; " in said
    assert "  the judge's verdicts make faithfulness: so low a floor may mean that the judge does not" in said
    assert "work, not the system (`calibrate` measures it on labelled claims)" in said


def test_steep_cuts_lists_a_bounded_number_of_the_lowest_questions() -> None:
    from rag_regress.gate.fit import Finding, steep_cuts

    rows = [
        {"id": f"q{i:02}", "question": f"Question {i} " + "with many words " * 10, "metrics": {"mrr": i / 20}}
        for i in range(20)
    ]

    class Row:
        def __init__(self, row: dict[str, Any]):
            self.id, self.question, self.metrics = row["id"], row["question"], row["metrics"]
            self.tags: list[str] = []
            self.answer = None

    class Report:
        def __init__(self) -> None:
            self.questions = [Row(row) for row in reversed(rows)]

    floor = Finding(("gate", "floors", "mrr"), 0.9, 0.3, "below", "set it")
    kept = Finding(("gate", "floors", "hit@5"), 0.9, 0.5, "below", "set it")  # not below half
    lines = steep_cuts([floor, kept], Report(), limit=3)  # type: ignore[arg-type]
    assert lines[1] == "  [gate.floors] mrr: 0.9 -> 0.3; 18 of 20 questions are below 0.9, the lowest:"
    assert [line.split()[0] for line in lines[2:5]] == ["q00", "q01", "q02"]
    assert all(len(line) < 90 and line.endswith('..."') for line in lines[2:5])
    assert lines[5] == "    ... and 15 more" and len(lines) == 6
    assert steep_cuts([kept], Report()) == []  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "option", "named"),
    [
        ("[generation]", 'base_url = "http://127.0.0.1:8000/v1"', "[generation] base_url"),
        ("[retriever]", 'url = "http://127.0.0.1:9200/search"', "[retriever] url"),
    ],
)
def test_a_gate_with_no_baseline_names_fit_floors_for_a_team_s_own_service(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, option: str, named: str
) -> None:
    """No baseline ships for a system behind a service or an LLM (the http and openai bakes):
    the gate's exit 2 names `nox -s baseline -- --fit-floors` and what it does."""
    config = write_project(tmp_path, config=TINY_CONFIG.replace(f"{table}\n", f"{table}\n{option}\n", 1))
    assert run_cli(["--config", str(config), "gate"]) == 2
    err = capsys.readouterr().err
    assert "baseline.json: the baseline report file does not exist" in err
    assert f"fix: your own service or model ({named}) has no shipped baseline" in err
    assert "then run `nox -s baseline -- --fit-floors`" in err and "sets each [gate] floor" in err


def test_a_gate_with_no_baseline_names_plain_baseline_for_a_shipped_system(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["--config", str(project), "gate"]) == 2
    err = capsys.readouterr().err
    assert "fix: make it with `nox -s baseline` and commit baseline.json" in err
    assert "your own service" not in err

"""Does the gate's configuration hold on the baseline just made? What `baseline` checks after
writing it, and what `baseline --fit-floors` fixes.

A new baseline (a new retriever, new data) can leave settings that the gate will fail on or
cannot evaluate. `check_baseline` lists each one, with its fix:

  floor          [gate.floors] or [gate.slices."tag"]: the baseline is below it.
                 Fix: the baseline's value minus [gate] tolerance, rounded down to two
                 decimals (never below 0): the gate then passes on the baseline, and a drop
                 within the tolerance still passes.
  no data        an answer floor the golden set cannot evaluate: `abstention` with no
                 unanswerable question, `key_facts` with no `must_include` anywhere; a slice
                 floor on a tag no answerable question has. Fix: remove it.
  must-pass      a must-pass question with no relevant document in the top k in the
                 baseline. Fix: clear its flag in the golden set (re-flag it once it passes).
  check          a per-question check ([gate.checks]) that no question passes: it can never
                 catch a newly failing question. Fix: remove it.
  abstention     [generation] min_score, the stand-in's threshold, misjudges more questions
                 than the best threshold for this golden set (answers/stand_in.py,
                 `fit_min_score`). Fix: that threshold; with no unanswerable question, remove
                 it (the stand-in then never abstains). Only when the baseline's abstentions
                 are exactly the stand-in's rule at the current value: a team's own generator
                 is left alone.

`fit_baseline` applies exactly these fixes and nothing else (a setting that holds is never
touched), then remakes the baseline so that it, and its receipt, describe the files as they
now are. The threshold and the must-pass flags change what is evaluated, so they are fixed
first and the floors are fitted to the remade baseline. The gate itself stays as strict as
the settings say.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..answers import stand_in
from ..answers.settings import ANSWER_CHECKS
from ..inputs.data import Question, load_corpus, load_golden
from ..inputs.reports import Report
from ..settings.config import Config, load_config
from ..settings.edit import REMOVE, Key, clear_must_pass, edit_toml
from ..settings.lines import dotted
from .acceptance import must_pass_missed, not_lower


@dataclass(frozen=True)
class Finding:
    """A setting the new baseline does not meet, or the data cannot evaluate, and its fix."""

    key: Key  # in eval.toml, e.g. ("gate", "floors", "recall@5"); ("golden", id) for a flag
    old: float | bool | None  # its value now (None: a table)
    new: float | bool | None  # the value the fix sets (REMOVE: the fix removes it)
    problem: str
    fix: str

    @property
    def setting(self) -> str:
        """The setting as a reader finds it: [gate.floors] recall@5 = 0.8, or a question."""
        if self.key[0] == "golden":
            return f"must-pass question {self.key[1]}"
        if self.old is None:
            return f"[{dotted(self.key)}]"
        return f"[{dotted(self.key[:-1])}] {dotted(self.key[-1:])} = {self.old:g}"

    @property
    def remakes(self) -> bool:
        """Whether the fix changes what is evaluated (answers or the golden set)."""
        return self.key[0] in ("golden", "generation")


def fitted_floor(value: float, tolerance: float) -> float:
    """The floor `--fit-floors` sets: `value` minus the tolerance, rounded down to 0.01, >= 0."""
    return max(0.0, math.floor(round((value - tolerance) * 100, 9)) / 100)


def read_questions(config: Config) -> list[Question]:
    """The golden set named in `config`, read as the evaluation reads it."""
    return load_golden(config.golden, load_corpus(config.corpus))


def _floor(key: Key, floor: float, value: float, what: str, tolerance: float) -> Finding:
    new = fitted_floor(value, tolerance)
    return Finding(
        key,
        floor,
        new,
        f"the new baseline's {what} is {value:.3f}, below it: the gate would fail",
        f"set it to {new:g} (the baseline minus the tolerance {tolerance:g}, rounded down), "
        "or improve the system and remake the baseline",
    )


def _floors(config: Config, report: Report, questions: list[Question]) -> list[Finding]:
    gate, found = config.gate, []
    unanswerable = any(not question.answerable for question in questions)
    facts = any(question.must_include for question in questions)
    for metric, floor in gate.floors.items():
        name = str(metric)
        key: Key = ("gate", "floors", name)
        if name == "abstention" and not unanswerable:
            problem = "the golden set has no unanswerable question, so a right refusal cannot be told apart"
            found.append(
                Finding(key, floor, REMOVE, problem, "remove it (set it again with unanswerable questions)")
            )
        elif name == "key_facts" and not facts:
            problem = "no question of the golden set has `must_include` key facts to check"
            found.append(
                Finding(key, floor, REMOVE, problem, "remove it (set it again once questions have them)")
            )
        elif (value := report.aggregate.get(name)) is not None and not not_lower(floor, value):
            found.append(_floor(key, floor, value, name, gate.tolerance))
    tags = {tag for question in questions if question.answerable for tag in question.tags}
    for tag, floors in gate.slice_floors.items():
        piece = report.slices.get(tag)
        if tag not in tags or piece is None or piece.metrics is None:
            problem = f"no answerable question of the golden set has the tag {tag!r} (gate: exit 2)"
            found.append(Finding(("gate", "slices", tag), None, REMOVE, problem, "remove the table"))
            continue
        for metric, floor in floors.items():
            value = piece.metrics.get(str(metric))
            if value is not None and not not_lower(floor, value):
                where = ("gate", "slices", tag, str(metric))
                found.append(_floor(where, floor, value, f"{metric} on tag {tag!r}", gate.tolerance))
    return found


def _must_pass(report: Report) -> list[Finding]:
    flagged = [row.id for row in report.questions if row.must_pass and row.metrics is not None]
    missed = must_pass_missed(flagged, {row.id: row.found for row in report.questions})
    return [
        Finding(
            ("golden", qid),
            True,
            False,
            f"no relevant document in the top {report.k} in the new baseline: the gate would fail",
            'set "must_pass": false in the golden set, and back to true once it passes again',
        )
        for qid in missed
    ]


def _checks(config: Config, report: Report) -> list[Finding]:
    found = []
    for metric, threshold in config.gate.all_checks.items():
        name = str(metric)
        if name in ANSWER_CHECKS:
            values = [row.answer.check(name) for row in report.questions if row.answer is not None]
            passes = any(value is not None and value >= threshold for value in values)
        else:
            passes = any((row.checks or {}).get(name, False) for row in report.questions)
        if not passes:
            found.append(
                Finding(
                    ("gate", "checks", name),
                    threshold,
                    REMOVE,
                    "no question passes it in the new baseline, so none can newly fail it",
                    "remove it (set it again once questions pass it)",
                )
            )
    return found


def _abstention(report: Report, questions: list[Question]) -> list[Finding]:
    current = stand_in.follows_rule(report)
    if current is None:  # no min_score, or not the stand-in's answers: a team's own generator
        return []
    pairs = [(row.retrieved[0][1] if row.retrieved else None, row.answerable) for row in report.questions]
    now, best = stand_in.judge_threshold(current, pairs), stand_in.fit_min_score(pairs)
    if best.errors >= now.errors:
        return []
    key = ("generation", stand_in.SETTING)
    problem = (
        f"it misjudges {now.errors} question(s) of the golden set (refuses {now.refused} answerable, "
        f"answers {now.answered} unanswerable); the best threshold misjudges {best.errors}"
    )
    if not any(not question.answerable for question in questions):
        return [
            Finding(key, current, REMOVE, problem, "remove it: with no unanswerable question, never abstain")
        ]
    if math.isinf(best.min_score):
        return [Finding(key, current, REMOVE, problem, "remove it: never abstaining misjudges the fewest")]
    return [Finding(key, current, best.min_score, problem, f"set it to {best.min_score:g}")]


def check_baseline(config: Config, report: Report, questions: list[Question] | None = None) -> list[Finding]:
    """Every gate setting the new baseline `report` does not meet or the data cannot
    evaluate, with its fix; those that change what is evaluated first."""
    questions = read_questions(config) if questions is None else questions
    return [
        *_abstention(report, questions),
        *_must_pass(report),
        *_floors(config, report, questions),
        *_checks(config, report),
    ]


def apply_fixes(config: Config, findings: list[Finding]) -> list[str]:
    """Apply each finding's fix to eval.toml and the golden set; one line per change."""
    settings = {f.key: f.new for f in findings if f.key[0] != "golden" and not isinstance(f.new, bool)}
    if settings:
        edit_toml(config.path, settings)
    cleared = clear_must_pass(config.golden, [f.key[1] for f in findings if f.key[0] == "golden"])
    lines = []
    for finding in findings:
        if finding.key[0] == "golden":
            if finding.key[1] in cleared:
                lines.append(
                    f"{config.golden.name}: {finding.key[1]} must_pass true -> false (re-flag it when fixed)"
                )
        elif finding.new is REMOVE:
            lines.append(f"{config.path.name}: {finding.setting} -> removed")
        else:
            lines.append(f"{config.path.name}: {finding.setting} -> {finding.new:g}")
    return lines


def fit_baseline(
    config: Config, report: Report, remake: Callable[[Config], Report]
) -> tuple[Config, Report, list[str], list[Finding]]:
    """`baseline --fit-floors`: apply the fixes, remaking the baseline with `remake` after each
    round; return the settings now, the final baseline, the changes made and what is left
    (nothing, unless an edit could not be made)."""
    changes: list[str] = []
    findings = check_baseline(config, report)
    for round_ in (1, 2):
        # Round 1 fixes what changes the evaluation (the threshold, must-pass flags) when
        # there is any: the floors are then fitted to the baseline those fixes produce.
        chosen = [f for f in findings if f.remakes] if round_ == 1 else findings
        if not chosen:
            continue
        changes += apply_fixes(config, chosen)
        config = load_config(config.path)
        report = remake(config)
        findings = check_baseline(config, report)
    return config, report, changes, findings


def describe(findings: list[Finding], config: Config) -> list[str]:
    """`baseline`'s warnings: each setting with its line, the problem and the fix."""
    if not findings:
        return []
    lines = [
        f"warning: {len(findings)} of the gate's settings do not hold on the new baseline "
        "(it is below them, or the data cannot evaluate them); each with its fix:"
    ]
    for finding in findings:
        if finding.key[0] == "golden":
            where = f"{config.golden.name}"
        else:
            line = config.line_of(*finding.key)
            where = f"{config.path.name}{f':{line}' if line else ''}"
        lines += [f"  {where}: {finding.setting}: {finding.problem}", f"    fix: {finding.fix}"]
    lines.append("  `nox -s baseline -- --fit-floors` applies these fixes, and nothing else")
    return lines

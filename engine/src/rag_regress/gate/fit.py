"""Does the gate's configuration hold on the baseline just made? What `baseline` checks after
writing it, and what `baseline --fit-floors` fixes.

A new baseline (a new retriever, new data) can leave settings that the gate will fail on or
cannot evaluate. `check_baseline` lists each one, with its fix:

  floor          [gate.floors] or [gate.slices."tag"]: the baseline is below it.
                 Fix: the baseline's value minus [gate] tolerance, rounded down to two
                 decimals (never below 0): the gate then passes on the baseline, and a drop
                 within the tolerance still passes.
  no data        what the data cannot use, found without evaluating (`data_findings`, which
                 `import` also prints): an answer check with nothing to check (`abstention`
                 with no unanswerable question, `key_facts` with no `must_include` anywhere)
                 in [gate] metrics, [gate.floors] or [gate.checks], where it only counts
                 answerable questions refused; a slice on a tag no answerable question has;
                 a [judge] name that no document of the corpus says (the demo's product
                 name, after an import).
                 Fix: remove it (and its [gate.allowed_flips] entry, for a check).
  must-pass      a must-pass question with no relevant document in the top k in the
                 baseline. Fix: clear its flag in the golden set (re-flag it once it passes).
  check          a per-question check ([gate.checks]) that no question passes: it can never
                 catch a newly failing question. Fix: remove it.
  abstention     [generation] min_score, the stand-in's threshold, misjudges more questions
                 than the best threshold for this golden set (answers/stand_in.py,
                 `fit_min_score`), or the golden set has no unanswerable question (then the
                 threshold, in the score units of whatever retriever and data it was fitted
                 to, can only refuse answerable questions). Fix: that threshold; with no
                 unanswerable question, remove it (the stand-in then never abstains). Only
                 when the baseline's abstentions are exactly the stand-in's rule at the
                 current value: a team's own generator is left alone.

`fit_baseline` applies exactly these fixes and nothing else (a setting that holds is never
touched), then remakes the baseline so that it, and its receipt, describe the files as they
now are. The threshold and the must-pass flags change what is evaluated, so they are fixed
first and the floors are fitted to the remade baseline. The gate itself stays as strict as
the settings say.

A floor fitted to less than half the floor it replaces (abstention 0.8 -> 0.39) says the
system under test measures far below what the settings expected: a service that is down, a
prompt that never reaches the model, a golden set of other data. `steep_cuts` says so in a
warning naming each such floor, old and new, with the questions that pull it down most, and
the per-question checks removed because no question passes them: fitting never hides it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..answers import stand_in
from ..answers.settings import ANSWER_CHECKS
from ..answers.trust import JUDGE_CHECKS
from ..api import Document
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
    old: float | bool | None  # its value now (None: a table, or an item of a list)
    new: float | bool | None  # the value the fix sets (REMOVE: the fix removes it)
    problem: str
    fix: str
    item: bool = False  # key[-1] is an item of the list key[:-1], e.g. ("judge", "names", "Acme")

    @property
    def setting(self) -> str:
        """The setting as a reader finds it: [gate.floors] recall@5 = 0.8, or a question."""
        if self.key[0] == "golden":
            return f"must-pass question {self.key[1]}"
        if self.item:
            quoted = json.dumps(self.key[-1], ensure_ascii=False)
            return f"[{dotted(self.key[:-2])}] {dotted(self.key[-2:-1])}: {quoted}"
        if self.old is None:
            return f"[{dotted(self.key)}]"
        return f"[{dotted(self.key[:-1])}] {dotted(self.key[-1:])} = {self.old:g}"

    @property
    def remakes(self) -> bool:
        """Whether the fix changes what is evaluated (answers, their verdicts or the golden set)."""
        return self.key[0] in ("golden", "generation", "judge")


def fitted_floor(value: float, tolerance: float) -> float:
    """The floor `--fit-floors` sets: `value` minus the tolerance, rounded down to 0.01, >= 0."""
    return max(0.0, math.floor(round((value - tolerance) * 100, 9)) / 100)


# What abstention without unanswerable questions, and key_facts without must_include, still
# measure: 1 for an answer (whatever it says), 0 for a refusal.
REFUSALS_ONLY = "here it only counts answerable questions refused"


def _vacuous(questions: list[Question]) -> dict[str, str]:
    """The answer checks this golden set gives nothing to check, each with why."""
    vacuous = {}
    if not any(not question.answerable for question in questions):
        vacuous["abstention"] = (
            "the golden set has no unanswerable question, so a right refusal cannot be told apart"
        )
    if not any(question.must_include for question in questions):
        vacuous["key_facts"] = "no question of the golden set has `must_include` key facts to check"
    if not any(question.reference for question in questions):
        for name in ("correctness", "answer_precision", "answer_f1", "exact_match"):
            vacuous[name] = "no question of the golden set has a `reference` answer to compare with"
    if not any(question.nuggets for question in questions):
        for name in ("nugget_recall", "vital_recall"):
            vacuous[name] = "no question of the golden set has `nuggets` to find"
    return vacuous


def _why(name: str, vacuous: dict[str, str], check: bool = False) -> str:
    """Why a vacuous answer check in [gate] misleads: what it still measures, if anything."""
    if name in ("abstention", "key_facts"):
        still = "a question fails it only by being refused" if check else REFUSALS_ONLY
    else:  # null for every question: the aggregate is 0, and no question passes or fails it
        still = "no question can fail or pass it" if check else "it is 0, and fails any floor"
    return f"{vacuous[name]}: {still}"


def unsaid_names(names: Iterable[str], documents: Iterable[Document]) -> list[str]:
    """The [judge] names no document says (as a word, ignoring case): names of other data."""
    wanted = {name: re.compile(rf"(?<!\w){re.escape(name.casefold())}(?!\w)") for name in names}
    for document in documents:
        if not wanted:
            break
        text = f"{document.title}\n{document.text}".casefold()
        wanted = {name: pattern for name, pattern in wanted.items() if not pattern.search(text)}
    return list(wanted)


def data_findings(config: Config, questions: list[Question], documents: Iterable[Document]) -> list[Finding]:
    """The settings the data cannot use, found without evaluating anything (so `import` can
    list them before any baseline exists): answer checks with nothing to check in [gate]
    metrics, [gate.floors] and [gate.checks], slices of tags no answerable question has, and
    [judge] names no document says. Each fix removes the setting."""
    gate, found = config.gate, []
    vacuous = _vacuous(questions)
    for metric in gate.metrics:
        if (name := str(metric)) in vacuous:
            found.append(
                Finding(
                    ("gate", "metrics", name),
                    None,
                    REMOVE,
                    _why(name, vacuous),
                    "remove it from the list (add it back once the golden set can evaluate it)",
                    item=True,
                )
            )
    for metric, floor in gate.floors.items():
        if (name := str(metric)) in vacuous:
            fix = "remove it (set it again once the golden set can evaluate it)"
            problem = _why(name, vacuous)
            found.append(Finding(("gate", "floors", name), floor, REMOVE, problem, fix))
    for metric, threshold in gate.all_checks.items():
        if (name := str(metric)) in vacuous:
            problem = _why(name, vacuous, check=True)
            fix = "remove it (set it again once the golden set can evaluate it)"
            found.append(Finding(("gate", "checks", name), threshold, REMOVE, problem, fix))
    tags = {tag for question in questions if question.answerable for tag in question.tags}
    for tag in gate.slice_floors:
        if tag not in tags:
            problem = f"no answerable question of the golden set has the tag {tag!r} (gate: exit 2)"
            found.append(Finding(("gate", "slices", tag), None, REMOVE, problem, "remove the table"))
    for name in unsaid_names(config.judge.names, documents):
        found.append(
            Finding(
                ("judge", "names", name),
                None,
                REMOVE,
                "no document of the corpus says it: a name of the data it was written for "
                "(the judge accepts it in any answer)",
                "remove it from the list (list your own product's names)",
                item=True,
            )
        )
    return found


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


def _judged_default(finding: Finding, value: float) -> Finding:
    """The floor on `judged` that eval.toml leaves to [judge] min_judged: the fix adds the
    fitted floor to [gate.floors], which overrides it, and says so."""
    return dataclasses.replace(
        finding,
        problem=f"the new baseline's judged is {value:.3f}, below [judge] min_judged: the gate would fail",
        fix=f"add judged = {finding.new:g} to [gate.floors] (it overrides [judge] min_judged; the baseline "
        "minus the tolerance, rounded down), or make the judge give more verdicts (a larger model, "
        "its prompt) and remake the baseline",
    )


def _floors(config: Config, report: Report, questions: list[Question]) -> list[Finding]:
    """Floors the baseline is below (those the data cannot evaluate: `data_findings`)."""
    gate, found = config.gate, []
    vacuous = _vacuous(questions)
    for metric, floor in gate.floors.items():
        name = str(metric)
        if name in vacuous:
            continue
        if (value := report.aggregate.get(name)) is not None and not not_lower(floor, value):
            finding = _floor(("gate", "floors", name), floor, value, name, gate.tolerance)
            if name == "judged" and config.written_value("gate", "floors", "judged") is None:
                finding = _judged_default(finding, value)
            found.append(finding)
    tags = {tag for question in questions if question.answerable for tag in question.tags}
    for tag, floors in gate.slice_floors.items():
        if tag not in tags:
            continue
        piece = report.slices.get(tag)
        if piece is None or piece.metrics is None:
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


# The problem of a check no question passes (a system that fails it everywhere, unlike a check
# the data gives nothing to check): `steep_cuts` names the checks removed for it.
NOBODY_PASSES = "no question passes it in the new baseline, so none can newly fail it"


def _checks(config: Config, report: Report, questions: list[Question]) -> list[Finding]:
    """Checks no question passes (those with nothing to check: `data_findings`)."""
    found, vacuous = [], _vacuous(questions)
    for metric, threshold in config.gate.all_checks.items():
        name = str(metric)
        if name in vacuous:
            continue
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
                    NOBODY_PASSES,
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
    unanswerable = any(not question.answerable for question in questions)
    if best.errors >= now.errors and unanswerable:
        return []
    key = ("generation", stand_in.SETTING)
    problem = (
        f"it misjudges {now.errors} question(s) of the golden set (refuses {now.refused} answerable, "
        f"answers {now.answered} unanswerable); the best threshold misjudges {best.errors}"
    )
    if not unanswerable and best.errors >= now.errors:
        problem = (
            "the golden set has no unanswerable question: a threshold (in the score units of the "
            "retriever and data it was fitted to) can only refuse answerable questions"
        )
    if not unanswerable:
        return [
            Finding(key, current, REMOVE, problem, "remove it: with no unanswerable question, never abstain")
        ]
    if math.isinf(best.min_score):
        return [Finding(key, current, REMOVE, problem, "remove it: never abstaining misjudges the fewest")]
    return [Finding(key, current, best.min_score, problem, f"set it to {best.min_score:g}")]


def check_baseline(
    config: Config,
    report: Report,
    questions: list[Question] | None = None,
    documents: Iterable[Document] | None = None,
) -> list[Finding]:
    """Every gate setting the new baseline `report` does not meet or the data cannot
    evaluate, with its fix; those that change what is evaluated first."""
    if questions is None or documents is None:
        corpus = load_corpus(config.corpus)
        questions = load_golden(config.golden, corpus) if questions is None else questions
        documents = corpus.values() if documents is None else documents
    found = data_findings(config, questions, documents)
    return [
        *_abstention(report, questions),
        *_must_pass(report),
        *[finding for finding in found if finding.remakes],
        *[finding for finding in found if not finding.remakes],
        *_floors(config, report, questions),
        *_checks(config, report, questions),
    ]


def apply_fixes(config: Config, findings: list[Finding]) -> list[str]:
    """Apply each finding's fix to eval.toml and the golden set; one line per change. A check
    removed takes its [gate.allowed_flips] entry with it (the file would not load otherwise)."""
    settings = {f.key: f.new for f in findings if f.key[0] != "golden" and not isinstance(f.new, bool)}
    allowed = {str(name) for name in config.gate.allowed_flips}
    for key, value in list(settings.items()):
        if key[:2] == ("gate", "checks") and value is REMOVE and key[2] in allowed:
            settings["gate", "allowed_flips", key[2]] = REMOVE
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
) -> tuple[Config, Report, list[str], list[Finding], list[str]]:
    """`baseline --fit-floors`: apply the fixes, remaking the baseline with `remake` after each
    round; return the settings now, the final baseline, the changes made, what is left
    (nothing, unless an edit could not be made) and the warning lines of `steep_cuts` (none
    when no floor was cut below half)."""
    changes: list[str] = []
    warnings: list[str] = []
    findings = check_baseline(config, report)
    for round_ in (1, 2):
        # Round 1 fixes what changes the evaluation (the threshold, must-pass flags) when
        # there is any: the floors are then fitted to the baseline those fixes produce.
        chosen = [f for f in findings if f.remakes] if round_ == 1 else findings
        if not chosen:
            continue
        warnings += steep_cuts(chosen, report)  # the report these fixes were worked out on
        changes += apply_fixes(config, chosen)
        config = load_config(config.path)
        report = remake(config)
        findings = check_baseline(config, report)
    return config, report, changes, findings, warnings


# A floor fitted below this share of the floor it replaces is a warning (`steep_cuts`).
STEEP = 0.5
# Questions listed under each such floor, lowest first: enough to see what is wrong.
LOWEST_LISTED = 5
QUESTION_SHOWN = 60  # characters of a question's text shown beside its id


def steep(finding: Finding) -> tuple[float, float] | None:
    """(old, new) when `finding` sets a floor below STEEP times the floor it replaces, else None."""
    old, new = finding.old, finding.new
    if finding.key[:2] not in (("gate", "floors"), ("gate", "slices")):
        return None
    if isinstance(old, bool) or isinstance(new, bool) or old is None or new is None:
        return None  # a flag, or a setting removed
    return (old, new) if new < STEEP * old else None


def per_question(report: Report, key: Key) -> list[tuple[float, str, str]]:
    """(value, id, question) of every question the mean under the floor at `key` is taken
    over (a slice's: the questions with its tag), lowest first, then by id."""
    name = key[-1]
    tag = key[2] if key[1] == "slices" else None
    found = []
    for row in report.questions:
        if tag is not None and tag not in row.tags:
            continue
        if name in ANSWER_CHECKS:
            value = row.answer.check(name) if row.answer is not None else None
        else:
            value = (row.metrics or {}).get(name)
        if value is not None:
            found.append((value, row.id, row.question))
    return sorted(found, key=lambda item: (item[0], item[1]))


def _shown(text: str, limit: int = QUESTION_SHOWN) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def steep_cuts(findings: list[Finding], report: Report, limit: int = LOWEST_LISTED) -> list[str]:
    """The warning of `--fit-floors` when it sets a floor below half the floor it replaces:
    each such floor, old -> new, with how many questions are below the old floor and the
    `limit` lowest (id, value, question), then the per-question checks removed because no
    question passes them. No line when no floor is cut that steeply: an ordinary fit says
    nothing more than its changes."""
    cuts = [(finding, cut) for finding in findings if (cut := steep(finding)) is not None]
    if not cuts:
        return []
    lines = [
        f"warning: --fit-floors set {len(cuts)} floor(s) below half of the floor each replaces: the "
        "system under test measures far below what these settings expected of it. Before you commit, "
        "check that it works (its service answers, its model gets the prompt and the passages, the "
        "golden set is about its documents):"
    ]
    judged_by = [f.key[-1] for f, _ in cuts if f.key[-1] in (*JUDGE_CHECKS, "judged")]
    if judged_by:  # the judge's verdicts make these: a judge that does not work cuts them too
        lines.append(
            f"  the judge's verdicts make {', '.join(dict.fromkeys(judged_by))}: so low a floor may mean "
            "that the judge does not work, not the system (`calibrate` measures it on labelled claims)"
        )
    for finding, (old, new) in cuts:
        values = per_question(report, finding.key)
        below = [item for item in values if item[0] < old]
        where = f"[{dotted(finding.key[:-1])}] {dotted(finding.key[-1:])}"
        lines.append(
            f"  {where}: {old:g} -> {new:g}; {len(below)} of {len(values)} questions are below "
            f"{old:g}, the lowest:"
        )
        for value, qid, question in below[:limit]:
            lines.append(f'    {qid}  {value:.3f}  "{_shown(question)}"')
        if len(below) > limit:
            lines.append(f"    ... and {len(below) - limit} more")
    removed = [f for f in findings if f.key[:2] == ("gate", "checks") and f.problem == NOBODY_PASSES]
    for finding in removed:
        lines.append(f"  {finding.setting}: removed, no question passes it")
    return lines


def describe(findings: list[Finding], config: Config) -> list[str]:
    """`baseline`'s warnings: each setting with its line, the problem and the fix."""
    if not findings:
        return []
    lines = [
        f"warning: {len(findings)} of the gate's settings do not hold on the new baseline "
        "(it is below them, or the data cannot evaluate them); each with its fix:"
    ]
    for finding in findings:
        lines += [
            f"  {location(finding, config)}: {finding.setting}: {finding.problem}",
            f"    fix: {finding.fix}",
        ]
    lines.append("  `nox -s baseline -- --fit-floors` applies these fixes, and nothing else")
    return lines


def location(finding: Finding, config: Config) -> str:
    """The file (and line, for eval.toml) a reader edits to apply `finding`'s fix by hand."""
    if finding.key[0] == "golden":
        return config.golden.name
    line = config.line_of(*(finding.key[:-1] if finding.item else finding.key))
    return f"{config.path.name}{f':{line}' if line else ''}"


# The options by which the shipped adapters reach a team's own service and LLM (adapters/http.py,
# adapters/openai.py): no baseline ships for such a system, nor floors measured on it.
SERVICE_OPTIONS = (("retriever", "url"), ("generation", "base_url"))


def first_baseline_fix(config: Config) -> str:
    """The fix when the gate finds no baseline: the command that makes this project's first.
    A system reached through a service ([retriever] url, [generation] base_url) has neither a
    shipped baseline nor floors measured on it, so its first baseline is `nox -s baseline --
    --fit-floors`, said with what it does; any other system, `nox -s baseline`."""
    own = [f"[{table}] {key}" for table, key in SERVICE_OPTIONS if key in getattr(config, table)]
    path = config.as_written("data", "baseline")
    folder = config.path.parent
    written = (path.relative_to(folder) if path.is_relative_to(folder) else path).as_posix()
    if not own:
        return (
            f"make it with `nox -s baseline` and commit {written} (it lists each [gate] setting the new "
            "baseline does not meet; `nox -s baseline -- --fit-floors` fits them)"
        )
    return (
        f"your own service or model ({' and '.join(own)}) has no shipped baseline: start it, then run "
        f"`nox -s baseline -- --fit-floors`. That evaluates your system, writes {written}, and sets each "
        "[gate] floor and check it does not meet to what it measures (the baseline minus the tolerance; "
        "a check no question passes is removed), printing every change and warning when a floor falls "
        f"below half; review both diffs and commit {written} and eval.toml"
    )

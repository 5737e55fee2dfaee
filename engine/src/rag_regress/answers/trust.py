"""Is the judge trusted to gate? Its agreement with people, measured on every run.

The answer checks that rest on the judge's verdicts (JUDGE_CHECKS: faithfulness, correctness,
answer_precision, citation_precision and citation_recall; and key_facts, nugget_recall and
vital_recall when [judge] match = "judge" lets the judge match a fact) gate only when the
configured judge has earned it on the project's own labels:

  measured  the held-out labels (split "check" or "holdout") of [judge] labels that the judge
            gave a verdict: at least [judge] min_labels of them (default 50);
  earned    Cohen's kappa between the judge and the labels reaches [judge] min_kappa (default
            0.4) and the lower end of its 95% bootstrap interval is above 0 (calibration.py's
            figures, the ones `calibrate` prints for the held-out split).

Otherwise the checks are advisory: every view shows them, with the figure (or "not measured")
and the commands that change it, and none of them fails the gate. [judge] gate_unmeasured =
true gates them anyway, and every view says so. The checks that need no judge (retrieval,
literal key facts, abstention, must-pass retrieval, well_formed, judged) always gate.

The labels are judged as `calibrate` judges them, through the verdict cache (the same judge
identity gives the same verdict: a cached label costs nothing). The record (`measure`) goes into
the report's receipt under "calibration": the labels file's sha256, the figures and which
checks gate, so a reader of any report knows what its verdict rested on.

Where labels of the team's own answers exist (domain "team", written by `add-labels`, held-out
split), faithfulness also gets a corrected estimate (ppi.py): the judge's verdict on every
sentence of this run, corrected per verdict by how often people agreed with the judge on the
labelled sentences, with its 95% interval. A floor on faithfulness is then held by that interval
(gate/rules.py): its lower end must reach the floor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..inputs.reports import AnswerResult
from .calibration import HELD_OUT, TEAM_DOMAIN, Label, figures, labels_digest, load_labels, supported_at
from .checks import judge_all
from .ppi import prediction_powered
from .settings import JudgeSettings
from .verdicts import judged

JUDGE_CHECKS = ("faithfulness", "correctness", "answer_precision", "citation_precision", "citation_recall")
MATCHED_CHECKS = ("key_facts", "nugget_recall", "vital_recall")  # the judge's only with match = "judge"
# What a judge's verdict measures, where it is not what "faithfulness" promises: said in every
# view beside its figures (docs/judges.md has the agreement figures behind it).
MEASURES = {
    "lexical": "word support: whether the contexts hold each sentence's content words, numbers, names, "
    "negations and hedges; not whether they mean the same",
}
RAISE_IT = (
    "grade your answers (`nox -s grade -- --answers`), merge the grades (`nox -s add-labels -- FILE`), "
    "then `nox -s calibrate` shows the judge's figures"
)


def judge_checks(settings: JudgeSettings) -> tuple[str, ...]:
    """The answer checks whose values rest on the judge's verdicts, under `settings`."""
    return JUDGE_CHECKS + (MATCHED_CHECKS if settings.match == "judge" else ())


def _shown(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def measure(
    settings: JudgeSettings, config_path: Path, rows: Sequence[AnswerResult | None]
) -> dict[str, Any]:
    """The judge's agreement on the held-out labels, whether its checks gate, and the corrected
    faithfulness of `rows` (this run's answers) where the team's labels allow (module doc)."""
    path = settings.labels
    record: dict[str, Any] = {
        "labels": _shown(path, config_path.parent.resolve()),
        "sha256": None,
        "held_out": 0,
        "not_judged": 0,
        "kappa": None,
        "kappa_95": None,
        "min_kappa": settings.min_kappa,
        "min_labels": settings.min_labels,
        "gate_unmeasured": settings.gate_unmeasured,
        "checks": list(judge_checks(settings)),
    }
    record["sha256"] = labels_digest(path)
    labels = load_labels(path) if path.is_file() else []
    held = [label for label in labels if label.split in HELD_OUT]
    team = [label for label in held if label.domain == TEAM_DOMAIN]
    if len(held) >= settings.min_labels:
        pairs = _judged(settings, config_path, held)
        record["held_out"], record["not_judged"] = len(pairs), len(held) - len(pairs)
        if pairs:
            found = figures([label.supported for label, _ in pairs], [said for _, said in pairs])
            record["kappa"], record["kappa_95"] = found["kappa"], found["kappa_95"]
        team_pairs = [(said, label.supported) for label, said in pairs if label.domain == TEAM_DOMAIN]
    else:
        record["held_out"] = len(held)
        team_pairs = [(said, label.supported) for label, said in _judged(settings, config_path, team)]
    record["status"], record["why"] = _verdict(record, settings)
    corrected = _faithfulness(rows, team_pairs)
    if corrected is not None:
        record["faithfulness"] = corrected
    return record


def _judged(settings: JudgeSettings, config_path: Path, labels: list[Label]) -> list[tuple[Label, bool]]:
    """Each label the judge gave a verdict, with that verdict at the configured threshold."""
    if not labels:
        return []
    verdicts, _ = judge_all([(label.claim, (label.context,)) for label in labels], settings, config_path)
    fail_on, threshold = settings.failing(), settings.threshold
    return [
        (label, supported_at(verdict, threshold, fail_on, threshold))
        for label, verdict in zip(labels, verdicts, strict=True)
        if judged(verdict)
    ]


def _verdict(record: dict[str, Any], settings: JudgeSettings) -> tuple[str, str]:
    """("gates" or "advisory", why) for the judge's checks."""
    kappa, interval, n = record["kappa"], record["kappa_95"], record["held_out"]
    skipped = f" ({record['not_judged']} more not judged)" if record["not_judged"] else ""
    if n < settings.min_labels:
        why = (
            f"not measured: {n} held-out label(s) in {record['labels']}{skipped}, "
            f"{settings.min_labels} needed"
        )
    elif kappa is None:
        why = f"not measured: the {n} held-out labels are all of one class, so kappa is undefined"
    else:
        figure = f"kappa {kappa:.2f}" + (f" (95% {interval[0]:.2f} to {interval[1]:.2f})" if interval else "")
        on = f"on {n} held-out labels of {record['labels']}{skipped}"
        if kappa >= settings.min_kappa and interval is not None and interval[0] > 0:
            return "gates", f"{figure} {on} reaches min_kappa {settings.min_kappa:g}"
        below = (
            f"below min_kappa {settings.min_kappa:g}"
            if kappa < settings.min_kappa
            else "its interval reaches 0"
            if interval is not None
            else "no interval (too few labels of each class)"
        )
        why = f"{figure} {on}: {below}"
    if settings.gate_unmeasured:
        return "gates", f"{why}; gated anyway ([judge] gate_unmeasured = true)"
    return "advisory", why


def _faithfulness(
    rows: Sequence[AnswerResult | None], labelled: list[tuple[bool, bool]]
) -> dict[str, Any] | None:
    """The corrected faithfulness (ppi.py) of the answered rows: each judged sentence weighted
    1 / (its answer's judged sentences x the answered questions); an answer with no sentence
    judged supported nor unsupported counts as the aggregate counts it (0 when it holds no
    sentence, left out when none was judged)."""
    if not labelled:
        return None
    run: list[tuple[bool, float]] = []
    counted = 0  # answered questions with a faithfulness value: the aggregate's denominator
    with_items = 0
    for row in rows:
        if row is None or row.faithfulness is None:
            continue
        counted += 1
        skipped = sum(finding.why.startswith("faithfulness:") for finding in row.not_judged)
        judged_here = row.claims - skipped
        if judged_here <= 0:
            continue
        with_items += 1
        unsupported = min(len(row.unsupported), judged_here)
        run += [(False, 1 / judged_here)] * unsupported + [(True, 1 / judged_here)] * (
            judged_here - unsupported
        )
    found = prediction_powered(run, labelled)
    if found is None or counted == 0:
        return None
    scale = with_items / counted  # the answers with no sentence add 0 to the mean
    return {
        "raw": found.raw * scale,
        "estimate": found.estimate * scale,
        "low": found.low * scale,
        "high": found.high * scale,
        "labelled": found.labelled,
        "sentences": found.items,
        "confidence": found.confidence,
    }


def gating(record: dict[str, Any] | None) -> bool:
    """Whether the judge's checks gate under `record` (a report's receipt "calibration"); a
    report made before it was recorded is not measured."""
    return isinstance(record, dict) and record.get("status") == "gates"


def advisory_checks(record: dict[str, Any] | None) -> dict[str, str]:
    """Each judge-based check that is advisory under `record`, with why (one line)."""
    if gating(record):
        return {}
    if not record:
        why = "the judge's agreement with people is not recorded in this report"
        return dict.fromkeys(JUDGE_CHECKS, why)
    return dict.fromkeys(record.get("checks") or JUDGE_CHECKS, str(record.get("why") or "not measured"))


def changed_since(record: dict[str, Any] | None, baseline: dict[str, Any] | None) -> str | None:
    """A note when the judge's checks gated at the baseline and are advisory now, or the other
    way: the labels, or the settings that judge them, changed since."""
    if gating(record) == gating(baseline):
        return None
    then = "gated" if gating(baseline) else "were advisory"
    now = "gate" if gating(record) else "are advisory"
    labels = ""
    was, is_ = (baseline or {}).get("sha256"), (record or {}).get("sha256")
    if was != is_:
        labels = f"; {(record or {}).get('labels')} changed since (sha256 {str(was)[:12]} -> {str(is_)[:12]})"
    return f"the judge's checks {then} at the baseline and {now} now{labels}"


def trust_line(record: dict[str, Any] | None, identity: Mapping[str, Any] | None) -> str:
    """One line for every view: the judge (its `identity`, from the report's settings), what it
    measures, its measured agreement, and what gates."""
    identity = identity or {}
    judge = " ".join(str(identity[key]) for key in ("name", "version") if identity.get(key)) or "(unknown)"
    name = str(identity.get("name") or "")
    measures = f". The {name} judge measures {MEASURES[name]}" if name in MEASURES else ""
    if not record:
        return (
            f"Judge {judge}: agreement with people not recorded in this report; its checks are "
            f"advisory{measures}"
        )
    checks = ", ".join(record.get("checks") or JUDGE_CHECKS)
    if gating(record):
        return f"Judge {judge}: {record['why']}; its checks gate ({checks}){measures}"
    return (
        f"Judge {judge}: {record['why']}; its checks are advisory, shown but never failing the gate "
        f"({checks}){measures}. To gate them: {RAISE_IT}"
    )


def corrected_line(record: dict[str, Any] | None) -> str | None:
    """The corrected faithfulness beside the judge's figure, when the team's labels allow."""
    found = (record or {}).get("faithfulness")
    if not isinstance(found, dict):
        return None
    return (
        f"faithfulness corrected by {found['labelled']} labels of your own answers: {found['estimate']:.3f} "
        f"(95% {found['low']:.3f} to {found['high']:.3f}); the judge alone says {found['raw']:.3f}"
    )

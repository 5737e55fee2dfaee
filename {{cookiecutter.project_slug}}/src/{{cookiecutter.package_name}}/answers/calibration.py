"""Calibrate the judge against human labels: how often does it agree, and at what threshold?

evals/judge_labels.jsonl holds claims a person labelled against a context:
    {"id": "c01", "claim": "...", "context": "...", "supported": true, "kind": "number change"}
`nox -s calibrate` runs the configured judge ([judge] in eval.toml) on every example and
reports, treating "unsupported" as the positive class (the judge's job is to catch them):
  accuracy    share of examples where judge and label agree
  precision   of the claims the judge called unsupported, the share that truly are
  recall      of the truly unsupported claims, the share the judge caught
  kappa       Cohen's kappa: agreement corrected for chance (1 perfect, 0 chance level)
and the threshold that maximises kappa over the judge's own scores. The verdict cache is
not used: calibration always runs the judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from ..inputs.data import _check_keys, _flag, _json_lines, _text, _unique
from .judges import Verdict, build_judge
from .settings import JudgeSettings


SPLITS = ("tune", "holdout")


@dataclass(frozen=True)
class Label:
    id: str
    claim: str
    context: str
    supported: bool
    kind: str
    split: str  # "tune" (the judge may be tuned on it) or "holdout" (never tuned on)
    line: int


def load_labels(path: Path) -> list[Label]:
    """Read the labelled examples; EvalInputError naming file, line and fix on bad input."""
    labels: list[Label] = []
    seen: dict[str, int] = {}
    for number, item in _json_lines(path, "judge labels"):
        _check_keys(path, number, item, {"id", "claim", "context", "supported"}, {"kind", "split"})
        split = _text(path, number, item, "split") if "split" in item else "tune"
        if split not in SPLITS:
            raise EvalInputError(path, f"'split' is {split!r}", 'write "tune" or "holdout"', number)
        if not isinstance(item["supported"], bool):
            raise EvalInputError(path, "'supported' must be true or false", "write true or false", number)
        labels.append(
            Label(
                id=_unique(path, number, item["id"], seen),
                claim=_text(path, number, item, "claim"),
                context=_text(path, number, item, "context"),
                supported=_flag(path, number, item, "supported", default=True),
                kind=_text(path, number, item, "kind") if "kind" in item else "",
                split=split,
                line=number,
            )
        )
    if not labels:
        raise EvalInputError(path, "no labelled examples", "add one JSON object per line")
    return labels


def agreement(truth: list[bool], predicted: list[bool]) -> dict[str, float]:
    """Accuracy, precision and recall of "unsupported", and Cohen's kappa.

    Positive = unsupported. Precision is 0 when the judge flags nothing, recall is 1 when
    nothing is unsupported (nothing to miss). Kappa = (p_o - p_e) / (1 - p_e) with p_e the
    agreement expected by chance from each side's rates; 1 if both sides are constant
    and agree, 0 if they are constant and disagree.
    """
    n = len(truth)
    flagged = [not p for p in predicted]
    positive = [not t for t in truth]
    true_pos = sum(f and p for f, p in zip(flagged, positive, strict=True))
    observed = sum(t == p for t, p in zip(truth, predicted, strict=True)) / n
    rate_truth, rate_judge = sum(positive) / n, sum(flagged) / n
    chance = rate_truth * rate_judge + (1 - rate_truth) * (1 - rate_judge)
    kappa = (observed - chance) / (1 - chance) if chance < 1 else float(observed == 1)
    return {
        "accuracy": observed,
        "precision": true_pos / sum(flagged) if any(flagged) else 0.0,
        "recall": true_pos / sum(positive) if any(positive) else 1.0,
        "kappa": kappa,
    }


def supported_at(verdict: Verdict, threshold: float) -> bool:
    """The verdict a threshold would give. A claim the guard rejected scores 0 and stays out."""
    return verdict.score > 0 and verdict.score >= threshold


def calibrate(settings: JudgeSettings, config_path: Path) -> dict[str, Any]:
    """Run the judge of `settings` ([judge] of the eval.toml at `config_path`) on its labels."""
    labels = load_labels(settings.labels)
    judge = build_judge(settings, config_path)
    verdicts = judge.verdicts([(label.claim, (label.context,)) for label in labels])
    truth = [label.supported for label in labels]
    threshold = settings.threshold
    current = agreement(truth, [supported_at(v, threshold) for v in verdicts])
    candidates = sorted({v.score for v in verdicts if v.score > 0} | {threshold})
    scored = [(agreement(truth, [supported_at(v, t) for v in verdicts])["kappa"], t) for t in candidates]
    best_kappa = max(kappa for kappa, _ in scored)
    best = min((t for kappa, t in scored if kappa == best_kappa), key=lambda t: abs(t - threshold))
    wrong = [
        (label, verdict)
        for label, verdict in zip(labels, verdicts, strict=True)
        if supported_at(verdict, threshold) != label.supported
    ]
    return {
        "judge": judge.identity,
        "examples": len(labels),
        "unsupported": sum(not t for t in truth),
        "at_threshold": current,
        "best_threshold": best,
        "at_best": agreement(truth, [supported_at(v, best) for v in verdicts]),
        "disagreements": [
            {"id": label.id, "kind": label.kind, "label": label.supported, "score": v.score, "why": v.reason}
            for label, v in wrong
        ],
        "labels_path": str(settings.labels),
    }


def format_calibration(result: dict[str, Any]) -> str:
    judge = result["judge"]
    model = (
        f" model {judge['model']}" + (f"@{judge['revision']}" if judge["revision"] else "")
        if judge["model"]
        else ""
    )
    lines = [
        f"Judge {judge['name']}{model} on {result['examples']} labelled examples "
        f"({result['unsupported']} unsupported) from {Path(result['labels_path']).name}",
        f"  {'threshold':<22} {'accuracy':>8} {'precision':>9} {'recall':>6} {'kappa':>6}"
        "   (positive = unsupported)",
    ]
    for name, threshold, figures in (
        ("configured", judge["threshold"], result["at_threshold"]),
        ("best (max kappa)", result["best_threshold"], result["at_best"]),
    ):
        lines.append(
            f"  {name + f' {threshold:.3f}':<22} {figures['accuracy']:8.3f} {figures['precision']:9.3f} "
            f"{figures['recall']:6.3f} {figures['kappa']:6.3f}"
        )
    if result["disagreements"]:
        lines.append(f"Disagreements at the configured threshold ({len(result['disagreements'])}):")
        for d in result["disagreements"]:
            said = "supported" if d["label"] else "unsupported"
            why = d["why"] or "(judged supported)"
            lines.append(f"  {d['id']} [{d['kind']}] labelled {said}, judge score {d['score']:.2f} {why}")
    return "\n".join(lines)

"""Calibrate the judge against human labels: how often does it agree, and at what threshold?

evals/judge_labels.jsonl holds claims a person labelled against a context:
    {"id": "c01", "claim": "...", "context": "...", "supported": true, "kind": "numbers", "split": "tune"}
`nox -s calibrate` runs the configured judge ([judge] in eval.toml) on every example and
reports, treating "unsupported" as the positive class (the judge's job is to catch them):
  accuracy    share of examples where judge and label agree
  precision   of the claims the judge called unsupported, the share that truly are
  recall      of the truly unsupported claims, the share the judge caught
  kappa       Cohen's kappa: agreement corrected for chance (1 perfect, 0 chance level)
per kind of claim, for each split of the labels on its own: "tune" (labels the judge's rules
and threshold may be tuned on) and "holdout" (labels written before any tuning and never tuned
on, so they can show the judge's failures). The threshold that maximises kappa is searched on
the tuning labels only. Disagreements are listed for the tuning labels and only counted for
the held-out ones: a held-out failure someone has read is no longer held out.
`calibrate --labels PATH` scores any file in this format (a team's own labels; one class only
is allowed, kappa is then n/a), `calibrate --json` prints the figures as JSON. The verdict
cache is not used: calibration always runs the judge.
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


def agreement(truth: list[bool], predicted: list[bool]) -> dict[str, float | None]:
    """Accuracy, precision and recall of "unsupported", and Cohen's kappa.

    Positive = unsupported. Precision is 0 when the judge flags nothing, recall is 1 when
    nothing is unsupported (nothing to miss). Kappa = (p_o - p_e) / (1 - p_e) with p_e the
    agreement expected by chance from each side's rates; None (shown "n/a") when the labels
    are all of one class, where chance agreement leaves nothing to correct for.
    """
    n = len(truth)
    flagged = [not p for p in predicted]
    positive = [not t for t in truth]
    true_pos = sum(f and p for f, p in zip(flagged, positive, strict=True))
    observed = sum(t == p for t, p in zip(truth, predicted, strict=True)) / n
    rate_truth, rate_judge = sum(positive) / n, sum(flagged) / n
    chance = rate_truth * rate_judge + (1 - rate_truth) * (1 - rate_judge)
    one_class = rate_truth in (0.0, 1.0)
    kappa = None if one_class else (observed - chance) / (1 - chance) if chance < 1 else float(observed == 1)
    return {
        "accuracy": observed,
        "precision": true_pos / sum(flagged) if any(flagged) else 0.0,
        "recall": true_pos / sum(positive) if any(positive) else 1.0,
        "kappa": kappa,
    }


def supported_at(verdict: Verdict, threshold: float) -> bool:
    """The verdict a threshold would give. A claim the guard rejected scores 0 and stays out."""
    return verdict.score > 0 and verdict.score >= threshold


def per_kind(labels: list[Label], predicted: list[bool]) -> dict[str, dict[str, float | int]]:
    """For each kind: examples, accuracy, and how many of its faithful claims passed and of
    its unsupported claims were caught."""
    found: dict[str, dict[str, float | int]] = {}
    for label, said in sorted(zip(labels, predicted, strict=True), key=lambda pair: pair[0].kind):
        entry = found.setdefault(
            label.kind or "(none)",
            {"n": 0, "right": 0, "faithful": 0, "passed": 0, "unsupported": 0, "caught": 0},
        )
        entry["n"] += 1
        entry["right"] += said == label.supported
        entry["faithful" if label.supported else "unsupported"] += 1
        entry["passed" if label.supported else "caught"] += said == label.supported
    for entry in found.values():
        entry["accuracy"] = entry.pop("right") / entry["n"]
    return found


def calibrate(settings: JudgeSettings, config_path: Path, labels_path: Path | None = None) -> dict[str, Any]:
    """Run the judge of `settings` ([judge] of the eval.toml at `config_path`) on the labels
    (`labels_path`, or [judge] labels). Each split is reported on its own; the threshold that
    maximises kappa is searched on the "tune" split only, never on the held-out one."""
    path = labels_path or settings.labels
    labels = load_labels(path)
    judge = build_judge(settings, config_path)
    verdicts = judge.verdicts([(label.claim, (label.context,)) for label in labels])
    threshold = settings.threshold
    splits: dict[str, Any] = {}
    for split in SPLITS:
        chosen = [(label, v) for label, v in zip(labels, verdicts, strict=True) if label.split == split]
        if not chosen:
            continue
        truth = [label.supported for label, _ in chosen]
        said = [supported_at(v, threshold) for _, v in chosen]
        splits[split] = {
            "examples": len(chosen),
            "unsupported": sum(not t for t in truth),
            **agreement(truth, said),
            "per_kind": per_kind([label for label, _ in chosen], said),
            "disagreements": [
                {
                    "id": label.id,
                    "kind": label.kind,
                    "label": label.supported,
                    "score": v.score,
                    "why": v.reason,
                }
                for (label, v), s in zip(chosen, said, strict=True)
                if s != label.supported
            ],
        }
        if split == "holdout":  # counted, never listed: a held-out failure read is a tuning label
            splits[split]["disagreements"] = len(splits[split]["disagreements"])
    tune = [(label, v) for label, v in zip(labels, verdicts, strict=True) if label.split == "tune"]
    best: float | None = None
    if tune:
        truth = [label.supported for label, _ in tune]
        candidates = sorted({v.score for _, v in tune if v.score > 0} | {threshold})
        scored = [
            (agreement(truth, [supported_at(v, t) for _, v in tune])["kappa"] or 0.0, t) for t in candidates
        ]
        top = max(kappa for kappa, _ in scored)
        best = min((t for kappa, t in scored if kappa == top), key=lambda t: abs(t - threshold))
        splits["tune"]["best_threshold"] = best
        splits["tune"]["at_best"] = agreement(truth, [supported_at(v, best) for _, v in tune])
    headline = splits.get("holdout") or splits.get("tune") or {}
    return {
        "judge": judge.identity,
        "labels_path": str(path),
        "threshold": threshold,
        "split": "holdout" if "holdout" in splits else "tune",
        "accuracy": headline.get("accuracy"),
        "kappa": headline.get("kappa"),
        "per_kind": headline.get("per_kind", {}),
        "splits": splits,
    }


def _figure(value: float | None, width: int) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}.3f}"


def format_calibration(result: dict[str, Any]) -> str:
    judge = result["judge"]
    model = (
        f" model {judge['model']}" + (f"@{judge['revision']}" if judge["revision"] else "")
        if judge["model"]
        else ""
    )
    source = Path(result["labels_path"]).name
    lines = [f"Judge {judge['name']}{model}, threshold {result['threshold']:g}, on {source}"]
    for split, figures in result["splits"].items():
        title = "held-out labels (never tuned on)" if split == "holdout" else "tuning labels"
        lines += [
            "",
            f"{title}: {figures['examples']} examples ({figures['unsupported']} unsupported)",
            f"  {'threshold':<22} {'accuracy':>8} {'precision':>9} {'recall':>6} {'kappa':>6}"
            "   (positive = unsupported)",
        ]
        rows = [("configured", result["threshold"], figures)]
        if "best_threshold" in figures:
            rows.append(("best (max kappa)", figures["best_threshold"], figures["at_best"]))
        for name, threshold, row in rows:
            lines.append(
                f"  {name + f' {threshold:.3f}':<22} {row['accuracy']:8.3f} {row['precision']:9.3f} "
                f"{row['recall']:6.3f} {_figure(row['kappa'], 6)}"
            )
        lines.append(f"  {'kind':<16} {'n':>3} {'accuracy':>8}  faithful passed  unsupported caught")
        for kind, entry in figures["per_kind"].items():
            lines.append(
                f"  {kind:<16} {entry['n']:>3} {entry['accuracy']:8.3f}  "
                f"{entry['passed']:>6}/{entry['faithful']:<8}  {entry['caught']:>10}/{entry['unsupported']}"
            )
        if isinstance(figures["disagreements"], int):
            lines.append(
                f"  disagreements at the configured threshold: {figures['disagreements']} "
                "(held-out ones are counted, not listed: reading them would make them tuning labels)"
            )
        elif figures["disagreements"]:
            lines.append(f"  disagreements at the configured threshold ({len(figures['disagreements'])}):")
            for d in figures["disagreements"]:
                said = "supported" if d["label"] else "unsupported"
                why = d["why"] or "(judged supported)"
                lines.append(
                    f"    {d['id']} [{d['kind']}] labelled {said}, judge score {d['score']:.2f} {why}"
                )
    return "\n".join(lines)

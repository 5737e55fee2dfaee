"""Calibrate a judge against human labels: how often does it agree, where, and at what threshold?

A labels file holds claims a person labelled against a context, one JSON object a line:
    {"id": "c01", "claim": "...", "context": "...", "supported": true,
     "kind": "numbers", "domain": "manuals", "split": "tune"}
(`kind`, `domain` and `split` optional; so are `question`, `tags` and `provenance`, which
`add-labels` writes for a sentence of the team's own answers, with domain TEAM_DOMAIN ("team"):
the question it answers, that question's tags, and who labelled it, when, from which report;
checked, never part of a figure). `calibrate` runs the configured judge ([judge] in eval.toml),
or each judge `--compare` names, on every example and reports, treating "unsupported" as the
positive class (the judge's job is to catch them):
  accuracy      share of examples where judge and label agree
  precision     of the claims the judge called unsupported, the share that truly are
  recall        of the truly unsupported claims, the share the judge caught
  kappa         Cohen's kappa: agreement corrected for chance (1 perfect, 0 chance level), with
                a 95% bootstrap interval (BOOTSTRAP resamples of the examples, seeded)
  false_alarms  of the faithful claims, the share the judge flagged
for each split of the labels on its own, per kind, per domain (the team's own answers first,
then the other domains by name, labels without one last), and per finding of the narrow checks
(how often it is found, and the share of those claims that truly are unsupported: its
precision, whether or not [judge] fail_on lets it fail a claim). Splits: "tune" or "dev" (labels
the judge's rules and threshold may be tuned on) and "holdout" or "check" (never tuned on).
The threshold that maximises kappa is searched on the tuning split only. Disagreements are
listed for the tuning split and only counted for the held-out one: a held-out failure someone
has read is no longer held out. The verdict cache is not used: calibration always runs the
judge. `--compare` runs each judge it names on the same labels, read once, and prints them side
by side.

Each judge's headline figures are kept beside the verdict cache (`calibration.json`, a cache:
best effort), one entry per judge identity and labels digest (the sha256 of the labels file's
bytes when calibration started), so `eval` and `gate` can print the configured judge's measured
agreement: on labels with the bytes the labels file holds now, or, once it has been edited, that
it was measured on an earlier version of them.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from ..errors import EvalInputError, shown_path
from ..inputs.data import _unique, json_lines
from ..inputs.files import sha256_file, write_atomic
from ..inputs.lines import Flag, Line, NonEmpty, Objects, Strings, checked
from .judges import Verdict, build_judge
from .settings import JudgeSettings
from .verdicts import asked_of, judged

TUNING = ("tune", "dev")  # the judge may be tuned on these
HELD_OUT = ("holdout", "check")  # never tuned on
SPLITS = TUNING + HELD_OUT
_SPLITS_SAID = '"tune" or "dev", "holdout" or "check"'
BOOTSTRAP = 1000  # resamples for the kappa interval
SEED = 0
TEAM_DOMAIN = "team"  # the domain add-labels gives the team's own answers: first in every table
NO_DOMAIN = "(none)"  # the row of labels without a domain: last


@dataclass(frozen=True)
class Label:
    id: str
    claim: str
    context: str
    supported: bool
    kind: str
    split: str  # one of SPLITS
    line: int
    domain: str = ""


class _LabelLine(Line):
    """A line of a labels file. `question`, `tags` and `provenance` (add-labels writes them,
    golden/labels.py) say where a label came from; no figure reads them."""

    id: NonEmpty
    claim: NonEmpty
    context: NonEmpty
    supported: Flag
    kind: NonEmpty = ""
    split: Annotated[Literal["tune", "dev", "holdout", "check"], Field(description=_SPLITS_SAID)] = "tune"
    domain: NonEmpty = ""
    question: NonEmpty = ""
    tags: Strings = Field(default_factory=list)
    provenance: Objects = Field(default_factory=list)


def load_labels(path: Path) -> list[Label]:
    """Read the labelled examples; EvalInputError naming file, line and fix on bad input."""
    labels: list[Label] = []
    seen: dict[str, int] = {}
    for number, item in json_lines(path, "judge labels"):
        line = checked(_LabelLine, item, path, number)
        labels.append(
            Label(
                id=_unique(path, number, line.id, seen),
                claim=line.claim,
                context=line.context,
                supported=line.supported,
                kind=line.kind,
                split=line.split,
                line=number,
                domain=line.domain,
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


def false_alarms(truth: list[bool], predicted: list[bool]) -> float | None:
    """Of the faithful claims, the share the judge flagged (None when there are none)."""
    faithful = [p for t, p in zip(truth, predicted, strict=True) if t]
    return sum(not p for p in faithful) / len(faithful) if faithful else None


def kappa_interval(
    truth: list[bool], predicted: list[bool], resamples: int = BOOTSTRAP
) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of kappa over `resamples` resamples of the examples
    (with replacement, seeded: the same figures every run); resamples of one class are skipped.
    None when too few resamples define kappa."""
    rng = random.Random(SEED)
    n = len(truth)
    found = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        kappa = agreement([truth[i] for i in picks], [predicted[i] for i in picks])["kappa"]
        if kappa is not None:
            found.append(kappa)
    if len(found) < resamples // 2:
        return None
    found.sort()
    return [found[int(0.025 * (len(found) - 1))], found[int(0.975 * (len(found) - 1))]]


def figures(truth: list[bool], predicted: list[bool]) -> dict[str, Any]:
    """agreement() plus the share of faithful claims flagged and kappa's bootstrap interval."""
    return {
        "n": len(truth),
        "unsupported": sum(not t for t in truth),
        **agreement(truth, predicted),
        "kappa_95": kappa_interval(truth, predicted),
        "false_alarms": false_alarms(truth, predicted),
    }


def _failing(verdict: Verdict, fail_on: Sequence[str]) -> bool:
    return any(finding.split(":", 1)[0] in fail_on for finding in verdict.findings)


def supported_at(
    verdict: Verdict, threshold: float, fail_on: Sequence[str] = (), configured: float = 0.0
) -> bool:
    """The verdict `threshold` would give to a verdict judged at the `configured` one: the score
    reaches it and no failing finding was found. A verdict that failed though its score reached
    the configured threshold (the LLM's quote not in the contexts) stays unsupported."""
    if _failing(verdict, fail_on):
        return False
    if verdict.supported:
        return verdict.score >= threshold
    return verdict.score < configured and verdict.score > 0 and verdict.score >= threshold


def per_group(
    labels: list[Label], predicted: list[bool], key: Callable[[Label], str]
) -> dict[str, dict[str, Any]]:
    """Per kind (or domain): examples, accuracy, faithful claims passed, unsupported ones caught."""
    found: dict[str, dict[str, Any]] = {}
    for label, said in sorted(zip(labels, predicted, strict=True), key=lambda pair: key(pair[0])):
        entry = found.setdefault(
            key(label) or "(none)",
            {"n": 0, "right": 0, "faithful": 0, "passed": 0, "unsupported": 0, "caught": 0},
        )
        entry["n"] += 1
        entry["right"] += said == label.supported
        entry["faithful" if label.supported else "unsupported"] += 1
        entry["passed" if label.supported else "caught"] += said == label.supported
    for entry in found.values():
        entry["accuracy"] = entry.pop("right") / entry["n"]
    return found


def domain_order(domains: Iterable[str]) -> list[str]:
    """Domain names as every table shows them: TEAM_DOMAIN first, the rest sorted, NO_DOMAIN last."""
    return sorted(set(domains), key=lambda name: (name != TEAM_DOMAIN, name == NO_DOMAIN, name))


def per_domain(labels: list[Label], predicted: list[bool]) -> dict[str, dict[str, Any]]:
    """Per domain: the split's figures (with kappa's interval) for its labels alone, in
    domain_order (labels without a domain under NO_DOMAIN)."""
    names = [label.domain or NO_DOMAIN for label in labels]
    return {
        domain: figures(
            [label.supported for label, name in zip(labels, names, strict=True) if name == domain],
            [said for said, name in zip(predicted, names, strict=True) if name == domain],
        )
        for domain in domain_order(names)
    }


def per_finding(
    labels: list[Label], verdicts: list[Verdict], fail_on: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Per finding of the narrow checks: claims it was found in, the share of those truly
    unsupported (its precision), and whether fail_on lets it fail a claim."""
    found: dict[str, dict[str, Any]] = {}
    for label, verdict in zip(labels, verdicts, strict=True):
        for name in dict.fromkeys(finding.split(":", 1)[0] for finding in verdict.findings):
            entry = found.setdefault(name, {"found": 0, "unsupported": 0, "fails": name in fail_on})
            entry["found"] += 1
            entry["unsupported"] += not label.supported
    for entry in found.values():
        entry["precision"] = entry["unsupported"] / entry["found"]
    return dict(sorted(found.items()))


def _split_figures(
    chosen: list[tuple[Label, Verdict]], threshold: float, fail_on: Sequence[str], held_out: bool
) -> dict[str, Any]:
    labels = [label for label, _ in chosen]
    truth = [label.supported for label in labels]
    said = [supported_at(v, threshold, fail_on, threshold) for _, v in chosen]
    result = {
        **figures(truth, said),
        "per_domain": per_domain(labels, said),
        "per_kind": per_group(labels, said, lambda label: label.kind),
        "per_finding": per_finding(labels, [v for _, v in chosen], fail_on),
    }
    wrong = [
        {"id": label.id, "kind": label.kind, "label": label.supported, "score": v.score, "why": v.reason}
        for (label, v), s in zip(chosen, said, strict=True)
        if s != label.supported
    ]
    # counted, never listed: a held-out failure someone has read is a tuning label
    result["disagreements"] = len(wrong) if held_out else wrong
    return result


def calibrate(
    settings: JudgeSettings,
    config_path: Path,
    labels_path: Path | None = None,
    *,
    labels: list[Label] | None = None,
    store: bool = True,
) -> dict[str, Any]:
    """Run the judge of `settings` ([judge] of the eval.toml at `config_path`) on the labels
    (`labels_path`, or [judge] labels). Each split is reported on its own; the threshold that
    maximises kappa is searched on the tuning split only, never on the held-out one. With
    `store`, the figures are kept beside the verdict cache for `eval` and `gate` to show, under
    the judge's identity and the digest of the labels file's bytes, taken before they are read
    (`labels`, when given, were read from that file just before: as compare() does)."""
    path = labels_path or settings.labels
    digest = labels_digest(path)
    labels = labels if labels is not None else load_labels(path)
    judge = build_judge(settings, config_path)
    verdicts = asked_of(judge, [(label.claim, (label.context,)) for label in labels], settings, config_path)
    # A label the judge gave no verdict (a model's reply that skipped it, twice) is left out of
    # every figure and counted: agreement is measured on what the judge judged.
    pairs = [(label, v) for label, v in zip(labels, verdicts, strict=True) if judged(v)]
    threshold, fail_on = settings.threshold, settings.failing()
    splits: dict[str, Any] = {}
    for split in SPLITS:
        chosen = [(label, v) for label, v in pairs if label.split == split]
        if chosen:
            splits[split] = _split_figures(chosen, threshold, fail_on, split in HELD_OUT)
        left_out = sum(
            label.split == split for label, v in zip(labels, verdicts, strict=True) if not judged(v)
        )
        if left_out:
            splits.setdefault(split, {"n": 0})["not_judged"] = left_out
    tune = [(label, v) for label, v in pairs if label.split in TUNING]
    if tune:
        truth = [label.supported for label, _ in tune]
        candidates = sorted({v.score for _, v in tune if v.score > 0} | {threshold})
        scored = [
            (agreement(truth, [supported_at(v, t, fail_on, threshold) for _, v in tune])["kappa"] or 0.0, t)
            for t in candidates
        ]
        top = max(kappa for kappa, _ in scored)
        best = min((t for kappa, t in scored if kappa == top), key=lambda t: abs(t - threshold))
        first = next(split for split in TUNING if split in splits)
        splits[first]["best_threshold"] = best
        splits[first]["at_best"] = agreement(
            truth, [supported_at(v, best, fail_on, threshold) for _, v in tune]
        )
    measured_splits = [split for split, found in splits.items() if found["n"]]
    if not measured_splits:
        raise EvalInputError(
            path,
            f"the judge gave no verdict on any of the {len(labels)} labels (each reply skipped them, twice)",
            "check the judge's model and prompt: `eval` with this judge would judge nothing either",
        )
    headline_split = next((s for s in HELD_OUT if s in measured_splits), measured_splits[0])
    headline = splits[headline_split]
    stats = getattr(judge, "stats", None)
    names = [label.domain or NO_DOMAIN for label in labels]
    result = {
        "judge": judge.identity,
        "labels_path": str(path),
        "labels_sha256": digest,
        "domains": {name: names.count(name) for name in domain_order(names)},
        "threshold": threshold,
        "fail_on": list(fail_on),
        "split": headline_split,
        "accuracy": headline["accuracy"],
        "kappa": headline["kappa"],
        "kappa_95": headline["kappa_95"],
        "false_alarms": headline["false_alarms"],
        "examples": headline["n"],
        "not_judged": len(labels) - len(pairs),
        "per_kind": headline["per_kind"],
        "per_domain": headline["per_domain"],
        "splits": splits,
    } | ({"requests": dict(stats)} if stats else {})
    if store:
        remember(settings, result)
    return result


def compare(
    settings: JudgeSettings, config_path: Path, backends: Sequence[str], labels_path: Path | None = None
) -> dict[str, Any]:
    """calibrate() for each backend named, with [judge]'s other settings, on the same labels (the
    file read once, every backend judging every row of it). The configured backend's figures are
    kept as calibrate() keeps them, under the digest taken before the file was read."""
    path = labels_path or settings.labels
    digest = labels_digest(path)
    labels = load_labels(path)
    results = {}
    for name in dict.fromkeys(backends):
        chosen = settings if name == settings.backend else _with_backend(settings, name, config_path)
        result = calibrate(chosen, config_path, path, labels=labels, store=False)
        results[name] = result | {"labels_sha256": digest}
        if name == settings.backend:
            remember(chosen, results[name])
    return {"labels_path": str(path), "labels_sha256": digest, "backends": results}


def _with_backend(settings: JudgeSettings, name: str, config_path: Path) -> JudgeSettings:
    """[judge] with another backend, at the default threshold, with [judge] fail_on and the
    backend's own table ([judge.NAME], else its defaults)."""
    from .settings import DEFAULT_THRESHOLD, own_settings

    own = dict(settings.own)
    model = own_settings(name, config_path, settings.line)
    if model is not None and name not in own:  # a judge with settings of its own: its defaults
        try:
            own[name] = TypeAdapter(model).validate_python({})
        except ValidationError as error:
            raise EvalInputError(
                config_path,
                f"calibrate --compare {name}: its settings have no default ({error.errors()[0]['msg']})",
                f"write them in [judge.{name}]",
                settings.line,
            ) from None
    try:
        return dataclasses.replace(
            settings,
            backend=name,
            threshold=DEFAULT_THRESHOLD,
            fail_on=settings.fail_on,
            own=own,
        )
    except ValueError as error:
        raise EvalInputError(
            config_path,
            f"calibrate --compare {name}: {error}",
            "set what that backend needs in [judge]",
            settings.line,
        ) from None


def stored_path(settings: JudgeSettings) -> Path:
    return settings.cache.with_name("calibration.json")


def _stored(path: Path) -> list[dict[str, Any]]:
    """The figures kept at `path`; none when it is missing or not such a file (a cache)."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    except (OSError, ValueError):
        return []
    return [entry for entry in kept if isinstance(entry, dict)] if isinstance(kept, list) else []


def labels_digest(path: Path) -> str | None:
    """The sha256 of the labels file's bytes (inputs/files.sha256_file, as the report's receipt
    records it); None when it is not a regular file or cannot be read."""
    try:
        return sha256_file(path) if path.is_file() else None
    except OSError:
        return None


def _same_file(stored: object, path: Path) -> bool:
    try:
        return isinstance(stored, str) and Path(stored).resolve() == path.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def remember(settings: JudgeSettings, result: dict[str, Any]) -> None:
    """Keep the headline figures of `result` by judge identity and labels digest, one entry for
    each (best effort: a cache). Without a digest (the labels file unreadable) nothing is kept."""
    digest = result.get("labels_sha256")
    if not digest:
        return
    path = stored_path(settings)
    kept = [
        entry
        for entry in _stored(path)
        if (entry.get("judge"), entry.get("labels_sha256")) != (result["judge"], digest)
    ]
    keys = ("judge", "split", "examples", "kappa", "kappa_95", "false_alarms", "accuracy")
    entry = {key: result[key] for key in keys}
    try:
        labels_path = str(Path(result["labels_path"]).resolve())
    except (OSError, RuntimeError, ValueError):
        labels_path = str(result["labels_path"])
    kept.append(entry | {"labels_path": labels_path, "labels_sha256": digest})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(kept[-20:], indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # the figures are a convenience: calibration itself has been printed


def _figures_line(entry: dict[str, Any]) -> str | None:
    """The agreement line of a kept entry; None when the entry is not one remember() wrote."""
    try:
        low_high = entry.get("kappa_95") or [None, None]
        interval = f" (95% {low_high[0]:.2f} to {low_high[1]:.2f})" if None not in low_high else ""
        kappa = "n/a" if entry["kappa"] is None else f"{entry['kappa']:.2f}"
        flagged = entry.get("false_alarms")
        alarms = f", flags {flagged:.0%} of faithful claims" if flagged is not None else ""
        labels = f"{entry['examples']} {entry['split']} labels of {Path(entry['labels_path']).name}"
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    return f"Judge agreement: kappa {kappa}{interval}{alarms} on {labels}"


def measured(settings: JudgeSettings) -> str:
    """One line: the configured judge's measured agreement, or that it was not measured.

    The figures are those kept for the judge's identity on labels with the bytes [judge] labels
    holds now; when they were kept for an earlier version of that file only, it says so. Figures
    kept for another labels file (`calibrate --labels FILE`) are shown while that file is
    unchanged. A labels file that cannot be read has not been measured."""
    identity = settings.identity()
    mine = [entry for entry in reversed(_stored(stored_path(settings))) if entry.get("judge") == identity]
    current = labels_digest(settings.labels)
    digests: dict[str, str | None] = {}
    earlier = False
    for entry in mine:
        if current is not None and entry.get("labels_sha256") == current:
            line = _figures_line(entry)
            if line:
                return line
        earlier = earlier or (current is not None and _same_file(entry.get("labels_path"), settings.labels))
    if earlier:
        return (
            f"Judge agreement: measured on an earlier version of {shown_path(settings.labels)}; "
            "run `calibrate` again"
        )
    for entry in mine:  # figures of another labels file, still as it was measured
        other = entry.get("labels_path")
        if not isinstance(other, str) or not entry.get("labels_sha256"):
            continue
        if other not in digests:
            digests[other] = labels_digest(Path(other))
        if digests[other] == entry["labels_sha256"]:
            line = _figures_line(entry)
            if line:
                return line
    return "Judge agreement: not measured for this judge and its settings (run `calibrate`)"

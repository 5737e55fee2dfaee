"""`calibrate`'s console tables: the configured judge's agreement with the labels per split,
domain, kind of claim and finding (answers/calibration.py computes them), and judges side by
side (`calibrate --compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..answers.calibration import HELD_OUT, NO_DOMAIN, TEAM_DOMAIN, domain_order
from .table import aligned


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(value: list[float] | None) -> str:
    return f"[{value[0]:.2f}, {value[1]:.2f}]" if value else "n/a"


def _team(domains: dict[str, int]) -> str:
    """What the header says of the team's own answers among the labels, when they hold some."""
    count = domains.get(TEAM_DOMAIN, 0)
    return f" (the team's own answers: {count} labels, domain {TEAM_DOMAIN!r})" if count else ""


def format_calibration(result: dict[str, Any]) -> str:
    """calibrate()'s result as the console shows it: a header, then each split's tables."""
    judge = result["judge"]
    model = (
        f" model {judge['model']}" + (f"@{judge['revision']}" if judge.get("revision") else "")
        if judge.get("model")
        else ""
    )
    source = Path(result["labels_path"]).name
    failing = ", ".join(result["fail_on"]) or "none"
    lines = [
        f"Judge {judge['name']} {judge.get('version') or ''}{model}, threshold {result['threshold']:g}, "
        f"failing findings: {failing}; on {source}{_team(result.get('domains', {}))}"
    ]
    for split, found in result["splits"].items():
        title = (
            f"{split}: held-out labels (never tuned on)" if split in HELD_OUT else f"{split}: tuning labels"
        )
        skipped = found.get("not_judged", 0)
        left_out = f"; {skipped} not judged by the judge, left out" if skipped else ""
        if not found["n"]:
            lines += ["", f"{title}: no example judged{left_out}"]
            continue
        lines += ["", f"{title}: {found['n']} examples ({found['unsupported']} unsupported){left_out}"]
        rows: list[list[object]] = [["threshold", "accuracy", "precision", "recall", "kappa"]]
        at = [("configured", result["threshold"], found)]
        if "best_threshold" in found:
            at.append(("best (max kappa)", found["best_threshold"], found["at_best"]))
        rows += [
            [
                f"{name} {threshold:.3f}",
                f"{row['accuracy']:.3f}",
                f"{row['precision']:.3f}",
                f"{row['recall']:.3f}",
                _figure(row["kappa"]),
            ]
            for name, threshold, row in at
        ]
        lines += aligned(rows, right={1, 2, 3, 4})
        lines[-len(rows)] += "   (positive = unsupported)"
        lines.append(
            f"  kappa 95% interval {_interval(found['kappa_95'])}; faithful claims flagged: "
            + ("n/a" if found["false_alarms"] is None else f"{found['false_alarms']:.0%}")
        )
        if len(found["per_domain"]) > 1 or NO_DOMAIN not in found["per_domain"]:
            rows = [["domain", "n", "accuracy", "kappa", "95% interval", "faithful flagged"]]
            for domain in domain_order(found["per_domain"]):
                entry = found["per_domain"][domain]
                alarms = "n/a" if entry["false_alarms"] is None else f"{entry['false_alarms']:.0%}"
                rows.append(
                    [
                        domain,
                        entry["n"],
                        f"{entry['accuracy']:.3f}",
                        _figure(entry["kappa"]),
                        _interval(entry["kappa_95"]),
                        alarms,
                    ]
                )
            lines += aligned(rows, right={1, 2, 3, 5})
        rows = [["kind", "n", "accuracy", "faithful passed", "unsupported caught"]]
        rows += [
            [
                kind,
                entry["n"],
                f"{entry['accuracy']:.3f}",
                f"{entry['passed']}/{entry['faithful']}",
                f"{entry['caught']}/{entry['unsupported']}",
            ]
            for kind, entry in found["per_kind"].items()
        ]
        lines += aligned(rows, right={1, 2, 3, 4})
        if found["per_finding"]:
            rows = [["finding", "found", "precision", "fails a claim"]]
            rows += [
                [name, entry["found"], f"{entry['precision']:.3f}", "yes" if entry["fails"] else "no"]
                for name, entry in found["per_finding"].items()
            ]
            lines += aligned(rows, right={1, 2})
        if isinstance(found["disagreements"], int):
            lines.append(
                f"  disagreements at the configured threshold: {found['disagreements']} "
                "(held-out ones are counted, not listed: reading them would make them tuning labels)"
            )
        elif found["disagreements"]:
            lines.append(f"  disagreements at the configured threshold ({len(found['disagreements'])}):")
            for d in found["disagreements"]:
                said = "supported" if d["label"] else "unsupported"
                why = d["why"] or "(judged supported)"
                lines.append(
                    f"    {d['id']} [{d['kind']}] labelled {said}, judge score {d['score']:.2f} {why}"
                )
    return "\n".join(lines)


def format_comparison(result: dict[str, Any]) -> str:
    """The backends side by side: kappa (and faithful claims flagged) per split and domain."""
    names = list(result["backends"])
    domains_held: dict[str, int] = next(
        (r["domains"] for r in result["backends"].values() if "domains" in r), {}
    )
    lines = [
        f"Judges compared on {Path(result['labels_path']).name}{_team(domains_held)}: "
        "kappa (faithful claims flagged)"
    ]
    splits = dict.fromkeys(split for r in result["backends"].values() for split in r["splits"])
    for split in splits:
        domains = domain_order(
            d for r in result["backends"].values() for d in r["splits"].get(split, {}).get("per_domain", {})
        )
        rows: list[list[object]] = [["domain", *names]]
        for domain in [*domains, "all"]:
            cells: list[object] = [domain]
            for name in names:
                found = result["backends"][name]["splits"].get(split)
                entry = (
                    None if found is None else (found if domain == "all" else found["per_domain"].get(domain))
                )
                if entry is None or "kappa" not in entry:  # nothing judged there
                    cells.append("-")
                    continue
                alarms = "n/a" if entry["false_alarms"] is None else f"{entry['false_alarms']:.0%}"
                cells.append(f"{_figure(entry['kappa'])} ({alarms})")
            rows.append(cells)
        lines += ["", f"{split}:", *aligned(rows, right=range(1, len(names) + 1))]
        skipped = [
            (name, r["splits"].get(split, {}).get("not_judged", 0)) for name, r in result["backends"].items()
        ]
        lines += [f"  {name}: {n} label(s) not judged, left out" for name, n in skipped if n]
    return "\n".join(lines)

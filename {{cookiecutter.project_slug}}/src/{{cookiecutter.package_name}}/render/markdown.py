"""The gate's verdict as markdown, for the pull request: GitHub shows $GITHUB_STEP_SUMMARY on
the run's page. Built only from the JSON report the gate writes (its "comparison" section),
so the summary can never say something the machine-readable report does not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..gate.significance import OVERALL
from ..inputs.files import write_atomic


def _p(value: float | None) -> str:
    return "-" if value is None else ("<0.0001" if value < 1e-4 else f"{value:.4f}")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(report: dict[str, Any]) -> str:
    """Verdict, metric table (delta, CI, p), problems, newly failing questions, slice table,
    holdout gap and receipt, as GitHub-flavoured markdown."""
    gate = report.get("comparison") or {}
    passed = gate.get("passed")
    counts = report["counts"]
    verdict = "✅ GATE PASSED" if passed else "❌ GATE FAILED"
    lines = [
        f"## {verdict}",
        "",
        f"{counts['evaluated']} of {counts['questions']} questions evaluated "
        f"({counts['left_out']} unanswerable left out). A regression is a drop of more than "
        f"{gate.get('tolerance', 0):g} that is significant (paired sign-flip test, Holm p ≤ "
        f"{gate.get('alpha', 0):g}); floors and must-pass questions fail the gate on their own.",
        "",
        "| metric | baseline | now | delta | CI of delta | p | Holm p | verdict |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    failing = {f["subject"]: f["kind"] for f in gate.get("failures", []) if f["blocking"]}
    tests = gate.get("tests", [])
    for test in (t for t in tests if t["scope"] == OVERALL):
        kind = failing.get(test["metric"])
        verdict = f"**FAIL** ({kind})" if kind else "ok"
        lines.append(
            f"| {test['metric']} | {test['baseline']:.3f} | {test['now']:.3f} | {test['delta']:+.3f} "
            f"| [{test['ci_low']:+.3f}, {test['ci_high']:+.3f}] | {_p(test['p'])} | {_p(test['p_holm'])} "
            f"| {verdict} |"
        )
    mde = gate.get("min_detectable_drop")
    lines += [
        "",
        f"Minimum detectable drop: {'none possible' if mde is None else f'{mde:.3f}'} (at least "
        f"{gate.get('min_changed_questions')} questions must change the same way to reach significance).",
    ]
    for warning in gate.get("warnings", []):
        lines.append(f"> ⚠️ {_cell(warning)}")
        lines.append(">")
    problems = [f for f in gate.get("failures", []) if f["blocking"]]
    listed = [f for f in gate.get("failures", []) if not f["blocking"]]
    if problems:
        lines += ["", "### Why the gate failed", ""]
        lines += [f"- **{f['kind']}** {_cell(f['message'])}" for f in problems]
    if listed:
        lines += ["", "### Newly failing questions (not a failure on their own)", ""]
        lines += [f"- {_cell(f['message'])}" for f in listed]
    if gate.get("notes"):
        lines += ["", "### Notes", ""] + [f"- {_cell(note)}" for note in gate["notes"]]
    lines += _slice_table(report, tests)
    lines += _holdout(report)
    lines += _receipt(report.get("receipt") or {})
    return "\n".join(lines) + "\n"


def _slice_table(report: dict[str, Any], tests: list[dict[str, Any]]) -> list[str]:
    by_scope: dict[str, dict[str, dict[str, Any]]] = {}
    for entry in tests:
        by_scope.setdefault(entry["scope"], {})[entry["metric"]] = entry
    metrics = list(by_scope.get(OVERALL, {}))
    if not metrics or not report["slices"]:
        return []
    lines = [
        "",
        "### Slices (per tag)",
        "",
        "Each cell: value now (delta, Holm p). - = too few questions to test.",
        "",
        "| tag | n | " + " | ".join(metrics) + " |",
        "|---|---:|" + "---:|" * len(metrics),
    ]
    for tag, piece in report["slices"].items():
        cells = []
        for metric in metrics:
            test = by_scope.get(tag, {}).get(metric)
            value = (piece.get("metrics") or {}).get(metric)
            if test is None or value is None:
                cells.append("-")
                continue
            mark = " **↓**" if test["significant"] and test["delta"] < 0 else ""
            cells.append(f"{value:.3f} ({test['delta']:+.3f}, {_p(test['p_holm'])}){mark}")
        lines.append(f"| {_cell(tag)} | {piece['evaluated']} | " + " | ".join(cells) + " |")
    return lines


def _holdout(report: dict[str, Any]) -> list[str]:
    holdout = report.get("holdout")
    if not holdout:
        return []
    lines = [
        "",
        f"### Holdout ({holdout['counts']['evaluated']} evaluated questions)",
        "",
        "| metric | dev | holdout | gap |",
        "|---|---:|---:|---:|",
    ]
    for name, gap in holdout["gap"].items():
        lines.append(
            f"| {name} | {report['aggregate'][name]:.3f} | {holdout['aggregate'][name]:.3f} | {gap:+.3f} |"
        )
    return lines


def _receipt(receipt: dict[str, Any]) -> list[str]:
    if not receipt:
        return []
    judge = receipt.get("judge") or {}
    lines = [
        "",
        "<details><summary>Receipt</summary>",
        "",
        "| what | value |",
        "|---|---|",
    ]
    for name, digest in (receipt.get("sha256") or {}).items():
        lines.append(f"| sha256 {name} | `{digest}` |")
    lines.append(f"| git commit | `{receipt.get('git_commit') or 'not a git checkout'}` |")
    identity = " / ".join(str(judge.get(key)) for key in ("name", "model", "revision"))
    lines.append(f"| judge / model / revision | {identity} |")
    versions = ", ".join(f"{k} {v}" for k, v in (receipt.get("versions") or {}).items())
    lines.append(f"| versions | {versions} |")
    lines.append(f"| seed, k | {receipt.get('seed')}, {receipt.get('k')} |")
    lines += ["", "</details>"]
    return lines


def write_summary(text: str, default: Path) -> Path:
    """Append to $GITHUB_STEP_SUMMARY when set (GitHub's convention: steps append), else
    write `default` atomically. Returns where it went."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(text)
        return Path(target)
    write_atomic(default, text)
    return default

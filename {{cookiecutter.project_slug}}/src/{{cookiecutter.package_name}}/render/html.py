"""A self-contained HTML page of the gate's result: open it from disk, no network, no script.

Plots are inline SVG drawn here (no plotting library, no JavaScript, no fonts or CDN):
  - per-slice bars: each tag's mean, baseline vs now, for every gated metric;
  - per-question deltas: one bar per question, sorted, for every gated metric.
Everything shown comes from the gate's JSON report and the baseline report; every piece of
text from them is escaped, so a question containing "<script>" prints as text.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ..gate.significance import OVERALL

BASELINE_COLOUR = "#b8c2cc"
NOW_COLOUR = "#2f6db5"
DROP_COLOUR = "#c0392b"
GAIN_COLOUR = "#2e8b57"

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d2329; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
.pass { color: #1e7b34; } .fail { color: #b3261e; }
table { border-collapse: collapse; margin: 8px 0; }
td, th { border: 1px solid #d5dbe1; padding: 3px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.warn { background: #fff6d6; border-left: 4px solid #e0a800; padding: 6px 10px; margin: 6px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2329; }
.key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: -1px; }
li { margin: 3px 0; }
"""


def _p(value: float | None) -> str:
    if value is None:
        return "&ndash;"
    return "&lt;0.0001" if value < 1e-4 else f"{value:.4f}"


def _slice_bars(report: dict[str, Any], baseline: dict[str, Any], metric: str) -> str:
    """Horizontal bars, two per tag: baseline (grey) and now (blue), on a 0-1 scale."""
    tags = [tag for tag, piece in report["slices"].items() if piece.get("metrics")]
    label_w, bar_w, row_h = 120, 220, 22
    height = row_h * len(tags) + 24
    parts = [f'<svg width="{label_w + bar_w + 60}" height="{height}" role="img">']
    for i, tag in enumerate(tags):
        y = i * row_h + 4
        now = report["slices"][tag]["metrics"][metric]
        was = ((baseline.get("slices", {}).get(tag) or {}).get("metrics") or {}).get(metric)
        n = report["slices"][tag]["evaluated"]
        parts.append(f'<text x="0" y="{y + 13}">{escape(tag[:18])} (n={n})</text>')
        if was is not None:
            parts.append(
                f'<rect x="{label_w}" y="{y}" width="{was * bar_w:.1f}" height="8" fill="{BASELINE_COLOUR}">'
                f"<title>baseline {was:.3f}</title></rect>"
            )
        parts.append(
            f'<rect x="{label_w}" y="{y + 9}" width="{now * bar_w:.1f}" height="8" fill="{NOW_COLOUR}">'
            f"<title>now {now:.3f}</title></rect>"
        )
        parts.append(f'<text x="{label_w + bar_w + 6}" y="{y + 13}">{now:.2f}</text>')
    axis_y = height - 16
    parts.append(f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + bar_w}" y2="{axis_y}" stroke="#889"/>')
    for tick in (0, 0.5, 1):
        x = label_w + tick * bar_w
        parts.append(f'<text x="{x:.0f}" y="{axis_y + 13}" text-anchor="middle">{tick:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _delta_bars(report: dict[str, Any], baseline: dict[str, Any], metric: str) -> str:
    """One vertical bar per question (sorted by delta): red below zero, green above."""
    old = {row["id"]: row for row in baseline["questions"] if row.get("metrics")}
    deltas = sorted(
        (row["metrics"][metric] - old[row["id"]]["metrics"][metric], row["id"])
        for row in report["questions"]
        if row["metrics"] is not None and row["id"] in old
    )
    step, half, top = 7, 60, 10
    width = max(200, step * len(deltas) + 50)
    mid = top + half
    parts = [f'<svg width="{width}" height="{2 * half + 30}" role="img">']
    parts.append(f'<line x1="40" y1="{mid}" x2="{width - 5}" y2="{mid}" stroke="#889"/>')
    for value, label in ((1, "+1"), (0, "0"), (-1, "&minus;1")):
        parts.append(f'<text x="34" y="{mid - value * half + 4}" text-anchor="end">{label}</text>')
    for i, (delta, qid) in enumerate(deltas):
        x = 42 + i * step
        h = abs(delta) * half
        y = mid - h if delta > 0 else mid
        colour = GAIN_COLOUR if delta > 0 else DROP_COLOUR
        title = f"{escape(qid)}: {delta:+.3f}"
        if abs(delta) < 1e-12:  # unchanged: a tick on the axis, so every question is visible
            parts.append(
                f'<rect x="{x}" y="{mid - 1}" width="5" height="2" fill="#889"><title>{title}</title></rect>'
            )
        else:
            bar = f'<rect x="{x}" y="{y:.1f}" width="5" height="{h:.1f}" fill="{colour}">'
            parts.append(f"{bar}<title>{title}</title></rect>")
    changed = sum(1 for delta, _ in deltas if abs(delta) > 1e-12)
    parts.append(f'<text x="42" y="{2 * half + 26}">{len(deltas)} questions, {changed} changed</text>')
    parts.append("</svg>")
    return "".join(parts)


def _metric_table(tests: list[dict[str, Any]], failing: dict[str, str]) -> str:
    rows = [
        "<table><tr><th>metric</th><th>baseline</th><th>now</th><th>delta</th>"
        "<th>CI of delta</th><th>p</th><th>Holm p</th><th>verdict</th></tr>"
    ]
    for t in (t for t in tests if t["scope"] == OVERALL):
        kind = failing.get(t["metric"])
        verdict = f'<b class="fail">FAIL</b> ({escape(kind)})' if kind else "ok"
        rows.append(
            f"<tr><td>{escape(t['metric'])}</td><td>{t['baseline']:.3f}</td><td>{t['now']:.3f}</td>"
            f"<td>{t['delta']:+.3f}</td><td>[{t['ci_low']:+.3f}, {t['ci_high']:+.3f}]</td>"
            f"<td>{_p(t['p'])}</td><td>{_p(t['p_holm'])}</td><td>{verdict}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table; cells are already escaped."""
    head = "".join(f"<th>{cell}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _slice_table(report: dict[str, Any], tests: list[dict[str, Any]]) -> list[str]:
    by_key = {(t["scope"], t["metric"]): t for t in tests}
    metrics = [t["metric"] for t in tests if t["scope"] == OVERALL]
    rows = []
    for tag, piece in report["slices"].items():
        cells = [escape(tag), str(piece["evaluated"])]
        for metric in metrics:
            test, value = by_key.get((tag, metric)), (piece.get("metrics") or {}).get(metric)
            if test is None or value is None:
                cells.append("&ndash;")
                continue
            mark = ' <b class="fail">↓</b>' if test["significant"] and test["delta"] < 0 else ""
            cells.append(f"{value:.3f} ({test['delta']:+.3f}, {_p(test['p_holm'])}){mark}")
        rows.append(cells)
    header = ["tag", "n", *(escape(m) for m in metrics)]
    return ["<h2>Slices: now (delta, Holm p; &ndash; too few to test)</h2>", _table(header, rows)]


def _holdout(report: dict[str, Any]) -> list[str]:
    holdout = report.get("holdout")
    if not holdout:
        return []
    rows = [
        [escape(name), f"{report['aggregate'][name]:.3f}", f"{holdout['aggregate'][name]:.3f}", f"{gap:+.3f}"]
        for name, gap in holdout["gap"].items()
    ]
    title = f"<h2>Holdout: {holdout['counts']['evaluated']} questions; gap = dev &minus; holdout</h2>"
    return [title, _table(["metric", "dev", "holdout", "gap"], rows)]


def _receipt(receipt: dict[str, Any]) -> list[str]:
    rows = [
        [f"sha256 {escape(name)}", f"<code>{escape(digest)}</code>"]
        for name, digest in receipt.get("sha256", {}).items()
    ]
    judge = receipt.get("judge") or {}
    rows += [
        ["git commit", f"<code>{escape(receipt.get('git_commit') or 'not a git checkout')}</code>"],
        [
            "judge / model / revision",
            escape(" / ".join(str(judge.get(k)) for k in ("name", "model", "revision"))),
        ],
        ["versions", escape(", ".join(f"{k} {v}" for k, v in (receipt.get("versions") or {}).items()))],
        ["seed, k", escape(f"{receipt.get('seed')}, {receipt.get('k')}")],
    ]
    return ["<h2>Receipt</h2>", _table(["what", "value"], rows)]


def html_report(report: dict[str, Any], baseline: dict[str, Any]) -> str:
    """The whole page as one string (inline CSS and SVG only)."""
    gate = report.get("comparison") or {}
    tests = gate.get("tests", [])
    metrics = [t["metric"] for t in tests if t["scope"] == OVERALL]
    failures = gate.get("failures", [])
    failing = {f["subject"]: f["kind"] for f in failures if f["blocking"]}
    passed = gate.get("passed")
    verdict = '<span class="pass">GATE PASSED</span>' if passed else '<span class="fail">GATE FAILED</span>'
    counts = report["counts"]
    body = [
        f"<h1>{verdict}</h1>",
        f"<p>{counts['evaluated']} of {counts['questions']} questions evaluated. A regression is a drop "
        f"of more than {gate.get('tolerance', 0):g} with Holm p ≤ {gate.get('alpha', 0):g} "
        "(paired sign-flip test); floors and must-pass questions fail the gate on their own.</p>",
        _metric_table(tests, failing),
    ]
    body += [f'<div class="warn">{escape(w)}</div>' for w in gate.get("warnings", [])]
    problems = [f for f in failures if f["blocking"]]
    listed = [f for f in failures if not f["blocking"]]
    if problems:
        body.append("<h2>Why the gate failed</h2><ul>")
        body += [f"<li><b>{escape(f['kind'])}</b> {escape(f['message'])}</li>" for f in problems]
        body.append("</ul>")
    if listed:
        body.append("<h2>Newly failing questions (not a failure on their own)</h2><ul>")
        body += [f"<li>{escape(f['message'])}</li>" for f in listed]
        body.append("</ul>")
    body.append(
        '<h2>Slices: mean per tag</h2><p class="key"><span style="background:'
        f'{BASELINE_COLOUR}"></span>baseline<span style="background:{NOW_COLOUR}"></span>now</p>'
        '<div class="charts">'
    )
    body += [
        f"<figure><figcaption>{escape(m)}</figcaption>{_slice_bars(report, baseline, m)}</figure>"
        for m in metrics
    ]
    body.append('</div><h2>Per-question deltas (now &minus; baseline), sorted</h2><div class="charts">')
    body += [
        f"<figure><figcaption>{escape(m)}</figcaption>{_delta_bars(report, baseline, m)}</figure>"
        for m in metrics
    ]
    body.append("</div>")
    body += _slice_table(report, tests)
    body += _holdout(report)
    body += _receipt(report.get("receipt") or {})
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>RAG evaluation gate</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )

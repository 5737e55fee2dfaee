"""A self-contained HTML page of the gate's result: open it from disk, no network, no script.

Laid out from the same `GateView` as the console and the markdown summary. Plots are inline
SVG drawn here (no plotting library, no JavaScript, no fonts or CDN), each scaled to the
page's width (a viewBox), so the page never scrolls sideways, at 10 questions or 10,000:
  - per-slice bars: each tag's mean, baseline vs now, for every gated metric;
  - per-question deltas: every question's change, sorted, for every gated metric.
Every piece of text from the data goes through `text` where it meets the layout, so a question
containing "<script>" prints as text.
"""

from __future__ import annotations

from html import escape

from .view import (
    CheckListing,
    DeltaSeries,
    GateView,
    MetricProblem,
    MetricRow,
    QuestionIssue,
    SliceRow,
    cut,
    show_controls,
)


def text(value: str) -> str:
    """Data as inert HTML: control characters shown as escapes, then `<`, `>`, `&` and both
    quotes escaped (safe in element text and in attribute values alike)."""
    return escape(show_controls(value))


BASELINE_COLOUR = "#b8c2cc"
NOW_COLOUR = "#2f6db5"
DROP_COLOUR = "#c0392b"
GAIN_COLOUR = "#2e8b57"

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d2329;
  max-width: 1100px; overflow-wrap: anywhere; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
.pass { color: #1e7b34; } .fail { color: #b3261e; }
table { border-collapse: collapse; margin: 8px 0; max-width: 100%; }
td, th { border: 1px solid #d5dbe1; padding: 3px 8px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; max-width: 100%; }
.warn { background: #fff6d6; border-left: 4px solid #e0a800; padding: 6px 10px; margin: 6px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; }
figure { margin: 0; flex: 1 1 320px; min-width: 0; max-width: 560px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg { display: block; width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #1d2329; }
.key span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: -1px; }
li { margin: 3px 0; } .detail { color: #4a5560; font-size: 13px; }
"""


def _slice_bars(rows: list[SliceRow], index: int) -> str:
    """Horizontal bars, two per tag: baseline (grey) and now (blue), on a 0-1 scale."""
    label_w, bar_w, row_h = 150, 300, 22
    width, height = label_w + bar_w + 50, row_h * len(rows) + 24
    parts = [f'<svg viewBox="0 0 {width} {height}" role="img">']
    for i, row in enumerate(rows):
        y = i * row_h + 4
        was, now = row.bars[index]
        label = row.tag if len(row.tag) <= 20 else row.tag[:19] + "…"
        name = f"{text(label)} (n={row.n})<title>{text(row.tag)}</title>"
        parts.append(f'<text x="0" y="{y + 13}">{name}</text>')
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


def _delta_bars(series: DeltaSeries) -> str:
    """Every question's delta, sorted: red below zero, green above, a tick when unchanged.
    The plot is always 500 units wide; with many questions the bars get thinner, never wider
    than the page (the SVG scales to its figure)."""
    deltas = series.deltas
    plot_w, half, top, left = 450.0, 60, 10, 40
    step = plot_w / max(len(deltas), 1)
    bar = max(step * 0.7, 0.3)
    mid = top + half
    parts = [f'<svg viewBox="0 0 {left + plot_w + 10:.0f} {2 * half + 34}" role="img">']
    parts.append(f'<line x1="{left}" y1="{mid}" x2="{left + plot_w}" y2="{mid}" stroke="#889"/>')
    for value, label in ((1, "+1"), (0, "0"), (-1, "&minus;1")):
        parts.append(f'<text x="{left - 6}" y="{mid - value * half + 4}" text-anchor="end">{label}</text>')
    for i, (delta, qid) in enumerate(deltas):
        x = left + i * step
        title = f"<title>{text(qid)}: {delta:+.3f}</title>"
        if abs(delta) < 1e-12:  # unchanged: a tick on the axis, so every question is visible
            tick = f'x="{x:.2f}" y="{mid - 1}" width="{bar:.2f}" height="2"'
            parts.append(f'<rect {tick} fill="#889">{title}</rect>')
            continue
        h = min(abs(delta), 1.0) * half
        y = mid - h if delta > 0 else mid
        colour = GAIN_COLOUR if delta > 0 else DROP_COLOUR
        box = f'x="{x:.2f}" y="{y:.1f}" width="{bar:.2f}" height="{h:.1f}"'
        parts.append(f'<rect {box} fill="{colour}">{title}</rect>')
    parts.append(
        f'<text x="{left}" y="{2 * half + 30}">{len(deltas)} questions, {series.changed} changed</text></svg>'
    )
    return "".join(parts)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table (cells already escaped) that scrolls inside itself if ever too wide."""
    head = "".join(f"<th>{cell}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def _metric_table(view: GateView) -> str:
    rows = []
    for row in view.metrics:
        verdict = f'<b class="fail">FAIL</b> ({text(row.failed)})' if row.failed else text(row.verdict)
        rows.append([*(text(cell) for cell in row.cells), verdict])
    return _table([*MetricRow.HEADER, "verdict"], rows)


def _issue(issue: QuestionIssue, limit: int) -> str:
    details = "".join(f'<li class="detail">{text(d)}</li>' for d in cut(issue.details, limit))
    return (
        f"<li><b>{text(issue.label)}</b> <code>{text(issue.id)}</code> {text(issue.question)}: "
        f"{text('; '.join(issue.reasons))}{f'<ul>{details}</ul>' if details else ''}</li>"
    )


def _problem(problem: MetricProblem) -> str:
    """A failing aggregate or slice: its failures, then the questions behind it, listed once."""
    items = "".join(
        f'<li class="detail"><code>{text(q.id)}</code> {text(q.numbers)} '
        f"&ldquo;{text(q.question)}&rdquo;</li>"
        for q in problem.questions
    )
    if problem.more_text:
        items += f'<li class="detail">{text(problem.more_text)}</li>'
    colon = ":" if problem.questions else ""
    listing = f'<li class="detail">{text(problem.note)}{colon}{f"<ul>{items}</ul>" if items else ""}</li>'
    heads = [f"<b>{text(f.kind)}</b> {text(f.message)}" for f in problem.failures]
    heads[-1] += f"<ul>{listing}</ul>"  # nested in the last failure's item: valid HTML lists
    return "".join(f"<li>{head}</li>" for head in heads)


def _check(listing: CheckListing) -> str:
    """A check's flips: its verdict, then the newly failing and newly passing questions."""
    sides = ""
    for heading, questions, more in listing.lists:
        items = "".join(
            f'<li class="detail"><code>{text(q.id)}</code> {text(q.numbers)} '
            f"&ldquo;{text(q.question)}&rdquo;</li>"
            for q in questions
        )
        items += f'<li class="detail">{text(more)}</li>' if more else ""
        sides += f"<li>{text(heading)}:<ul>{items}</ul></li>"
    mark = '<b class="fail">FAIL</b> ' if listing.fails else ""
    return f"<li>{mark}{text(listing.verdict)}<ul>{sides}</ul></li>"


def html_report(view: GateView) -> str:
    """The whole page as one string (inline CSS and SVG only)."""
    verdict = '<span class="pass">GATE PASSED</span>'
    if not view.passed:
        verdict = '<span class="fail">GATE FAILED</span>'
    counts = view.counts
    body = [
        f"<h1>{verdict}</h1>",
        f"<p>{counts.evaluated} of {counts.questions} questions evaluated. "
        f"{text(view.rule[0].upper() + view.rule[1:])}.</p>",
        f"<p>Tolerance: {text(view.in_questions)}. {text(view.correction)}. "
        f"{text(view.mde_text[0].upper() + view.mde_text[1:])}.</p>",
        _metric_table(view),
        *(f'<p class="detail">{text(note)}</p>' for note in view.paired_notes),
        f"<p>{text(view.judged[0].upper() + view.judged[1:])}.</p>",
        f'<p class="trust">{text(view.judge_trust)}.</p>',
        *([f"<p>{text(view.corrected[0].upper() + view.corrected[1:])}.</p>"] if view.corrected else []),
    ]
    if view.advisory:
        body.append("<h2>Advisory: below their floor or dropped, not failing the gate</h2><ul>")
        body += [f"<li>{text(line)}</li>" for line in view.advisory]
        body.append("</ul>")
    body += [f'<div class="warn">{text(w)}</div>' for w in view.warnings]
    if view.slices:
        body.append(
            '<h2>Slices: mean per tag</h2><p class="key"><span style="background:'
            f'{BASELINE_COLOUR}"></span>baseline<span style="background:{NOW_COLOUR}"></span>now</p>'
            '<div class="charts">'
        )
        body += [
            f"<figure><figcaption>{text(m)}</figcaption>{_slice_bars(view.slices, i)}</figure>"
            for i, m in enumerate(view.slice_metrics)
        ]
        body.append("</div>")
    if any(series.deltas for series in view.deltas):
        body.append('<h2>Per-question deltas (now &minus; baseline), sorted</h2><div class="charts">')
        body += [
            f"<figure><figcaption>{text(s.metric)}</figcaption>{_delta_bars(s)}</figure>"
            for s in view.deltas
            if s.deltas
        ]
        body.append("</div>")
    if not view.passed:
        body.append("<h2>Why the gate failed</h2><ul>")
        body += [_problem(problem) for problem in view.metric_problems]
        body += [f"<li><b>flips</b> {text(listing.verdict)}</li>" for listing in view.failing_checks]
        shown, more = view.shown(view.blocking_questions)
        body += [_issue(issue, view.max_listed) for issue in shown]
        body += [f"<li>{text(more)}</li>"] if more else []
        body.append("</ul>")
    if view.flip_checks:
        body.append("<h2>Flips per check: newly failing and newly passing questions</h2><ul>")
        body += [_check(listing) for listing in view.flip_checks]
        body.append("</ul>")
    if view.listed_questions:
        body.append(
            "<h2>Newly failing questions for review (within [gate.allowed_flips], of a check the net rule "
            "passed, of stochastic checks, or of advisory ones)</h2><ul>"
        )
        shown, more = view.shown(view.listed_questions)
        body += [_issue(issue, view.max_listed) for issue in shown]
        body += [f"<li>{text(more)}</li>"] if more else []
        body.append("</ul>")
    if view.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{text(n)}</li>" for n in view.notes) + "</ul>")
    if view.slices:
        rows = []
        for srow in view.slices:
            cells = [text(srow.tag), str(srow.n)]
            for cell in srow.cells:
                mark = ' <b class="fail">↓</b>' if cell.significant_drop else ""
                cells.append("&ndash;" if cell.text is None else text(cell.text) + mark)
            rows.append(cells)
        body.append("<h2>Slices: now (delta, adjusted p; &ndash; too few to test)</h2>")
        body.append(_table(["tag", "n", *(text(m) for m in view.slice_metrics)], rows))
    if view.holdout:
        body.append(f"<h2>Holdout: {view.holdout_evaluated} questions; gap = dev &minus; holdout</h2>")
        rows = [[text(n), f"{dev:.3f}", f"{held:.3f}", f"{gap:+.3f}"] for n, dev, held, gap in view.holdout]
        body.append(_table(["metric", "dev", "holdout", "gap"], rows))
    body.append("<h2>Receipt</h2>")
    receipt = [[text(what), f"<code>{text(value)}</code>"] for what, value in view.receipt]
    body.append(_table(["what", "value"], receipt))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>RAG evaluation gate</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )

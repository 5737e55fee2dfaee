"""A self-contained HTML page of the gate's result: open it from disk, no network, no script.

Laid out from the same `GateView` as the console and the markdown summary, by the jinja2
template templates/report.html.j2; this module computes what it shows (sentences, numbers
formatted, rows, the plots' geometry) and the template only lays it out. Plots are inline SVG
(no plotting library, no JavaScript, no fonts or CDN), each scaled to the page's width (a
viewBox), so the page never scrolls sideways, at 10 questions or 10,000:
  - per-slice bars: each tag's mean, baseline vs now, for every gated metric;
  - per-question deltas: every question's change, sorted, for every gated metric.
Every piece of text from the data is escaped by the templates' autoescape, after `_shown` has
written its control characters as escapes (`text` is the same for one string), so a question
containing "<script>" prints as text. No value is marked safe.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from .inert import show_controls
from .view import DeltaSeries, GateView, MetricRow, QuestionIssue, SliceRow, cut


def _shown(value: Any) -> Any:
    """The templates' `finalize`: every value a page prints passes here, then through autoescape.
    Text shows its control characters as escapes. The only Markup a page prints is a macro's
    output (the template's own markup, its values already escaped): no caller passes Markup."""
    if not isinstance(value, str) or isinstance(value, Markup):
        return value
    if value.isascii() and value.isprintable():  # nothing show_controls rewrites: skip its regex
        return value
    return show_controls(value)


PAGES = Environment(
    loader=PackageLoader("rag_regress.render", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    keep_trailing_newline=True,
    finalize=_shown,
)


def render_page(template: str, **values: Any) -> str:
    """A page of templates/ laid out from `values`."""
    return PAGES.get_template(template).render(**values)


def text(value: str) -> str:
    """Data as inert HTML, as the pages print it: control characters shown as escapes, then
    `<`, `>`, `&` and both quotes escaped (safe in element text and in attribute values alike)."""
    return str(escape(show_controls(value)))


BASELINE_COLOUR = "#b8c2cc"
NOW_COLOUR = "#2f6db5"
DROP_COLOUR = "#c0392b"
GAIN_COLOUR = "#2e8b57"


def _slice_chart(rows: list[SliceRow], index: int, metric: str) -> dict[str, Any]:
    """Horizontal bars, two per tag: baseline (grey) and now (blue), on a 0-1 scale."""
    label_w, bar_w, row_h = 150, 300, 22
    height = row_h * len(rows) + 24
    bars = []
    for i, row in enumerate(rows):
        y = i * row_h + 4
        was, now = row.bars[index]
        bars.append(
            {
                "label": row.tag if len(row.tag) <= 20 else row.tag[:19] + "…",
                "tag": row.tag,
                "n": row.n,
                "text_y": y + 13,
                "was": None if was is None else f"{was:.3f}",
                "was_y": y,
                "was_width": None if was is None else f"{was * bar_w:.1f}",
                "now": f"{now:.3f}",
                "now_short": f"{now:.2f}",
                "now_y": y + 9,
                "now_width": f"{now * bar_w:.1f}",
            }
        )
    axis_y = height - 16
    return {
        "metric": metric,
        "width": label_w + bar_w + 50,
        "height": height,
        "bars": bars,
        "bar_x": label_w,
        "value_x": label_w + bar_w + 6,
        "axis_y": axis_y,
        "axis_end": label_w + bar_w,
        "tick_y": axis_y + 13,
        "ticks": [(f"{label_w + tick * bar_w:.0f}", f"{tick:g}") for tick in (0, 0.5, 1)],
    }


def _delta_chart(series: DeltaSeries) -> dict[str, Any]:
    """Every question's delta, sorted: red below zero, green above, a tick when unchanged.
    The plot is always 500 units wide; with many questions the bars get thinner, never wider
    than the page (the SVG scales to its figure)."""
    deltas = series.deltas
    plot_w, half, top, left = 450.0, 60, 10, 40
    step = plot_w / max(len(deltas), 1)
    mid = top + half
    bars = []  # (x, y, height, colour, question id, delta): tuples, as there may be 10,000
    for i, (delta, qid) in enumerate(deltas):
        x = f"{left + i * step:.2f}"
        if abs(delta) < 1e-12:  # unchanged: a tick on the axis, so every question is visible
            bars.append((x, f"{mid - 1}", "2", "#889", qid, f"{delta:+.3f}"))
            continue
        h = min(abs(delta), 1.0) * half
        y = mid - h if delta > 0 else mid
        colour = GAIN_COLOUR if delta > 0 else DROP_COLOUR
        bars.append((x, f"{y:.1f}", f"{h:.1f}", colour, qid, f"{delta:+.3f}"))
    return {
        "metric": series.metric,
        "width": f"{left + plot_w + 10:.0f}",
        "height": 2 * half + 34,
        "left": left,
        "right": left + plot_w,
        "mid": mid,
        "scale_x": left - 6,
        "plus_y": mid - half + 4,
        "zero_y": mid + 4,
        "minus_y": mid + half + 4,
        "bars": bars,
        "bar_width": f"{max(step * 0.7, 0.3):.2f}",
        "caption_y": 2 * half + 30,
        "count": len(deltas),
        "changed": series.changed,
    }


def _issues(view: GateView, issues: list[QuestionIssue]) -> dict[str, Any]:
    """The first max_listed questions, each with its reasons in one line and its details cut,
    and the line saying how many more the JSON report holds (None: none)."""
    shown, more = view.shown(issues)
    listed = [
        {
            "label": issue.label,
            "id": issue.id,
            "question": issue.question,
            "reasons": "; ".join(issue.reasons),
            "details": cut(issue.details, view.max_listed),
        }
        for issue in shown
    ]
    return {"shown": listed, "more": more}


def _sentence(clause: str) -> str:
    return clause[0].upper() + clause[1:]


def html_report(view: GateView) -> str:
    """The whole page as one string (inline CSS and SVG only)."""
    return render_page(
        "report.html.j2",
        view=view,
        colours={"baseline": BASELINE_COLOUR, "now": NOW_COLOUR},
        rule=_sentence(view.rule),
        mde=_sentence(view.mde_text),
        judged=_sentence(view.judged),
        corrected=_sentence(view.corrected) if view.corrected else None,
        metric_header=[*MetricRow.HEADER, "verdict"],
        slice_charts=[_slice_chart(view.slices, i, m) for i, m in enumerate(view.slice_metrics)]
        if view.slices
        else [],
        delta_charts=[_delta_chart(s) for s in view.deltas if s.deltas],
        blocking=_issues(view, view.blocking_questions),
        listed=_issues(view, view.listed_questions),
        slice_header=["tag", "n", *view.slice_metrics],
        holdout_rows=[[n, f"{dev:.3f}", f"{held:.3f}", f"{gap:+.3f}"] for n, dev, held, gap in view.holdout],
    )

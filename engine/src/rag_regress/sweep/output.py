"""The sweep's three outputs, from one SweepResult: the console table, build/sweep.md and
build/sweep.html (self-contained, with an inline SVG plot of every candidate's mean).

Candidate labels hold values from eval.toml (a tokenizer pattern may hold `<`, `|` or `*`):
markdown escapes them; the HTML page (the jinja2 template render/templates/sweep.html.j2)
escapes every text it shows, in its SVG too, by autoescape.
"""

from __future__ import annotations

import re
from typing import Any

from ..gate.stats import format_p
from ..render.html import render_page
from ..render.table import aligned
from .result import Row, SweepResult

HEADERS = ["candidate", "questions", "mean", "vs current", "p", "p (Holm)", "p vs best (HSD)", "status"]


def _status(row: Row, result: SweepResult) -> str:
    if result.winner is not None and row.candidate.index == result.winner.index:
        return "winner" + (" (confirmed)" if result.holdout.confirmed else " (not confirmed)")
    if row.same_as_current:
        return "same as current" + ("" if row.final else f", out after rung {row.rung}")
    if row.final:
        return "final field"
    return f"out after rung {row.rung}"


def _cells(row: Row, result: SweepResult) -> list[str]:
    current = row.candidate.current
    return [
        row.candidate.label,
        str(row.questions),
        f"{row.mean:.4f}",
        "-" if current else f"{round(row.delta, 4) + 0.0:+.4f}",  # + 0.0: never "-0.0000"
        "-" if current else format_p(row.p),
        "-" if current else format_p(row.p_holm),
        "-" if row.p_vs_best is None else format_p(row.p_vs_best),
        _status(row, result),
    ]


def _summary(result: SweepResult) -> list[str]:
    """The lines under the table: how the field was run, the verdict, the holdout."""
    rungs = ", ".join(f"rung {rung}: {count} on {size}" for rung, size, count in result.rungs)
    lines = [
        f"metric {result.metric}; {result.dev_questions} dev questions choose, "
        f"{result.holdout.questions} holdout questions confirm ({result.holdout.source})",
        f"{len(result.rows) - 1} candidates; {rungs} questions; {result.builds} retriever(s) built",
        f"p (Holm): one-sided paired sign-flip test against the current configuration, Holm-adjusted over "
        f"the grid; p vs best: randomised Tukey HSD over the final field; alpha {result.alpha:g}",
    ]
    if result.runner_up is not None:
        lines.append(f"runner-up: {result.runner_up.label} (p vs best {format_p(result.p_runner_up)})")
    lines.append(result.verdict)
    held = result.holdout
    if held.delta is not None:
        lines.append(
            f"holdout: winner - current = {held.delta:+.4f} on {held.questions} questions, "
            f"one-sided p {format_p(held.p)}"
        )
    return lines


def console_text(result: SweepResult) -> str:
    table = aligned([HEADERS, *(_cells(row, result) for row in result.rows)], indent="", ruled=True)
    text = [f"Sweep: {result.metric}", *table, "", *_summary(result)]
    if result.adopt:
        text += ["", "to adopt the winner, set in eval.toml:", *(f"  {line}" for line in result.adopt)]
    return "\n".join(text)


# Inside a table cell or after "- ", these are the characters markdown or inline HTML could
# read (emphasis, code, links, tags, entities, cell breaks, strikethrough); the others (. - +
# # !) only mean something at the start of a line, where a value never is.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")


def markdown_escape(text: str) -> str:
    """`text` shown literally in markdown, as one table cell or list item."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_text(result: SweepResult) -> str:
    lines = [
        f"# Sweep: {markdown_escape(result.metric)}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "| " + " | ".join("---" for _ in HEADERS) + " |",
    ]
    lines += [
        "| " + " | ".join(markdown_escape(cell) for cell in _cells(row, result)) + " |" for row in result.rows
    ]
    lines += ["", *(f"- {markdown_escape(line)}" for line in _summary(result))]
    if result.adopt:
        lines += ["", "To adopt the winner, set in `eval.toml`:", "", "```toml", *result.adopt, "```"]
    return "\n".join(lines) + "\n"


def _plot(result: SweepResult) -> dict[str, Any]:
    """One row per candidate (the table's order): its mean as a dot, the current configuration's
    mean as a vertical line; the winner in another colour."""
    rows = result.rows
    width, left, right, step, top = 720, 300, 60, 20, 24
    height = top + step * len(rows) + 20
    means = [row.mean for row in rows]
    low, high = min(means), max(means)
    if high - low < 1e-9:
        low, high = low - 0.05, high + 0.05
    span = high - low

    def x(value: float) -> float:
        return left + (value - low) / span * (width - left - right)

    current = next(row.mean for row in rows if row.candidate.current)
    winner = result.winner.index if result.winner is not None else None
    dots = []
    for i, row in enumerate(rows):
        y = top + step * i + step / 2
        label = row.candidate.label
        dots.append(
            {
                "label": label if len(label) <= 44 else label[:43] + "…",
                "candidate": label,
                "colour": "#1a7f37" if row.candidate.index == winner else ("#333" if row.final else "#aaa"),
                "x": f"{x(row.mean):.1f}",
                "y": f"{y:.1f}",
                "text_y": f"{y + 4:.1f}",
                "value_x": f"{x(row.mean) + 9:.1f}",
                "mean": f"{row.mean:.4f}",
                "mean_short": f"{row.mean:.3f}",
            }
        )
    return {
        "width": width,
        "height": height,
        "current_x": f"{x(current):.1f}",
        "line_top": top - 8,
        "line_bottom": height - 16,
        "current_y": top - 12,
        "label_x": left - 8,
        "dots": dots,
        "left": left,
        "right": width - right,
        "scale_y": height - 2,
        "low": f"{low:.3f}",
        "high": f"{high:.3f}",
    }


def html_text(result: SweepResult) -> str:
    """build/sweep.html: the plot, the table and the summary, by templates/sweep.html.j2 (the
    gate's page's environment: autoescape, control characters shown)."""
    return render_page(
        "sweep.html.j2",
        metric=result.metric,
        plot=_plot(result),
        headers=HEADERS,
        rows=[_cells(row, result) for row in result.rows],
        summary=_summary(result),
        adopt="\n".join(result.adopt),
    )

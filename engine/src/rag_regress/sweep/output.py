"""The sweep's three outputs, from one SweepResult: the console table, build/sweep.md and
build/sweep.html (self-contained, with an inline SVG plot of every candidate's mean).

Candidate labels hold values from eval.toml (a tokenizer pattern may hold `<`, `|` or `*`):
markdown escapes them, HTML and SVG escape every text they show.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from ..gate.stats import format_p

if TYPE_CHECKING:
    from .command import Row, SweepResult

STYLE = """<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; }
th, td { padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; text-align: left; }
pre { background: #f4f4f4; padding: 0.6rem; }
</style>"""
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
    rows = [HEADERS, *(_cells(row, result) for row in result.rows)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    table = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    table.insert(1, "  ".join("-" * width for width in widths))
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


def svg_plot(result: SweepResult) -> str:
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
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape("mean " + result.metric + " of each candidate")}">',
        f'<line x1="{x(current):.1f}" y1="{top - 8}" x2="{x(current):.1f}" y2="{height - 16}" stroke="#888" '
        'stroke-dasharray="4 3"/>',
        f'<text x="{x(current):.1f}" y="{top - 12}" font-size="11" text-anchor="middle">current</text>',
    ]
    winner = result.winner.index if result.winner is not None else None
    for i, row in enumerate(rows):
        y = top + step * i + step / 2
        colour = "#1a7f37" if row.candidate.index == winner else ("#333" if row.final else "#aaa")
        label = row.candidate.label if len(row.candidate.label) <= 44 else row.candidate.label[:43] + "…"
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">'
            f"{html.escape(label)}</text>"
        )
        parts.append(f'<circle cx="{x(row.mean):.1f}" cy="{y:.1f}" r="5" fill="{colour}">')
        parts.append(f"<title>{html.escape(row.candidate.label)}: {row.mean:.4f}</title></circle>")
        parts.append(f'<text x="{x(row.mean) + 9:.1f}" y="{y + 4:.1f}" font-size="11">{row.mean:.3f}</text>')
    parts.append(
        f'<text x="{left}" y="{height - 2}" font-size="11">{low:.3f}</text>'
        f'<text x="{width - right}" y="{height - 2}" font-size="11" text-anchor="end">{high:.3f}</text>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def html_text(result: SweepResult) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in HEADERS)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in _cells(row, result)) + "</tr>"
        for row in result.rows
    )
    summary = "\n".join(f"<li>{html.escape(line)}</li>" for line in _summary(result))
    adopt = ""
    if result.adopt:
        adopt = (
            "<p>To adopt the winner, set in eval.toml:</p>\n<pre>"
            + html.escape("\n".join(result.adopt))
            + "</pre>"
        )
    title = html.escape(f"Sweep: {result.metric}")
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title}</title>",
            STYLE,
            "</head>",
            "<body>",
            f"<h1>{title}</h1>",
            svg_plot(result),
            "<table>",
            f"<thead><tr>{head}</tr></thead>",
            f"<tbody>\n{body}\n</tbody>",
            "</table>",
            f"<ul>\n{summary}\n</ul>",
            adopt,
            "</body>",
            "</html>",
            "",
        ]
    )

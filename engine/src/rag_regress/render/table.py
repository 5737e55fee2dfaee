"""Columns for the console: rows of cells laid out so that each column is as wide as its
widest cell, whatever the data's names (a team's tag or domain may be longer than any width
written in advance).

Our own few lines rather than a table library: the console's tables are plain text in a CI
log, and a cell from the data is shown inert first (render/inert.py: a control character
as its escape), so that its width is the width it prints at.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .inert import show_controls


def aligned(
    rows: Sequence[Sequence[object]], right: Collection[int] = (), indent: str = "  ", ruled: bool = False
) -> list[str]:
    """`rows` (the first usually the header) as lines: each cell shown with str() and made
    inert, its column padded to the widest cell, left-aligned, or right-aligned for the
    column indexes in `right` (numbers); two spaces between columns, no trailing spaces.
    `ruled`: a row of dashes under the first, each as wide as its column."""
    cells = [[show_controls(str(cell)) for cell in row] for row in rows]
    widths = [
        max((len(row[i]) for row in cells if i < len(row)), default=0)
        for i in range(max(map(len, cells), default=0))
    ]
    if ruled and cells:
        cells.insert(1, ["-" * width for width in widths])
    return [
        (
            indent
            + "  ".join(
                cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)
            )
        ).rstrip()
        for row in cells
    ]

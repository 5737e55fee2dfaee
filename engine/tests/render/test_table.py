"""Console tables: each column as wide as its widest cell, whatever a team names its tags or
domains, with data shown inert before it is measured."""

from __future__ import annotations

from rag_regress.render.table import aligned


def test_a_long_name_widens_its_column_and_numbers_align_right() -> None:
    lines = aligned(
        [["domain", "n", "kappa"], ["team", 3, "0.500"], ["a-very-long-domain-name", 120, "n/a"]],
        right={1, 2},
    )
    assert lines == [
        "  domain                     n  kappa",
        "  team                       3  0.500",
        "  a-very-long-domain-name  120    n/a",
    ]


def test_a_control_character_is_shown_as_its_escape_and_counted_as_printed() -> None:
    first, second = aligned([["tag", "n"], ["x\x1b[2J", 1]], right={1}, indent="")
    assert second == "x\\x1b[2J  1" and len(first) == len(second)
    assert "\x1b" not in second


def test_short_rows_and_no_rows_lay_out() -> None:
    assert aligned([]) == []
    assert aligned([["a", "b"], ["long"]]) == ["  a     b", "  long"]


def test_a_ruled_table_has_a_dash_row_as_wide_as_each_column() -> None:
    lines = aligned([["name", "n"], ["x\x07", 12]], right={1}, indent="", ruled=True)
    assert lines == ["name    n", "-----  --", "x\\x07  12"]

"""The acceptance rules `compare` applies (and the gate shares): not lower, must-pass hit."""

from __future__ import annotations

import operator
from functools import reduce
from statistics import fmean

from rag_regress.gate.acceptance import must_pass_missed, not_lower


def test_equal_means_summed_in_another_order_are_not_lower() -> None:
    """The same ten values averaged in two orders can differ in the last bit: not a drop."""
    values = [0.1, 0.2, 0.3, 1 / 3, 0.7, 0.9, 1 / 7, 0.05, 0.6, 0.25]
    forward = reduce(operator.add, values) / 10  # plain float additions, in order
    backward = reduce(operator.add, reversed(values)) / 10
    assert forward != backward
    assert not_lower(forward, backward) and not_lower(backward, forward)
    assert not_lower(fmean(values), fmean(values))


def test_the_smallest_real_drop_is_lower() -> None:
    """One query of a thousand whose first relevant document slips from rank 9 to 10 lowers
    MRR@10 by 1/90000: a drop, however small."""
    before = 0.5
    assert not not_lower(before, before - (1 / 9 - 1 / 10) / 1000)
    assert not_lower(before, before + 1e-6)


def test_must_pass_queries_that_found_nothing_are_missed_in_order() -> None:
    """Missed: no relevant id in the top k, or no row at all; listed in must-pass order."""
    found = {"q1": ["doc-a"], "q2": [], "q3": ["doc-b", "doc-c"]}
    assert must_pass_missed(["q4", "q3", "q2", "q1"], found) == ["q4", "q2"]
    assert must_pass_missed([], found) == []

"""The acceptance rules shared by `compare` and the gate: a number not lower than before, and
every must-pass query hit.

Averages alone are not enough to accept a change: a candidate can raise MRR while losing a
query that matters, so both rules apply together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

# Floating-point slack: equal means computed in a different order may differ in the last
# bits, and that is not lower. Far below a real change: the smallest, one query's first
# relevant document moving from rank 999 to 1000, lowers MRR@1000 over a million queries
# by 1e-12.
EPSILON = 1e-12


def not_lower(before: float, after: float) -> bool:
    """Whether `after` is not lower than `before`, allowing EPSILON of float noise."""
    return after >= before - EPSILON


def must_pass_missed(must_pass: Iterable[str], found: Mapping[str, Sequence[str]]) -> list[str]:
    """The must-pass queries that found no relevant document in the top k, in `must_pass` order.

    `found` maps each query id to the relevant ids in its top k (the reports' and `compare`'s
    `found`); a must-pass query it lacks counts as missed, never as passed.
    """
    return [qid for qid in must_pass if not found.get(qid)]

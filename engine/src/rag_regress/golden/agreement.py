"""How far two graders agree on the same (question, document) pairs: Cohen's kappa."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two graders' labels of the same items: (p_o - p_e) / (1 - p_e), where
    p_o is the share of items they label alike and p_e the share expected by chance from each
    grader's own label frequencies (sum over labels of p1(label) * p2(label)).

    1 is perfect agreement, 0 what chance gives, below 0 worse than chance. Labels are
    nominal: a 2 against a 3 disagrees as much as a 0 against a 3. None when there is no item,
    or when chance alone agrees on every item (both graders gave one and the same label
    throughout: p_e = 1, where kappa is undefined).
    """
    if len(first) != len(second):
        raise ValueError(f"two graders' labels differ in number: {len(first)} and {len(second)}")
    n = len(first)
    if n == 0:
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    ones, twos = Counter(first), Counter(second)
    expected = sum(ones[label] * twos[label] for label in ones) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)

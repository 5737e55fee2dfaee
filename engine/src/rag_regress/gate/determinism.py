"""Is the system deterministic? The premise of the gate's default rule, checked cheaply.

The default rule fails on any drop beyond the tolerance, whatever its p-value, because a
retriever and generator with fixed code, index and settings give the same ranking and the
same answer on every run: a drop is a change, not noise. run.py re-runs a few questions
(`[gate] determinism_check`, evenly spread over the golden set), bypassing the evaluator's
own caches (the remembered hits and the verdict cache), and hands both runs here.

Compared: each ranking's document ids in order and its scores at float32 precision (an
embedding model's batches may differ in the last bits of a float32, never more), and each
answer's text, abstention and context ids exactly. A difference in a part not declared
stochastic is an error (exit 2), not a pass: under that rule noise would fail the gate at
random. The fix is to declare the part in `[gate] stochastic`, which gates it by
non-inferiority over `repeats` runs per question, and to remake the baseline.

run.py tells a generator that varies from a retriever that ranks otherwise for the
generator's searches (asked again from the run's own hits, the generator agrees) and names
the retriever then.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..api import Answer, Hit
from ..errors import EvalInputError
from ..inputs.reports import AnswerResult

# Relative difference of two float32 scores still called equal: a few units in the last place.
FLOAT32_RTOL = 8 * float(np.finfo(np.float32).eps)


def sample(count: int, wanted: int) -> list[int]:
    """`wanted` indices spread evenly over range(count) (all of them when wanted >= count)."""
    if wanted >= count:
        return list(range(count))
    if wanted <= 0:
        return []
    return sorted({round(i * (count - 1) / max(1, wanted - 1)) for i in range(wanted)})


def ranking_differences(
    ids: Sequence[str], first: Sequence[Sequence[Hit]], again: Sequence[Sequence[Hit]]
) -> list[str]:
    """One line per question whose ranking differs between the two runs."""
    found = []
    for qid, one, two in zip(ids, first, again, strict=True):
        if [hit.doc_id for hit in one] != [hit.doc_id for hit in two]:
            found.append(f"{qid}: ranking {[h.doc_id for h in one][:5]} then {[h.doc_id for h in two][:5]}")
            continue
        a = np.array([hit.score for hit in one], dtype=np.float32).astype(float)
        b = np.array([hit.score for hit in two], dtype=np.float32).astype(float)
        if len(a) and not np.allclose(a, b, rtol=FLOAT32_RTOL, atol=FLOAT32_RTOL):
            worst = float(np.max(np.abs(a - b)))
            found.append(f"{qid}: same order, scores differ by up to {worst:.3g} (beyond float32 precision)")
    return found


def answer_differences(
    ids: Sequence[str], first: Sequence[AnswerResult | None], again: Sequence[Answer]
) -> list[str]:
    """One line per question whose answer differs between the two runs (text, abstention or contexts)."""
    found = []
    for qid, one, two in zip(ids, first, again, strict=True):
        if one is None:
            continue
        contexts = [context.doc_id for context in two.contexts]
        if one.text != two.text:
            found.append(f"{qid}: answer text {one.text[:60]!r}... then {two.text[:60]!r}...")
        elif one.abstained != two.abstained or one.contexts != contexts:
            found.append(
                f"{qid}: abstained/contexts {one.abstained} {one.contexts} then {two.abstained} {contexts}"
            )
    return found


def require_deterministic(part: str, differences: list[str], checked: int, config_path: Path) -> None:
    """Raise EvalInputError (exit 2) when `part` gave different outputs for the same questions."""
    if not differences:
        return
    listed = "; ".join(differences[:3]) + (
        f"; and {len(differences) - 3} more" if len(differences) > 3 else ""
    )
    raise EvalInputError(
        config_path,
        f"the {part} is not deterministic: run twice on {checked} question(s), {len(differences)} "
        f"differ ({listed}). The gate's default rule fails on any drop beyond the tolerance, so noise "
        "would fail it at random",
        f'declare it in [gate]: stochastic = ["{part}"] with `repeats` runs per question (gated by '
        "non-inferiority, docs/statistics.md), then remake the baseline with `nox -s baseline`; or make "
        "it deterministic (fixed seed, temperature 0)",
    )

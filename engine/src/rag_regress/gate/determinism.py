"""Is the system deterministic? The premise of the gate's default rule, checked cheaply.

The default rule fails on any drop beyond the tolerance, whatever its p-value, because a
retriever and generator with fixed code, index and settings give the same ranking and the
same answer on every run: a drop is a change, not noise. run.py re-runs a few questions
(`[gate] determinism_check`, evenly spread over those the system answered in this run),
bypassing the evaluator's own caches (the remembered hits, the output cache and the verdict
cache), and hands both runs here. An output the output cache served was recorded from this
very system and is served again, identically, until the system changes: a run served wholly
from it re-asks nothing, and the first run of a changed system is checked.

Compared: each ranking's document ids in order and its scores at float32 precision (an
embedding model's batches may differ in the last bits of a float32, never more), and each
answer's text, abstention and context ids exactly. A difference in a part not declared
stochastic is an error (exit 2), not a pass: under that rule noise would fail the gate at
random. The fix is to declare the part in `[gate] stochastic`, which gates it by
non-inferiority over `repeats` runs per question, and to remake the baseline. Hosted LLM APIs
vary even at temperature 0 with a seed, so the message gives the exact eval.toml lines and
what they cost, worked out from the run that found the difference (`RunSize`): questions x
repeats calls of the part each gate and baseline, plus the LLM judge's requests for each
repeat's sentences.

run.py tells a generator that varies from a retriever that ranks otherwise for the
generator's searches (asked again from the run's own hits, the generator agrees) and names
the retriever then.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
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


# The parts [gate] stochastic names, in the order its docs list them.
PARTS = ("retriever", "generator", "judge")


@dataclass(frozen=True)
class RunSize:
    """The numbers of the run that found a difference, from which the cost of `repeats` is
    worked out."""

    questions: int  # questions each run answers: the golden set's and the holdout's
    repeats: int  # [gate] repeats, as set or by default
    stochastic: tuple[str, ...] = ()  # the parts declared already
    judge_requests: int | None = None  # what the LLM judge asked of its server; None: no such judge
    judged: int = 0  # sentences the judge judged this run
    cached: int = 0  # sentences whose verdict came from the verdict cache
    line: int | None = None  # the line of [gate] in eval.toml, where the lines go


def _judge_cost(size: RunSize) -> str:
    """What an LLM judge adds per gate with repeats: each repeat's new sentences are judged."""
    if size.judge_requests is None:
        return ""
    if size.judged == 0 and not size.judge_requests:
        return (
            ", plus the LLM judge's requests for each repeat's new sentences (this run's verdicts all "
            "came from the verdict cache, so it made none)"
        )
    if size.judged == 0:  # it asked, and its model gave no verdict: those are asked again each run
        return (
            ", plus the LLM judge's requests for each repeat's new sentences (this run: "
            f"{size.judge_requests:,} requests and no verdict from them, so every run asks them again; "
            f"{size.cached:,} verdicts from the verdict cache)"
        )
    per_run = -(-size.judge_requests * (size.judged + size.cached) // size.judged)  # rounded up
    return (
        f", plus up to {size.repeats} x {per_run:,} = {size.repeats * per_run:,} LLM judge requests "
        f"(this run: {size.judge_requests:,} for {size.judged:,} sentences judged, {size.cached:,} more "
        "from the verdict cache; a sentence said again word for word is not judged again)"
    )


def stochastic_fix(part: str, size: RunSize) -> str:
    """The fix for `part` varying: the [gate] lines to add, and what they cost per gate and
    baseline, from this run's numbers."""
    declared = [name for name in PARTS if name in {*size.stochastic, part}]
    where = f" (line {size.line})" if size.line else ""
    lines = f"stochastic = {json.dumps(declared)}\n      repeats = {size.repeats}"
    calls = size.questions * size.repeats
    if part == "retriever":  # each repeat searches again and answers from what it found
        asked = f"{calls:,} searches and {calls:,} generator calls a run instead of {size.questions:,} each"
    else:
        asked = f"{calls:,} {part} calls a run instead of {size.questions:,}"
    return (
        f"declare it: put these lines under [gate] in eval.toml{where}\n      {lines}\n    then remake the "
        f"baseline with `nox -s baseline` and commit it (docs/statistics.md: non-inferiority over the "
        f"repeats). Cost, from this run: every gate and baseline then runs each question {size.repeats} "
        f"times, {size.questions:,} questions x {size.repeats} repeats = {asked}{_judge_cost(size)}. "
        "Or make it deterministic (a fixed seed and temperature 0, which hosted APIs do not promise)"
    )


def require_deterministic(
    part: str, differences: list[str], checked: int, config_path: Path, size: RunSize | None = None
) -> None:
    """Raise EvalInputError (exit 2) when `part` gave different outputs for the same questions;
    with `size`, the fix gives the exact lines and their cost (`stochastic_fix`)."""
    if not differences:
        return
    listed = "; ".join(differences[:3]) + (
        f"; and {len(differences) - 3} more" if len(differences) > 3 else ""
    )
    fix = (
        stochastic_fix(part, size)
        if size is not None
        else f'declare it in [gate]: stochastic = ["{part}"] with `repeats` runs per question (gated by '
        "non-inferiority, docs/statistics.md), then remake the baseline with `nox -s baseline`; or make "
        "it deterministic (fixed seed, temperature 0)"
    )
    raise EvalInputError(
        config_path,
        f"the {part} is not deterministic: run twice on {checked} question(s), {len(differences)} "
        f"differ ({listed}). The gate's default rule fails on any drop beyond the tolerance, so noise "
        "would fail it at random",
        fix,
        size.line if size is not None else None,
    )

"""The stand-in generator: answer with the best retrieved passage, verbatim, or abstain.

Each sentence of the answer cites the passage it comes from with a marker ("... enable it
[1]."), as an LLM asked for citations does (answers/citations.py reads them).

No language model: it makes the evaluation deterministic and shows what the checks catch.
It abstains when the retriever finds nothing or the top score is below `min_score`, so
raising `min_score` in [generation] trades wrong answers for refusals (set it too high and
answerable questions are refused: the second regression of the README's walk-through).
Without `min_score` it never abstains on a question with a hit.

`min_score` is in the retriever's own units (BM25 scores, cosine similarities, fused
ranks), so no fixed number suits every retriever. `baseline` therefore checks it against
the golden set and `baseline --fit-floors` fits it (`fit_min_score`): the threshold that
misjudges the fewest questions (abstaining on an answerable one, answering an unanswerable
one); with no unanswerable question that is "never abstain", and the setting is removed.
Scale the retriever's scores by 100 and the fitted threshold scales with them: the
questions refused stay the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Annotated, Any

from pydantic import Field, StrictFloat, StrictInt

from ..api import ABSTENTION, Answer, Context, Document, History, Retriever
from ..calling.asking import with_history
from ..inputs.conversation import Turn
from ..inputs.reports import Report
from ..options import NotNaN, PartSettings, validated
from .citations import strip_markers
from .judges.claims import split_sentences

SETTING = "min_score"  # the [generation] key of the abstention threshold
WHERE = f"[generation] {SETTING}"
VERSION = "1.0"  # bumped whenever an answer may change for the same settings and hits
PART = "the stand-in generator"  # who refuses a bad option


class Settings(PartSettings):
    """[generation] of the stand-in generator."""

    min_score: Annotated[
        StrictFloat,
        NotNaN,
        Field(description="abstain when the best retrieval score is below this; the default: never"),
    ] = -math.inf
    contexts: Annotated[
        StrictInt, Field(ge=0, description="passages handed to the generator (and to the judge)")
    ] = 3


def abstains(top: float | None, min_score: float) -> bool:
    """The stand-in's rule: abstain when nothing was found (`top` None) or the top score is
    below `min_score`. The generator and the fit both use it, so they cannot disagree."""
    return top is None or top < min_score


class ExtractiveGenerator:
    def __init__(self, retriever: Retriever, documents: list[Document], options: Settings):
        self.retriever = retriever
        # A document with empty text (test collections hold some) is passed on as its title:
        # an empty passage would make an empty answer.
        self.texts = {d.id: d.text if d.text.strip() else d.title for d in documents}
        self.options = options

    def answer(self, question: str, history: History = ()) -> Answer:
        # A later turn is searched in its conversation, when the retriever takes one (calling/asking.py).
        search = with_history(self.retriever.search, Turn(question, history))
        hits = search(question, max(1, self.options.contexts))
        if abstains(hits[0].score if hits else None, self.options.min_score):
            return Answer(ABSTENTION, [], abstained=True)
        # A chunk hit hands on its chunk (api.Hit offsets), a whole-document hit all the text.
        contexts = [Context(hit.doc_id, self.texts[hit.doc_id][_span(hit)]) for hit in hits]
        best = next((i for i, context in enumerate(contexts) if context.text.strip()), None)
        if best is None:  # only documents with neither text nor title: nothing to answer with
            return Answer(ABSTENTION, [], abstained=True)
        return Answer(cite(contexts[best].text, best + 1), contexts)  # an LLM would write one


def cite(text: str, number: int) -> str:
    """`text`, each sentence ending with the marker [number] (before its full stop). Markers
    the passage holds itself (a paper's "[12]") are left out: they would cite contexts the
    answer does not have."""
    sentences = split_sentences(strip_markers(text))
    if not sentences:  # a fragment: no sentence to cite from
        return text
    marked = (f"{s[:-1]} [{number}]{s[-1]}" if s[-1] in ".!?" else f"{s} [{number}]" for s in sentences)
    return " ".join(marked)


def build(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> ExtractiveGenerator:
    return ExtractiveGenerator(retriever, documents, validated(Settings, options, PART))


@dataclass(frozen=True)
class Fit:
    """What a threshold does on the golden set: the questions it misjudges."""

    min_score: float  # -inf: never abstain (on a question with a hit)
    refused: int  # answerable questions it abstains on
    answered: int  # unanswerable questions it answers

    @property
    def errors(self) -> int:
        return self.refused + self.answered


def judge_threshold(min_score: float, tops: Iterable[tuple[float | None, bool]]) -> Fit:
    """How `min_score` does on (top score or None, answerable) pairs, one per question."""
    pairs = list(tops)
    refused = sum(1 for top, answerable in pairs if answerable and abstains(top, min_score))
    answered = sum(1 for top, answerable in pairs if not answerable and not abstains(top, min_score))
    return Fit(min_score, refused, answered)


def _short_number_between(low: float, high: float) -> float:
    """The number with the fewest decimals in the middle half of (low, high): readable in
    eval.toml, and a quarter of the gap away from both scores, whose report copies are
    rounded to 6 decimals."""
    inner_low, inner_high = low + (high - low) / 4, high - (high - low) / 4
    for decimals in range(10):
        step = 10.0**-decimals
        candidate = round(math.ceil(inner_low / step) * step, decimals)
        if inner_low <= candidate <= inner_high:
            return candidate
    return (low + high) / 2


def fit_min_score(tops: Iterable[tuple[float | None, bool]]) -> Fit:
    """The threshold that misjudges the fewest questions, given each question's top
    retrieval score (None: nothing found) and whether it is answerable.

    Candidates: never abstain (-inf), and one number between each pair of neighbouring top
    scores. Ties go to the lowest threshold (the fewest refusals), so with no unanswerable
    question the result is never abstaining.
    """
    pairs = list(tops)
    scores = sorted({top for top, _ in pairs if top is not None and math.isfinite(top)})
    candidates = [-math.inf] + [_short_number_between(a, b) for a, b in pairwise(scores)]
    if scores:
        candidates.append(_short_number_between(scores[-1], scores[-1] + max(1.0, abs(scores[-1]))))
    fits = [judge_threshold(candidate, pairs) for candidate in candidates]
    return min(fits, key=lambda fit: (fit.errors, fit.min_score))


def follows_rule(report: Report) -> float | None:
    """[generation] min_score when every answer of `report` abstained exactly as the stand-in's
    rule says at that value (the stand-in wrote them), else None: a team's own generator
    decides by its own rule, and no message should point at min_score."""
    value = (report.settings.get("generation") or {}).get(SETTING)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    for row in report.questions:
        top = row.retrieved[0][1] if row.retrieved else None
        if row.answer is not None and abstains(top, value) != row.answer.abstained:
            return None
    return float(value)


def abstention_hint(report: Report) -> str:
    """The setting behind the stand-in's abstentions, for failure messages ("" when the
    answers do not follow the stand-in's rule)."""
    value = follows_rule(report)
    if value is None:
        return ""
    return f"no hit, or top score below {WHERE} = {value:g}: `nox -s baseline -- --fit-floors` fits it"


def _span(hit: object) -> slice:
    """The part of the document's text a hit stands for: its chunk, or all of it."""
    return slice(getattr(hit, "start", None), getattr(hit, "end", None))

"""The stand-in generator: answer with the best retrieved passage, verbatim, or abstain.

No language model: it makes the evaluation deterministic and shows what the checks catch.
It abstains when the retriever finds nothing or the top score is below `min_score`, so
raising `min_score` in [generation] trades wrong answers for refusals (set it too high and
answerable questions are refused: the second regression of the README's walk-through).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api import ABSTENTION, Answer, Context, Document, Retriever
from ..retrieval.retrievers import parse_options


@dataclass(frozen=True)
class Options:
    min_score: float = 0.0  # abstain when the best retrieval score is below this
    contexts: int = 3  # passages handed to the generator (and to the judge)


class ExtractiveGenerator:
    def __init__(self, retriever: Retriever, documents: list[Document], options: Options):
        self.retriever = retriever
        self.texts = {d.id: d.text for d in documents}
        self.options = options

    def answer(self, question: str) -> Answer:
        hits = self.retriever.search(question, max(1, self.options.contexts))
        if not hits or hits[0].score < self.options.min_score:
            return Answer(ABSTENTION, [], abstained=True)
        contexts = [Context(hit.doc_id, self.texts[hit.doc_id]) for hit in hits]
        return Answer(contexts[0].text, contexts)  # an LLM would write an answer from these


def build(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> ExtractiveGenerator:
    return ExtractiveGenerator(retriever, documents, parse_options(Options, options))

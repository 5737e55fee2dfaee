"""YOUR FILE: the generator under test. eval.toml's [system] names `build_generator`.

`build_generator(retriever, documents, options)` returns any object with

    answer(question: str) -> Answer      # Answer(text, contexts=[Context(doc_id, text)], abstained)

`contexts` are the passages the answer was written from: the judge checks every sentence of
`text` against them. Set `abstained=True` when the system declines (`looks_like_abstention`
helps when a model refuses in words). `retriever` is the one build_retriever made and
`options` is the [generation] table of eval.toml, untouched: your model name, temperature,
prompt file. For example:

    class MyGenerator:
        def __init__(self, retriever, texts, client, options):
            self.retriever, self.texts, self.client, self.options = retriever, texts, client, options

        def answer(self, question: str) -> Answer:
            hits = self.retriever.search(question, 3)
            contexts = [Context(hit.doc_id, self.texts[hit.doc_id]) for hit in hits]
            text = self.client.complete(self.options["model"], question, contexts)  # your LLM
            return Answer(text, contexts, abstained=looks_like_abstention(text))

    def build_generator(retriever, documents, options):
        texts = {d.id: d.text for d in documents}
        return MyGenerator(retriever, texts, make_client(), options)

With `[run] concurrency` above 1, `answer` is called from several threads at once.
"""

from __future__ import annotations

from typing import Any

from rag_regress import Answer, Context, Document, Generator, Retriever, looks_like_abstention
from rag_regress.answers import stand_in

__all__ = ["Answer", "Context", "build_generator", "looks_like_abstention"]


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    """The shipped stand-in (the best passage, or abstain), configured by [generation]."""
    return stand_in.build(retriever, documents, options)

"""YOUR FILE (team-owned): the generator under test. Edit it to evaluate your own answers
(your LLM call).

The template's engine never imports this file; the command line hands `build_generator` to
it. `cruft update` never touches it, and the engine's tests do not depend on what is here.

`build_generator` returns any object with

    answer(question: str) -> Answer      # Answer(text, contexts=[Context(doc_id, text)], abstained)

`contexts` are the passages the answer was written from: the judge checks every sentence
of `text` against them (faithfulness). Set `abstained=True` when the system declines to
answer; `looks_like_abstention(text)` helps when your model refuses in words. Rules the
evaluator checks (exit 2 with the question named if broken): an Answer, contexts from
evals/corpus.jsonl, a non-empty text unless abstained.

To plug in your LLM, replace the body of `build_generator`, for example:

    class MyGenerator:
        def __init__(self, retriever, texts, client, options):
            self.retriever, self.texts, self.client, self.options = retriever, texts, client, options

        def answer(self, question: str) -> Answer:
            hits = self.retriever.search(question, self.options["contexts"])
            contexts = [Context(hit.doc_id, self.texts[hit.doc_id]) for hit in hits]
            text = self.client.complete(prompt(question, contexts))      # your LLM call
            return Answer(text, contexts, abstained=looks_like_abstention(text))

    def build_generator(retriever, documents, options):
        return MyGenerator(retriever, {d.id: d.text for d in documents}, make_client(), options)

`retriever` is the one from retriever.py and `options` is the [generation] table of
eval.toml: put your own settings (model name, temperature, prompt file) there.

Threads: with `[run] concurrency` above 1, `answer` is called from several threads at once
on the one object `build_generator` returned (and the retriever it holds may be searched
from them too), so it must be thread-safe: an LLM client that allows concurrent requests or
one per thread (threading.local), and no shared mutable state without a lock.
"""

from __future__ import annotations

from typing import Any

from .answers import stand_in
from .api import Answer, Context, Document, Generator, Retriever, looks_like_abstention

__all__ = ["Answer", "Context", "Generator", "build_generator", "looks_like_abstention"]


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
    """Return the generator to evaluate. Shipped: answers/stand_in.py (best passage, or abstain)."""
    return stand_in.build(retriever, documents, options)

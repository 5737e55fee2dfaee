{%- import "generators/" ~ cookiecutter.generator ~ ".jinja" as generator -%}
"""YOUR FILE: the generator under test. eval.toml's [system] names `build_generator`.

`build_generator(retriever, documents, options)` returns any object with

    answer(question: str) -> Answer      # Answer(text, contexts=[Context(doc_id, text)], abstained)

`contexts` are the passages the answer was written from: the judge checks every sentence of
`text` against them. Mark a sentence's sources with [n], n a position in `contexts` from 1
("... within 30 days [2]."): the gate then scores citation precision and recall. Set
`abstained=True` when the system declines (`looks_like_abstention` helps when a model
refuses in words). `retriever` is the one build_retriever made and
`options` is the [generation] table of eval.toml, untouched: your model name, temperature,
prompt file. For example, a model behind any OpenAI-compatible endpoint (the complete
version, with a prompt file, abstention and citations, is rag_regress.adapters.openai):

    import json, urllib.request

    class MyGenerator:
        def __init__(self, retriever, texts, options):
            self.retriever, self.texts, self.options = retriever, texts, options

        def answer(self, question: str) -> Answer:
            hits = self.retriever.search(question, 3)
            contexts = [Context(hit.doc_id, self.texts[hit.doc_id]) for hit in hits]
            passages = "\n\n".join(context.text for context in contexts)
            body = {"model": self.options["model"], "temperature": 0, "messages": [
                {"role": "user", "content": f"Answer from these passages only:\n{passages}\n\n{question}"}]}
            request = urllib.request.Request(self.options["base_url"] + "/chat/completions",
                                             json.dumps(body).encode(), {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as reply:
                text = json.load(reply)["choices"][0]["message"]["content"]
            return Answer(text, contexts, abstained=looks_like_abstention(text))

    def build_generator(retriever, documents, options):
        return MyGenerator(retriever, {d.id: d.text for d in documents}, options)

A later turn of a conversation (a golden item with `history`) reaches `answer` with its
turns when it declares them, `answer(question, history=())`, a tuple of Message(role,
content): hand them to `self.retriever.search(question, k, history=history)` and to the model
as chat messages. Without the parameter, `answer` gets the question alone.

With `[run] concurrency` above 1, `answer` is called from several threads at once.
"""

from __future__ import annotations

from typing import Any

from rag_regress import Answer, Context, Document, Generator, Retriever, looks_like_abstention
{{- generator.imports() }}

__all__ = ["Answer", "Context", "build_generator", "looks_like_abstention"]


def build_generator(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> Generator:
{{- generator.build() }}

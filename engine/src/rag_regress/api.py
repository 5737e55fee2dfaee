"""The plug-in API: the types a team's `retriever.py` and `generator.py` use and return.

This module imports nothing from the package, and everything may import it: it is the one
contract between the team's system and the template's engine.

- A retriever is anything with `search(question, depth) -> list[Hit]`, best first.
- A generator is anything with `answer(question) -> Answer`.
- A question may follow earlier turns of a conversation (a golden item's `history`). A
  `search` or `answer` that declares a `history` parameter receives them, as a tuple of
  `Message`s, oldest first (`search_many`: `histories`, one tuple per question); one that
  does not is called with the question alone, as before, and so answers it blind to the
  conversation.
- `build_retriever(documents, tokenize, options)` and `build_generator(retriever, documents,
  options)` make them; the command line hands both factories to the engine as a `System`.

Threads: with `[run] concurrency` above 1 the evaluator calls `search` (when there is no
`search_many`) and `answer` from that many threads at once, on the one retriever and the one
generator it built. Both must then be thread-safe: no shared mutable state without a lock,
and a client (an HTTP session, a database connection) that allows concurrent use or is
made per thread (threading.local). The factories are always called once, from one thread.
At concurrency 1 (the default) every call comes from one thread, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

Tokenizer = Callable[[str], list[str]]
"""Text in, its tokens out, in order, repeats kept (built from the [tokenizer] settings)."""


@dataclass(frozen=True)
class Document:
    """One corpus document (a line of evals/corpus.jsonl)."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class Message:
    """One earlier turn of a conversation: who spoke ("user" or "assistant") and what they
    said. An assistant turn the golden set left for the system to write holds the system's
    own answer to the user turn before it."""

    role: str
    content: str


History = tuple[Message, ...]
"""A conversation before the question, oldest turn first: user, assistant, user, ..."""


class _Pair(NamedTuple):
    doc_id: str
    score: float


class Hit(_Pair):
    """One retrieved document (or a chunk of one) and its score; a ranking is a list of
    hits, best first.

    `Hit(doc_id, score)` is a whole document. A retriever that searches chunks adds where
    the chunk lies: `Hit(doc_id, score, start=s, end=e)`, character offsets into the
    document's `text` (`text[s:e]` is the chunk; the title is not counted), and may name
    it, `chunk_id="..."` (its id in the team's store; shown, never interpreted). A hit
    without offsets stands for the whole document, whatever its chunk id.

    A hit stays the pair it always was: `doc_id, score = hit`, `hit[0]`, `len(hit) == 2`
    and JSON (`[doc_id, score]`) ignore the chunk, so code written for whole documents
    keeps working. Two hits are equal when the pair and the chunk are; a whole-document
    hit equals the plain tuple `(doc_id, score)`. How chunks of one document count
    towards document metrics: retrieval/passages.py.
    """

    # A tuple subclass cannot have slots: a chunk's (start, end, chunk_id) lives in the
    # instance dict, set once. A whole-document hit reads this class-level None, and so never
    # gets an instance dict at all (reading `hit.__dict__` would make one: 64 bytes for each
    # of the millions of hits a large run holds).
    _chunk: tuple[int | None, int | None, str | None] | None = None

    def __new__(
        cls,
        doc_id: str,
        score: float,
        start: int | None = None,
        end: int | None = None,
        chunk_id: str | None = None,
    ) -> Hit:
        hit = super().__new__(cls, doc_id, score)
        if start is not None or end is not None or chunk_id is not None:
            hit.__dict__["_chunk"] = (start, end, chunk_id)
        return hit

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Hit is immutable: cannot set {name!r}")

    @property
    def start(self) -> int | None:
        """Offset of the chunk's first character in the document's text; None: whole document."""
        return None if self._chunk is None else self._chunk[0]

    @property
    def end(self) -> int | None:
        """Offset just past the chunk's last character; None: whole document."""
        return None if self._chunk is None else self._chunk[1]

    @property
    def chunk_id(self) -> str | None:
        """The chunk's id in the team's store, if it gave one."""
        return None if self._chunk is None else self._chunk[2]

    @property
    def chunk(self) -> tuple[int | None, int | None, str | None] | None:
        """(start, end, chunk_id), or None for a whole-document hit."""
        return self._chunk

    def __eq__(self, other: object) -> bool:
        same = tuple.__eq__(self, other)
        if same is NotImplemented:  # not a tuple: let the other side decide
            return NotImplemented
        return bool(same) and self.chunk == (other.chunk if isinstance(other, Hit) else None)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        chunk = self.chunk
        return tuple.__hash__(self) if chunk is None else hash((*self, *chunk))

    def __repr__(self) -> str:
        chunk = (
            ""
            if self.chunk is None
            else f", start={self.start!r}, end={self.end!r}, chunk_id={self.chunk_id!r}"
        )
        return f"Hit(doc_id={self.doc_id!r}, score={self.score!r}{chunk})"

    def __reduce__(self) -> tuple[type[Hit], tuple[str, float, int | None, int | None, str | None]]:
        return (Hit, (self.doc_id, self.score, self.start, self.end, self.chunk_id))

    def _replace(self, **changes: Any) -> Hit:
        fields = {"doc_id": self.doc_id, "score": self.score, "start": self.start, "end": self.end}
        return Hit(**{**fields, "chunk_id": self.chunk_id, **changes})


class Retriever(Protocol):
    def search(self, question: str, depth: int) -> list[Hit]:
        """Return at most `depth` hits, best first, each document at most once; or chunks
        (hits with offsets, see Hit), each chunk at most once, a document counting at its
        first chunk (retrieval/passages.py).

        Return only documents you would actually show the generator: an empty list is a
        valid answer (and scores zero on every metric).

        Optional: a method `search_many(questions: list[str], depth: int) -> list[list[Hit]]`
        answering many questions in one call (an embedding model encodes them in batches,
        a service takes them in one request). The evaluator then calls it once instead of
        `search` per question; it must return one list of hits per question, in order.

        Conversations: declare `history: History = ()` to receive the turns before the
        question (`search_many`: `histories: list[History]`); without it, the question alone.

        Thread-safe when `[run] concurrency` > 1: called from several threads at once.
        """
        ...


@dataclass(frozen=True)
class Context:
    doc_id: str  # an id from evals/corpus.jsonl
    text: str  # the passage text the generator was given


@dataclass(frozen=True)
class Answer:
    text: str
    contexts: list[Context] = field(default_factory=list)
    abstained: bool = False  # True when the system declined to answer ("I don't know")
    # False: a "[2]" in the text is the model's own text, not a marker citing context 2
    citations: bool = True
    # What the generator saw go wrong with this output ("cut at max_tokens (512)"): each is
    # counted and named as a defect of the answer (answers/defects.py), never refused.
    notes: tuple[str, ...] = ()
    # What answering cost, when the generator called a model: {"model": the name its price
    # has under [prices], "prompt_tokens": n, "completion_tokens": n} (and, optionally,
    # "prompt_characters": the prompt's length, which lets `--dry-run` learn the model's
    # tokens per character). None: not reported (the run counts the call, not its tokens).
    usage: dict[str, Any] | None = None


class Generator(Protocol):
    def answer(self, question: str) -> Answer:
        """Answer the question from retrieved passages, or abstain. Declare `history: History
        = ()` to receive the conversation before the question (and hand it on to the
        retriever's `search`). Thread-safe when `[run] concurrency` > 1: called from several
        threads at once."""
        ...


ABSTENTION = "I don't know: the documents do not answer this question."

_REFUSAL = re.compile(
    r"\b(i don't know|i do not know|(?:not|isn't) (?:covered|mentioned|answered) (?:in|by) the "
    r"(?:available )?(?:documents|context)|cannot answer)\b",
    re.IGNORECASE,
)


def looks_like_abstention(text: str) -> bool:
    """A helper for LLM generators that refuse in words: does `text` read as a refusal?"""
    return bool(_REFUSAL.search(text))


RetrieverFactory = Callable[[list[Document], Tokenizer, dict[str, Any]], Retriever]
GeneratorFactory = Callable[[Retriever, list[Document], dict[str, Any]], Generator]


@dataclass(frozen=True)
class System:
    """The system under test: how to build its retriever and its generator.

    The command line makes one from the team's `retriever.py` and `generator.py`; tests
    make their own. The engine only ever receives it: it never imports the team's files.

    `code` identifies the system's code for the output cache ([run] output_cache): the
    command line gives a hash of the package's source (settings/identity.py); "" (unknown)
    keeps the cache off, since a cache that cannot see a change must not be used.
    """

    build_retriever: RetrieverFactory
    build_generator: GeneratorFactory
    code: str = ""

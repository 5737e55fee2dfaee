"""The system-output cache ([run] output_cache): what search and answer returned, remembered
so that a rerun of an unchanged system makes no call at all.

Keyed by the system's identity (settings/identity.py: a hash of its code, the [retriever],
[generation] and [tokenizer] settings, depth, the corpus and, in "version" mode, the team's
`system_version`) and the question: change any of them and every entry is missed. An entry
is used only when its signature verifies (inputs/signed.py: hand-edited or copied entries
are rejected and the system is asked again), and a cached ranking or answer then goes
through the same contract checks as a fresh one (search.py, answers/checks.py): a cache
can save calls, never change a verdict.

Stored: a ranking as the chunk ranking collect() returned ([doc_id, score] or [doc_id,
score, start, end, chunk_id] per hit); an answer as {text, abstained, contexts: [[doc_id,
text], ...]}. Either is decoded back to the plug-in types, or the entry is rejected.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from ..api import Answer, Context, Hit
from ..inputs.signed import SignedFile

FORMAT = "rag-eval-outputs"


def _hit(stored: object) -> Hit | None:
    if not isinstance(stored, list) or len(stored) not in (2, 5):
        return None
    doc_id, score, *chunk = stored
    if not isinstance(doc_id, str) or isinstance(score, bool) or not isinstance(score, int | float):
        return None
    if chunk:
        start, end, chunk_id = chunk
        if not all(
            value is None or (isinstance(value, int) and not isinstance(value, bool))
            for value in (start, end)
        ):
            return None
        if chunk_id is not None and not isinstance(chunk_id, str):
            return None
        return Hit(doc_id, float(score), start, end, chunk_id)
    return Hit(doc_id, float(score))


def encode_hits(hits: list[Hit]) -> list[list[Any]]:
    return [
        [hit.doc_id, hit.score] if hit.chunk is None else [hit.doc_id, hit.score, *hit.chunk] for hit in hits
    ]


def decode_hits(stored: object) -> list[Hit] | None:
    if not isinstance(stored, list):
        return None
    hits = [_hit(item) for item in stored]
    return None if any(hit is None for hit in hits) else [hit for hit in hits if hit is not None]


def encode_answer(answer: Answer) -> dict[str, Any]:
    contexts = [[context.doc_id, context.text] for context in answer.contexts]
    return {"text": answer.text, "abstained": answer.abstained, "contexts": contexts}


def decode_answer(stored: object) -> Answer | None:
    if not isinstance(stored, dict) or set(stored) != {"text", "abstained", "contexts"}:
        return None
    text, abstained, contexts = stored["text"], stored["abstained"], stored["contexts"]
    if not isinstance(text, str) or not isinstance(abstained, bool) or not isinstance(contexts, list):
        return None
    if not all(isinstance(c, list) and len(c) == 2 and all(isinstance(p, str) for p in c) for c in contexts):
        return None
    return Answer(text, [Context(doc_id, passage) for doc_id, passage in contexts], abstained)


class OutputCache:
    """Rankings and answers of one system identity, read from and saved to `path`.
    Safe to use from several threads at once."""

    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = path
        self.identity = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
        self._file = SignedFile(path, format=FORMAT, section="outputs", field="output", what="output cache")
        self.note = self._file.note
        self.hits = 0  # outputs taken from the cache
        self.rejected = 0  # entries that did not verify or decode: the system was asked again
        self._lock = threading.Lock()

    def key(self, kind: str, question: str, depth: int | None = None) -> str:
        text = json.dumps([self.identity, kind, question, depth], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _count(self, found: bool, present: bool) -> None:
        with self._lock:
            if found:
                self.hits += 1
            elif present:
                self.rejected += 1

    def hits_for(self, question: str, depth: int) -> list[Hit] | None:
        """The cached ranking for `question` at `depth`, or None (not cached, or rejected)."""
        key = self.key("search", question, depth)
        present, value = self._file.lookup(key)
        hits = decode_hits(value) if value is not None else None
        self._count(hits is not None, present)
        if hits is not None:
            self._file.keep(key)
        return hits

    def put_hits(self, question: str, depth: int, hits: list[Hit]) -> None:
        self._file.put(self.key("search", question, depth), encode_hits(hits))

    def answer_for(self, question: str, *, peek: bool = False) -> Answer | None:
        """The cached answer to `question`, or None (not cached, or rejected). `peek`: only
        look (which questions a cluster must answer), without counting a hit or a rejection."""
        key = self.key("answer", question)
        present, value = self._file.lookup(key)
        answer = decode_answer(value) if value is not None else None
        if peek:
            return answer
        self._count(answer is not None, present)
        if answer is not None:
            self._file.keep(key)
        return answer

    def put_answer(self, question: str, answer: Answer) -> None:
        self._file.put(self.key("answer", question), encode_answer(answer))

    def save(self) -> None:
        self._file.save()

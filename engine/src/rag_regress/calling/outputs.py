"""The system-output cache ([run] output_cache): what search and answer returned, remembered
so that a rerun of an unchanged system makes no call at all.

Keyed by the system's identity and the question: change any part and every entry is missed.
The identity is settings/identity.py's (a hash of the team's package, the [retriever],
[generation] and [tokenizer] settings, depth, the corpus and, in "version" mode, the team's
`system_version`) completed by `complete_identity` with what a system's outputs also depend
on but that lives outside the team's package: the engine's own code (the shipped retrievers,
the stand-in and the adapters the team's factories call) and the content of every file a
[retriever] or [generation] option names (the LLM's prompt, "prompts/answer.txt"). An entry
is used only when its signature verifies (inputs/signed.py: hand-edited or copied entries
are rejected and the system is asked again), and a cached ranking or answer then goes
through the same contract checks as a fresh one (retrieval/search.py, answers/checks.py): a cache
can save calls, never change a verdict.

What the identity cannot see (a model or index behind a service, updated under the same
name) is what "version" mode's `system_version` is for. The parts declared stochastic
([gate] stochastic) never read or write this cache: run.py hands them an uncached caller.

Stored: a ranking as the chunk ranking collect() returned ([doc_id, score] or [doc_id,
score, start, end, chunk_id] per hit); an answer as {text, abstained, contexts: [[doc_id,
text], ...], citations, notes}. Either is decoded back to the plug-in types, or the entry is
rejected.

Each key starts with its system's own short hash. The file keeps the entries of the
`KEPT_SYSTEMS` systems used most recently (the current one first, its `systems` field), and
drops the rest when saved: a cache carried from run to run (CI restores it by a prefix of
its key) holds a few versions of the system, not every version there ever was.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..api import Answer, Context, Hit
from ..inputs.signed import SignedFile

FORMAT = "rag-eval-outputs"
KEPT_SYSTEMS = 8  # systems whose entries a saved file keeps, the current one included
# A named file larger than this is known by its size and modification time, not its bytes
# (a model's weights): a change is still a miss, and so is a fresh checkout of the same file.
HASHED_LIMIT = 64 * 1024 * 1024
ENGINE = Path(__file__).resolve().parents[1]  # the rag_regress package
# The files whose bytes make a package's code (code_digest): the team's and the engine's
SOURCE_SUFFIXES = {".py", ".txt", ".toml", ".json"}


def code_digest(folder: Path) -> str:
    """A hash of every source file under `folder` (names and bytes, in sorted order)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def engine_digest() -> str:
    """A hash of the engine's own source (code_digest of this package): the
    shipped retrievers, the stand-in and the adapters the team's factories call are here,
    outside the team's package, so an engine update is another system."""
    return code_digest(ENGINE)


def _strings(value: object) -> Iterator[str]:
    """Every string in an option's value (in lists and tables too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _file_digest(path: Path) -> str:
    stat = path.stat()
    if stat.st_size > HASHED_LIMIT:
        return f"size {stat.st_size}, modified {stat.st_mtime_ns}"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def named_files(options: Sequence[object], folders: Sequence[Path]) -> dict[str, list[str]]:
    """For each string in `options` that names a regular file relative to one of `folders`
    (eval.toml's folder, the current one), the digests of the files it names there: a
    prompt file's words change the answers while the option's value stays the same."""
    found: dict[str, list[str]] = {}
    for text in dict.fromkeys(s for option in options for s in _strings(option)):
        if not text or len(text) > 4096 or "\0" in text or "\n" in text:
            continue  # no path: a prompt written inline, an abstention phrase
        digests = []
        for folder in dict.fromkeys(folders):
            try:
                path = folder / text
                if path.is_file():
                    digests.append(_file_digest(path))
            except (OSError, ValueError):  # not a path this system can name: not a file
                continue
        if digests:
            found[text] = digests
    return found


def complete_identity(
    identity: dict[str, Any], options: Sequence[object], folders: Sequence[Path]
) -> dict[str, Any]:
    """`identity` (settings/identity.py) with what the outputs also depend on: the engine's
    code and the files the options name (`named_files`)."""
    return {**identity, "engine": engine_digest(), "files": named_files(options, folders)}


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


# Every field of api.Answer is stored: a field left out would come back as its default, and
# a cached answer would then be checked otherwise than the fresh one (a test holds this list
# to the dataclass).
ANSWER_FIELDS = ("text", "contexts", "abstained", "citations", "notes", "usage")


def encode_answer(answer: Answer) -> dict[str, Any]:
    contexts = [[context.doc_id, context.text] for context in answer.contexts]
    return {
        "text": answer.text,
        "abstained": answer.abstained,
        "contexts": contexts,
        "citations": answer.citations,
        "notes": list(answer.notes),
        "usage": dict(answer.usage) if answer.usage is not None else None,
    }


def decode_answer(stored: object) -> Answer | None:
    # An entry written before `usage` was stored has none: read as not reported.
    if not isinstance(stored, dict) or set(stored) - {"usage"} != set(ANSWER_FIELDS) - {"usage"}:
        return None
    usage = stored.get("usage")
    if usage is not None and not isinstance(usage, dict):
        return None
    text, abstained, contexts = stored["text"], stored["abstained"], stored["contexts"]
    citations, notes = stored["citations"], stored["notes"]
    if not isinstance(text, str) or not isinstance(abstained, bool) or not isinstance(contexts, list):
        return None
    if not all(isinstance(c, list) and len(c) == 2 and all(isinstance(p, str) for p in c) for c in contexts):
        return None
    if not isinstance(citations, bool) or not isinstance(notes, list):
        return None
    if not all(isinstance(note, str) for note in notes):
        return None
    passages = [Context(doc_id, passage) for doc_id, passage in contexts]
    return Answer(text, passages, abstained, citations=citations, notes=tuple(notes), usage=usage)


class OutputCache:
    """Rankings and answers of one system identity, read from and saved to `path`.
    Safe to use from several threads at once."""

    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = path
        self.identity = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
        self.system = hashlib.sha256(self.identity.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self._file = SignedFile(path, format=FORMAT, section="outputs", field="output", what="output cache")
        self.note = self._file.note
        self.hits = 0  # outputs taken from the cache
        self.answer_hits = 0  # of them, answers: generator calls saved
        self.rejected = 0  # entries that did not verify or decode: the system was asked again
        self._served: set[tuple[str, str]] = set()  # (kind, question) taken from the cache
        self._lock = threading.Lock()

    def key(self, kind: str, question: str, depth: int | None = None) -> str:
        text = json.dumps([self.identity, kind, question, depth], ensure_ascii=False)
        return f"{self.system}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"

    def _count(self, kind: str, question: str, found: bool, present: bool) -> None:
        with self._lock:
            if found:
                self.hits += 1
                self.answer_hits += 1 if kind == "answer" else 0
                self._served.add((kind, question))
            elif present:
                self.rejected += 1

    def served(self, kind: str) -> set[str]:
        """The questions whose `kind` ("search" or "answer") output this run took from the cache."""
        with self._lock:
            return {question for done, question in self._served if done == kind}

    def hits_for(self, question: str, depth: int) -> list[Hit] | None:
        """The cached ranking for `question` at `depth`, or None (not cached, or rejected)."""
        key = self.key("search", question, depth)
        present, value = self._file.lookup(key)
        hits = decode_hits(value) if value is not None else None
        self._count("search", question, hits is not None, present)
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
        self._count("answer", question, answer is not None, present)
        if answer is not None:
            self._file.keep(key)
        return answer

    def put_answer(self, question: str, answer: Answer) -> None:
        self._file.put(self.key("answer", question), encode_answer(answer))

    def save(self) -> None:
        """Save the entries of this system and of the most recent others (KEPT_SYSTEMS in all)."""
        held = self._file.header.get("systems")
        held = held if isinstance(held, list) else []
        earlier = [system for system in held if isinstance(system, str) and system != self.system]
        systems = [self.system, *earlier[: KEPT_SYSTEMS - 1]]
        kept = set(systems)
        self._file.save(keep=lambda key: key.partition("-")[0] in kept, header={"systems": systems})

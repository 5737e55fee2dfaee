"""Judge verdicts remembered on disk, so an unchanged answer is never judged twice.

The key is a hash of everything a verdict depends on: the judge's identity (backend, model,
revision, threshold), the code and word lists of the judges (`rules_version`), the claim and
the contexts. Change any of them and the verdict is recomputed.

A cache must never change a verdict, so a cached verdict is used only when it verifies
(inputs/signed.py, shared with the system-output cache):
  - its entry carries a signature (HMAC-SHA256 over key and verdict) made with a random
    secret kept beside the cache file (`<cache>.key`, never committed); an entry edited by
    hand, copied under another key, or written by another machine does not verify;
  - a cached "supported" verdict must also still pass the checks that cost nothing to redo:
    its window is a window of the item's contexts, and the narrow checks find nothing there
    that the identity's `fail_on` names, unless the claim is copied from the window: the
    judges support a copied claim whatever the checks find (judges.settle), so the cache
    must too, or such a verdict would be rejected and judged again on every run.
An entry that does not verify is ignored and judged again (counted in `rejected`, and said
in the run's output). So a verdict is stored only when it verifies as written: an entry of
this machine is rejected only when it was changed after it was written. A file that is not
a cache, or not readable as one, is ignored the
same way and rewritten at the end of the run; only a path that is not a regular file (a
directory, a FIFO, a device) or is larger than the limit stops the run (exit 2).

The file is rewritten atomically at the end of each run, keeping what it held plus the new
verdicts (a run of the holdout must not evict the dev set's). Delete it, and its key, at any
time: it is only a cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from ..inputs.signed import SignedFile
from .judges import Item, Verdict
from .judges.claims import copied, windows
from .judges.findings import findings

FORMAT = "rag-eval-verdicts"
_VERDICT_FIELDS = {field.name: field.type for field in fields(Verdict)}


@functools.cache
def rules_version() -> str:
    """A hash of the judges' code and word lists: a change to how claims are judged is a
    different judge, so no verdict cached before it is reused."""
    folder = Path(__file__).parent / "judges"
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in {".py", ".txt", ".toml"}:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=1 << 10)  # an answer's claims share its contexts
def _windows(contexts: tuple[str, ...]) -> frozenset[str]:
    return frozenset(windows(contexts))


def verdict_key(identity: dict[str, Any], item: Item) -> str:
    """SHA-256 of `[identity, rules_version(), claim, contexts]` as JSON (sorted keys)."""
    claim, contexts = item
    head = json.dumps([identity, rules_version(), claim], sort_keys=True, ensure_ascii=False)
    text = f"{head[:-1]}, {_as_json(contexts)}]"  # the same text as the list of four, made faster
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # any text: a model's too


@functools.lru_cache(maxsize=1 << 10)  # an answer's claims share its contexts
def _as_json(contexts: tuple[str, ...]) -> str:
    return json.dumps(list(contexts), ensure_ascii=False)


def _verdict(stored: object) -> Verdict | None:
    """The Verdict a stored mapping holds, or None when it is not exactly one."""
    if not isinstance(stored, dict) or set(stored) != set(_VERDICT_FIELDS):
        return None
    supported, score, window, reason = (stored[name] for name in ("supported", "score", "window", "reason"))
    if not (isinstance(supported, bool) and isinstance(window, str) and isinstance(reason, str)):
        return None
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        return None
    noted = stored["findings"]
    if not isinstance(noted, list | tuple) or not all(isinstance(finding, str) for finding in noted):
        return None
    return Verdict(supported, float(score), window, reason, tuple(noted))


class VerdictCache:
    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = path
        self.identity = identity
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # entries that did not verify, judged again
        self._file = SignedFile(
            path, format=FORMAT, section="verdicts", field="verdict", what="verdict cache"
        )
        self.note = self._file.note
        self._keys: dict[Item, str] = {}  # each item's key, worked out once (get, then put)

    def _verified(self, item: Item, stored: object) -> Verdict | None:
        verdict = _verdict(stored)
        if verdict is None:
            return None
        if verdict.supported:  # redo what is cheap: a claim a check fails never passes from a cache
            claim, contexts = item
            if verdict.window not in _windows(tuple(contexts)):
                return None
            if copied(claim, verdict.window):  # supported by the judges' own rule, findings or not
                return verdict
            failing = set(self.identity.get("fail_on") or ())
            names = self.identity.get("names") or ()
            if any(f.name in failing for f in findings(claim, verdict.window, "\n".join(contexts), names)):
                return None
        return verdict

    def _key(self, item: Item) -> str:
        key = self._keys.get(item)
        if key is None:
            key = self._keys[item] = verdict_key(self.identity, item)
        return key

    def get(self, item: Item) -> Verdict | None:
        key = self._key(item)
        present, stored = self._file.lookup(key)
        if present:
            verdict = self._verified(item, stored)
            if verdict is not None:
                self.hits += 1
                self._file.keep(key)
                return verdict
            self.rejected += 1
        self.misses += 1
        return None

    def put(self, item: Item, verdict: Verdict) -> None:
        """Keep `verdict` for `item`, unless it is kept already this run, or it would not verify
        when read back (a score outside 0..1 or NaN, a window not of the item's contexts): such
        a verdict is judged again on the next run, a miss, never a rejection."""
        key = self._key(item)
        if self._file.used(key):
            return
        stored = asdict(verdict)
        if self._verified(item, stored) is None:
            return
        self._file.put(key, stored)

    def save(self) -> None:
        self._file.save()

"""Judge verdicts remembered on disk, so an unchanged answer is never judged twice.

The key is a hash of everything a verdict depends on: the judge's identity (backend, model,
revision, threshold), the code and word lists of the judges (`rules_version`), the claim and
the contexts. Change any of them and the verdict is recomputed.

A cache must never change a verdict, so a cached verdict is used only when it verifies:
  - its entry carries a signature (HMAC-SHA256 over key and verdict) made with a random
    secret kept beside the cache file (`<cache>.key`, never committed); an entry edited by
    hand, copied under another key, or written by another machine does not verify;
  - a cached "supported" verdict must also still pass the checks that cost nothing to redo:
    its window is a window of the item's contexts and the guard accepts it.
An entry that does not verify is ignored and judged again (counted in `rejected`, and said
in the run's output). A file that is not a cache, or not readable as one, is ignored the
same way and rewritten at the end of the run; only a path that is not a regular file (a
directory, a FIFO, a device) or is larger than the limit stops the run (exit 2).

The file is rewritten atomically at the end of each run, keeping what it held plus the new
verdicts (a run of the holdout must not evict the dev set's). Delete it, and its key, at any
time: it is only a cache.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from ..inputs.files import write_atomic
from ..inputs.reading import CACHE_LIMIT, read_data
from .judges import Item, Verdict
from .judges.claims import windows
from .judges.guard import guard

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
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    return Verdict(supported, float(score), window, reason)


def _read_secret(path: Path) -> bytes:
    """The signing secret beside the cache, made on first use (readable by its owner only)."""
    if path.is_file() and not path.is_symlink():
        secret = read_data(path, "verdict cache key", limit=4096)
        if len(secret) >= 32:
            return secret
    elif path.exists() or path.is_symlink():
        raise EvalInputError(path, "the verdict cache key is not a regular file", "delete it; it is remade")
    secret = secrets.token_bytes(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "wb") as handle:
        handle.write(secret)
    return secret


class VerdictCache:
    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = path
        self.identity = identity
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # entries that did not verify, judged again
        self.note = ""
        self._secret_path = path.with_name(path.name + ".key")
        self._secret: bytes | None = None
        self._stored: dict[str, Any] = {}
        self._used: dict[str, dict[str, Any]] = {}
        self._keys: dict[Item, str] = {}  # each item's key, worked out once (get, then put)
        if not path.exists() and not path.is_symlink():
            return
        raw = read_data(path, "verdict cache", limit=CACHE_LIMIT)  # a FIFO or a device is exit 2
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # unreadable: start afresh, and say so
            self.note = f"ignored the unreadable verdict cache {path.name}; it will be rewritten"
            return
        if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("verdicts"), dict):
            self._stored = data["verdicts"]
        else:
            self.note = f"ignored {path.name}: it is not a verdict cache; it will be rewritten"

    def _sign(self, key: str, verdict: dict[str, Any]) -> str:
        if self._secret is None:
            self._secret = _read_secret(self._secret_path)
        message = json.dumps([key, verdict], sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def _verified(self, key: str, item: Item, entry: object) -> Verdict | None:
        if not isinstance(entry, dict) or not isinstance(entry.get("signature"), str):
            return None
        verdict = _verdict(entry.get("verdict"))
        if verdict is None or not hmac.compare_digest(entry["signature"], self._sign(key, asdict(verdict))):
            return None
        if verdict.supported:  # redo what is cheap: a guard-caught claim can never pass from a cache
            claim, contexts = item
            if verdict.window not in _windows(tuple(contexts)) or guard(
                claim, verdict.window, "\n".join(contexts)
            ):
                return None
        return verdict

    def _key(self, item: Item) -> str:
        key = self._keys.get(item)
        if key is None:
            key = self._keys[item] = verdict_key(self.identity, item)
        return key

    def get(self, item: Item) -> Verdict | None:
        key = self._key(item)
        if key in self._stored:
            verdict = self._verified(key, item, self._stored[key])
            if verdict is not None:
                self.hits += 1
                self._used[key] = self._stored[key]
                return verdict
            self.rejected += 1
        self.misses += 1
        return None

    def put(self, item: Item, verdict: Verdict) -> None:
        key = self._key(item)
        if key not in self._used:
            self._used[key] = {"verdict": asdict(verdict), "signature": self._sign(key, asdict(verdict))}

    def save(self) -> None:
        kept = {key: entry for key, entry in self._stored.items() if isinstance(entry, dict)}
        document = {"format": FORMAT, "verdicts": dict(sorted({**kept, **self._used}.items()))}
        write_atomic(self.path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")

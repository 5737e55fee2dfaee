"""Judge verdicts remembered on disk, so an unchanged answer is never judged twice.

The key is a hash of everything a verdict depends on: the judge's identity (backend, model,
revision, threshold), the claim and the contexts. Change any of them and the verdict is
recomputed. The file is rewritten atomically at the end of each run, keeping what it held
plus the new verdicts (a run of the holdout must not evict the dev set's). Delete it at
any time to prune it: it is only a cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..inputs.files import write_atomic
from .judges import Item, Verdict

FORMAT = "rag-eval-verdicts"


def verdict_key(identity: dict[str, Any], item: Item) -> str:
    claim, contexts = item
    text = json.dumps([identity, claim, list(contexts)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VerdictCache:
    def __init__(self, path: Path, identity: dict[str, Any]):
        self.path = path
        self.identity = identity
        self.hits = 0
        self.misses = 0
        self.note = ""
        self._stored: dict[str, dict[str, Any]] = {}
        self._used: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("format") == FORMAT:
                self._stored = data.get("verdicts") or {}
        except FileNotFoundError:
            pass
        except (OSError, ValueError):  # unreadable: start afresh, and say so
            self.note = f"ignored the unreadable verdict cache {path.name}; it will be rewritten"

    def get(self, item: Item) -> Verdict | None:
        key = verdict_key(self.identity, item)
        stored = self._stored.get(key)
        if isinstance(stored, dict):
            try:
                verdict = Verdict(**stored)
            except TypeError:
                pass
            else:
                self.hits += 1
                self._used[key] = stored
                return verdict
        self.misses += 1
        return None

    def put(self, item: Item, verdict: Verdict) -> None:
        self._used[verdict_key(self.identity, item)] = asdict(verdict)

    def save(self) -> None:
        document = {"format": FORMAT, "verdicts": dict(sorted({**self._stored, **self._used}.items()))}
        write_atomic(self.path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")

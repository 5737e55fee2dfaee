"""The [sweep] grid as a list of candidates, each a full configuration: the current
[tokenizer] and [retriever] settings with some of them replaced by the grid's values.

The grid is the product of every listed value of every key, in the order written: the last
key varies fastest. A candidate names only what it changes; the current configuration is the
reference every candidate is compared with (command.py adds it to the field).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..retrieval.tokens import TokenizerSettings
from ..settings.config import Config

CURRENT = "current (eval.toml)"


@dataclass(frozen=True)
class Candidate:
    """One configuration of the field: `tokenizer` is complete, `options` is the [retriever]
    table passed to build_retriever; `changes` is what differs from eval.toml, by table."""

    index: int  # 0 is the current configuration; grid candidates count from 1
    tokenizer: TokenizerSettings
    options: dict[str, Any]
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def current(self) -> bool:
        return self.index == 0

    @property
    def label(self) -> str:
        """e.g. `k1=1.2 b=0.75 stemmer="porter"`; the current configuration's own name."""
        if self.current:
            return CURRENT
        parts = [
            f"{key}={toml_value(value)}" for table in self.changes.values() for key, value in table.items()
        ]
        return " ".join(parts) or "(no change)"

    def tokenizer_key(self) -> str:
        """Candidates with the same key tokenize text the same way."""
        return json.dumps(dataclasses.asdict(self.tokenizer), sort_keys=True)


def current_candidate(config: Config) -> Candidate:
    return Candidate(0, config.tokenizer, dict(config.retriever))


def expand(config: Config) -> list[Candidate]:
    """Every candidate of the [sweep] grid, in grid order (index from 1). Empty: no grid."""
    grid = config.sweep
    keys = [("tokenizer", key) for key in grid.tokenizer] + [("retriever", key) for key in grid.retriever]
    lists = [grid.tokenizer[key] if table == "tokenizer" else grid.retriever[key] for table, key in keys]
    if not keys:
        return []
    candidates = []
    for number, values in enumerate(itertools.product(*lists), start=1):
        changes: dict[str, dict[str, Any]] = {}
        for (table, key), value in zip(keys, values, strict=True):
            changes.setdefault(table, {})[key] = value
        tokenizer = dataclasses.replace(config.tokenizer, **changes.get("tokenizer", {}))
        options = {**config.retriever, **changes.get("retriever", {})}
        candidates.append(Candidate(number, tokenizer, options, changes))
    return candidates


def toml_value(value: Any) -> str:
    """A value as eval.toml writes it: strings quoted, booleans lower case, lists bracketed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


def adopt_lines(candidate: Candidate) -> list[str]:
    """The eval.toml lines that make `candidate` the configuration: each changed table's
    header and its changed keys (the other keys of those tables stay as they are)."""
    lines: list[str] = []
    for table in ("tokenizer", "retriever"):
        changed = candidate.changes.get(table)
        if changed:
            lines.append(f"[{table}]")
            lines += [f"{key} = {toml_value(value)}" for key, value in changed.items()]
    return lines

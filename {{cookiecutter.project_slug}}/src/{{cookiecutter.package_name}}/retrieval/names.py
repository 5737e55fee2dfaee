"""Metric names such as `ndcg@10`, `recall@5` or `mrr`, parsed into something to compute.

Config, command line, report and gate all spell a metric the same (canonical) way:
`<name>` or `<name>@<k>`. A few common aliases are accepted on input (`P@5`, `R@5`,
`success@5`, `RR`, `AP`, `R-prec`) and always written back in canonical form.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import metrics
from .metrics import Qrels, Ranking

# name -> (function, cutoff rule: "required" | "optional" | "none", one-line meaning)
_DEFINITIONS: dict[str, tuple[Callable[..., float], str, str]] = {
    "precision": (metrics.precision_at_k, "required", "relevant in the top k, divided by k"),
    "recall": (metrics.recall_at_k, "required", "share of relevant documents in the top k"),
    "hit": (metrics.hit_at_k, "required", "1 if any relevant document is in the top k"),
    "mrr": (metrics.reciprocal_rank, "optional", "1 / rank of the first relevant document"),
    "ndcg": (metrics.ndcg_at_k, "optional", "nDCG, linear gain (trec_eval)"),
    "ndcg_exp": (metrics.ndcg_exp_at_k, "optional", "nDCG, exponential gain 2^g - 1"),
    "map": (metrics.average_precision, "optional", "average precision"),
    "rprec": (metrics.r_precision, "none", "precision at R = number of relevant documents"),
}
_ALIASES = {
    "p": "precision",
    "r": "recall",
    "success": "hit",
    "rr": "mrr",
    "recip_rank": "mrr",
    "ap": "map",
    "r-prec": "rprec",
    "r-precision": "rprec",
    "ndcg_cut": "ndcg",
}
_PATTERN = re.compile(r"^\s*([A-Za-z_-]+)\s*(?:@\s*(\d+))?\s*$")

KNOWN = ", ".join(
    f"{name}@k" if rule == "required" else f"{name}[@k]" if rule == "optional" else name
    for name, (_, rule, _) in _DEFINITIONS.items()
)


@dataclass(frozen=True)
class Metric:
    """A parsed metric name. Call it on one question's ranking and relevance grades."""

    name: str
    k: int | None = None

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def description(self) -> str:
        return _DEFINITIONS[self.name][2]

    def __call__(self, ranking: Ranking, qrels: Qrels) -> float:
        function = _DEFINITIONS[self.name][0]
        return function(ranking, qrels) if self.k is None else function(ranking, qrels, self.k)


def parse_metric(text: str) -> Metric:
    """Parse a metric name; raise ValueError with the list of known names if it is not one."""
    match = _PATTERN.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"{text!r} is not a metric name; known metrics: {KNOWN}")
    name = match.group(1).lower()
    name = _ALIASES.get(name, name)
    if name not in _DEFINITIONS:
        raise ValueError(f"unknown metric {text!r}; known metrics: {KNOWN}")
    k = int(match.group(2)) if match.group(2) is not None else None
    rule = _DEFINITIONS[name][1]
    if rule == "required" and k is None:
        raise ValueError(f"metric {text!r} needs a cutoff, e.g. {name}@5")
    if rule == "none" and k is not None:
        raise ValueError(f"metric {text!r} takes no cutoff; write {name}")
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: the cutoff must be at least 1")
    return Metric(name, k)

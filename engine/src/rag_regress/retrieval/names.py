"""The metric registry: one record per measure, and the names that parse into it.

Each measure is one `MetricRecord` (as trec_eval keeps one measure per file): its canonical
name, whether it takes a cutoff, its per-question function in metrics.py (pure; its
docstring states the definition and edge cases, which the record shows as its definition),
the batch function in batch.py that computes the same numbers for many questions at once,
its names in trec_eval and ranx, the aliases accepted on input, and whether it admits the
judged-only parameter. `REGISTRY` holds every record; a measure is added by adding its
record, and tests/engine/retrieval/ then check it against its references (trec_eval, ranx)
and its batch function against its definition.

A `Metric` is a measure with its parameters, as in ir_measures: the cutoff `k` and
`judged_only`, spelled `_j` (`ndcg_j@10`, `map_j`): the measure of the ranking without its
unjudged documents, trec_eval's `-J` (metrics.condensed states the definition). Every measure
but judged@k admits it. Such a metric has its measure's trec_eval names and `judged_docs_only`
set (trec_eval needs `-J` to compute it); ranx has no such option, hence no ranx names.

Config, command line, report and gate all spell a metric the same (canonical) way:
`<name>`, `<name>@<k>`, `<name>_j` or `<name>_j@<k>`. A few common aliases are accepted on
input (`P@5`, `R@5`, `success@5`, `RR`, `AP`, `R-prec`, and the same with `_j`: `P_j@5`) and
always written back in canonical form.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from . import batch, metrics
from .batch import Judged
from .metrics import Qrels, Ranking

# Whether a metric's name takes `@k`: always, optionally (none: the whole ranking), or never.
Cutoff = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class MetricRecord:
    """Everything about one metric. Reference names are templates: "P_{k}" is P_10 at k=10;
    None where the tool has no such measure."""

    name: str  # canonical name, the part before `@`
    cutoff: Cutoff
    per_question: Callable[..., float]  # metrics.py: (ranking, qrels[, k]) -> value; the definition
    batch: Callable[..., np.ndarray]  # batch.py: (judged[, k]) -> one value per question, the same
    trec_eval: str | None = None  # trec_eval's measure without a cutoff
    trec_eval_at_k: str | None = None  # ... and with cutoff k
    ranx: str | None = None  # ranx's metric without a cutoff
    ranx_at_k: str | None = None  # ... and with cutoff k
    aliases: tuple[str, ...] = ()  # other spellings accepted on input, lower case
    # Graded: weighs documents by their grade and ignores `relevance_level` (nDCG, as trec_eval's
    # ndcg); otherwise binary: relevant means grade >= relevance_level, passed as a keyword
    # (judged@k, neither, asks only whether a document is judged: `takes_level`).
    graded: bool = False
    # Whether it admits `judged_only` (`<name>_j`): the measure of the condensed ranking,
    # computed by trec_eval under its trec_eval names when run with -J. judged@k does not.
    admits_judged_only: bool = True

    @property
    def spelling(self) -> str:
        """How the name is written, with its cutoff rule: `precision@k`, `mrr[@k]`, `rprec`."""
        return {"required": f"{self.name}@k", "optional": f"{self.name}[@k]", "none": self.name}[self.cutoff]

    @property
    def takes_level(self) -> bool:
        """Whether the functions read `relevance_level` (binary metrics), as their signature says."""
        return "relevance_level" in inspect.signature(self.per_question).parameters

    @property
    def definition(self) -> str:
        """The definition, on one line: the first paragraph of the per-question function's docstring."""
        return " ".join(_docstring(self.per_question)[0].split())

    @property
    def edge_cases(self) -> str:
        """The rest of that docstring: conventions and edge cases, as written there."""
        return "\n\n".join(_docstring(self.per_question)[1:])


def _docstring(function: Callable[..., object]) -> list[str]:
    """A function's docstring as paragraphs (empty when Python runs with -OO)."""
    return inspect.cleandoc(function.__doc__ or "").split("\n\n")


_PLAIN = [
    MetricRecord(
        "precision",
        "required",
        metrics.precision_at_k,
        batch.precision_at_k,
        trec_eval_at_k="P_{k}",
        ranx_at_k="precision@{k}",
        aliases=("p",),
    ),
    MetricRecord(
        "recall",
        "required",
        metrics.recall_at_k,
        batch.recall_at_k,
        trec_eval_at_k="recall_{k}",
        ranx_at_k="recall@{k}",
        aliases=("r",),
    ),
    MetricRecord(
        "hit",
        "required",
        metrics.hit_at_k,
        batch.hit_at_k,
        trec_eval_at_k="success_{k}",
        ranx_at_k="hit_rate@{k}",
        aliases=("success",),
    ),
    MetricRecord(
        "mrr",
        "optional",
        metrics.reciprocal_rank,
        batch.reciprocal_rank,
        trec_eval="recip_rank",  # with a cutoff: trec_eval has none (recip_rank of the top k)
        ranx="mrr",
        ranx_at_k="mrr@{k}",
        aliases=("rr", "recip_rank"),
    ),
    MetricRecord(
        "ndcg",
        "optional",
        metrics.ndcg_at_k,
        batch.ndcg_at_k,
        trec_eval="ndcg",
        trec_eval_at_k="ndcg_cut_{k}",
        ranx="ndcg",
        ranx_at_k="ndcg@{k}",
        aliases=("ndcg_cut",),
        graded=True,
    ),
    MetricRecord(
        "ndcg_exp",
        "optional",
        metrics.ndcg_exp_at_k,
        batch.ndcg_exp_at_k,
        ranx="ndcg_burges",
        ranx_at_k="ndcg_burges@{k}",
        graded=True,
    ),
    MetricRecord(
        "map",
        "optional",
        metrics.average_precision,
        batch.average_precision,
        trec_eval="map",
        trec_eval_at_k="map_cut_{k}",
        ranx="map",
        ranx_at_k="map@{k}",
        aliases=("ap",),
    ),
    MetricRecord(
        "rprec",
        "none",
        metrics.r_precision,
        batch.r_precision,
        trec_eval="Rprec",
        ranx="r-precision",
        aliases=("r-prec", "r-precision"),
    ),
    MetricRecord("bpref", "none", metrics.bpref, batch.bpref, trec_eval="bpref"),
]
# judged@k has no judged-only variant: every document of a condensed ranking is judged.
_JUDGED = MetricRecord("judged", "required", metrics.judged_at_k, batch.judged_at_k, admits_judged_only=False)
JUDGED_ONLY = "_j"  # the suffix that sets `judged_only`: ndcg_j@10, map_j, P_j@5

REGISTRY: dict[str, MetricRecord] = {record.name: record for record in [*_PLAIN, _JUDGED]}
_ALIASES = {alias: record.name for record in REGISTRY.values() for alias in record.aliases}
_PATTERN = re.compile(r"^\s*([A-Za-z_-]+)\s*(?:@\s*(\d+))?\s*$")


def variants() -> list[tuple[str, MetricRecord, bool]]:
    """Every metric name without its cutoff, with its record and `judged_only`: each record's
    name, then `<name>_j` for every record that admits judged-only (the order KNOWN lists)."""
    plain = [(record.name, record, False) for record in REGISTRY.values()]
    judged_only = [(record.name + JUDGED_ONLY, record, True) for record in REGISTRY.values()]
    return plain + [variant for variant in judged_only if variant[1].admits_judged_only]


KNOWN = ", ".join(record.spelling.replace(record.name, name, 1) for name, record, _ in variants())


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a measure's record and its parameters, the cutoff `k` and
    `judged_only` (the `_j` spelling). Call it on one question's ranking and relevance grades;
    `compute` computes it for many questions at once."""

    name: str  # the measure's canonical name, without `_j`
    k: int | None = None
    judged_only: bool = False  # of the condensed ranking (metrics.condensed, trec_eval's -J)

    def __post_init__(self) -> None:
        if self.name not in REGISTRY:
            raise ValueError(f"unknown metric {self.name!r}; known metrics: {KNOWN}")
        if self.judged_only and not self.record.admits_judged_only:
            raise ValueError(f"unknown metric {self.name + JUDGED_ONLY!r}; known metrics: {KNOWN}")

    def __str__(self) -> str:
        name = self.name + JUDGED_ONLY if self.judged_only else self.name
        return name if self.k is None else f"{name}@{self.k}"

    @property
    def record(self) -> MetricRecord:
        return REGISTRY[self.name]

    @property
    def description(self) -> str:
        return self.record.definition

    @property
    def trec_eval(self) -> str | None:
        """trec_eval's name for this metric at this cutoff (`ndcg_cut_10`); None if it has none.
        A judged-only metric has its measure's name: run trec_eval with -J for it
        (`judged_docs_only`)."""
        return _at(self.record.trec_eval if self.k is None else self.record.trec_eval_at_k, self.k)

    @property
    def judged_docs_only(self) -> bool:
        """Whether trec_eval computes `trec_eval` only when run with -J (a judged-only `_j` metric)."""
        return self.judged_only

    @property
    def ranx(self) -> str | None:
        """ranx's name for this metric at this cutoff (`ndcg@10`); None if it has none (ranx
        has no -J: none for a judged-only metric)."""
        if self.judged_only:
            return None
        return _at(self.record.ranx if self.k is None else self.record.ranx_at_k, self.k)

    def __call__(self, ranking: Ranking, qrels: Qrels, relevance_level: int = 1) -> float:
        """This metric of one ranking (of its condensed ranking when judged-only);
        `relevance_level` as trec_eval's `-l` (graded metrics and judged@k ignore it:
        MetricRecord.takes_level)."""
        function = self.record.per_question
        level = {"relevance_level": relevance_level} if self.record.takes_level else {}
        if self.judged_only:
            ranking = metrics.condensed(ranking, qrels)
        return (
            function(ranking, qrels, **level) if self.k is None else function(ranking, qrels, self.k, **level)
        )


def _at(template: str | None, k: int | None) -> str | None:
    return None if template is None else template.format(k=k)


def parse_metric(text: str) -> Metric:
    """Parse a metric name; raise ValueError with the list of known names if it is not one."""
    match = _PATTERN.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"{text!r} is not a metric name; known metrics: {KNOWN}")
    name = match.group(1).lower()
    judged_only = name not in REGISTRY and name not in _ALIASES and name.endswith(JUDGED_ONLY)
    if judged_only:
        name = name.removesuffix(JUDGED_ONLY)
    name = _ALIASES.get(name, name)
    if name not in REGISTRY or (judged_only and not REGISTRY[name].admits_judged_only):
        raise ValueError(f"unknown metric {text!r}; known metrics: {KNOWN}")
    k = int(match.group(2)) if match.group(2) is not None else None
    rule = REGISTRY[name].cutoff
    spelled = name + JUDGED_ONLY if judged_only else name
    if rule == "required" and k is None:
        raise ValueError(f"metric {text!r} needs a cutoff, e.g. {spelled}@5")
    if rule == "none" and k is not None:
        raise ValueError(f"metric {text!r} takes no cutoff; write {spelled}")
    if k is not None and k < 1:
        raise ValueError(f"metric {text!r}: the cutoff must be at least 1")
    return Metric(name, k, judged_only)


def compute(judged: Judged, metrics: Sequence[Metric]) -> dict[str, np.ndarray]:
    """{metric name: one value per question}, equal to metrics.py's functions: each metric's
    batch function (batch.py) is in its record (REGISTRY); a judged-only metric (`map_j`) reads the
    condensed rankings (`Judged.condensed`, made once for all of them)."""
    out = {}
    for m in metrics:
        j = judged.condensed if m.judged_only else judged
        out[str(m)] = m.record.batch(j) if m.k is None else m.record.batch(j, m.k)
    return out

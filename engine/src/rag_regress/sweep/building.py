"""Evaluate candidates on questions, building retrievers as rarely as possible.

Two savings, both invisible in the numbers:
- Text is tokenized once per tokenizer setting: candidates with the same [tokenizer] share one
  memoised tokenizer, so a second index over the same corpus re-tokenizes nothing.
- A retriever that can change some options without a new index says so with two attributes:
  `query_time_options` (a collection of option names) and `with_options(options)`, returning
  a retriever for the new options that reuses its index. A candidate that differs from an
  already built retriever (same tokenizer) only in those options reuses it; any other
  candidate is a build. Retrievers without them are built once per distinct configuration.

Each candidate's value of the primary metric is cached per question, so a later rung of the
halving only searches the questions it adds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic_core import PydanticUndefined

from ..api import Document, Retriever, System, Tokenizer
from ..calling.calls import call, failure
from ..errors import EvalInputError
from ..inputs.data import Question
from ..options import OptionsError, fields_of
from ..retrieval.batch import judge_rankings
from ..retrieval.names import Metric, compute
from ..retrieval.search import retrieve_all
from ..retrieval.tokens import make_tokenizer
from ..settings.config import Config
from .grid import Candidate


def memoised(tokenize: Tokenizer) -> Tokenizer:
    """`tokenize` remembering every text it has seen (a fresh list each call: callers may keep it)."""
    seen: dict[str, list[str]] = {}

    def cached(text: str) -> list[str]:
        tokens = seen.get(text)
        if tokens is None:
            tokens = seen[text] = tokenize(text)
        return list(tokens)

    return cached


def _filled(retriever: Retriever, options: dict[str, Any]) -> dict[str, Any]:
    """`options` with the defaults of the retriever's `options` (its Settings, as the shipped
    retrievers keep theirs, or a dataclass) filled in, so `k1 = 0.9` written out equals k1
    left at 0.9."""
    declared = getattr(retriever, "options", None)
    if declared is None or isinstance(declared, type):
        return options
    if fields := fields_of(type(declared)):
        defaults = {name: f.default for name, f in fields.items() if f.default is not PydanticUndefined}
    elif dataclasses.is_dataclass(declared):
        defaults = {
            f.name: f.default for f in dataclasses.fields(declared) if f.default is not dataclasses.MISSING
        }
    else:
        return options
    return {**defaults, **options}


@dataclass
class _Built:
    tokenizer_key: str
    options: dict[str, Any]
    retriever: Retriever


@dataclass
class Evaluator:
    """Per-question values of `metric` for candidates, built and searched on demand."""

    system: System
    corpus: dict[str, Document]
    config: Config
    metric: Metric
    golden: Path  # the file questions come from, for error messages
    builds: int = 0  # retrievers built (not reused): what the index grouping saves
    _tokenizers: dict[str, Tokenizer] = field(default_factory=dict)
    _built: list[_Built] = field(default_factory=list)
    _retrievers: dict[int, Retriever] = field(default_factory=dict)
    _slots: dict[int, int] = field(default_factory=dict)  # id of a retriever -> its values' slot
    _values: dict[tuple[int, str], float] = field(default_factory=dict)

    def values(
        self, candidate: Candidate, questions: Sequence[Question], source: Path | None = None
    ) -> np.ndarray:
        """`metric` of each of `questions` (answerable ones) for `candidate`, in their order;
        `source` names their file in errors (default: the golden set)."""
        retriever = self.retriever(candidate)
        slot = self._slots.setdefault(id(retriever), len(self._slots))  # same retriever, same values
        missing = [q for q in questions if (slot, q.id) not in self._values]
        if missing:
            ranked = retrieve_all(retriever, missing, self.corpus, self.config.depth, source or self.golden)
            judged = judge_rankings(
                [[hit.doc_id for hit in hits] for hits in ranked], [q.qrels for q in missing]
            )
            column = compute(judged, [self.metric])[str(self.metric)]
            for question, value in zip(missing, column, strict=True):
                self._values[(slot, question.id)] = float(value)
        return np.array([self._values[(slot, q.id)] for q in questions], dtype=float)

    def same(self, one: Candidate, other: Candidate) -> bool:
        """Whether the two candidates are one configuration (their options differ only by
        spelling out a default): they then share one retriever."""
        return self.retriever(one) is self.retriever(other)

    def retriever(self, candidate: Candidate) -> Retriever:
        """The candidate's retriever: reused, derived from a built one, or built."""
        if candidate.index in self._retrievers:
            return self._retrievers[candidate.index]
        key = candidate.tokenizer_key()
        made = self._derived(key, candidate) or self._build(key, candidate)
        self._retrievers[candidate.index] = made
        return made

    def _derived(self, key: str, candidate: Candidate) -> Retriever | None:
        for built in self._built:
            if built.tokenizer_key != key:
                continue
            at_query_time = set(getattr(built.retriever, "query_time_options", ()) or ())
            derive = getattr(built.retriever, "with_options", None)
            have, want = _filled(built.retriever, built.options), _filled(built.retriever, candidate.options)
            differ = {name for name in set(have) | set(want) if have.get(name) != want.get(name)}
            if not differ:
                return built.retriever
            if callable(derive) and differ <= at_query_time:
                try:
                    derived: Retriever = call(derive, dict(candidate.options), timed=False)
                except OptionsError as error:
                    raise self._option_error(candidate, error) from None
                except Exception as error:  # the team's with_options crashed: exit 2 naming it
                    raise EvalInputError(
                        self.config.path,
                        f"with_options {failure(error)} for the sweep candidate {candidate.label}",
                        "fix with_options in your retriever, or remove its query_time_options",
                    ) from error
                return derived
        return None

    def _build(self, key: str, candidate: Candidate) -> Retriever:
        tokenize = self._tokenizers.get(key)
        if tokenize is None:
            tokenize = self._tokenizers[key] = memoised(make_tokenizer(candidate.tokenizer))
        try:
            built: Retriever = call(
                self.system.build_retriever,
                list(self.corpus.values()),
                tokenize,
                dict(candidate.options),
                timed=False,
            )
        except OptionsError as error:
            raise self._option_error(candidate, error) from None
        except EvalInputError:
            raise
        except Exception as error:  # a crash of the team's factory: exit 2 naming the candidate
            raise EvalInputError(
                self.config.path,
                f"build_retriever {failure(error)} for the sweep candidate {candidate.label}",
                "fix build_retriever in retriever.py, or the [sweep.retriever] values it reads",
            ) from error
        self.builds += 1
        self._built.append(_Built(key, dict(candidate.options), built))
        return built

    def _option_error(self, candidate: Candidate, error: OptionsError) -> EvalInputError:
        """A bad option value: at its [sweep.retriever] key when the grid set it, else [retriever]'s."""
        config = self.config
        if error.key and error.key in candidate.changes.get("retriever", {}):
            where: tuple[str, ...] = ("sweep", "retriever", error.key)
        else:
            where = ("retriever", error.key) if error.key else ("retriever",)
        return EvalInputError(
            config.path,
            f"{'.'.join(where)}: {error}",
            error.fix or "fix or remove that value",
            config.line_of(*where),
        )

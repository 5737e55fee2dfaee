"""eval.toml, described once: one class per table, each setting with its type, default, range
and meaning. A setting is added here (and used where it is needed); load_config, the error
messages and the table in docs/settings.md all follow from these declarations.

Validated with pydantic v2, chosen over msgspec and attrs + cattrs for this job:
- error locations: pydantic gives each error's path as a tuple of the raw keys, so a key
  holding a dot (`[gate.slices."v1.2"]`) stays one part; msgspec reports `$.gate.slices[...]`,
  dropping dict keys, and cattrs gives a path only as text in exception notes;
- unknown keys are refused by all three (extra="forbid", forbid_unknown_fields,
  forbid_extra_keys); ranges: pydantic's Field(ge=, le=) and msgspec's Meta refuse NaN too,
  attrs needs a validator per field; custom checks (metric names, regular expressions) are
  field validators that keep their location (msgspec has only a whole-struct __post_init__);
- maturity: all three are kept up and ship type hints; pydantic is by far the most used
  (about 16th by PyPI downloads; cattrs about 400th, msgspec about 600th);
- cost: the largest install (pydantic + pydantic-core: 2.8 MB of wheels, ~10 MB installed;
  msgspec 0.2 MB; attrs + cattrs 0.14 MB), paid once and small next to numpy and scipy.
Each table is a pydantic dataclass, so the engine's settings stay frozen dataclasses.
"""

from __future__ import annotations

import dataclasses
import re
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass

from ..answers.settings import ANSWER_CHECKS, TABLE, JudgeTable, SettingsPath
from ..calling.calls import DEFAULT_TIMEOUT
from ..calling.retries import exception_type
from ..errors import SettingError
from ..net.server_settings import (
    Backoff,
    Concurrency,
    KeyVariable,
    MaxTokens,
    RateLimit,
    Retries,
    Seed,
    ServerAddress,
    Temperature,
    Timeout,
)
from ..registry import Kind, UnknownPart, module_of
from ..retrieval.names import Metric, parse_metric
from ..retrieval.ranking import Ties
from ..retrieval.tokens import TokenizerSettings


def _metric(name: object) -> Metric:
    if isinstance(name, Metric):
        return name
    try:
        if not isinstance(name, str):
            raise ValueError(f"{name!r} is not a metric name")
        return parse_metric(name)
    except ValueError as error:
        raise SettingError(str(error), "use one of the known metric names") from None


def _gate_metric(name: object) -> Metric | str:
    return name if isinstance(name, str) and name in ANSWER_CHECKS else _metric(name)


def _unique(names: list[Any]) -> list[Any]:
    return list(dict.fromkeys(names))  # drop repeats (an alias and its name), keep the order


MetricName = Annotated[Metric, PlainValidator(_metric)]
Component = Literal["retriever", "generator", "judge"]  # parts of the system that may be stochastic
GateMetric = Annotated[Metric | str, PlainValidator(_gate_metric)]  # str: an answer check
Share = Annotated[StrictFloat, Field(ge=0, le=1)]  # metrics, floors and thresholds are in [0, 1]

# The bootstrap and the random sign patterns hold resamples x questions numbers at once: a cap on
# each and on their product keeps the gate within a CI machine's memory (about 15 bytes a cell
# measured: 100,000 resamples x 5,000 questions took 7.5 GB). The product is checked by the gate
# (run.py), which knows how many questions it evaluated.
MAX_RESAMPLES = 100_000
MAX_RESAMPLED_CELLS = 100_000_000  # about 1.5 GB


@dataclass(frozen=True, config=TABLE)
class DataSettings:
    """[data]: the files read and written, relative to eval.toml."""

    corpus: SettingsPath = Field(
        default=Path("evals/corpus.jsonl"), description='documents: {"id", "title", "text"}'
    )
    golden: SettingsPath = Field(
        default=Path("evals/golden.jsonl"), description="questions and relevant documents"
    )
    baseline: SettingsPath = Field(
        default=Path("evals/baseline.json"), description="the report the gate compares with"
    )
    report: SettingsPath = Field(
        default=Path("build/report.json"), description="where eval and gate write the report"
    )
    holdout: SettingsPath | None = Field(
        default=None, description="optional hidden split: only `gate` evaluates it"
    )
    summary: SettingsPath = Field(default=Path("build/summary.md"), description="the gate's markdown summary")
    html: SettingsPath = Field(default=Path("build/report.html"), description="the gate's HTML report")


@dataclass(frozen=True, config=TABLE)
class RetrievalSettings:
    """[retrieval]: how deep to search and what to measure."""

    k: StrictInt = Field(
        default=5, ge=1, le=1000, description='cutoff of the "top k" columns and found/missing ids'
    )
    depth: StrictInt = Field(
        default_factory=lambda data: max(20, data.get("k", 5)),
        ge=1,
        le=10_000,
        description="results asked of the retriever per question, at least k (default: 20 or k)",
    )
    metrics: Annotated[list[MetricName], Field(min_length=1), AfterValidator(_unique)] = Field(
        default_factory=lambda data: [parse_metric(f"recall@{data.get('k', 5)}"), parse_metric("mrr")],
        description="metrics reported, in order (default: recall@k and mrr); docs/metrics.md",
    )
    ties: Ties = Field(
        default="trec_eval",
        description='order of tied scores: "trec_eval" (scores compared as float32, ties by document '
        'id descending, as trec_eval ranks them) or "retriever" (the order it returned); docs/metrics.md',
    )
    relevance_level: StrictInt = Field(
        default=1,
        ge=1,
        le=1_000_000,
        description="lowest grade counted relevant by binary metrics (trec_eval's -l); nDCG uses every "
        "positive grade whatever this is",
    )

    @field_validator("depth")
    @classmethod
    def _at_least_k(cls, depth: int, info: ValidationInfo) -> int:
        k = info.data.get("k")
        if isinstance(k, int) and depth < k:
            raise SettingError(f"must be at least k = {k}, got {depth}", f"set depth = {k} or more")
        return depth


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))  # metrics: filled in by EvalFile
class GateSettings:
    """[gate]: what fails the gate. Attribute names are the engine's; aliases are eval.toml's."""

    metrics: Annotated[list[GateMetric], Field(min_length=1), AfterValidator(_unique)] = Field(
        default_factory=list,
        examples=[["recall@5", "mrr", "faithfulness"]],
        description="aggregates compared with the baseline (default: [retrieval] metrics)",
    )
    tolerance: Share = Field(
        default=0.02, description="drop below the baseline allowed before the gate fails"
    )
    floors: dict[GateMetric, Share] = Field(
        default_factory=dict, description="[gate.floors]: aggregates must never fall below these"
    )
    all_checks: dict[GateMetric, Share] = Field(
        default_factory=dict,
        alias="checks",
        description="[gate.checks]: per question, passes when value >= threshold; a question "
        "that passed in the baseline and now fails breaks the gate",
    )
    slice_floors: dict[str, dict[MetricName, Share]] = Field(
        default_factory=dict,
        alias="slices",
        description="[gate.slices.TAG]: floors of the mean over the questions tagged TAG",
    )
    allowed_flips: dict[GateMetric, StrictInt | Share] = Field(
        default_factory=dict,
        examples=[{"hit@5": 1, "faithfulness": 0.05}],
        description="[gate.allowed_flips]: newly failing questions tolerated per check: a count "
        "(integer) or a share of the questions the check applies to (0.05); unlisted checks: 0",
    )
    flip_rule: Literal["strict", "net"] = Field(  # gate/flips.py
        default="strict",
        description='when a per-question check\'s flips fail the gate: "strict" (more newly failing '
        "questions than [gate.allowed_flips]; for a deterministic system whose answers should not "
        'move) or "net" (a net loss: newly failing beyond newly passing by more than '
        "allowed_net_loss, or a significant one-sided exact sign test of the flips; for a model that "
        "rewords). Must-pass questions and floors fail whatever the rule",
    )
    allowed_net_loss: Annotated[StrictInt, Field(ge=0, le=1_000_000)] | Share = Field(
        default=0,
        description='flip_rule = "net": newly failing questions beyond newly passing tolerated per '
        "check: a count (integer) or a share of the questions the check applies to (0.02)",
    )
    stochastic: Annotated[list[Component], AfterValidator(_unique)] = Field(
        default_factory=list,
        examples=[["generator"]],
        description='parts that vary from run to run ("retriever", "generator", "judge"): their '
        "metrics are averaged over `repeats` runs per question and gated by non-inferiority",
    )
    repeats: StrictInt = Field(
        default=5, ge=2, le=1000, description="runs per question of the parts declared stochastic"
    )
    max_variation: Share | None = Field(
        default=None,
        examples=[0.5],
        description="stochastic parts: leave out of the per-question checks and the paired tests the "
        "questions whose variation at the baseline exceeds this (0: every run the same verdict, 1: half "
        "the runs pass a check), naming them (default: none left out)",
    )
    power: StrictFloat = Field(
        default=0.95,
        gt=0,
        lt=1,
        description="stochastic parts: chance an unchanged system passes at the golden-set size "
        "`baseline` recommends (0.95 = 1 - alpha: false alarms as rare as misses)",
    )
    determinism_check: StrictInt = Field(
        default=10,
        ge=0,
        le=1_000_000,
        description="questions the gate runs twice to check that the parts not declared stochastic "
        "are deterministic (0: off)",
    )

    @field_validator("allowed_flips")
    @classmethod
    def _counts_of_known_checks(
        cls, allowed: dict[Any, int | float], info: ValidationInfo
    ) -> dict[Any, int | float]:
        checks = [str(name) for name in info.data.get("all_checks") or {}]
        for name, value in allowed.items():
            if str(name) not in checks:
                raise SettingError(
                    f"{name} is not a per-question check ([gate.checks])",
                    f"use one of: {', '.join(checks) or '(no checks)'}",
                )
            if isinstance(value, int) and value < 0:
                raise SettingError(f"{name}: a count of flips must be 0 or more, got {value}", "use 0")
        return allowed

    @property
    def checks(self) -> dict[Metric, float]:
        """[gate.checks] of retrieval metrics."""
        return {name: value for name, value in self.all_checks.items() if isinstance(name, Metric)}

    @property
    def answer_checks(self) -> dict[str, float]:
        """[gate.checks] of answer checks (abstention, key_facts, faithfulness)."""
        return {name: value for name, value in self.all_checks.items() if isinstance(name, str)}

    @property
    def thresholds(self) -> dict[str, float]:
        """[gate.checks], every check by its name: retrieval metrics and answer checks."""
        return {str(name): value for name, value in self.all_checks.items()}

    @property
    def retrieval_metrics(self) -> list[str]:
        """[gate] metrics that are retrieval metrics, by name."""
        return [str(name) for name in self.metrics if not isinstance(name, str)]

    @property
    def answer_metrics(self) -> list[str]:
        """[gate] metrics that are answer checks."""
        return [name for name in self.metrics if isinstance(name, str)]


@dataclass(frozen=True, config=TABLE)
class StatsSettings:
    """[stats]: how the gate tells a real change from noise (docs/statistics.md)."""

    alpha: StrictFloat = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="significance level of the one-sided tests and non-inferiority bounds",
    )
    confidence: StrictFloat = Field(
        default=0.95, gt=0, lt=1, description="of the bootstrap interval of each mean delta"
    )
    resamples: StrictInt = Field(
        default=10_000,
        ge=100,
        le=MAX_RESAMPLES,
        description="bootstrap resamples, and sign patterns when not enumerated; resamples x "
        f"evaluated questions at most {MAX_RESAMPLED_CELLS:,} (memory: about 15 bytes each)",
    )
    exact_limit: StrictInt = Field(
        default=16,
        ge=0,
        le=20,
        description="enumerate all 2**m sign patterns up to this many changed questions",
    )
    seed: StrictInt = Field(default=20240601, ge=0, le=2**63 - 1, description="same seed, same numbers")
    min_slice_size: StrictInt = Field(
        default=5, ge=1, le=1_000_000, description="smaller slices get a warning and no significance test"
    )


def _exception_name(name: object) -> str:
    """A [run] retry_on entry: the name of an exception class that resolves (calling/retries.py)."""
    if not isinstance(name, str):
        raise SettingError(f"{name!r} is not an exception name", 'write names as strings: "ConnectionError"')
    try:
        exception_type(name)
    except ValueError as error:
        raise SettingError(
            str(error),
            'use a builtin exception ("ConnectionError", "TimeoutError") or the full dotted '
            'path of the class ("urllib.error.URLError", "mypkg.errors.Busy")',
        ) from None
    return name


ExceptionName = Annotated[str, PlainValidator(_exception_name)]


@dataclass(frozen=True, config=TABLE)
class RunSettings:
    """[run]: how the team's code is called. None of it changes a number: a report is the same
    at any concurrency, with or without the output cache."""

    timeout: StrictFloat = Field(
        default=DEFAULT_TIMEOUT,
        ge=0,
        le=86_400,
        description="seconds each call of search, search_many or answer may take before the run "
        "stops with exit 2 naming the question (0: no limit; building the system has none)",
    )
    concurrency: StrictInt = Field(
        default=1,
        ge=1,
        le=256,
        description="calls of search or answer in flight at once, each on its own thread (1: one "
        "after another); the team's retriever and generator must then be thread-safe (api.py)",
    )
    retries: StrictInt = Field(
        default=0,
        ge=0,
        le=10,
        description="times a call that raised an error listed in retry_on is made again before "
        "the run stops with exit 2 naming the question",
    )
    backoff: StrictFloat = Field(
        default=0.5,
        ge=0,
        le=60,
        description="seconds before the first retry, doubled before each next one",
    )
    retry_on: Annotated[list[ExceptionName], AfterValidator(_unique)] = Field(
        default_factory=list,
        examples=[["ConnectionError", "TimeoutError", "mypkg.errors.Busy"]],
        description="the exceptions the team declares transient: builtin names or full dotted "
        "paths; any other error stops the run at once (a [run] timeout is never retried)",
    )
    rate_limit: StrictFloat = Field(
        default=0.0,
        ge=0,
        le=100_000,
        description="calls a second at most, over all threads (0: no limit)",
    )
    output_cache: Literal["off", "code", "version"] = Field(
        default="off",
        description='remember search and answer outputs: "code" keyed by a hash of the package\'s '
        'code and settings, "version" also by system_version (a remote service); "off": never',
    )
    system_version: str = Field(
        default="",
        description="the version of what the system calls outside the package; bump it when that "
        'changes. Required by output_cache = "version"',
    )
    output_cache_file: SettingsPath = Field(
        default=Path(".cache/outputs.json"), description="where the output cache is kept (not committed)"
    )
    max_cost: StrictFloat | None = Field(
        default=None,
        ge=0,
        le=100_000,
        examples=[5.0],
        description="USD a run may cost at most: eval, baseline and gate estimate the cost of their model "
        "calls from [prices] before making any (as --dry-run does) and exit 2 above it (default: no limit)",
    )

    @model_validator(mode="after")
    def _version_given(self) -> RunSettings:
        if self.output_cache == "version" and not self.system_version.strip():
            raise SettingError(
                'output_cache = "version" needs the version of the system',
                'set system_version = "..." and bump it whenever the service changes, '
                'or use output_cache = "code" or "off"',
                ("run", "output_cache"),
            )
        return self


def _factory(part: Kind, path: object) -> str:
    """A [system] entry: "module:function" (the dotted module importable and the name an
    identifier), or the name of a registered part of that kind (registry.py)."""
    text = str(path)
    if ":" not in text and text.strip():
        try:
            module_of(part, text)
        except UnknownPart as error:
            raise SettingError(
                str(error),
                f'name one of them, or your own factory as "module:function", e.g. {part} = '
                f'"my_package.{part}:build_{part}"',
            ) from None
        return text
    module, _, name = text.partition(":")
    if not name or not all(piece.isidentifier() for piece in [*module.split("."), name]):
        raise SettingError(
            f'must name a function as "module:function", or a registered {part}, got {path!r}',
            f'e.g. {part} = "my_package.{part}:build_{part}"',
        )
    return text


@dataclass(frozen=True, config=TABLE)
class SystemSettings:
    """[system]: the system under test, the team's two factories or registered parts. The
    engine imports exactly these and nothing else of the team's code."""

    retriever: Annotated[StrictStr, AfterValidator(partial(_factory, "retriever"))] | None = Field(
        default=None,
        description='"module:function" returning the retriever, e.g. "my_rag.retriever:build_retriever", '
        'or a registered retriever\'s name, e.g. "bm25" (docs/parts.md)',
    )
    generator: Annotated[StrictStr, AfterValidator(partial(_factory, "generator"))] | None = Field(
        default=None,
        description='"module:function" returning the generator, e.g. "my_rag.generator:build_generator", '
        'or a registered generator\'s name, e.g. "stand-in"',
    )


@dataclass(frozen=True, config=TABLE)
class ExecutorSettings:
    """[executor]: where the expensive steps run (docs/scaling.md); never changes a number."""

    backend: Literal["local", "dask"] = Field(
        default="local",
        description="`local`: in this process; `dask`: on a Dask cluster (the `dask` extra), for "
        "dense encoding, NLI judging and the calls of your system",
    )
    address: StrictStr = Field(
        default="",
        description='dask: the scheduler to join, e.g. "tcp://10.0.0.5:8786"; "" starts a cluster of '
        "`workers` processes on this machine for the run",
    )
    workers: StrictInt = Field(
        default=2, ge=1, le=1024, description="dask without an address: local worker processes to start"
    )


@dataclass(frozen=True, config=TABLE)
class DisplaySettings:
    """[display]: how console output is laid out; never changes a number."""

    max_listed: StrictInt = Field(
        default=10,
        ge=1,
        le=10_000,
        description="items a long list in console output shows before '... and N more'",
    )


def _grid(table: str, values: dict[str, Any]) -> dict[str, list[Any]]:
    """[sweep.retriever] / [sweep.tokenizer]: every key holds a non-empty list of values to try."""
    for key, tried in values.items():
        if not isinstance(tried, list) or not tried:
            raise SettingError(
                f"must be a non-empty list of the values to try, got {tried!r}",
                f"e.g. {key} = [{tried!r}]"
                if not isinstance(tried, list)
                else f"list at least one value: {key} = [...]",
                ("sweep", table, key),
            )
    return values


def _tokenizer_grid(values: dict[str, Any]) -> dict[str, list[Any]]:
    """Each value of [sweep.tokenizer] must be a valid [tokenizer] setting of its key."""
    _grid("tokenizer", values)
    known = [setting.name for setting in dataclasses.fields(TokenizerSettings)]
    for key, tried in values.items():
        if key not in known:
            raise SettingError(
                f"{key!r} is not a [tokenizer] setting",
                f"use one of: {', '.join(known)}",
                ("sweep", "tokenizer", key),
            )
        for value in tried:
            try:
                TokenizerSettings(**{key: value})
            except ValidationError as error:
                problem = error.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
                raise SettingError(
                    f"{value!r}: {problem}", "fix or remove that value", ("sweep", "tokenizer", key)
                ) from None
    return values


@dataclass(frozen=True, config=TABLE)
class SweepSettings:
    """[sweep]: the grid `sweep` tries against the current configuration (docs/sweep.md)."""

    retriever: Annotated[dict[str, Any], AfterValidator(partial(_grid, "retriever"))] = Field(
        default_factory=dict,
        examples=[{"k1": [0.6, 0.9, 1.2], "b": [0.4, 0.75]}],
        description="[sweep.retriever]: [retriever] options, each with the list of values to try",
    )
    tokenizer: Annotated[dict[str, Any], AfterValidator(_tokenizer_grid)] = Field(
        default_factory=dict,
        examples=[{"stemmer": ["none", "porter"]}],
        description="[sweep.tokenizer]: [tokenizer] settings, each with the list of values to try",
    )
    metric: MetricName | None = Field(
        default=None,
        description="the metric that picks the winner (default: the first gated retrieval metric)",
    )
    halving_above: StrictInt = Field(
        default=8,
        ge=2,
        le=100_000,
        description="more candidates than this: successive halving on growing seeded subsets of questions",
    )
    holdout_share: StrictFloat = Field(
        default=0.3,
        gt=0,
        lt=1,
        description="without [data] holdout: the share of golden questions held out (seeded split) "
        "to confirm the winner",
    )
    max_candidates: StrictInt = Field(
        default=1000, ge=1, le=100_000, description="a larger grid is refused: narrow it"
    )
    markdown: SettingsPath = Field(default=Path("build/sweep.md"), description="the sweep's markdown report")
    html: SettingsPath = Field(default=Path("build/sweep.html"), description="the sweep's HTML report")

    @model_validator(mode="after")
    def _not_too_many(self) -> SweepSettings:
        size = 1
        for tried in [*self.retriever.values(), *self.tokenizer.values()]:
            size *= len(tried)
        if size > self.max_candidates:
            raise SettingError(
                f"the grid has {size:,} candidates, more than max_candidates = {self.max_candidates:,}",
                "try fewer values, or raise max_candidates",
                ("sweep", "max_candidates"),
            )
        return self


# The kinds of question `golden generate` writes, in the order a plan cycles through them
# (golden/generate.py describes each).
GoldenKind = Literal["single", "two-passage", "unanswerable", "terse", "acronym", "users-words"]
GOLDEN_KINDS: tuple[GoldenKind, ...] = (
    "single",
    "two-passage",
    "unanswerable",
    "terse",
    "acronym",
    "users-words",
)


@dataclass(frozen=True, config=TABLE)
class GoldenSettings:
    """[golden]: how `golden generate` writes candidate golden questions from the corpus through
    an OpenAI-compatible chat-completions API (golden/generate.py). Only that command reads it."""

    base_url: ServerAddress | None = Field(
        default=None,
        examples=["http://127.0.0.1:8000/v1"],
        description="the server's OpenAI-compatible API, up to /v1 (required by `golden generate`); "
        "requests go to {base_url}/chat/completions",
    )
    model: StrictStr | None = Field(
        default=None, description="the model the server serves (required by `golden generate`)"
    )
    api_key_env: KeyVariable = "OPENAI_API_KEY"
    timeout: Timeout = Field(
        default=60.0,
        description="seconds one candidate's request may take in all, from connecting to the last "
        "byte of the reply, retries included; then the command stops (exit 2) (0: no limit)",
    )
    concurrency: Concurrency = 4
    retries: Retries = Field(
        default=3,
        description="attempts more after a 429, a 5xx or a connection error, within timeout; then "
        "the command stops (exit 2), keeping the candidates written",
    )
    backoff: Backoff = 1.0
    rate_limit: RateLimit = 0.0
    temperature: Temperature = 0.7
    max_tokens: MaxTokens = Field(
        default=1024,
        description="the longest reply, in tokens (a reply cut there is dropped as malformed; a server "
        "without a limit may write thousands of tokens for one candidate)",
    )
    json_mode: StrictBool = Field(
        default=True,
        description='send response_format {"type": "json_object"}; false for a server that refuses it '
        "(the prompt still asks for JSON, and a reply inside a ```json fence is read)",
    )
    seed: Seed = Field(
        default=0,
        description="picks the documents of each slot (same corpus, seed and count: same plan); slot "
        "i's request sends seed + i",
    )
    count: StrictInt = Field(
        default=50,
        ge=1,
        le=100_000,
        description="slots in the plan: candidates asked for, dropped ones included",
    )
    kinds: Annotated[list[GoldenKind], Field(min_length=1), AfterValidator(_unique)] = Field(
        default_factory=lambda: list(GOLDEN_KINDS),
        description="the kinds of question, cycled through in this order slot by slot (default: all six)",
    )
    candidates: SettingsPath = Field(
        default=Path("evals/candidates.jsonl"),
        description="where candidates are appended, one line each (never the golden set); a rerun "
        "with the same seed resumes it",
    )
    near_duplicate: StrictFloat = Field(
        default=0.8,
        ge=0.5,
        le=1,
        description="a candidate whose question's word set has at least this Jaccard similarity "
        "with a golden question's or an earlier candidate's is dropped",
    )

    @field_validator("model")
    @classmethod
    def _not_blank(cls, model: str | None) -> str | None:
        if model is not None and not model.strip():
            raise ValueError("must not be blank (the name of the model the server serves)")
        return model


def _pattern(pattern: str) -> str:
    """A [logs] redact entry: a regular expression Python compiles."""
    try:
        re.compile(pattern)
    except re.error as error:
        raise SettingError(
            f"{pattern!r} is not a regular expression: {error}",
            "fix it (a TOML literal string, in single quotes, keeps backslashes as written: "
            "'[\\w.+-]+@[\\w-]+')",
        ) from None
    return pattern


def _field_name(name: str) -> str:
    if not name.strip():
        raise ValueError("must name a field (not blank)")
    return name


FieldName = Annotated[StrictStr, AfterValidator(_field_name)]
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # the default personal data [logs] redact removes


@dataclass(frozen=True, config=TABLE)
class LogSettings:
    """[logs]: how `golden import-logs` reads real questions from a log export into candidates
    (golden/logs.py). Only that command reads it."""

    question: FieldName = Field(default="question", description="the field holding the user's question")
    answer: FieldName = Field(
        default="answer",
        description="the field holding the system's answer, kept as the candidate's reference for the "
        "grader to check (absent: none)",
    )
    documents: FieldName = Field(
        default="documents",
        description="the field holding the ids of the documents shown: a list, or in CSV text split on "
        "`separator` (or a JSON list); ids not in the corpus are counted and left out",
    )
    separator: StrictStr = Field(
        default=";", min_length=1, description="what separates document ids in a CSV cell"
    )
    feedback: FieldName = Field(default="feedback", description="the field holding the user's feedback")
    timestamp: FieldName = Field(default="timestamp", description="the field holding when it was asked")
    strata: FieldName = Field(
        default="feedback",
        description="the field whose values the sample is stratified by (a missing value is a stratum "
        "of its own)",
    )
    redact: Annotated[list[Annotated[StrictStr, AfterValidator(_pattern)]], AfterValidator(_unique)] = Field(
        default_factory=lambda: [EMAIL],
        description="regular expressions of personal data: each match in what is read (question, answer, "
        'feedback, timestamp, stratum) becomes "[redacted]" before anything is written or shown '
        "(default: e-mail addresses)",
    )
    near_duplicate: StrictFloat = Field(
        default=0.9,
        ge=0.5,
        le=1,
        description="a question whose word set (SQuAD-normalised) has at least this Jaccard similarity "
        "with an earlier one's is a near-duplicate: the first is kept",
    )
    count: StrictInt = Field(default=50, ge=1, le=100_000, description="candidates sampled at most")
    seed: StrictInt = Field(default=0, ge=0, le=2**31 - 1, description="the sampling seed")


@dataclass(frozen=True, config=TABLE)
class PriceSettings:
    """[prices.MODEL]: what one model costs, in USD per million tokens."""

    input: StrictFloat = Field(
        ge=0, le=100_000, examples=[0.15], description="USD per million input (prompt) tokens"
    )
    output: StrictFloat = Field(
        ge=0, le=100_000, examples=[0.6], description="USD per million output (completion) tokens"
    )


class EvalFile(BaseModel):
    """The whole of eval.toml: its tables. [retriever] and [generation] are free-form: each
    retriever and generator validates its own options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: SystemSettings
    data: DataSettings
    retrieval: RetrievalSettings
    tokenizer: TokenizerSettings
    retriever: dict[str, Any] = Field(description="options passed to the retriever")
    gate: GateSettings
    stats: StatsSettings
    generation: dict[str, Any] = Field(description="options passed to the generator")
    judge: JudgeTable
    run: RunSettings
    executor: ExecutorSettings
    display: DisplaySettings
    sweep: SweepSettings
    golden: GoldenSettings
    logs: LogSettings
    prices: dict[str, PriceSettings] = Field(
        description="USD per million tokens of each model a run calls, keyed by its name as "
        '[generation], [judge] and [golden] model write it: `"gpt-4o-mini" = { input = 0.15, '
        'output = 0.6 }`; a model without one shows "no price"'
    )

    @model_validator(mode="before")
    @classmethod
    def _every_table(cls, tables: Any) -> Any:
        """A table left out is validated as an empty one: its defaults apply (paths resolved)."""
        return {**{name: {} for name in cls.model_fields}, **tables} if isinstance(tables, dict) else tables

    @field_validator("gate", mode="before")
    @classmethod
    def _gate_compares_the_reported_metrics(cls, gate: Any, info: ValidationInfo) -> Any:
        retrieval = info.data.get("retrieval")
        if isinstance(gate, dict) and "metrics" not in gate and retrieval is not None:
            return {**gate, "metrics": retrieval.metrics}
        return gate

    @model_validator(mode="after")
    def _deep_enough(self) -> EvalFile:
        for metric in self.every_metric():
            if metric.k is not None and metric.k > self.retrieval.depth:
                depth = self.retrieval.depth
                raise SettingError(
                    f"{metric} looks at the top {metric.k} but the retriever returns only {depth}",
                    f"set depth = {metric.k} or more",
                    ("retrieval", "depth"),
                )
        return self

    def every_metric(self) -> list[Metric]:
        """Every metric computed, in report order: [retrieval] metrics, then any the gate names."""
        gate = self.gate
        sliced = [metric for floors in gate.slice_floors.values() for metric in floors]
        named = [*self.retrieval.metrics, *gate.metrics, *gate.floors, *gate.all_checks, *sliced]
        return [metric for metric in dict.fromkeys(named) if isinstance(metric, Metric)]

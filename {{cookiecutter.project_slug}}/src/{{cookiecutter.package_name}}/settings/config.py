"""Read eval.toml: the one source of truth for the evaluation and the gate.

The command line, the nox sessions and the tests all call `load_config`, so what CI gates
is exactly what you run locally. Paths in the file are relative to the file itself.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from ..answers.settings import ANSWER_CHECKS, JUDGE_KEYS, JudgeSettings, read_judge
from ..errors import EvalInputError
from ..retrieval.names import Metric, parse_metric
from ..retrieval.tokens import STEMMERS, STOPWORD_LISTS, TokenizerSettings

DEFAULT_PATH = Path("eval.toml")

_SCHEMA: dict[str, set[str]] = {
    "data": {"corpus", "golden", "baseline", "report", "holdout", "summary", "html"},
    "retrieval": {"k", "depth", "metrics"},
    "tokenizer": {"lowercase", "pattern", "min_length", "stopwords", "stemmer"},
    "retriever": set(),  # free-form: passed to the retriever as options
    "gate": {"metrics", "tolerance", "floors", "checks", "slices"},
    "stats": {"alpha", "confidence", "resamples", "exact_limit", "seed", "min_slice_size"},
    "generation": set(),  # free-form: passed to the generator as options
    "judge": JUDGE_KEYS,
}


@dataclass(frozen=True)
class GateSettings:
    metrics: list[Metric | str]  # aggregates compared with the baseline (str: an answer check)
    tolerance: float  # allowed drop below the baseline before the gate fails
    floors: dict[Metric | str, float]  # aggregates must never fall below these
    checks: dict[Metric, float]  # a question passes a check when its value >= threshold
    slice_floors: dict[str, dict[Metric, float]] = field(default_factory=dict)  # per tag
    answer_checks: dict[str, float] = field(default_factory=dict)  # [gate.checks] for answer checks


@dataclass(frozen=True)
class StatsSettings:
    """How the gate tells a real change from noise ([stats] in eval.toml; see stats.py)."""

    alpha: float = 0.05  # a drop is significant when its Holm-adjusted p <= alpha
    confidence: float = 0.95  # of the bootstrap interval of each mean delta
    resamples: int = 10000  # bootstrap resamples, and sign patterns when not enumerated
    exact_limit: int = 16  # enumerate all 2**m sign patterns up to this many changed questions
    seed: int = 20240601  # same seed, same numbers
    min_slice_size: int = 5  # smaller slices get a warning and no significance test


@dataclass(frozen=True)
class Config:
    path: Path
    corpus: Path
    golden: Path
    baseline: Path
    report: Path
    k: int
    depth: int
    metrics: list[Metric]  # every metric computed, in report order
    tokenizer: TokenizerSettings
    retriever: dict[str, Any]  # the [retriever] table, passed to build_retriever as options
    gate: GateSettings
    stats: StatsSettings = StatsSettings()
    holdout: Path | None = None  # optional hidden split: only `gate` evaluates it
    summary: Path = Path("build/summary.md")  # markdown summary (or $GITHUB_STEP_SUMMARY)
    html: Path = Path("build/report.html")  # self-contained HTML report
    generation: dict[str, Any] = field(default_factory=dict)  # [generation]: the generator's options
    judge: JudgeSettings = field(default_factory=JudgeSettings)

    def settings(self) -> dict[str, Any]:
        """The settings that shape the numbers, as recorded in every report."""
        return {
            "k": self.k,
            "depth": self.depth,
            "metrics": [str(m) for m in self.metrics],
            "tokenizer": vars(self.tokenizer).copy(),
            "stats": vars(self.stats).copy(),
        }


class _Reader:
    """Typed access to the parsed TOML, turning every mistake into an EvalInputError."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.split("\n")  # as TOML counts lines (splitlines() also splits at U+2028...)

    def line_of(self, key: str) -> int | None:
        """Best-effort line number of setting `key` ("gate.floors.mrr") or table `[key]`."""
        *tables, leaf = key.split(".")
        section, current = ".".join(tables), ""
        for number, line in enumerate(self.lines, start=1):
            header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
            if header:
                current = header.group(1).replace(" ", "")
                if current == key:
                    return number
            elif current == section and re.match(rf"""^\s*["']?{re.escape(leaf)}["']?\s*=""", line):
                return number
        return None

    def fail(self, key: str, problem: str, fix: str) -> EvalInputError:
        """An error about setting `key` (dotted, e.g. "gate.floors.mrr"), located by line."""
        return EvalInputError(self.path, f"{key}: {problem}", fix, self.line_of(key))

    def table(self, parent: dict[str, Any], key: str) -> dict[str, Any]:
        value = parent.get(key.split(".")[-1], {})
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, got {value!r}", f"write [{key}] followed by its settings")
        return value

    def check_keys(self, table: dict[str, Any], prefix: str, allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(sorted(allowed))}"
                raise self.fail(f"{prefix}{key}", "unknown setting", hint)

    def integer(self, table: dict[str, Any], name: str, key: str, default: int, minimum: int) -> int:
        value: object = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(
                f"{name}.{key}",
                f"must be a whole number >= {minimum}, got {value!r}",
                f"e.g. {key} = {default}",
            )
        return value

    def number(self, value: Any, key: str, low: float, high: float) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not math.isfinite(value))  # an int may not fit a float
            or not low <= value <= high
        ):
            raise self.fail(
                key,
                f"must be a number between {low:g} and {high:g}, got {value!r}",
                f"write a number from {low:g} to {high:g}, e.g. {key.split('.')[-1]} = {high / 2:g}",
            )
        return float(value)

    @overload
    def metric(self, text: Any, key: str, answers: Literal[False] = False) -> Metric: ...
    @overload
    def metric(self, text: Any, key: str, answers: bool) -> Metric | str: ...
    def metric(self, text: Any, key: str, answers: bool = False) -> Metric | str:
        """A metric name, parsed; with `answers`, an answer check's name is returned as is."""
        if answers and text in ANSWER_CHECKS:
            return str(text)  # one of the ANSWER_CHECKS names
        try:
            return parse_metric(text)
        except ValueError as error:
            raise self.fail(key, str(error), "use one of the known metric names") from None

    def metric_list(
        self, table: dict[str, Any], name: str, key: str, default: list[str], answers: bool = False
    ) -> list[Metric | str]:
        value = table.get(key, default)
        if not isinstance(value, list) or not value:
            raise self.fail(
                f"{name}.{key}",
                f"must be a non-empty list of metric names, got {value!r}",
                f'e.g. {key} = ["recall@5", "mrr"]',
            )
        metrics = [self.metric(item, f"{name}.{key}", answers) for item in value]
        return list(dict.fromkeys(metrics))  # drop repeats, keep order

    def path_setting(self, table: dict[str, Any], key: str, default: str, section: str = "data") -> Path:
        value = table.get(key, default)
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise self.fail(
                f"{section}.{key}", f"must be a file path, got {value!r}", f'e.g. {key} = "{default}"'
            )
        return (self.path.parent / value).resolve()


def load_config(path: Path = DEFAULT_PATH) -> Config:
    """Read and validate eval.toml. Raises EvalInputError naming the key and its line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EvalInputError(
            path, "config file not found", "run from the project folder, or pass --config PATH"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise EvalInputError(path, f"cannot read the config: {error}", "save it as UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"line (\d+)", str(error))
        raise EvalInputError(
            path, f"not valid TOML: {error}", "fix the TOML syntax", int(line.group(1)) if line else None
        ) from None

    read = _Reader(path, text)
    read.check_keys(data, "", set(_SCHEMA))
    tables = {name: read.table(data, name) for name in _SCHEMA}
    for name, allowed in _SCHEMA.items():
        if allowed:
            read.check_keys(tables[name], f"{name}.", allowed)

    files, retrieval, tok, gate = tables["data"], tables["retrieval"], tables["tokenizer"], tables["gate"]
    k = read.integer(retrieval, "retrieval", "k", 5, 1)
    depth = read.integer(retrieval, "retrieval", "depth", max(20, k), k)
    reported = read.metric_list(retrieval, "retrieval", "metrics", [f"recall@{k}", "mrr"])

    tokenizer = TokenizerSettings(
        lowercase=tok.get("lowercase", True),
        pattern=tok.get("pattern", TokenizerSettings.pattern),
        min_length=read.integer(tok, "tokenizer", "min_length", 1, 1),
        stopwords=tok.get("stopwords", TokenizerSettings.stopwords),
        stemmer=tok.get("stemmer", TokenizerSettings.stemmer),
    )
    if not isinstance(tokenizer.lowercase, bool):
        raise read.fail("tokenizer.lowercase", "must be true or false", "lowercase = true")
    if not isinstance(tokenizer.stopwords, str) or tokenizer.stopwords not in STOPWORD_LISTS:
        raise read.fail(
            "tokenizer.stopwords",
            f"unknown list {tokenizer.stopwords!r}",
            f"one of: {', '.join(STOPWORD_LISTS)}",
        )
    if tokenizer.stemmer not in STEMMERS:
        raise read.fail(
            "tokenizer.stemmer", f"unknown stemmer {tokenizer.stemmer!r}", f"one of: {', '.join(STEMMERS)}"
        )
    try:
        if not isinstance(tokenizer.pattern, str) or re.compile(tokenizer.pattern).groups:
            raise re.error("use a pattern without capturing groups, e.g. (?:...) instead of (...)")
    except re.error as error:
        raise read.fail(
            "tokenizer.pattern", f"not a usable regular expression: {error}", r"e.g. pattern = '\w+'"
        ) from None

    gate_metrics = read.metric_list(gate, "gate", "metrics", [str(m) for m in reported], answers=True)
    floors_table = read.table(gate, "gate.floors")
    checks_table = read.table(gate, "gate.checks")
    floors = {
        read.metric(name, "gate.floors", answers=True): read.number(v, f"gate.floors.{name}", 0, 1)
        for name, v in floors_table.items()
    }
    checks = {
        read.metric(name, "gate.checks", answers=True): read.number(v, f"gate.checks.{name}", 0, 1)
        for name, v in checks_table.items()
    }
    slices_table = read.table(gate, "gate.slices")
    slice_floors = {
        str(tag): {
            read.metric(name, f"gate.slices.{tag}"): read.number(v, f"gate.slices.{tag}.{name}", 0, 1)
            for name, v in read.table(slices_table, f"gate.slices.{tag}").items()
        }
        for tag in slices_table
    }
    settings = GateSettings(
        metrics=gate_metrics,
        tolerance=read.number(gate.get("tolerance", 0.02), "gate.tolerance", 0, 1),
        floors=floors,
        checks={m: v for m, v in checks.items() if isinstance(m, Metric)},
        answer_checks={m: v for m, v in checks.items() if isinstance(m, str)},
        slice_floors=slice_floors,
    )
    stats = _stats_settings(read, tables["stats"])

    # Everything the gate needs is computed, even when not listed in [retrieval] metrics.
    sliced = [metric for table in slice_floors.values() for metric in table]
    every = [
        m
        for m in dict.fromkeys([*reported, *gate_metrics, *floors, *checks, *sliced])
        if isinstance(m, Metric)
    ]
    for metric in every:
        if metric.k is not None and metric.k > depth:
            raise read.fail(
                "retrieval.depth",
                f"{metric} looks at the top {metric.k} but the retriever returns only {depth}",
                f"set depth = {metric.k} or more",
            )
    return Config(
        path=path.resolve(),
        corpus=read.path_setting(files, "corpus", "evals/corpus.jsonl"),
        golden=read.path_setting(files, "golden", "evals/golden.jsonl"),
        baseline=read.path_setting(files, "baseline", "evals/baseline.json"),
        report=read.path_setting(files, "report", "build/report.json"),
        k=k,
        depth=depth,
        metrics=every,
        tokenizer=tokenizer,
        retriever=dict(tables["retriever"]),
        gate=settings,
        generation=dict(tables["generation"]),
        judge=read_judge(read, tables["judge"]),
        stats=stats,
        holdout=read.path_setting(files, "holdout", "evals/holdout.jsonl") if "holdout" in files else None,
        summary=read.path_setting(files, "summary", "build/summary.md"),
        html=read.path_setting(files, "html", "build/report.html"),
    )


def _stats_settings(read: _Reader, table: dict[str, Any]) -> StatsSettings:
    default = StatsSettings()
    alpha = read.number(table.get("alpha", default.alpha), "stats.alpha", 0, 1)
    confidence = read.number(table.get("confidence", default.confidence), "stats.confidence", 0, 1)
    if not 0 < alpha < 1 or not 0 < confidence < 1:
        key = "stats.alpha" if not 0 < alpha < 1 else "stats.confidence"
        raise read.fail(key, "must be strictly between 0 and 1", "e.g. alpha = 0.05, confidence = 0.95")
    exact_limit = read.integer(table, "stats", "exact_limit", default.exact_limit, 0)
    if exact_limit > 20:  # 2**20 sign patterns is about the most a laptop enumerates quickly
        raise read.fail("stats.exact_limit", f"{exact_limit} is too many to enumerate", "use 20 or fewer")
    return StatsSettings(
        alpha=alpha,
        confidence=confidence,
        resamples=read.integer(table, "stats", "resamples", default.resamples, 100),
        exact_limit=exact_limit,
        seed=read.integer(table, "stats", "seed", default.seed, 0),
        min_slice_size=read.integer(table, "stats", "min_slice_size", default.min_slice_size, 1),
    )

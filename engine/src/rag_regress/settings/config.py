"""Read eval.toml: the one source of truth for the evaluation and the gate.

The command line, the nox sessions and the tests all call `load_config`, so what CI gates
is exactly what you run locally. Paths in the file are relative to the file itself. What the
file may hold is declared once, in schema.py; this module reads the file, validates it
against the schema and hands the engine a `Config`.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

from ..answers.judges import backends
from ..answers.llm.settings import moved_to_llm_table
from ..answers.settings import JudgeSettings, JudgeTable, own_settings
from ..answers.verdicts import ALWAYS_JUDGES
from ..errors import EvalInputError
from ..inputs.reading import CONFIG_LIMIT, read_data
from ..net import redact
from ..retrieval.names import Metric
from ..retrieval.tokens import TokenizerSettings
from . import DEFAULT_PATH
from .explain import explain
from .lines import line_of
from .part_options import check_part_options
from .schema import (
    DataSettings,
    DisplaySettings,
    EvalFile,
    ExecutorSettings,
    GateSettings,
    GoldenSettings,
    LogSettings,
    PriceSettings,
    RetrievalSettings,
    RunSettings,
    StatsSettings,
    SweepSettings,
    SystemSettings,
)

__all__ = ["DEFAULT_PATH", "Config", "GateSettings", "StatsSettings", "load_config"]


@dataclass(frozen=True)
class Config:
    """eval.toml, validated: one attribute per table (see schema.py), and the file it came from."""

    path: Path
    data: DataSettings
    retrieval: RetrievalSettings
    tokenizer: TokenizerSettings
    retriever: dict[str, Any]  # the [retriever] table, passed to build_retriever as options
    gate: GateSettings
    stats: StatsSettings
    generation: dict[str, Any]  # [generation]: the generator's options
    judge: JudgeSettings
    run: RunSettings
    display: DisplaySettings
    metrics: list[Metric]  # every metric computed, in report order
    sweep: SweepSettings = field(default_factory=SweepSettings)  # [sweep]: the grid `sweep` tries
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)  # [executor]: where work runs
    system: SystemSettings = field(default_factory=SystemSettings)  # [system]: the team's factories
    # [golden]: what `golden generate` asks of its server. Not `golden`: that name has always
    # been the golden set's path ([data] golden, below).
    golden_settings: GoldenSettings = field(default_factory=GoldenSettings)
    logs: LogSettings = field(default_factory=LogSettings)  # [logs]: what `golden import-logs` reads
    prices: dict[str, PriceSettings] = field(default_factory=dict)  # [prices]: USD per million tokens
    text: str = field(default="", repr=False, compare=False)  # eval.toml as read
    # The outputs as written in eval.toml (joined to its folder, not resolved): the settings
    # resolve symlinks, and an output written through one must be noticed (see `as_written`).
    written: dict[tuple[str, str], Path] = field(default_factory=dict, repr=False, compare=False)

    def as_written(self, table: str, key: str) -> Path:
        """An output setting (("data", "report"), ("judge", "cache") ...) as written in the
        file, relative to its folder, with symlinks not followed: where the write goes."""
        return self.written.get((table, key)) or getattr(getattr(self, table), key)

    def written_value(self, *key: str) -> object:
        """A setting as eval.toml writes it, before the schema's defaults and the settings it
        derives ([gate.floors] judged from [judge] min_judged); None when it is not written."""
        try:
            value: object = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError:
            return None
        for part in key:
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def line_of(self, *key: str) -> int | None:
        """The line of a setting or table of eval.toml, e.g. line_of("gate", "slices", tag)."""
        return line_of(self.text, key)

    def settings(self) -> dict[str, Any]:
        """The settings that shape the numbers, as recorded in every report: [retrieval] (its
        metrics: every metric computed), [tokenizer] and [stats], straight from the schema."""
        return {
            **vars(self.retrieval),
            "metrics": [str(m) for m in self.metrics],
            "tokenizer": vars(self.tokenizer).copy(),
            "stats": vars(self.stats).copy(),
        }

    # [data] and [retrieval] settings under the names the engine has always used
    @property
    def corpus(self) -> Path:
        return self.data.corpus

    @property
    def golden(self) -> Path:
        return self.data.golden

    @property
    def baseline(self) -> Path:
        return self.data.baseline

    @property
    def report(self) -> Path:
        return self.data.report

    @property
    def holdout(self) -> Path | None:
        return self.data.holdout

    @property
    def summary(self) -> Path:
        return self.data.summary

    @property
    def html(self) -> Path:
        return self.data.html

    @property
    def k(self) -> int:
        return self.retrieval.k

    @property
    def depth(self) -> int:
        return self.retrieval.depth


# The settings that name a file the commands write (the baseline only by `baseline`): each
# stays inside the project folder, never written through a symlink (run_files.check_outputs).
OUTPUTS: dict[tuple[str, str], Any] = {
    ("data", "baseline"): DataSettings,
    ("data", "report"): DataSettings,
    ("data", "summary"): DataSettings,
    ("data", "html"): DataSettings,
    ("judge", "cache"): JudgeTable,
    ("sweep", "markdown"): SweepSettings,
    ("sweep", "html"): SweepSettings,
    ("golden", "candidates"): GoldenSettings,
}


def _written(tables: dict[str, Any], folder: Path) -> dict[tuple[str, str], Path]:
    """Each output setting as written (or its default), joined to `folder` and normalised
    without following symlinks. Called after validation: a value present is a path."""
    written = {}
    for (table, key), settings in OUTPUTS.items():
        given = tables.get(table)
        value = given.get(key) if isinstance(given, dict) else None
        if not isinstance(value, str):
            value = str(settings.__pydantic_fields__[key].default)
        written[(table, key)] = Path(os.path.normpath(folder / value))
    return written


def secret_variables(data: Any) -> set[str]:
    """The environment variables the settings `data` name as holding a secret: every string
    value of a key ending in `_env` (api_key_env, auth_env ...), in any table."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and isinstance(key, str) and key.endswith("_env"):
                found.add(value)
            else:
                found |= secret_variables(value)
    elif isinstance(data, list):
        for value in data:
            found |= secret_variables(value)
    return found


def remember_secrets(data: dict[str, Any]) -> None:
    """Register the secrets the settings name (net/redact.py) in this process, before anything
    can be shown: the values of their `*_env` variables and credential headers."""
    redact.remember_environment(secret_variables(data), os.environ)
    for table in data.values():
        headers = table.get("headers") if isinstance(table, dict) else None
        if isinstance(headers, dict):
            redact.remember_headers(headers)


MIN_JUDGED: float = JudgeTable.__pydantic_fields__["min_judged"].default  # type: ignore[attr-defined]


def with_judged_floor(data: dict[str, Any]) -> dict[str, Any]:
    """The settings `data` with a floor on `judged` in [gate.floors] for a judge that may give
    no verdict (a model's reply that skipped a sentence): [judge] min_judged (its default when
    unset or not a number: [judge]'s own check names it), unless [gate.floors] sets its own.
    A run the judge mostly did not judge never passes the gate."""
    judge, gate = data.get("judge"), data.get("gate")
    backend = judge.get("backend", "lexical") if isinstance(judge, dict) else "lexical"
    if backend in ALWAYS_JUDGES or not isinstance(gate, dict):
        return data
    floors = gate.get("floors", {})
    if not isinstance(floors, dict) or "judged" in floors:
        return data
    floor = judge.get("min_judged") if isinstance(judge, dict) else None
    if isinstance(floor, bool) or not isinstance(floor, int | float):
        floor = MIN_JUDGED
    return {**data, "gate": {**gate, "floors": {**floors, "judged": float(floor)}}}


def _own_judge_tables(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """`data` without the judges' own tables ([judge.NAME] for an installed judge NAME), and
    those tables by name: their keys are the judge's, not [judge]'s."""
    judge = data.get("judge")
    if not isinstance(judge, dict):
        return data, {}
    named = set(backends()) - set(JudgeTable.__pydantic_fields__)  # type: ignore[attr-defined]
    own = {name: table for name, table in judge.items() if name in named and isinstance(table, dict)}
    return {**data, "judge": {key: value for key, value in judge.items() if key not in own}}, own


def _check_not_moved(data: dict[str, Any], path: Path, text: str) -> None:
    """Exit 2 at the first [judge] key that moved to [judge.llm], naming `migrate`."""
    judge = data.get("judge")
    moved = moved_to_llm_table(judge) if isinstance(judge, dict) else []
    if moved:
        lines = {key: line_of(text, ("judge", key)) for key in moved}
        key = min(moved, key=lambda key: lines[key] or 0)
        raise EvalInputError(
            path,
            f"[judge] {key}: the llm judge's settings have their own table, [judge.llm], after "
            f"rag-regress 2.7 ({', '.join(moved)} here)",
            "run `rag-regress migrate`, which moves them, or move the lines under [judge.llm]",
            lines[key],
        )


def _judge_options(backend: str, tables: dict[str, dict[str, Any]], path: Path, text: str) -> dict[str, Any]:
    """The judges' own settings, by name, each validated by its module's model (own_settings):
    the configured judge's (from its table, else its defaults) and any other table written.
    Errors read like any setting's: [judge.NAME] key, line and fix."""
    found: dict[str, Any] = {}
    for name in dict.fromkeys([backend, *tables]):
        model, table = own_settings(name, path, line_of(text, ("judge", "backend"))), tables.get(name)
        if model is None:
            if table is not None:
                raise EvalInputError(
                    path,
                    f"[judge.{name}]: the {name!r} judge declares no settings of its own",
                    f"remove the table (the {name} judge reads [judge]'s settings)",
                    line_of(text, ("judge", name)),
                )
            continue
        try:
            adapter = TypeAdapter(model)
        except PydanticSchemaGenerationError:  # the judge's module breaks the contract
            raise EvalInputError(
                path,
                f"[judge] {name!r}: its module's Settings is no model of settings ({model!r})",
                "declare Settings as a pydantic model (or dataclass) of the judge's own settings",
                line_of(text, ("judge", name)),
            ) from None
        try:
            folder = {"folder": path.parent.resolve()}  # a path in it is relative to eval.toml
            found[name] = adapter.validate_python(table or {}, context=folder)
        except ValidationError as error:
            raise explain(error, path, text, model, ("judge", name)) from None
    return found


def load_config(path: Path = DEFAULT_PATH) -> Config:
    """Read and validate eval.toml. Raises EvalInputError naming the key and its line."""
    path = Path(path)
    # A regular file of at most CONFIG_LIMIT bytes: a FIFO or a device is exit 2, not a hang.
    raw = read_data(
        path, "config", limit=CONFIG_LIMIT, missing_fix="run from the project folder, or pass --config PATH"
    )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EvalInputError(path, f"cannot read the config: {error}", "save it as UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"line (\d+)", str(error))
        raise EvalInputError(
            path, f"not valid TOML: {error}", "fix the TOML syntax", int(line.group(1)) if line else None
        ) from None
    remember_secrets(data)

    folder = path.parent.resolve()
    _check_not_moved(data, path, text)
    data, own = _own_judge_tables(data)
    try:
        file = EvalFile.model_validate(with_judged_floor(data), context={"folder": folder})
    except ValidationError as error:
        raise explain(error, path, text) from None
    except (RuntimeError, OSError) as error:  # resolving a path met a symlink loop (3.11: RuntimeError)
        raise EvalInputError(
            path,
            f"a path in it cannot be followed: {error}",
            "remove that symlink loop, or name another file",
        ) from None
    check_part_options(file.system, {"retriever": file.retriever, "generation": file.generation}, path, text)
    local = folder / file.judge.model  # the NLI model may be a folder next to eval.toml
    judge = JudgeSettings(
        **vars(file.judge),
        load_from=str(local.resolve()) if local.is_dir() else file.judge.model,
        line=line_of(text, ("judge", "backend")),
        model_line=line_of(text, ("judge", "model")),
        own=_judge_options(file.judge.backend, own, path, text),
    )
    tables = {name: getattr(file, name) for name in EvalFile.model_fields}
    tables["golden_settings"] = tables.pop("golden")  # Config.golden is [data] golden's path
    return Config(
        **{**tables, "judge": judge},
        path=path.resolve(),
        metrics=file.every_metric(),
        text=text,
        written=_written(data, folder),
    )

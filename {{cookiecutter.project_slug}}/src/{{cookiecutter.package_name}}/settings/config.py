"""Read eval.toml: the one source of truth for the evaluation and the gate.

The command line, the nox sessions and the tests all call `load_config`, so what CI gates
is exactly what you run locally. Paths in the file are relative to the file itself. What the
file may hold is declared once, in schema.py; this module reads the file, validates it
against the schema and hands the engine a `Config`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..answers.settings import JudgeSettings
from ..errors import EvalInputError
from ..retrieval.names import Metric
from ..retrieval.tokens import TokenizerSettings
from .explain import explain
from .lines import line_of
from .schema import DataSettings, DisplaySettings, EvalFile, GateSettings, RetrievalSettings, StatsSettings

__all__ = ["DEFAULT_PATH", "Config", "GateSettings", "StatsSettings", "load_config"]

DEFAULT_PATH = Path("eval.toml")


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
    display: DisplaySettings
    metrics: list[Metric]  # every metric computed, in report order
    text: str = field(default="", repr=False, compare=False)  # eval.toml as read

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

    folder = path.parent.resolve()
    try:
        file = EvalFile.model_validate(data, context={"folder": folder})
    except ValidationError as error:
        raise explain(error, path, text) from None
    local = folder / file.judge.model  # the NLI model may be a folder next to eval.toml
    judge = JudgeSettings(
        **vars(file.judge),
        load_from=str(local.resolve()) if local.is_dir() else file.judge.model,
        line=line_of(text, ("judge", "backend")),
        model_line=line_of(text, ("judge", "model")),
    )
    tables = {name: getattr(file, name) for name in EvalFile.model_fields}
    return Config(**{**tables, "judge": judge}, path=path.resolve(), metrics=file.every_metric(), text=text)

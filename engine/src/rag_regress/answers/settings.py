"""The answer-side settings of eval.toml: the [judge] table, and the answer checks' names that
[gate] floors, checks and metrics may use. Part of the one schema of eval.toml (settings/schema.py),
which validates the file with pydantic; also home of the file-path type every table uses (this
is the lowest layer that needs it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)
from pydantic.dataclasses import dataclass

from .judges import backends, judged_names, versioned

# Per-question answer checks; their names may appear in [gate.floors], [gate.checks] and
# [gate] metrics. The report's aggregate holds their means.
ANSWER_CHECKS = {
    "abstention": "abstained exactly when the question is unanswerable (all questions)",
    "key_facts": "answer holds every must_include string (answerable questions)",
    "faithfulness": "share of answer sentences the contexts support (answered questions)",
}
DEFAULT_THRESHOLDS = {"lexical": 0.5, "nli": 0.5}  # lexical: max kappa on the tuning labels
DEFAULT_MODEL = "cross-encoder/nli-deberta-v3-small"

# A table of eval.toml: an unknown key is refused (a typo would otherwise be ignored), and
# defaults are validated like written values, so default paths are resolved too.
TABLE = ConfigDict(extra="forbid", validate_default=True)


def _settings_path(value: object, info: ValidationInfo) -> Path:
    """A path as written in eval.toml, resolved against the file's folder (the validation
    context's "folder"; without one, as given)."""
    if not isinstance(value, str | Path) or not str(value).strip() or "\x00" in str(value):
        raise ValueError(f"must be a file path, got {value!r}")
    folder = info.context.get("folder") if isinstance(info.context, dict) else None
    if not isinstance(folder, Path):
        return Path(value)
    try:
        return (folder / value).resolve()
    except (RuntimeError, OSError) as error:  # a symlink loop (3.11: RuntimeError): name the key
        raise ValueError(f"the path cannot be followed (a symlink loop?): {error}") from None


SettingsPath = Annotated[Path, BeforeValidator(_settings_path)]


def _default_threshold(backend: object) -> float:
    """Each judge's own default: their scores are on different scales."""
    return DEFAULT_THRESHOLDS["nli" if backend == "nli" else "lexical"]


@dataclass(frozen=True, config=TABLE)
class JudgeTable:
    """[judge] as written: which judge decides whether an answer sentence is supported."""

    backend: StrictStr = Field(default="lexical", description="the judge: `lexical` (word coverage) or `nli`")
    threshold: StrictFloat = Field(
        default_factory=lambda table: _default_threshold(table.get("backend")),
        ge=0,
        le=1,
        description="a sentence is supported when its best window scores at least this "
        "(default 0.5; `nox -s calibrate` measures it)",
    )
    model: StrictStr = Field(
        default=DEFAULT_MODEL, description="nli: a Hugging Face model id or a local folder"
    )
    revision: StrictStr | None = Field(
        default=None, description="nli: pin a branch, tag or commit of the model"
    )
    batch_size: StrictInt = Field(
        default=32, ge=1, le=4096, description="nli: claim-context pairs scored at once"
    )
    names: list[StrictStr] = Field(
        default_factory=list,
        examples=[["Acme"]],
        description="names any context may use though few documents say them: your product's name",
    )
    tiers: list[StrictStr] = Field(
        default_factory=list,
        examples=[["Solo", "Team", "Business", "Enterprise"]],
        description="your product's plans (or any tiers), lowest first: what "
        '"the Team plan and above" reaches',
    )
    cache: SettingsPath = Field(default=Path(".cache/verdicts.json"), description="verdicts already computed")
    labels: SettingsPath = Field(
        default=Path("evals/judge_labels.jsonl"), description="human-labelled claims for `nox -s calibrate`"
    )

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, backend: str) -> str:
        known = backends()
        if backend not in known:
            raise ValueError(f"unknown judge {backend!r}; one of: {', '.join(sorted(known))}")
        return backend

    @field_validator("names")
    @classmethod
    def _names_not_blank(cls, names: list[str]) -> list[str]:
        if any(not name.strip() for name in names):
            raise ValueError("must not hold a blank name")
        return names

    @field_validator("tiers")
    @classmethod
    def _tiers_distinct(cls, tiers: list[str]) -> list[str]:
        if any(not tier.strip() for tier in tiers):
            raise ValueError("must not hold a blank tier")
        keys = [tier.split()[-1].casefold() for tier in tiers]  # a tier is known by its last word
        repeated = sorted({tier for tier, key in zip(tiers, keys, strict=True) if keys.count(key) > 1})
        if repeated:
            raise ValueError(f"names {', '.join(map(repr, repeated))} more than once (by its last word)")
        if len(tiers) == 1:
            raise ValueError("must list at least two tiers, lowest first, or none")
        return tiers

    @field_validator("model", "revision")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank (leave the setting out for the default)")
        return value


@dataclass(frozen=True, config=TABLE)
class JudgeSettings(JudgeTable):
    """[judge] as the judges read it: the table, plus what load_config works out from it."""

    load_from: str = DEFAULT_MODEL  # the model id, or its folder resolved against eval.toml
    line: int | None = None  # where `backend` is set, for error messages
    model_line: int | None = None  # where `model` is set

    def identity(self) -> dict[str, Any]:
        """What produced the verdicts: recorded in every report, compared by the gate."""
        nli = self.backend == "nli"
        return {
            **versioned(self.backend),
            "model": self.model if nli else None,
            "revision": self.revision if nli else None,
            "threshold": self.threshold,
        } | judged_names(self.names, self.tiers)

"""The answer-side settings of eval.toml: the [judge] table, and the answer checks' names that
[gate] floors, checks and metrics may use. Part of the one schema of eval.toml (settings/schema.py),
which validates the file with pydantic; also home of the file-path type every table uses (this
is the lowest layer that needs it)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)
from pydantic.dataclasses import dataclass

from ..execution.team_trace import raised, team_code_error
from .judges import backends, judged_names, versioned

# Per-question answer checks; their names may appear in [gate.floors], [gate.checks] and
# [gate] metrics. The report's aggregate holds their means.
ANSWER_CHECKS = {
    "abstention": "abstained exactly when the question is unanswerable (all questions)",
    "key_facts": "answer holds every must_include string (answerable questions)",
    "faithfulness": "share of answer sentences the contexts support (answered questions)",
    "correctness": "share of the reference's sentences the answer states (questions with a reference)",
    "answer_precision": "share of the answer's sentences its reference states (answered, with a reference)",
    "answer_f1": "token F1 with the reference, SQuAD-normalised (questions with a reference)",
    "exact_match": "answer equals the reference, SQuAD-normalised (questions with a reference)",
    "nugget_recall": "share of the question's nuggets the answer holds (questions with nuggets)",
    "vital_recall": "share of the question's vital nuggets the answer holds",
    "citation_precision": "share of cited passages that support their sentence (answers that cite)",
    "citation_recall": "share of supported sentences citing a passage that supports them",
    "relevance": "share of the question's key terms the answer says (answered questions)",
    "well_formed": "answer output with no defect: empty, reasoning block, template token, echo, cut",
    "judged": "share of the answer's judge items the judge gave a verdict (a model may skip some)",
}
# Every judge's default (lexical: its kappa's maximum on the tuning labels; nli: an even
# entailment probability; llm: a majority of votes).
DEFAULT_THRESHOLD = 0.5
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


def judge_module(backend: str) -> ModuleType | None:
    """The module of judge `backend` (built in or registered by a package), or None when a
    library it needs is missing (building it says which). A module that fails otherwise (a
    syntax or name error: code the engine does not own) raises."""
    module = backends().get(backend)
    try:
        return importlib.import_module(module) if module else None
    except ImportError:
        return None


def own_settings(backend: str, config_path: Path, line: int | None) -> Any | None:
    """The model of judge `backend`'s own table, [judge.BACKEND]: the `Settings` class its
    module declares (a pydantic model or dataclass), or None when it declares none (lexical
    and nli: their settings are [judge]'s) or cannot be imported for a missing library.
    A module that fails otherwise is exit 2 at its own line, else at `config_path`:`line`."""
    try:
        return getattr(judge_module(backend), "Settings", None)
    except Exception as error:
        raise team_code_error(
            error,
            f"[judge] {backend!r}: its module {raised(error)} on import",
            "fix that module, or choose another judge",
            config_path,
            line,
        ) from None


@dataclass(frozen=True, config=TABLE)
class JudgeTable:
    """[judge] as written: which judge decides whether an answer sentence is supported."""

    backend: StrictStr = Field(
        default="lexical",
        description="the judge: `lexical` (word coverage), `nli`, or `llm` (a chat model behind an "
        "OpenAI-compatible API: docs/judges.md)",
    )
    threshold: StrictFloat = Field(
        default=DEFAULT_THRESHOLD,
        ge=0,
        le=1,
        description="a sentence is supported when its best window scores at least this "
        "(llm: its share of votes; default 0.5; `nox -s calibrate` measures it)",
    )
    model: StrictStr = Field(
        default=DEFAULT_MODEL,
        description="nli: a Hugging Face model id or a local folder (the llm judge's model is "
        "[judge.llm] model)",
    )
    revision: StrictStr | None = Field(
        default=None, description="nli: pin a branch, tag or commit of the model"
    )
    batch_size: StrictInt = Field(
        default=32, ge=1, le=4096, description="nli: claim-context pairs scored at once"
    )
    entailment: StrictStr | StrictInt | None = Field(
        default=None,
        examples=["entailment", "consistent", 1],
        description="nli: the model's output that means supported, by its label in the model's "
        "id2label or by index (default: the one label starting 'entail'; a model with one output: "
        "that output)",
    )
    fail_on: list[StrictStr] | None = Field(
        default=None,
        examples=[["number", "name", "polarity"]],
        description="the narrow checks' findings that fail a sentence, beside the backend's verdict "
        "(default: lexical all but order and condition, nli number and name, llm none; [] none)",
    )
    min_judged: StrictFloat = Field(
        default=0.95,
        ge=0,
        le=1,
        description="llm (and any judge that may give no verdict): the floor of `judged`, the share of "
        "the run's judge items given a verdict; below it the gate fails ([gate.floors] judged, when "
        "written, replaces it: `baseline --fit-floors` writes it there)",
    )
    min_kappa: StrictFloat = Field(
        default=0.4,
        ge=-1,
        le=1,
        description="a judge-based check (faithfulness, citations, correctness, answer_precision, facts "
        "matched by the judge) gates only when the judge's Cohen's kappa on the held-out labels of "
        "`labels` reaches this, with its 95% interval above 0; else it is advisory: shown, never failing",
    )
    min_labels: StrictInt = Field(
        default=50,
        ge=1,
        le=1_000_000,
        description="held-out labels (split check or holdout) of `labels` needed to measure the judge; "
        "fewer: not measured, and its checks advisory",
    )
    gate_unmeasured: StrictBool = Field(
        default=False,
        description="gate the judge-based checks though the judge's agreement with people was not "
        "measured or is below min_kappa (every view says so)",
    )
    match: StrictStr = Field(
        default="normalised",
        description="how key facts (must_include) and nuggets are found in an answer: `literal` (case "
        "and whitespace aside), `normalised` (also by word stems in order and numbers with units as "
        'values: "two days" holds "48 hours"), `judge` (also a paraphrase the judge accepts)',
    )
    names: list[StrictStr] = Field(
        default_factory=list,
        examples=[["Acme"]],
        description="names any context may use though few documents say them: your product's name",
    )
    tiers: list[StrictStr] | None = Field(default=None, description="removed in rag-regress 2.0")
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

    @field_validator("match")
    @classmethod
    def _known_match(cls, match: str) -> str:
        from .facts import MATCHES

        if match not in MATCHES:
            raise ValueError(f"unknown match {match!r}; one of: {', '.join(MATCHES)}")
        return match

    @field_validator("names")
    @classmethod
    def _names_not_blank(cls, names: list[str]) -> list[str]:
        if any(not name.strip() for name in names):
            raise ValueError("must not hold a blank name")
        return names

    @field_validator("tiers")
    @classmethod
    def _no_tiers(cls, tiers: list[str] | None) -> None:
        if tiers is not None:  # the judge reads no product's plans: they were one demo's rules
            raise ValueError(
                "was removed in rag-regress 2.0 (the judge reads no plan tiers); delete the line, "
                "or run `rag-regress migrate`"
            )
        return None

    @field_validator("fail_on")
    @classmethod
    def _known_findings(cls, names: list[str] | None) -> list[str] | None:
        from .judges.findings import FINDINGS

        unknown = sorted(set(names or ()) - set(FINDINGS))
        if unknown:
            raise ValueError(
                f"unknown finding {', '.join(map(repr, unknown))}; the findings are: {', '.join(FINDINGS)}"
            )
        return names

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
    # The own tables of judges a package registers, [judge.NAME], each validated by its
    # module's `Settings` (own_settings), by judge name: the configured one's always, when it
    # declares settings, and any other written (calibrate --compare judges them too).
    own: dict[str, Any] = Field(default_factory=dict)

    @property
    def options(self) -> Any:
        """The configured judge's own settings ([judge.BACKEND]); None when it declares none."""
        return self.own.get(self.backend)

    def failing(self) -> tuple[str, ...]:
        """The findings that fail a sentence: [judge] fail_on, else the judge's module's
        `FAIL_ON` (none declared: none)."""
        if self.fail_on is not None:
            return tuple(self.fail_on)
        return tuple(getattr(judge_module(self.backend), "FAIL_ON", ()))

    def identity(self) -> dict[str, Any]:
        """What produced the verdicts: recorded in every report, compared by the gate. A judge
        whose module declares `identity(settings)` (the llm judge's) says it whole."""
        own = getattr(judge_module(self.backend), "identity", None)
        if callable(own):
            return dict(own(self))
        nli = self.backend == "nli"
        found = {
            **versioned(self.backend),
            "model": self.model if nli else None,
            "revision": self.revision if nli else None,
            "threshold": self.threshold,
            "fail_on": list(self.failing()),
        }
        if nli and self.entailment is not None:
            found["entailment"] = self.entailment
        if self.options is not None:  # its own settings decide its verdicts too
            found["settings"] = TypeAdapter(type(self.options)).dump_python(self.options, mode="json")
        return found | judged_names(self.names)

"""The answer-side settings of eval.toml: [generation] and [judge], and the answer checks'
names that [gate] floors, checks and metrics may use. Read by config.load_config."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Per-question answer checks; their names may appear in [gate.floors], [gate.checks] and
# [gate] metrics. The report's aggregate holds their means.
ANSWER_CHECKS = {
    "abstention": "abstained exactly when the question is unanswerable (all questions)",
    "key_facts": "answer holds every must_include string (answerable questions)",
    "faithfulness": "share of answer sentences the contexts support (answered questions)",
}
BACKENDS = ("lexical", "nli")  # the judges of answers/judges/, by [judge] backend
JUDGE_KEYS = {"backend", "threshold", "model", "revision", "batch_size", "cache", "labels"}
DEFAULT_THRESHOLDS = {"lexical": 0.55, "nli": 0.5}
DEFAULT_MODEL = "cross-encoder/nli-deberta-v3-small"


@dataclass(frozen=True)
class JudgeSettings:
    backend: str = "lexical"
    threshold: float = DEFAULT_THRESHOLDS["lexical"]
    model: str = DEFAULT_MODEL  # nli only: a model id or a local folder, as written
    load_from: str = DEFAULT_MODEL  # the id, or the folder resolved against eval.toml
    revision: str | None = None  # nli only: a branch, tag or commit of the model
    batch_size: int = 32  # nli only
    cache: Path = Path(".cache/verdicts.json")
    labels: Path = Path("evals/judge_labels.jsonl")  # human labels for `calibrate`
    line: int | None = None  # where `backend` is set, for error messages
    model_line: int | None = None

    def identity(self) -> dict[str, Any]:
        """What produced the verdicts: recorded in every report, compared by the gate."""
        nli = self.backend == "nli"
        return {
            "name": self.backend,
            "model": self.model if nli else None,
            "revision": self.revision if nli else None,
            "threshold": self.threshold,
        }


def read_judge(read: Any, table: dict[str, Any]) -> JudgeSettings:
    """Validate the [judge] table with config's reader (errors name the key and its line)."""
    backend = table.get("backend", "lexical")
    if backend not in BACKENDS:
        raise read.fail("judge.backend", f"unknown judge {backend!r}", f"one of: {', '.join(BACKENDS)}")
    threshold = read.number(table.get("threshold", DEFAULT_THRESHOLDS[backend]), "judge.threshold", 0, 1)
    model, revision = table.get("model", DEFAULT_MODEL), table.get("revision")
    if not isinstance(model, str) or not model.strip():
        raise read.fail(
            "judge.model", f"must be a model id or folder, got {model!r}", f'model = "{DEFAULT_MODEL}"'
        )
    if revision is not None and (not isinstance(revision, str) or not revision.strip()):
        raise read.fail(
            "judge.revision", f"must be a branch, tag or commit, got {revision!r}", "or leave it out"
        )
    local = read.path.parent / model  # a local folder, relative to eval.toml
    return JudgeSettings(
        backend=backend,
        threshold=threshold,
        model=model,
        load_from=str(local.resolve()) if local.is_dir() else model,
        revision=revision,
        batch_size=read.integer(table, "judge", "batch_size", 32, 1),
        cache=read.path_setting(table, "cache", ".cache/verdicts.json", "judge"),
        labels=read.path_setting(table, "labels", "evals/judge_labels.jsonl", "judge"),
        line=read.line_of("judge.backend") or read.line_of("judge"),
        model_line=read.line_of("judge.model") or read.line_of("judge"),
    )

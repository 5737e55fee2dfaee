"""[judge.llm]: the LLM judge's own settings, the server it asks and how. [judge]'s settings
(threshold, fail_on, min_judged, min_kappa, names, cache, labels ...) apply as for any judge.

Validated when eval.toml is read whichever judge is configured, when the table is written
(so `calibrate --compare lexical,llm` can judge with it); required when backend = "llm".
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictInt, StrictStr, field_validator
from pydantic.dataclasses import dataclass

from ...errors import SettingError
from ...net.server_settings import (
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
from ..settings import TABLE, SettingsPath
from .prompt import read_prompt

# The keys that were [judge]'s before they were this table's (rag-regress 2.7 and earlier):
# `migrate` moves them, and eval.toml holding one in [judge] is told so.
MOVED = (
    "base_url",
    "api_key_env",
    "prompt",
    "votes",
    "temperature",
    "seed",
    "timeout",
    "retries",
    "backoff",
    "max_tokens",
    "concurrency",
    "rate_limit",
)


def moved_to_llm_table(judge: dict[str, Any]) -> list[str]:
    """The keys of [judge] (as read) that belong in [judge.llm] after rag-regress 2.7: the llm
    judge's server and sampling settings, and `model` where it was the llm judge's (that judge
    configured, or none that reads [judge] model)."""
    moved = [key for key in MOVED if key in judge]
    if "model" in judge and (judge.get("backend") == "llm" or (moved and judge.get("backend") != "nli")):
        moved.append("model")
    return moved


@dataclass(frozen=True, config=TABLE)
class Settings:
    """[judge.llm]: a chat model behind an OpenAI-compatible API (docs/judges.md)."""

    base_url: ServerAddress = Field(
        examples=["http://127.0.0.1:8000/v1"],
        description="the server's OpenAI-compatible API, up to /v1; requests go to "
        "{base_url}/chat/completions",
    )
    model: StrictStr = Field(
        examples=["llama3.1:8b"],
        description='the model the server serves (e.g. "llama3.1:8b" for Ollama, the served name for vLLM)',
    )
    api_key_env: KeyVariable = "OPENAI_API_KEY"
    prompt: SettingsPath | None = Field(
        default=None,
        examples=["evals/judge_prompt.txt"],
        description="a file whose text replaces the engine's prompt (its sha256 is in the identity)",
    )
    votes: StrictInt = Field(
        default=1,
        ge=1,
        le=25,
        description="requests per answer; a sentence's score is the share of them that found "
        "support (use an odd number, with temperature above 0)",
    )
    temperature: Temperature = 0.0
    seed: Seed = Field(default=0, description="the sampling seed (vote i sends seed + i)")
    timeout: Timeout = Field(
        default=60.0,
        description="seconds one verdict's request may take in all, from connecting to the last "
        "byte of the reply, retries included; then exit 2 naming the answer (0: no limit)",
    )
    retries: Retries = Field(
        default=3,
        description="attempts more after a 429, a 5xx or a connection error, within timeout; "
        "then exit 2 naming the answer",
    )
    backoff: Backoff = 1.0
    max_tokens: MaxTokens = Field(
        default=1024,
        description="the longest reply, in tokens (a reply cut there is counted, its sentences not "
        "judged; a server without a limit may write thousands of tokens for one request)",
    )
    concurrency: Concurrency = 4
    rate_limit: RateLimit = 0.0

    @field_validator("model")
    @classmethod
    def _not_blank(cls, model: str) -> str:
        if not model.strip():
            raise ValueError("must not be blank (the name of the model the server serves)")
        return model

    @field_validator("prompt")
    @classmethod
    def _a_prompt(cls, prompt: SettingsPath | None) -> SettingsPath | None:
        if prompt is not None:
            try:
                read_prompt(prompt)
            except ValueError as error:
                raise SettingError(str(error), "name a UTF-8 text file, relative to eval.toml") from None
        return prompt

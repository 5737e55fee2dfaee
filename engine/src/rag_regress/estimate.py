"""What a run will cost, worked out before any model call: `--dry-run` prints it, `[run]
max_cost` refuses a run above it (exit 2).

Per part (cost.py), from the golden set (and the holdout, for `gate`), never from a call:

  generator  one call per question not answered from the output cache, times [gate] repeats
             when the generator or the retriever is declared stochastic, plus the [gate]
             determinism_check re-asks of `gate`. What the generator is, is read from the
             object the [system] factory builds (with a retriever that finds nothing), so a
             team's build_generator returning the adapter counts as the adapter. For the
             shipped openai adapter: the prompt
             is its template with each question and `contexts` passages of the corpus' mean
             length (no retrieval is run), at 4 characters a token, or at the ratio the last
             report ([data] report) measured; completion tokens are [generation] max_tokens,
             or the mean per call the last report measured. The stand-in: nothing (it calls
             no model). Another generator: the tokens per call its last report measured
             (Answer.usage), else unknown.
  judge      a model judge ([judge] backend "llm") only: the tokens per question and requests
             the last report measured, times repeats when a part is stochastic; else unknown.

A question the verdict cache will answer is counted as judged again: the estimate is an
upper bound there. An unknown part, or a model without a [prices] entry, leaves the cost
unknown: max_cost then refuses to start, since the cost cannot be bounded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from . import cost
from .adapters import openai
from .answers import stand_in
from .answers.conversations import to_write, written_from
from .api import Document, Hit, System
from .errors import EvalInputError
from .inputs.data import Question
from .options import OptionsError
from .settings.config import Config
from .settings.part_options import option_error


@dataclass(frozen=True)
class Planned:
    """One part of an estimate; tokens None: unknown (`basis` says why)."""

    name: str
    calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str | None
    usd: float | None
    basis: str


class _NoSearch:
    """The retriever a generator is built with to read what it is: it finds nothing."""

    def search(self, question: str, depth: int) -> list[Hit]:
        return []


def last_cost(config: Config) -> dict[str, Any]:
    """The `run.cost` the last report at [data] report measured ({} when there is none)."""
    try:
        data = json.loads(config.report.read_text(encoding="utf-8"))
        found = data["run"]["cost"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return found if isinstance(found, dict) else {}


def _measured(entry: object) -> dict[str, float] | None:
    """Per call, what a report's part measured: prompt and completion tokens (None: nothing)."""
    if not isinstance(entry, dict):
        return None
    reported = entry.get("calls", 0) - entry.get("unreported", 0)
    prompt, completion = entry.get("prompt_tokens", 0), entry.get("completion_tokens", 0)
    if not isinstance(reported, int) or reported <= 0 or not prompt:
        return None
    return {"prompt": prompt / reported, "completion": completion / reported}


def generator_questions(
    config: Config,
    command: str,
    questions: Sequence[Question],
    holdout: Sequence[Question],
    cached: Callable[[str], str | None],
) -> list[Question]:
    """The questions the generator will be asked, one entry per call (module doc); `cached`:
    the output cache's answer to a turn (by Turn.key), None when it holds none."""
    stochastic = set(config.gate.stochastic)
    moving = bool({"retriever", "generator"} & stochastic)
    split = [*questions, *(holdout if command == "gate" else ())]
    if not moving:  # the assistant turns the cache already wrote (conversations.py)
        split = written_from(split, cached)
    fresh = [q for q in split if moving or cached(q.asked.key) is None]
    asked = fresh + split * ((config.gate.repeats - 1) if moving else 0)
    if command == "gate" and not moving:  # the determinism check re-asks questions asked this run
        chosen = [q for q in split[: len(questions)] if cached(q.asked.key) is None]
        asked += chosen[: config.gate.determinism_check]
    return asked + to_write(split)  # the assistant turns the golden set leaves to the system


def _said(question: Question) -> int:
    """The characters of a question's history that are known before the run (its user turns
    and the assistant turns the golden set writes), which the prompt carries too."""
    return sum(len(content or "") for _, content in question.history)


def _passages_characters(documents: Sequence[Document], contexts: int) -> int:
    """The length of `contexts` numbered passages of the corpus' mean length (openai.numbered)."""
    if not documents:
        return 0
    shown = [
        (len(d.title) + 1 if d.title else 0) + 1 + len(d.text if d.text.strip() else d.title)
        for d in documents
    ]
    count = min(contexts, len(documents))
    markers = sum(len(f"[{n}]") for n in range(1, count + 1))
    return round(count * fmean(shown)) + markers + 2 * (count - 1)


def _built(config: Config, system: System, corpus: dict[str, Document]) -> object:
    """The generator the team's factory makes, with a retriever that finds nothing, to read
    what it is: the shipped openai adapter (its prompt and max_tokens) or the stand-in,
    whether named in [system] or returned by the team's own build_generator. None when the
    factory cannot be built so (it searches while it builds, or fails): its cost is then what
    the last report measured, or unknown."""
    try:
        return system.build_generator(_NoSearch(), list(corpus.values()), config.generation)
    except OptionsError as error:  # the shipped parts' options, at their line
        raise option_error(config.path, config.text, "generation", error) from None
    except Exception:  # the team's code: a real run names its error at its line (team_trace)
        return None


def _generator(
    config: Config, system: System, corpus: dict[str, Document], asked: list[Question], last: dict[str, Any]
) -> Planned:
    measured = _measured(last.get("generator"))
    calls = len(asked)
    built = _built(config, system, corpus)
    if isinstance(built, stand_in.ExtractiveGenerator):  # it calls no model
        return Planned("generator", calls, 0, 0, None, 0.0, "the stand-in generator, which calls no model")
    if isinstance(built, openai.ChatGenerator):
        chat = built
        filler = "x" * _passages_characters(list(corpus.values()), chat.contexts)
        characters = sum(len(openai.render(chat.template, q.question, filler)) + _said(q) for q in asked)
        found = last.get("generator")
        entry: dict[str, Any] = found if isinstance(found, dict) else {}
        measured_characters = entry.get("prompt_characters", 0)
        if measured and measured_characters:
            ratio = entry["prompt_tokens"] / measured_characters
            per_token = f"{1 / ratio:.2f} characters a token (measured by the last report)"
        else:
            ratio = 1 / cost.CHARACTERS_PER_TOKEN
            per_token = f"{cost.CHARACTERS_PER_TOKEN} characters a token"
        prompt = round(characters * ratio)
        if measured:
            completion = round(measured["completion"] * calls)
            said = f"{measured['completion']:.0f} completion tokens a call (measured)"
        else:
            completion = chat.max_tokens * calls
            said = f"max_tokens ({chat.max_tokens}) a call"
        basis = (
            f"the prompt template with each question and {chat.contexts} passages of the corpus' mean "
            f"length (no retrieval run), {per_token}; {said}"
        )
        model: str | None = chat.model
    elif measured:
        prompt, completion = round(measured["prompt"] * calls), round(measured["completion"] * calls)
        model = last["generator"].get("model")
        basis = "the tokens a call the last report measured (Answer.usage)"
    else:
        why = "unknown: no report measured its tokens (a generator fills Answer.usage: docs/adapters.md)"
        return Planned("generator", calls, None, None, None, None, why)
    return Planned(
        "generator",
        calls,
        prompt,
        completion,
        model,
        cost.usd(config.prices, model, prompt, completion),
        basis,
    )


def _judge(config: Config, judged: int, last: dict[str, Any]) -> Planned | None:
    if config.judge.backend != "llm":
        return None
    model = config.judge.options.model  # [judge.llm]
    entry = last.get("judge")
    questions = entry.get("questions", 0) if isinstance(entry, dict) else 0
    if not isinstance(entry, dict) or not questions or not entry.get("calls"):
        why = "unknown: no earlier report ([data] report) measured the LLM judge's tokens per question"
        return Planned("judge", judged, None, None, model, None, why)
    calls = round(entry["calls"] / questions * judged)
    prompt = round(entry["prompt_tokens"] / questions * judged)
    completion = round(entry["completion_tokens"] / questions * judged)
    basis = "the tokens a question the last report measured (verdicts the cache holds counted again)"
    return Planned(
        "judge", calls, prompt, completion, model, cost.usd(config.prices, model, prompt, completion), basis
    )


def estimate_run(
    config: Config,
    system: System,
    command: str,
    corpus: dict[str, Document],
    questions: Sequence[Question],
    holdout: Sequence[Question] = (),
    cached: Callable[[str], str | None] = lambda key: None,
) -> list[Planned]:
    """The parts `command` (eval, baseline or gate) will call, estimated (module doc).
    `cached`: the output cache's answer to a turn (by Turn.key), None when it holds none."""
    last = last_cost(config)
    asked = generator_questions(config, command, questions, holdout, cached)
    parts = [_generator(config, system, corpus, asked, last)]
    split = len(questions) + (len(holdout) if command == "gate" else 0)
    repeats = config.gate.repeats if config.gate.stochastic else 1
    judge = _judge(config, split * repeats, last)
    return parts + ([judge] if judge is not None else [])


def total_usd(parts: Sequence[Planned]) -> float | None:
    """The estimate's cost; None when a part that will be called is unknown or has no price."""
    costs = [part.usd for part in parts if part.calls]
    return None if any(value is None for value in costs) else sum(value or 0.0 for value in costs)


def estimate_lines(parts: Sequence[Planned], command: str) -> list[str]:
    """The estimate, as --dry-run prints it."""
    lines = [f"Cost estimate of `{command}` (dry run: no model was called, nothing written):"]
    for part in parts:
        if part.prompt_tokens is None:
            lines.append(f"  {part.name}: {part.calls} calls, tokens {part.basis}")
            continue
        model = f", model {part.model!r}" if part.model else ""
        lines.append(
            f"  {part.name}: {part.calls} calls, ~{part.prompt_tokens:,} prompt + "
            f"{part.completion_tokens or 0:,} completion tokens{model}: {cost.dollars(part.usd, part.model)}"
        )
        lines.append(f"      from {part.basis}")
    whole = total_usd(parts)
    lines.append(f"  total: {cost.dollars(whole) if whole is not None else 'unknown (a part above is)'}")
    return lines


def require_within(config: Config, parts: Sequence[Planned]) -> None:
    """[run] max_cost: exit 2 (EvalInputError) before any model call when the estimate is
    above it, or when a part that will be called cannot be bounded."""
    limit = config.run.max_cost
    if limit is None:
        return
    line = config.line_of("run", "max_cost")
    for part in parts:
        if not part.calls:
            continue
        if part.prompt_tokens is None:
            raise EvalInputError(
                config.path,
                f"run.max_cost: the cost of this run cannot be bounded: the {part.name}'s tokens "
                f"are {part.basis}",
                "run it once without [run] max_cost so that its report measures them, or remove max_cost",
                line,
            )
        if part.usd is None:
            raise EvalInputError(
                config.path,
                f"run.max_cost: the cost of this run cannot be bounded: the {part.name}'s model "
                f"{part.model!r} has no price",
                f'add [prices] "{part.model}" = {{ input = ..., output = ... }} (USD per million tokens)',
                line,
            )
    whole = total_usd(parts) or 0.0
    if whole > limit:
        spent = ", ".join(f"{part.name} {cost.dollars(part.usd)}" for part in parts if part.calls)
        raise EvalInputError(
            config.path,
            f"run.max_cost: this run is estimated at {cost.dollars(whole)} ({spent}), above "
            f"[run] max_cost = {limit:g}; no model was called",
            "raise max_cost, or ask less (fewer questions, [gate] repeats, [generation] max_tokens); "
            "`--dry-run` shows the estimate",
            line,
        )

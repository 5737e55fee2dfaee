"""What a run's model calls cost: tokens counted per part, priced from eval.toml's [prices].

The parts: `generator` (the team's generator: the tokens each fresh Answer reports in
`Answer.usage`; answers served from the output cache cost nothing this run and are counted as
`cached`), `judge` (an LLM judge: the tokens its server reported) and `generate` (`golden
generate`: the tokens of its server, printed in its summary).

A part's cost is `prompt_tokens` x its model's `input` price plus `completion_tokens` x its
`output` price, both per million tokens. A part whose model has no entry under [prices] shows
"no price" (`usd` null), never a cost of 0: its tokens are still counted. The run's total is
null as soon as one part that spent tokens has no price.

`--dry-run` and `[run] max_cost` use the estimate of run.py (`estimate_run`), built from the
helpers here.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

MILLION = 1_000_000
CHARACTERS_PER_TOKEN = 4  # the default guess of --dry-run when no run has measured a part


class Price(Protocol):
    """One [prices] entry (settings/schema.py): USD per million input and output tokens."""

    @property
    def input(self) -> float: ...

    @property
    def output(self) -> float: ...


def _count(value: object) -> int:
    """A token count as reported: a non-negative whole number, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class Tally:
    """The usage of one part's calls, added up from any thread."""

    calls: int = 0  # calls that returned (an answer, a reply)
    reported: int = 0  # of them, those that reported their usage
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_characters: int = 0
    models: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, usage: Mapping[str, Any] | None) -> None:
        """One call that returned, with the usage it reported (None: none)."""
        with self.lock:
            self.calls += 1
            if not isinstance(usage, Mapping):
                return
            self.reported += 1
            self.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.completion_tokens += _count(usage.get("completion_tokens"))
            self.prompt_characters += _count(usage.get("prompt_characters"))
            model = usage.get("model")
            if isinstance(model, str) and model:
                self.models[model] += 1

    @property
    def model(self) -> str | None:
        """The model most calls named (None: none named)."""
        return self.models.most_common(1)[0][0] if self.models else None


def usd(prices: Mapping[str, Price], model: str | None, prompt: int, completion: int) -> float | None:
    """What `prompt` and `completion` tokens of `model` cost; None when it has no price (a part
    that spent nothing costs 0, priced or not)."""
    if not prompt and not completion:
        return 0.0
    price = prices.get(model) if model is not None else None
    if price is None:
        return None
    return (prompt * price.input + completion * price.output) / MILLION


def part(
    prices: Mapping[str, Price],
    calls: int,
    prompt: int,
    completion: int,
    model: str | None,
    **extra: Any,
) -> dict[str, Any]:
    """One part of the report's `run.cost`."""
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "model": model,
        "usd": usd(prices, model, prompt, completion),
        **extra,
    }


def total(parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The parts added up; `usd` null when one of them has no price."""
    costs = [entry["usd"] for entry in parts.values()]
    return {
        "calls": sum(entry["calls"] for entry in parts.values()),
        "prompt_tokens": sum(entry["prompt_tokens"] for entry in parts.values()),
        "completion_tokens": sum(entry["completion_tokens"] for entry in parts.values()),
        "usd": None if any(cost is None for cost in costs) else sum(costs),
    }


def dollars(value: float | None, model: str | None = None) -> str:
    """A cost as printed: "$0.0123", or "no price" naming the [prices] entry to add."""
    if value is None:
        named = f' (add [prices] "{model}")' if model else ""
        return f"no price{named}"
    return f"${value:,.4f}" if value < 100 else f"${value:,.2f}"


def part_line(name: str, entry: Mapping[str, Any]) -> str:
    """One part on the console: its calls, tokens, model and cost."""
    calls = entry["calls"]
    line = (
        f"Cost, {name}: {calls} call{'' if calls == 1 else 's'}, {entry['prompt_tokens']:,} prompt + "
        f"{entry['completion_tokens']:,} completion tokens"
    )
    if entry.get("cached"):
        line += f" ({entry['cached']} answers from the output cache: free)"
    if entry.get("model"):
        line += f", model {entry['model']!r}"
    unreported = entry.get("unreported")
    if unreported:
        line += f"; {unreported} call{'' if unreported == 1 else 's'} reported no usage"
    return f"{line}: {dollars(entry['usd'], entry.get('model'))}"


def cost_lines(section: Mapping[str, Any]) -> list[str]:
    """The report's `run.cost` on the console: one line per part, then the total."""
    lines = [part_line(name, entry) for name, entry in section.items() if name != "total"]
    whole = section.get("total")
    if whole is not None:
        lines.append(f"Cost, total: {whole['calls']} calls, {dollars(whole['usd'])}")
    return lines

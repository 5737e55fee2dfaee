"""The hidden holdout: a second golden file that only the gate evaluates.

Tune the retriever on the dev split ([data] golden, what `eval` shows); the gate also runs
the holdout ([data] holdout) and reports the dev - holdout gap of every gated metric. A dev
score that keeps climbing while the holdout stays put is overfitting to the dev questions.

A question in both splits (same id, or the same text up to case and spacing) would leak the
holdout into tuning, so it is an error naming the holdout file and line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .config import Config
from .data import Question, load_corpus, load_golden
from .errors import EvalInputError
from .evaluate import evaluate


def _text_key(question: Question) -> str:
    return " ".join(question.question.casefold().split())


def check_disjoint(dev: list[Question], holdout: list[Question], config: Config) -> None:
    """Raise EvalInputError at the first holdout question that is also in the dev split."""
    ids = {question.id: question for question in dev}
    texts = {_text_key(question): question for question in dev}
    for question in holdout:
        twin = ids.get(question.id)
        same = "id" if twin is not None else "question text"
        twin = twin or texts.get(_text_key(question))
        if twin is not None:
            raise EvalInputError(
                config.holdout or config.golden,
                f"question {question.id!r} has the same {same} as {twin.id!r} on line {twin.line} "
                f"of {config.golden.name}: a holdout question must not be in the dev split",
                "remove it from one of the two files (rename the id if the questions differ)",
                question.line,
            )


def evaluate_holdout(config: Config, dev_report: dict[str, Any]) -> dict[str, Any] | None:
    """Evaluate the holdout split; return its counts, aggregate and the dev - holdout gap.

    None when no holdout is configured.
    """
    if config.holdout is None:
        return None
    corpus = load_corpus(config.corpus)
    check_disjoint(load_golden(config.golden, corpus), load_golden(config.holdout, corpus), config)
    report = evaluate(dataclasses.replace(config, golden=config.holdout))
    gated = [str(metric) for metric in config.gate.metrics]
    return {
        "file": config.holdout.name,
        "counts": report["counts"],
        "aggregate": {name: report["aggregate"][name] for name in gated},
        "gap": {name: dev_report["aggregate"][name] - report["aggregate"][name] for name in gated},
    }


def format_holdout(holdout: dict[str, Any], dev_report: dict[str, Any]) -> str:
    """Dev vs holdout, one metric per line."""
    lines = [
        f"Holdout {holdout['file']}: {holdout['counts']['evaluated']} evaluated "
        f"(dev: {dev_report['counts']['evaluated']}); gap = dev - holdout",
        f"  {'metric':<12} {'dev':>7} {'holdout':>8} {'gap':>7}",
    ]
    for name, gap in holdout["gap"].items():
        lines.append(
            f"  {name:<12} {dev_report['aggregate'][name]:7.3f} {holdout['aggregate'][name]:8.3f} {gap:+7.3f}"
        )
    return "\n".join(lines)

"""Can this baseline be compared at all? It must reproduce its own numbers, and it must have
been measured the way this run measures.

The gate trusts a baseline's numbers; both checks below refuse (EvalInputError, exit 2,
nothing written) a baseline that would make that trust misplaced. The fix is the same for
both: remake it with `nox -s baseline`, review its diff, commit it.

`check_reproduces(baseline, path)`: the baseline's numbers must be what its own
  per-question rows give, computed as `evaluate` computes them:
    questions  each evaluated question's retrieval metrics, from the ranks of its relevant
               documents (`relevant_ranks`, or the retrieved ids) and their grades: every
               metric depends on nothing else (retrieval/batch.py). Skipped when the
               retriever is declared stochastic: its rows are means over repeats.
    judged     each question's judged@k, from the ranks of its judged documents (relevant
               and not_relevant), and the overall mean of judged@k (the pooling note reads them)
    counts     questions = rows; evaluated = rows with metrics; left_out = the rest
    aggregate  a retrieval metric: the mean over evaluated rows; an answer check: the mean
               over rows whose answer has a value for it (0.0 when none has)
    slices     per tag, the same counts and retrieval means over the rows with that tag
  A number edited by hand (an aggregate raised to pass a floor, a per-question value
  changed to hide a flip) breaks this. Tolerance: REL_TOL = 1e-9 relative (ABS_TOL = 1e-12
  near zero). The report stores every float exactly (JSON keeps 17 digits) and the mean is
  taken in the same order, so a file `baseline` wrote reproduces to the last bit; the
  tolerance only forgives a tool that rewrote the file with a few digits fewer, and is far
  below any edit that matters (one question's change on 10,000 questions is 1e-4).

`check_same_measurement(now, baseline, path)`: the settings that define what a metric's
  name measures must be the ones this run uses (`now`: this run's report settings):
    k          the "top k": found and missing ids, must-pass, the ranks the baseline keeps
    depth      how deep mrr, map, rprec and ndcg without a cutoff look, and how many results
               any metric can see
    ties       which order of tied scores is evaluated (trec_eval's or the retriever's)
    relevance_level  the lowest grade the binary metrics count as relevant
  A baseline that does not record ties or relevance_level (made before they existed) was
  measured with their defaults (`DEFAULTS`), so it stays comparable.
  The same name, say `mrr`, measured at depth 10 and at depth 100 is two different numbers.
  The judge and its threshold are compared by answer_rules.require_same_judge, the declared
  stochastic parts by rules.compare; tokenizer, retriever and generation settings are the
  system under test, which is what the gate compares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from statistics import fmean
from typing import Any

from ..answers.settings import ANSWER_CHECKS
from ..errors import EvalInputError
from ..inputs.reports import Counts, QuestionResult, Report
from ..retrieval.batch import judge_rankings
from ..retrieval.metrics import judged_at_k
from ..retrieval.names import Metric, compute, parse_metric

REL_TOL = 1e-9
ABS_TOL = 1e-12
REMAKE = "remake the baseline with `nox -s baseline` (review its diff) and commit it"
# The recorded settings that define what a metric name measures (module docstring), and the
# value a report that does not record one was measured with.
MEASUREMENT = ("k", "depth", "ties", "relevance_level")
DEFAULTS: dict[str, Any] = {"ties": "trec_eval", "relevance_level": 1}
SHOWN = 5  # mismatches listed in one message; the rest are counted
CHUNK = 1000  # questions whose rankings are rebuilt at once: bounds memory at depth 10,000


def _same(stored: float, recomputed: float) -> bool:
    return math.isclose(stored, recomputed, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _counts(rows: list[QuestionResult]) -> Counts:
    evaluated = sum(1 for row in rows if row.metrics is not None)
    return Counts(questions=len(rows), evaluated=evaluated, left_out=len(rows) - evaluated)


def _retrieval_mean(rows: list[QuestionResult], name: str) -> float | None:
    """The mean of retrieval metric `name` over the evaluated rows; None when no evaluated
    row has it (a row lacking it while others have it is refused by the report reader)."""
    values = [row.metrics[name] for row in rows if row.metrics is not None and name in row.metrics]
    return fmean(values) if values else None


def _answer_mean(rows: list[QuestionResult], name: str) -> float | None:
    """The mean of answer check `name` as evaluate_answers takes it; None without answers."""
    answers = [row.answer for row in rows if row.answer is not None]
    if not answers:
        return None
    values = [value for answer in answers if (value := answer.check(name)) is not None]
    return fmean(values) if values else 0.0


def _mean(rows: list[QuestionResult], name: str) -> float | None:
    return _answer_mean(rows, name) if name in ANSWER_CHECKS else _retrieval_mean(rows, name)


def _compare(where: str, stored: Mapping[str, float], rows: list[QuestionResult]) -> list[str]:
    found = []
    for name, value in stored.items():
        recomputed = _mean(rows, name)
        if recomputed is None:
            found.append(f"{where}{name} = {value!r} has no per-question values to come from")
        elif not _same(value, recomputed):
            found.append(f"{where}{name} = {value!r}, its questions give {recomputed!r}")
    return found


def _count_lines(where: str, stored: dict[str, int], rows: list[QuestionResult]) -> list[str]:
    recomputed = vars(_counts(rows))
    return [
        f"{where}{key} = {value}, its rows give {recomputed[key]}"
        for key, value in stored.items()
        if value != recomputed[key]
    ]


def _ranking(row: QuestionResult) -> list[str]:
    """A ranking with the row's judged documents at their ranks and "" (an id no corpus
    has, so unjudged) elsewhere, up to the deepest of them: all any metric reads (module docstring)."""
    ranks = {doc_id: rank for doc_id in row.qrels if (rank := row.rank_of(doc_id)) is not None}
    ranking = [""] * max(ranks.values(), default=0)
    for doc_id, rank in ranks.items():
        ranking[rank - 1] = doc_id
    return ranking


def _metrics(names: list[str]) -> list[Metric] | str:
    """The metrics named, or the first name that is not a metric as this tool writes it."""
    parsed = []
    for name in names:
        try:
            parsed.append(parse_metric(name))
        except ValueError:
            return name
        if str(parsed[-1]) != name:
            return name
    return parsed


def _rank_mismatches(rows: list[QuestionResult], metrics: list[Metric], level: int) -> list[str]:
    """Each of `rows`' stored `metrics` that the ranks of its relevant documents do not give
    (binary metrics counting grades >= `level`, the report's relevance_level)."""
    judged = judge_rankings([_ranking(row) for row in rows], [row.qrels for row in rows], level)
    values = compute(judged, metrics)
    found = []
    for i, row in enumerate(rows):
        stored = row.metrics or {}
        for name, column in values.items():
            if not _same(stored[name], given := float(column[i])):
                found.append(
                    f"question {row.id!r}: metrics.{name} = {stored[name]!r}, its ranks give {given!r}"
                )
    return found


def question_mismatches(report: Report) -> list[str]:
    """Each evaluated question whose stored metrics its ranks do not give (module docstring)."""
    stochastic = report.settings.get("stochastic") or {}
    if "retriever" in (stochastic.get("parts") or []):
        return []
    found: list[str] = []
    level = report.settings.get("relevance_level", DEFAULTS["relevance_level"])
    rows = [row for row in report.questions if row.metrics is not None]
    for start in range(0, len(rows), CHUNK):
        groups: dict[tuple[str, ...], list[QuestionResult]] = {}
        for row in rows[start : start + CHUNK]:  # one group in a report the tool wrote
            groups.setdefault(tuple(row.metrics or {}), []).append(row)
        for names, members in groups.items():
            metrics = _metrics(list(names))
            if isinstance(metrics, str):
                found.append(f"question {members[0].id!r}: {metrics!r} is not a metric name this tool writes")
            else:
                found += _rank_mismatches(members, metrics, level)
    return found


def _judged_lines(report: Report) -> list[str]:
    """Each question's judged@k that its ranks do not give, and the overall mean its rows do
    not give (a report written before judged@k has none: nothing to check)."""
    k = report.k
    found = [
        f"question {row.id!r}: judged = {row.judged!r}, its ranks give {given!r}"
        for row in report.questions
        if row.judged is not None and not _same(row.judged, given := judged_at_k(_ranking(row), row.qrels, k))
    ]
    judged = report.judged
    rows = [row.judged for row in report.questions if row.judged is not None]
    if judged is not None and rows and not _same(judged["mean"], fmean(rows)):
        found.append(f"judged.mean = {judged['mean']!r}, its questions give {fmean(rows)!r}")
    return found


def mismatches(report: Report) -> list[str]:
    """Every number of `report` its own rows do not reproduce (module docstring): questions
    first, then counts, aggregates and slices."""
    rows = report.questions
    found = question_mismatches(report)
    found += _judged_lines(report)
    found += _count_lines("counts.", vars(report.counts), rows)
    found += _compare("aggregate.", report.aggregate, rows)
    tags = sorted({tag for row in rows for tag in row.tags})
    for tag in sorted(set(report.slices) | set(tags)):
        members = [row for row in rows if tag in row.tags]
        piece = report.slices.get(tag)
        where = f"slices.{tag}."
        if piece is None:
            found.append(f"slices has no entry for tag {tag!r}, which {len(members)} question(s) carry")
            continue
        found += _count_lines(where, {"questions": piece.questions, "evaluated": piece.evaluated}, members)
        if piece.metrics is None:
            if any(row.metrics is not None for row in members):
                found.append(f"{where}metrics is null, but evaluated questions carry the tag")
        else:
            found += _compare(f"{where}metrics.", piece.metrics, members)
    return found


def check_reproduces(baseline: Report, path: Path) -> None:
    """Refuse (exit 2) a baseline whose counts, aggregates or slices are not what its own
    per-question rows give: it was edited by hand, or by a tool that changed the numbers."""
    found = mismatches(baseline)
    if not found:
        return
    more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    raise EvalInputError(
        path,
        "the baseline does not reproduce its own numbers (edited by hand?): "
        + "; ".join(found[:SHOWN])
        + more,
        REMAKE,
    )


def check_same_measurement(now: Mapping[str, Any], baseline: Report, path: Path) -> None:
    """Refuse (exit 2) a baseline measured with another k, depth, tie rule or relevance level
    than `now` (this run's report settings, or `Config.settings()` before the run): its
    metrics have the same names but measure something else."""
    changed = [
        f"{key} {before} -> {after}"
        for key in MEASUREMENT
        if (before := baseline.settings.get(key, DEFAULTS.get(key, "not recorded")))
        != (after := now.get(key, DEFAULTS.get(key, "not recorded")))
    ]
    if changed:
        raise EvalInputError(
            path,
            "the baseline was measured with other [retrieval] settings ("
            + "; ".join(changed)
            + "): its metrics have the same names but measure something else",
            REMAKE,
        )

"""`compare`: accept or reject a candidate run against a baseline run, both judged by one qrels.

For runs made by any system (TREC or JSON files, see trec.py), in three steps:

1. Validate before scoring, so that no number is computed from a broken experiment: every
   query has a relevant document, both runs rank exactly the qrels' queries, and each
   ranks at least k documents per query (duplicate labels and duplicate ranked ids are
   refused when the files are read). Any problem: EvalInputError, exit 2.
2. Score both runs at cutoff k, per query (found and missing relevant ids, metrics) and as
   macro averages over queries, with the batch scorer that `eval` and `gate` use
   (retrieval/batch.py), so a metric has the same value here as in their reports.
3. Accept the candidate only when recall@k and mrr@k are not lower than the baseline's and
   every must-pass query has a relevant document in its top k: the rules of
   gate/acceptance.py, shared with the gate. Averages alone are not enough: a candidate can
   raise MRR while losing a query that matters.

The console shows the summary first (macro averages, checks, verdict), then the queries a
reader needs: those whose results differ between the two runs or that fail a check, with
long id lists cut short (`--all`: every query, every id). Exit 0 accepted, 3 rejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from ..errors import EvalInputError, ExitCode
from ..gate.acceptance import must_pass_missed, not_lower
from ..inputs.files import write_atomic
from ..render.table import aligned
from ..retrieval.batch import judge_rankings
from ..retrieval.names import Metric, compute, parse_metric
from ..retrieval.ranking import found_and_missing
from .trec import AllQrels, Run, load_qrels, load_runs

# Ids shown per list on the console before "... and N more" (--all shows them all).
SHOWN_IDS = 5


def compare_metrics(k: int) -> list[Metric]:
    """What `compare` reports, at cutoff k. The first two are gated (must not be lower)."""
    return [parse_metric(f"{name}@{k}") for name in ("recall", "mrr", "precision", "hit", "ndcg")]


@dataclass(frozen=True)
class QueryScore:
    qid: str
    found: list[str]  # relevant ids in the top k, best first
    missing: list[str]  # relevant ids not in the top k, highest grade first
    metrics: dict[str, float]


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Comparison:
    k: int
    baseline: str
    candidate: str
    scores: dict[str, list[QueryScore]]  # run name -> one row per query, in qrels order
    macro: dict[str, dict[str, float]]  # run name -> metric -> mean over queries
    checks: list[Check]

    @property
    def accepted(self) -> bool:
        return all(check.passed for check in self.checks)

    def missed(self, run: str) -> list[str]:
        """Queries with no relevant document in the run's top k."""
        return [row.qid for row in self.scores[run] if not row.found]


def load_inputs(qrels_path: Path, runs_paths: list[Path]) -> tuple[AllQrels, dict[str, Run], dict[str, Path]]:
    """Read the qrels and every run file; returns qrels, {run name: run}, {run name: its file}."""
    qrels = load_qrels(qrels_path)
    runs: dict[str, Run] = {}
    sources: dict[str, Path] = {}
    for path in runs_paths:
        for name, run in load_runs(path).items():
            if name in runs:
                raise EvalInputError(
                    path,
                    f"a run named {name!r} is also in {sources[name]}",
                    "give each run its own name (TREC: the last column; JSON: the top-level key)",
                )
            runs[name], sources[name] = run, path
    return qrels, runs, sources


def validate(
    qrels: AllQrels,
    runs: dict[str, Run],
    sources: dict[str, Path],
    qrels_path: Path,
    names: tuple[str, str],
    k: int,
    must_pass: list[str],
) -> None:
    """Refuse (EvalInputError) any input that would make the comparison meaningless."""
    for qid, judged in qrels.items():
        if not any(grade >= 1 for grade in judged.values()):
            raise EvalInputError(
                qrels_path,
                f"query {qid!r} has no relevant document (grade 1 or more)",
                "label its relevant documents, or remove the query",
            )
    for qid in must_pass:
        if qid not in qrels:
            raise EvalInputError(qrels_path, f"must-pass query {qid!r} is not in the qrels", "check the id")
    files = ", ".join(str(path) for path in dict.fromkeys(sources.values()))
    for name in names:
        if name not in runs:
            raise EvalInputError(
                files or "--runs", f"no run named {name!r}", f"use one of: {', '.join(sorted(runs))}"
            )
        run = runs[name]
        lacking = [qid for qid in qrels if qid not in run]
        extra = [qid for qid in run if qid not in qrels]
        if lacking or extra:
            parts = [f"lacks {len(lacking)} qrels queries ({', '.join(lacking[:5])})"] if lacking else []
            parts += [f"has {len(extra)} queries not in the qrels ({', '.join(extra[:5])})"] if extra else []
            raise EvalInputError(
                sources[name],
                f"run {name!r} {' and '.join(parts)}",
                "score every run on exactly the qrels' queries; averages over different queries "
                "are not comparable",
            )
        for qid, ranking in run.items():
            if len(ranking) < k:
                raise EvalInputError(
                    sources[name],
                    f"run {name!r}, query {qid!r}: ranks {len(ranking)} documents, fewer than k={k}",
                    f"have the system return at least {k} documents per query, or lower --k",
                )


def score_run(qrels: AllQrels, run: Run, k: int) -> list[QueryScore]:
    """Per-query found/missing ids and metrics at cutoff k, in qrels order. The metrics come
    from the batch scorer, as in `eval`: the same numbers for the same rankings."""
    rankings = [run.get(qid, []) for qid in qrels]
    values = compute(judge_rankings(rankings, list(qrels.values())), compare_metrics(k))
    columns = {name: column.tolist() for name, column in values.items()}  # Python floats
    rows = []
    for i, (qid, ranking) in enumerate(zip(qrels, rankings, strict=True)):
        found, missing = found_and_missing(ranking, qrels[qid], k)
        rows.append(QueryScore(qid, found, missing, {name: column[i] for name, column in columns.items()}))
    return rows


def compare_runs(
    qrels: AllQrels, runs: dict[str, Run], baseline: str, candidate: str, k: int, must_pass: list[str]
) -> Comparison:
    """Score both runs and apply the three checks. Call `validate` first."""
    scores = {name: score_run(qrels, runs[name], k) for name in (baseline, candidate)}
    macro = {
        name: {str(m): fmean(row.metrics[str(m)] for row in rows) for m in compare_metrics(k)}
        for name, rows in scores.items()
    }
    checks = []
    for metric in compare_metrics(k)[:2]:
        before, after = macro[baseline][str(metric)], macro[candidate][str(metric)]
        checks.append(Check(f"{metric} not lower", not_lower(before, after), f"{before:.4f} -> {after:.4f}"))
    missed = must_pass_missed(must_pass, {row.qid: row.found for row in scores[candidate]})
    detail = f"missed: {', '.join(missed)}" if missed else f"{len(must_pass)} of {len(must_pass)} hit"
    checks.append(Check(f"must-pass queries hit in the top {k}", not missed, detail))
    return Comparison(k, baseline, candidate, scores, macro, checks)


def _ids(ids: list[str], shown: int | None) -> str:
    """Comma-separated ids; past `shown` of them (None: no limit), a count of the rest."""
    if not ids:
        return "-"
    if shown is None or len(ids) <= shown:
        return ", ".join(ids)
    return f"{', '.join(ids[:shown])} ... and {len(ids) - shown} more"


def _differs(base: QueryScore, cand: QueryScore) -> bool:
    return (base.found, base.missing, base.metrics) != (cand.found, cand.missing, cand.metrics)


def format_comparison(result: Comparison, must_pass: list[str], show_all: bool = False) -> str:
    """The human-readable verdict: macro metrics, checks and decision first, then per-query
    ids. Unless `show_all`, only the queries whose results differ between the runs or that
    fail a check (a must-pass query the candidate misses) are listed, each id list cut to
    SHOWN_IDS ids and a count: a classic test collection has hundreds of relevant documents
    per query, and the queries that did not change say nothing about the change."""
    names = (result.baseline, result.candidate)
    width = max(len(name) for name in names)  # the per-query lines' run names, aligned
    shown = None if show_all else SHOWN_IDS
    total = len(result.scores[result.baseline])
    lines = [f"Macro averages over {total} queries"]
    macro: list[list[object]] = [["metric", *names, "delta"]]
    for metric in compare_metrics(result.k):
        before, after = (result.macro[name][str(metric)] for name in names)
        macro.append([metric, f"{before:.4f}", f"{after:.4f}", f"{after - before:+.4f}"])
    lines += aligned(macro, right={1, 2, 3})
    lines += ["", "Checks"]
    lines += [f"  {'PASS' if c.passed else 'FAIL'}  {c.name} ({c.detail})" for c in result.checks]
    missed = result.missed(result.candidate)
    if missed:
        lines.append(f"Candidate finds no relevant document in the top {result.k} for: {_ids(missed, shown)}")
    verdict = "ACCEPTED" if result.accepted else "REJECTED"
    lines += ["", f"{verdict}: {result.candidate} against {result.baseline}", ""]

    rows = list(zip(*(result.scores[name] for name in names), strict=True))
    missed_must_pass = set(must_pass) & set(missed)
    if not show_all:
        rows = [(b, c) for b, c in rows if _differs(b, c) or b.qid in missed_must_pass]
    lines.append(f"Per query: relevant documents found in / missing from the top {result.k}")
    if not show_all:
        lines.append(
            f"({len(rows)} of {total} queries: those that differ between the runs or fail a check; "
            "--all shows every query and every id)"
        )
    for base_row, cand_row in rows:
        flag = "  [must pass]" if base_row.qid in must_pass else ""
        lines.append(f"  {base_row.qid}{flag}")
        for name, row in zip(names, (base_row, cand_row), strict=True):
            rr = row.metrics[f"mrr@{result.k}"]
            lines.append(
                f"    {name:<{width}}  rr {rr:.3f}  found: {_ids(row.found, shown)}  "
                f"missing: {_ids(row.missing, shown)}"
            )
    return "\n".join(lines)


def to_json(result: Comparison) -> dict[str, Any]:
    """The machine-readable receipt of a comparison."""
    return {
        "k": result.k,
        "baseline": result.baseline,
        "candidate": result.candidate,
        "macro": result.macro,
        "queries": {
            name: [
                {"query": row.qid, "found": row.found, "missing": row.missing, "metrics": row.metrics}
                for row in rows
            ]
            for name, rows in result.scores.items()
        },
        "failed_queries": result.missed(result.candidate),
        "checks": {check.name: check.passed for check in result.checks},
        "accepted": result.accepted,
    }


def run_compare(
    qrels_path: Path,
    runs_paths: list[Path],
    baseline: str,
    candidate: str,
    k: int,
    must_pass: list[str],
    output: Path | None = None,
    show_all: bool = False,
) -> ExitCode:
    """The `compare` command: validate, score, print (`show_all`: every query and id); exit
    code OK or REGRESSION."""
    qrels, runs, sources = load_inputs(qrels_path, runs_paths)
    must_pass = list(dict.fromkeys(must_pass))
    validate(qrels, runs, sources, qrels_path, (baseline, candidate), k, must_pass)
    result = compare_runs(qrels, runs, baseline, candidate, k, must_pass)
    print(format_comparison(result, must_pass, show_all))
    if output is not None:
        write_atomic(output, json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {output}")
    return ExitCode.OK if result.accepted else ExitCode.REGRESSION

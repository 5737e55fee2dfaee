"""`compare`: accept or reject a candidate run against a baseline run, both judged by one qrels.

For runs made by any system (TREC or JSON files, see trec.py), in three steps:

1. Validate before scoring, so that no number is computed from a broken experiment: every
   query has a relevant document, both runs rank exactly the qrels' queries, and each
   ranks at least k documents per query (duplicate labels and duplicate ranked ids are
   refused when the files are read). Any problem: EvalInputError, exit 2.
2. Score both runs at cutoff k, per query (found and missing relevant ids, metrics) and as
   macro averages over queries, with the functions in metrics.py.
3. Accept the candidate only when recall@k and mrr@k are not lower than the baseline's and
   every must-pass query has a relevant document in its top k. Averages alone are not
   enough: a candidate can raise MRR while losing a query that matters.

Exit 0 accepted, 3 rejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from ..errors import EvalInputError, ExitCode
from ..inputs.files import write_atomic
from ..retrieval.names import Metric, parse_metric
from .trec import AllQrels, Run, load_qrels, load_runs

# Equal averages computed in a different order may differ in the last bit; that is not lower.
EPSILON = 1e-12


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
    """Per-query found/missing ids and metrics at cutoff k, in qrels order."""
    rows = []
    for qid, judged in qrels.items():
        ranking = run.get(qid, [])
        top = ranking[:k]
        relevant = {doc_id: grade for doc_id, grade in judged.items() if grade >= 1}
        rows.append(
            QueryScore(
                qid=qid,
                found=[doc_id for doc_id in top if doc_id in relevant],
                missing=sorted(set(relevant) - set(top), key=lambda doc_id: (-relevant[doc_id], doc_id)),
                metrics={str(metric): metric(ranking, judged) for metric in compare_metrics(k)},
            )
        )
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
        checks.append(Check(f"{metric} not lower", after >= before - EPSILON, f"{before:.4f} -> {after:.4f}"))
    hit = {row.qid: bool(row.found) for row in scores[candidate]}
    missed = [qid for qid in must_pass if not hit[qid]]
    detail = f"missed: {', '.join(missed)}" if missed else f"{len(must_pass)} of {len(must_pass)} hit"
    checks.append(Check(f"must-pass queries hit in the top {k}", not missed, detail))
    return Comparison(k, baseline, candidate, scores, macro, checks)


def _ids(ids: list[str]) -> str:
    return ", ".join(ids) if ids else "-"


def format_comparison(result: Comparison, must_pass: list[str]) -> str:
    """The human-readable verdict: per-query ids, macro metrics, checks, decision."""
    names = (result.baseline, result.candidate)
    width = max(len(name) for name in names)
    lines = [f"Per query: relevant documents found in / missing from the top {result.k}"]
    for base_row, cand_row in zip(*(result.scores[name] for name in names), strict=True):
        flag = "  [must pass]" if base_row.qid in must_pass else ""
        lines.append(f"  {base_row.qid}{flag}")
        for name, row in zip(names, (base_row, cand_row), strict=True):
            rr = row.metrics[f"mrr@{result.k}"]
            lines.append(
                f"    {name:<{width}}  rr {rr:.3f}  found: {_ids(row.found)}  missing: {_ids(row.missing)}"
            )
    lines += ["", f"Macro averages over {len(result.scores[result.baseline])} queries"]
    lines.append(f"  {'metric':<12} {result.baseline:>{width}} {result.candidate:>{width}}   delta")
    for metric in compare_metrics(result.k):
        before, after = (result.macro[name][str(metric)] for name in names)
        lines.append(f"  {metric!s:<12} {before:>{width}.4f} {after:>{width}.4f} {after - before:+8.4f}")
    lines += ["", "Checks"]
    lines += [f"  {'PASS' if c.passed else 'FAIL'}  {c.name} ({c.detail})" for c in result.checks]
    missed = result.missed(result.candidate)
    if missed:
        lines.append(f"Candidate finds no relevant document in the top {result.k} for: {', '.join(missed)}")
    verdict = "ACCEPTED" if result.accepted else "REJECTED"
    lines += ["", f"{verdict}: {result.candidate} against {result.baseline}"]
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
) -> ExitCode:
    """The `compare` command: validate, score, print; exit code OK or REGRESSION."""
    qrels, runs, sources = load_inputs(qrels_path, runs_paths)
    must_pass = list(dict.fromkeys(must_pass))
    validate(qrels, runs, sources, qrels_path, (baseline, candidate), k, must_pass)
    result = compare_runs(qrels, runs, baseline, candidate, k, must_pass)
    print(format_comparison(result, must_pass))
    if output is not None:
        write_atomic(output, json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {output}")
    return ExitCode.OK if result.accepted else ExitCode.REGRESSION

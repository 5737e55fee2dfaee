"""Metric evaluation speed: our batch path against pytrec_eval and ranx, same input, same values.

Each scale runs in a fresh process (so one tool's leftovers cannot inflate another's peak
memory). The input is the common one: a run {query: {doc: score}} and qrels
{query: {doc: grade}} as Python dicts; every tool's time starts from those dicts and ends
with per-query values. Values are asserted equal (1e-9) across the three tools.
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# (ours, pytrec_eval, ranx) names of each benchmarked metric
METRICS = [
    ("ndcg@10", "ndcg_cut_10", "ndcg@10"),
    ("recall@100", "recall_100", "recall@100"),
    ("mrr", "recip_rank", "mrr"),
    ("map", "map", "map"),
    ("precision@10", "P_10", "precision@10"),
]
SCALES = [(1_000, 100), (10_000, 1_000), (100_000, 100)]


def make_input(queries: int, depth: int, seed: int = 0) -> tuple[dict, dict]:
    """A run with distinct scores (no ties: the tools break ties differently), best first, and graded qrels:
    1-10 relevant documents per query (grades 1-3), some retrieved, some not, plus grade-0
    judgements."""
    rng = np.random.default_rng(seed)
    pool = [f"doc{i}" for i in range(max(100_000, depth * 10))]
    run, qrels = {}, {}
    for q in range(queries):
        qid = f"q{q}"
        docs = rng.choice(len(pool), size=depth + 10, replace=False)
        # Distinct even in float32: trec_eval (so pytrec_eval) stores scores as C floats, and
        # scores equal in float32 would tie there but not in float64 (ours, ranx).
        scores = (np.arange(depth)[::-1] + rng.random(depth) * 0.5).astype(np.float32).astype(float)
        run[qid] = {pool[d]: float(s) for d, s in zip(docs[:depth], scores, strict=True)}
        n_rel = int(rng.integers(1, 11))
        positions = rng.choice(depth + 10, size=n_rel, replace=False)  # beyond depth: not retrieved
        judged = {pool[docs[p]]: int(rng.integers(1, 4)) for p in positions}
        for p in rng.choice(depth, size=3, replace=False):
            judged.setdefault(pool[docs[p]], 0)
        qrels[qid] = judged
    return run, qrels


def _memory_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    raise RuntimeError(field)


def measure(function: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Median seconds of `repeat` runs, peak extra memory (MiB, RSS high-water mark above the
    memory in use before the run: catches C/C++ allocations too), and the last result."""
    times, peak, result = [], 0.0, None
    for _ in range(repeat):
        result = None
        gc.collect()
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")  # reset the RSS high-water mark (Linux)
        before = _memory_kib("VmRSS:")
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
        peak = max(peak, (_memory_kib("VmHWM:") - before) / 1024)
    return statistics.median(times), peak, result


def ours(package: str, run: dict, qrels: dict) -> dict[str, dict[str, float]]:
    batch = importlib.import_module(f"{package}.retrieval.batch")
    names = importlib.import_module(f"{package}.retrieval.names")
    ids, judged = batch.judge_run(run, qrels)
    values = names.compute(judged, [names.parse_metric(m) for m, _, _ in METRICS])
    return {"ids": ids, **values}


def pytrec(run: dict, qrels: dict) -> dict:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {p for _, p, _ in METRICS})
    return evaluator.evaluate(run)


def ranx_eval(run: dict, qrels: dict) -> dict:
    import ranx

    ranx_run = ranx.Run(run)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, [r for _, _, r in METRICS], save_results_in_run=True)
    return ranx_run.scores


def ranx_warmup() -> float:
    """ranx compiles its numba functions on first use: time that once, apart."""
    run, qrels = make_input(10, 20, seed=1)
    start = time.perf_counter()
    ranx_eval(run, qrels)
    return time.perf_counter() - start


def check_equal(mine: dict, theirs_pytrec: dict, theirs_ranx: dict) -> None:
    for i, qid in enumerate(mine["ids"]):
        for name, p, r in METRICS:
            value = mine[name][i]
            assert abs(value - theirs_pytrec[qid][p]) <= 1e-9, (qid, name, value, theirs_pytrec[qid][p])
            assert abs(value - theirs_ranx[r][qid]) <= 1e-9, (qid, name, value, theirs_ranx[r][qid])


def one_scale(package: str, queries: int, depth: int, repeat: int, out: Any) -> None:
    run, qrels = make_input(queries, depth)
    warmup = ranx_warmup()
    rows = {}
    results = {}
    for tool, function in (
        ("ours", lambda: ours(package, run, qrels)),
        ("pytrec_eval", lambda: pytrec(run, qrels)),
        ("ranx", lambda: ranx_eval(run, qrels)),
    ):
        seconds, peak, result = measure(function, repeat)
        rows[tool] = (seconds, peak)
        results[tool] = result
    check_equal(results["ours"], results["pytrec_eval"], results["ranx"])
    out.send({"rows": rows, "warmup": warmup})


def run_all(package: str, repeat: int, scales: list[tuple[int, int]] = SCALES) -> list[str]:
    """Table lines: one row per scale, seconds and MiB per tool, and our speed-up ratios."""
    context = multiprocessing.get_context("spawn")
    lines = [
        f"Metrics {', '.join(m for m, _, _ in METRICS)} from dicts; median of {repeat}; "
        "values asserted equal to 1e-9 across all three",
        f"{'queries x depth':>16} | {'ours s':>8} {'pytrec s':>9} {'ranx s':>8} | "
        f"{'pytrec/ours':>11} {'ranx/ours':>9} | {'MiB ours':>8} {'pytrec':>7} {'ranx':>7} | ranx JIT s",
    ]
    for queries, depth in scales:
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=one_scale, args=(package, queries, depth, repeat, send))
        process.start()
        send.close()  # the child holds the other end: if it fails, recv raises instead of waiting
        result = receive.recv()
        process.join()
        rows = result["rows"]
        ours_s, pytrec_s, ranx_s = (rows[t][0] for t in ("ours", "pytrec_eval", "ranx"))
        lines.append(
            f"{f'{queries:,} x {depth:,}':>16} | {ours_s:8.3f} {pytrec_s:9.3f} {ranx_s:8.3f} | "
            f"{pytrec_s / ours_s:10.1f}x {ranx_s / ours_s:8.1f}x | "
            f"{rows['ours'][1]:8.0f} {rows['pytrec_eval'][1]:7.0f} {rows['ranx'][1]:7.0f} | "
            f"{result['warmup']:.2f}"
        )
    return lines

"""The dense retriever's precisions side by side on BEIR SciFact: documents/s, index seconds, nDCG@10.

Each `[retriever] precision` (float32, the default, and bfloat16) builds the dense retriever
on SciFact's 5,183 documents with an empty embedding cache of its own (a cold run: every
document is encoded), then answers the 300 test queries at depth 100. The model is loaded
and warmed up before the clock starts, so index seconds are encoding (and writing the cache)
only. Documents/s is the line the retriever prints; per CPU-second counts the process's CPU
time instead of the wall clock, which other work on a shared machine disturbs less (torch
runs on every core, so on an idle machine it is about the wall-clock figure divided by the
cores). The last lines give the ratios and how far the two sets of vectors and rankings agree.

    HF_HUB_OFFLINE=1 python bench/dense_bench.py --package rag_regress --scifact <folder of SciFact>
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from retrieval_bench import load_scifact

DEPTH = 100
PRECISIONS = ("float32", "bfloat16")


def run(package: str, scifact: Path, precision: str, limit: int) -> dict[str, Any]:
    data = importlib.import_module(f"{package}.inputs.data")
    batch = importlib.import_module(f"{package}.retrieval.batch")
    names = importlib.import_module(f"{package}.retrieval.names")
    ranking = importlib.import_module(f"{package}.retrieval.ranking")
    dense = importlib.import_module(f"{package}.retrieval.retrievers.dense")
    corpus_path, queries, qrels = load_scifact(scifact)
    documents = list(data.load_corpus(corpus_path).values())[: limit or None]
    options = dense.Options(precision=precision)
    dense.load_model(options).encode(["warm up", "the model before timing"])  # loaded once, cached
    with tempfile.TemporaryDirectory() as cache:
        load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        retriever = dense.DenseRetriever(documents, dense.Options(precision=precision, cache_dir=cache))
        index_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    ids = list(qrels)
    start = time.perf_counter()
    rankings = [
        [hit.doc_id for hit in hits]
        for hits in ranking.search_all(retriever, [queries[q] for q in ids], DEPTH)
    ]
    search_s = time.perf_counter() - start
    metrics = [names.parse_metric(m) for m in ("ndcg@10", "recall@100")]
    values = names.compute(batch.judge_rankings(rankings, [qrels[q] for q in ids]), metrics)
    encoded = retriever.encoding.encoded
    return {
        "documents": len(documents),
        "index_s": index_s,
        "docs_per_s": encoded / retriever.encoding.seconds,
        "docs_per_cpu_s": encoded / cpu_s,
        "qps": len(ids) / search_s,
        "ndcg@10": float(values["ndcg@10"].mean()),
        "recall@100": float(values["recall@100"].mean()),
        "load": load,
        "embeddings": retriever.embeddings,
        "rankings": rankings,
    }


def table(package: str, scifact: Path, limit: int) -> tuple[list[str], dict[str, float]]:
    results = {precision: run(package, scifact, precision, limit) for precision in PRECISIONS}
    base, fast = (results[p] for p in PRECISIONS)
    lines = [
        f"SciFact (BEIR test, {scifact}): 300 queries, {base['documents']:,} documents, "
        f"cold embedding cache, {os.cpu_count()} cores",
        f"{'dense precision':<16} | {'docs/s':>7} {'per CPU-s':>9} {'index s':>8} {'queries/s':>9} | "
        f"{'nDCG@10':>8} {'R@100':>6} | load avg",
    ]
    for precision, result in results.items():
        lines.append(
            f"{precision:<16} | {result['docs_per_s']:7.1f} {result['docs_per_cpu_s']:9.1f} "
            f"{result['index_s']:8.1f} {result['qps']:9.1f} | {result['ndcg@10']:8.4f} "
            f"{result['recall@100']:6.4f} | {result['load']:.2f}"
        )
    cosine = np.sum(base["embeddings"] * fast["embeddings"], axis=1)
    same_top10 = np.mean([a[:10] == b[:10] for a, b in zip(base["rankings"], fast["rankings"], strict=True)])
    same_top1 = np.mean([a[:1] == b[:1] for a, b in zip(base["rankings"], fast["rankings"], strict=True)])
    ratio = fast["docs_per_s"] / base["docs_per_s"]
    ratio_cpu = fast["docs_per_cpu_s"] / base["docs_per_cpu_s"]
    delta = fast["ndcg@10"] - base["ndcg@10"]
    lines += [
        f"bfloat16 / float32: {ratio:.2f}x documents/s ({ratio_cpu:.2f}x per CPU-second), "
        f"index {base['index_s'] / fast['index_s']:.2f}x as fast; nDCG@10 {delta:+.4f}",
        f"agreement: document vectors' cosine min {cosine.min():.5f}, mean {cosine.mean():.6f}; "
        f"same top-1 for {100 * same_top1:.1f}% of queries, "
        f"same top-10 (in order) for {100 * same_top10:.1f}%",
    ]
    figures = {
        f"dense.{precision}.{key}": float(value)
        for precision, result in results.items()
        for key, value in result.items()
        if isinstance(value, float | int)
    }
    figures.update({"dense.ratio.docs_per_s": ratio, "dense.ratio.docs_per_cpu_s": ratio_cpu})
    return lines, figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--package", required=True, help="import name of the baked package")
    parser.add_argument("--scifact", type=Path, required=True, help="folder of BEIR SciFact")
    parser.add_argument(
        "--limit", type=int, default=0, help="only the first N documents (0: all; a quick look)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    lines, figures = table(args.package, args.scifact, args.limit)
    print("\n".join(lines), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

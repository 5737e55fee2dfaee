"""The same evaluation on the local executor and on a local Dask cluster of worker processes.

SciFact's corpus and its 300 test questions, the dense retriever when the baked project has
it (encoding on the executor) and the shipped stand-in generator (its calls on the
executor); each run encodes afresh (its own embedding cache folder). The reports must be
equal: the run stops with an error if they are not. On one 2-core machine a cluster cannot
be faster than the process itself (the workers share the same cores and pay for sending
the work); the figures show what the distribution costs, not what a cluster gains.

Run alone: python bench/executor_bench.py --package PACKAGE --scifact DIR
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

from retrieval_bench import load_scifact


def write_project(root: Path, scifact: Path, retriever: str, backend: str, workers: int) -> Path:
    corpus_path, queries, qrels = load_scifact(scifact)
    (root / "corpus.jsonl").write_bytes(corpus_path.read_bytes())
    with (root / "golden.jsonl").open("w", encoding="utf-8") as out:
        for query_id, relevant in qrels.items():
            out.write(json.dumps({"id": query_id, "question": queries[query_id], "relevant": relevant}) + "\n")
    options = 'cache_dir = "embeddings"\n' if retriever == "dense" else ""
    (root / "eval.toml").write_text(
        '[data]\ncorpus = "corpus.jsonl"\ngolden = "golden.jsonl"\nbaseline = "baseline.json"\n'
        'report = "report.json"\n[retrieval]\nk = 10\ndepth = 100\nmetrics = ["ndcg@10", "recall@100"]\n'
        f"[retriever]\n{options}[gate]\nmetrics = [\"ndcg@10\"]\n"
        f'[executor]\nbackend = "{backend}"\nworkers = {workers}\n',
        encoding="utf-8",
    )
    return root / "eval.toml"


def section(package: str, scifact: Path, dense: bool = True, workers: int = 2) -> tuple[list[str], dict[str, float]]:
    run = importlib.import_module(f"{package}.run")
    api = importlib.import_module(f"{package}.api")
    stand_in = importlib.import_module(f"{package}.answers.stand_in")
    config_module = importlib.import_module(f"{package}.settings.config")
    try:
        retriever = "dense" if dense else "bm25"
        build = importlib.import_module(f"{package}.retrieval.retrievers.{retriever}").build
    except ImportError:
        retriever = "bm25"
        build = importlib.import_module(f"{package}.retrieval.retrievers.bm25").build
    system = api.System(build, stand_in.build)
    reports, seconds = {}, {}
    for backend in ("local", "dask"):
        with tempfile.TemporaryDirectory(prefix=f"bench-executor-{backend}-") as folder:
            config = config_module.load_config(write_project(Path(folder), scifact, retriever, backend, workers))
            start = time.perf_counter()
            report = run.evaluate(config, system).to_dict()
            seconds[backend] = time.perf_counter() - start
            # The receipt hashes eval.toml, whose [executor] line differs: everything else must not.
            report["receipt"]["sha256"].pop("config")
            reports[backend] = report
    equal = reports["local"] == reports["dask"]
    if not equal:
        raise SystemExit("executor bench: the Dask report differs from the local one")
    questions = reports["local"]["counts"]["questions"]
    lines = [
        f"Executors: SciFact, {questions} questions, {retriever} retriever (encoding from scratch) and the "
        f"stand-in generator; Dask on a local cluster of {workers} worker processes started by the run",
        f"{'executor':<28} | {'seconds':>8} | report",
        f"{'local (this process)':<28} | {seconds['local']:8.2f} |",
        f"{f'dask ({workers} local workers)':<28} | {seconds['dask']:8.2f} | equal to local: {equal}",
        f"dask / local: {seconds['dask'] / seconds['local']:.2f} (cluster start-up included)",
    ]
    figures = {
        "executor.retriever": retriever,
        "executor.local_s": seconds["local"],
        "executor.dask_s": seconds["dask"],
        "executor.workers": workers,
        "executor.equal_reports": equal,
    }
    return lines, figures  # type: ignore[return-value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", required=True)
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--no-dense", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    lines, _ = section(args.package, args.scifact, not args.no_dense, args.workers)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The same evaluation on the local executor and on a local Dask cluster of worker processes.

SciFact's corpus and its 300 test questions with the shipped stand-in generator: BM25 asked
one question per `search` call (as a team's own retriever is; those calls and the answers
run on the executor), and, when the baked project has it, the dense retriever encoding
1,000 documents from scratch on the executor. The reports must be equal: the run stops with
an error if they are not. On one 2-core machine a cluster cannot be faster than the process
itself (the workers share the same cores and pay for sending the work); the figures show
what the distribution costs, not what a cluster gains.

Run alone: python bench/executor_bench.py --package PACKAGE --scifact DIR
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

from retrieval_bench import load_scifact


class SearchOnly:
    """The shipped BM25 without its `search_many`: each question is one `search` call, the
    calls a team's own retriever makes, which the Dask executor sends to its workers."""

    def __init__(self, inner: object):
        self.inner = inner

    def search(self, question: str, depth: int) -> object:
        return self.inner.search(question, depth)  # type: ignore[attr-defined]


def write_project(
    root: Path, scifact: Path, retriever: str, backend: str, workers: int, documents: int
) -> Path:
    """SciFact (its first `documents` documents, and the questions with a relevant one among
    them) as a project folder, evaluated with `retriever` on `backend`."""
    corpus_path, queries, qrels = load_scifact(scifact)
    lines = corpus_path.read_text(encoding="utf-8").splitlines()[:documents]
    kept = {json.loads(line)["id"] for line in lines}
    (root / "corpus.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with (root / "golden.jsonl").open("w", encoding="utf-8") as out:
        for query_id, relevant in qrels.items():
            judged = {doc: grade for doc, grade in relevant.items() if doc in kept}
            if judged:
                out.write(
                    json.dumps({"id": query_id, "question": queries[query_id], "relevant": judged}) + "\n"
                )
    # The embedding cache in this run's own folder (cache_dir is relative to the working
    # directory): each run encodes from scratch.
    options = f'cache_dir = "{(root / "embeddings").as_posix()}"\n' if retriever == "dense" else ""
    (root / "eval.toml").write_text(
        '[data]\ncorpus = "corpus.jsonl"\ngolden = "golden.jsonl"\nbaseline = "baseline.json"\n'
        'report = "report.json"\n[retrieval]\nk = 10\ndepth = 100\nmetrics = ["ndcg@10", "recall@100"]\n'
        f'[retriever]\n{options}[gate]\nmetrics = ["ndcg@10"]\n'
        f'[executor]\nbackend = "{backend}"\nworkers = {workers}\n',
        encoding="utf-8",
    )
    return root / "eval.toml"


def compare(
    package: str, scifact: Path, retriever: str, workers: int, documents: int
) -> tuple[float, float, int]:
    """Evaluate locally, then on a local cluster; seconds of each and the questions. Stops
    with an error when the two reports differ."""
    run = importlib.import_module(f"{package}.run")
    api = importlib.import_module(f"{package}.api")
    stand_in = importlib.import_module(f"{package}.answers.stand_in")
    load_config = importlib.import_module(f"{package}.settings.config").load_config
    build = importlib.import_module(f"{package}.retrieval.retrievers.{retriever}").build
    if retriever == "bm25":
        system = api.System(lambda *args: SearchOnly(build(*args)), stand_in.build)
    else:
        system = api.System(build, stand_in.build)
    reports, seconds = {}, {}
    for backend in ("local", "dask"):
        with tempfile.TemporaryDirectory(prefix=f"bench-executor-{backend}-") as folder:
            config = load_config(write_project(Path(folder), scifact, retriever, backend, workers, documents))
            start = time.perf_counter()
            report = run.evaluate(config, system).to_dict()
            seconds[backend] = time.perf_counter() - start
            # The receipt hashes eval.toml, whose [executor] line differs, and the embedding cache
            # sits in each run's own folder: everything else must not differ.
            report["receipt"]["sha256"].pop("config")
            report["settings"]["retriever"]["options"].pop("cache_dir", None)
            reports[backend] = report
    if reports["local"] != reports["dask"]:
        raise SystemExit(f"executor bench ({retriever}): the Dask report differs from the local one")
    return seconds["local"], seconds["dask"], reports["local"]["counts"]["questions"]


def section(
    package: str, scifact: Path, dense: bool = True, workers: int = 2
) -> tuple[list[str], dict[str, float]]:
    rows = [("bm25, one search() call a question, and the answers", "bm25", 10**9)]
    if dense and importlib.util.find_spec(f"{package}.retrieval.retrievers.dense") is not None:
        rows.append(("dense, encoding 1,000 documents from scratch", "dense", 1_000))
    lines = [
        f"Executors: SciFact with the stand-in generator, locally and on a local Dask cluster of {workers} "
        "worker processes started by the run (start-up included); reports asserted equal",
        f"{'what runs on the executor':<52} | {'questions':>9} | {'local s':>8} | {'dask s':>7} | equal",
    ]
    figures: dict[str, float] = {"executor.workers": workers}
    for label, retriever, documents in rows:
        local, remote, questions = compare(package, scifact, retriever, workers, documents)
        lines.append(f"{label:<52} | {questions:9d} | {local:8.2f} | {remote:7.2f} | True")
        figures[f"executor.{retriever}.local_s"] = local
        figures[f"executor.{retriever}.dask_s"] = remote
    figures["executor.equal_reports"] = 1.0
    lines.append(
        "On one 2-core machine the workers share the cores of this process: the figures show what "
        "distribution costs here, not what a cluster gains."
    )
    return lines, figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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

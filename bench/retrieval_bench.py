"""Retrievers on real data (BEIR SciFact test split): index time, queries/s, memory, quality.

Nothing here is tuned to SciFact: every retriever runs with its shipped defaults; the BM25
rows differ only in the documented [tokenizer] settings (the demo's default, and the
Anserini-style Porter stemming with Lucene's stop words that published BM25 numbers use).
"""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path
from typing import Any

from metrics_bench import measure

DEPTH = 100


def load_scifact(folder: Path) -> tuple[list[Any], dict[str, str], dict[str, dict[str, int]], Any]:
    """Corpus as the project's Documents (through its own strict loader), queries, qrels."""
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            queries[record["id"]] = record["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels.tsv").open(encoding="utf-8") as lines:
        for query_id, doc_id, grade in csv.reader(lines, delimiter="\t"):
            qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return folder / "corpus.jsonl", queries, qrels


def evaluate_retriever(package: str, name: str, folder: Path, tokenizer: dict, options: dict) -> dict:
    data = importlib.import_module(f"{package}.inputs.data")
    tokens = importlib.import_module(f"{package}.retrieval.tokens")
    batch = importlib.import_module(f"{package}.retrieval.batch")
    names = importlib.import_module(f"{package}.retrieval.names")
    ranking = importlib.import_module(f"{package}.retrieval.ranking")
    module = importlib.import_module(f"{package}.retrieval.retrievers.{name}")
    corpus_path, queries, qrels = load_scifact(folder)
    documents = list(data.load_corpus(corpus_path).values())
    tokenize = tokens.make_tokenizer(tokens.TokenizerSettings(**tokenizer))

    index_s, index_mib, retriever = measure(lambda: module.build(documents, tokenize, options), 1)
    ids = list(qrels)
    texts = [queries[q] for q in ids]

    def search_all() -> list[list[str]]:  # as the evaluator asks: search_many when there is one
        return [[hit.doc_id for hit in hits] for hits in ranking.search_all(retriever, texts, DEPTH)]

    search_s, search_mib, rankings = measure(search_all, 1)
    metrics = [names.parse_metric(m) for m in ("ndcg@10", "recall@100")]
    values = names.compute(batch.judge_rankings(rankings, [qrels[q] for q in ids]), metrics)
    return {
        "index_s": index_s,
        "qps": len(ids) / search_s,
        "mib": max(index_mib, search_mib),
        "ndcg@10": float(values["ndcg@10"].mean()),
        "recall@100": float(values["recall@100"].mean()),
    }


def table(package: str, folder: Path, rows: list[tuple[str, str, dict, dict]]) -> list[str]:
    lines = [
        f"SciFact (BEIR test, {folder}): 300 queries, 5,183 documents, depth {DEPTH}",
        f"{'retriever':<34} | {'index s':>8} {'queries/s':>10} {'peak MiB':>9} | {'nDCG@10':>8} {'R@100':>6}",
    ]
    for label, name, tokenizer, options in rows:
        result = evaluate_retriever(package, name, folder, tokenizer, options)
        lines.append(
            f"{label:<34} | {result['index_s']:8.2f} {result['qps']:10.1f} {result['mib']:9.0f} | "
            f"{result['ndcg@10']:8.4f} {result['recall@100']:6.4f}"
        )
    return lines

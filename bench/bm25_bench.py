"""The project's BM25 against bm25s (PyPI), on the same tokens: index seconds, queries/s, nDCG@10.

Text is tokenized once, by the project's own tokenizer (Porter stemming and Lucene's stop
words, Anserini's analyzer, as the scale section of bench.py uses); both retrievers then
index and search those very token lists. bm25s runs with method "lucene" and the project's
k1 = 0.9, b = 0.4, on its NumPy backend (no numba), single-threaded, as the project's is.
bm25s's "lucene" scores are the project's divided by k1 + 1, so the rankings are the same
up to float32 rounding and ties.

Collections:
  scifact  BEIR SciFact's 5,183 documents and its 300 test queries: nDCG@10 and R@100 of both;
  100k     SciFact's corpus copied 20 times (103,660 documents; each copy's ids and one marker
           word differ, as bench.py's scale section makes it), searched with SciFact's queries
           repeated to 3,000. The copies score alike, so relevance is not measured there
           (nDCG only on SciFact itself); the two retrievers' top-10 are compared instead.

Index time starts from the token lists and ends with a searchable index. Queries/s counts
searches at depth 100 from the token lists to each retriever's own ranked answer: the
project's `search_many`, as the evaluator calls it (a list of Hit per question), and bm25s's
`retrieve` (arrays of document positions and scores); turning either into document ids for
nDCG is not timed. Each figure is the fastest of a few runs (SciFact: 5 indexings and 10
searches; 100k: 1 and 3), the one least disturbed by other work on the machine. Peak MiB is
the resident memory's high-water mark above what was in use before (the retriever measured
second may reuse memory the first one freed). Needs bm25s and scipy (pip install bm25s
scipy) next to the baked project:

    python bench/bm25_bench.py --package help_centre_rag_eval --scifact <folder of SciFact>
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from metrics_bench import measure
from retrieval_bench import load_scifact

DEPTH = 100
K1, B = 0.9, 0.4
ANSERINI = {"stemmer": "porter", "stopwords": "lucene"}
COPIES = 20
SCALE_QUESTIONS = 3_000


def _collection(package: str, scifact: Path, copies: int) -> tuple[list[Any], list[str], dict[str, Any]]:
    """Documents (the project's Document), question ids and SciFact's qrels and queries."""
    data = importlib.import_module(f"{package}.inputs.data")
    api = importlib.import_module(f"{package}.api")
    corpus_path, queries, qrels = load_scifact(scifact)
    documents = list(data.load_corpus(corpus_path).values())
    if copies > 1:
        documents = [
            api.Document(f"{d.id}-{copy}", f"{d.text} edition{copy}", d.title)
            for copy in range(copies)
            for d in documents
        ]
    return documents, list(qrels), {"qrels": qrels, "queries": queries}


def _ours(package: str, documents: list[Any], tokens: dict[str, list[str]]) -> Callable[[], Any]:
    bm25 = importlib.import_module(f"{package}.retrieval.retrievers.bm25")
    return lambda: bm25.build(documents, tokens.__getitem__, {})  # k1 0.9, b 0.4: the defaults


def _bm25s(token_lists: list[list[str]]) -> Callable[[], Any]:
    import bm25s

    def build() -> Any:
        retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        retriever.index(token_lists, show_progress=False)
        return retriever

    return build


def _fastest(function: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """The fastest of `repeat` runs (the least disturbed by other work on the machine), the
    peak extra memory of any, and the last result."""
    runs = [measure(function, 1) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def _compare(
    package: str, documents: list[Any], questions: list[str], index_repeat: int, search_repeat: int
) -> tuple[dict[str, dict[str, float]], dict[str, Ranked], float]:
    """Index and search with both; per retriever index_s, qps and peak MiB, their rankings
    (document ids, best first), and the seconds the shared tokenization took."""
    tokens_module = importlib.import_module(f"{package}.retrieval.tokens")
    tokenize = tokens_module.make_tokenizer(tokens_module.TokenizerSettings(**ANSERINI))
    texts = [f"{d.title}\n{d.text}" for d in documents]  # what the project's BM25 indexes
    start = time.perf_counter()
    token_lists = [tokenize(text) for text in texts]
    question_tokens = [tokenize(q) for q in questions]
    tokenize_s = time.perf_counter() - start
    known = dict(zip(texts, token_lists, strict=True)) | dict(zip(questions, question_tokens, strict=True))

    results: dict[str, dict[str, float]] = {}
    rankings: dict[str, Ranked] = {}
    contenders = [
        ("ours", _ours(package, documents, known), _ours_search()),
        ("bm25s", _bm25s(token_lists), _bm25s_search(documents)),
    ]
    for who, build, (search, ranked) in contenders:
        index_s, index_mib, retriever = _fastest(build, index_repeat)
        search_s, search_mib, answers = _fastest(
            functools.partial(search, retriever, questions, question_tokens), search_repeat
        )
        rankings[who] = ranked(answers)  # not timed: what each returns, as ids and scores
        mib = max(index_mib, search_mib)
        results[who] = {"index_s": index_s, "qps": len(questions) / search_s, "mib": mib}
        retriever = answers = None  # the next one is measured without them
    return results, rankings, tokenize_s


Ranked = list[tuple[list[str], list[float]]]  # per question: ids and scores, best first


Search = Callable[[Any, list[str], list[list[str]]], Any]


def _ours_search() -> tuple[Search, Callable[[Any], Ranked]]:
    """search_many, as the evaluator asks: every question's Hit(doc_id, score) list."""

    def search(retriever: Any, questions: list[str], question_tokens: list[list[str]]) -> Any:
        return retriever.search_many(questions, DEPTH)

    def ranked(hits: Any) -> Ranked:
        return [([hit.doc_id for hit in found], [hit.score for hit in found]) for found in hits]

    return search, ranked


def _bm25s_search(documents: list[Any]) -> tuple[Search, Callable[[Any], Ranked]]:
    """retrieve: arrays of document positions and scores, one row per question."""
    ids = np.array([d.id for d in documents], dtype=object)

    def search(retriever: Any, questions: list[str], question_tokens: list[list[str]]) -> Any:
        return retriever.retrieve(question_tokens, k=DEPTH, show_progress=False)

    def ranked(answers: Any) -> Ranked:
        found, scores = answers
        positive = [score > 0 for score in scores]  # ours leaves out documents that score 0
        return [
            (ids[row[keep]].tolist(), score[keep].tolist())
            for row, score, keep in zip(found, scores, positive, strict=True)
        ]

    return search, ranked


def _same_top10(rankings: dict[str, Ranked]) -> float:
    """The share of questions whose 10 best scores agree (bm25s's lucene scores are ours
    divided by k1 + 1, in float32): the same ranking up to the order of tied documents."""
    same = []
    for (_, ours), (_, theirs) in zip(rankings["ours"], rankings["bm25s"], strict=True):
        mine, other = np.array(ours[:10]) / (K1 + 1), np.array(theirs[:10])
        same.append(len(mine) == len(other) and bool(np.allclose(mine, other, rtol=1e-5, atol=0)))
    return float(np.mean(same))


def section(
    package: str, scifact: Path, collections: tuple[str, ...] = ("scifact", "100k")
) -> tuple[list[str], dict[str, float]]:
    """Lines of a table and the figures by key: `bm25.<ours|bm25s>.<index_s|qps>` at the
    100k scale, and `bm25.<scifact|100k>.<ours|bm25s>.<figure>` for each collection."""
    batch = importlib.import_module(f"{package}.retrieval.batch")
    names = importlib.import_module(f"{package}.retrieval.names")
    lines = [
        f"BM25, the project's against bm25s {_version()} (method lucene, k1 {K1}, b {B}) on the same tokens "
        f"(porter, lucene stop words), depth {DEPTH}",
        f"{'collection':<34} {'retriever':<8} | {'index s':>8} {'queries/s':>10} {'peak MiB':>9} | "
        f"{'nDCG@10':>8} {'R@100':>6}",
    ]
    figures: dict[str, float] = {}
    for name, copies in (("scifact", 1), ("100k", COPIES)):
        if name not in collections:
            continue
        documents, ids, scifact_data = _collection(package, scifact, copies)
        queries, qrels = scifact_data["queries"], scifact_data["qrels"]
        wanted = len(ids) if copies == 1 else SCALE_QUESTIONS
        questions = [queries[ids[i % len(ids)]] for i in range(wanted)]
        repeats = (5, 10) if copies == 1 else (1, 3)  # (index, search): the fastest counts
        results, rankings, tokenize_s = _compare(package, documents, questions, *repeats)
        label = f"{name}: {len(documents):,} docs, {len(questions):,} queries"
        figures[f"bm25.{name}.tokenize_s"] = tokenize_s
        for who, result in results.items():
            row = (
                f"{label:<34} {who:<8} | {result['index_s']:8.2f} {result['qps']:10.1f} "
                f"{result['mib']:9.0f} | "
            )
            for key, value in result.items():
                figures[f"bm25.{name}.{who}.{key}"] = value
            if copies == 1:
                metrics = [names.parse_metric(m) for m in ("ndcg@10", "recall@100")]
                ranked_ids = [found for found, _ in rankings[who]]
                judged = batch.judge_rankings(ranked_ids, [qrels[q] for q in ids])
                values = names.compute(judged, metrics)
                ndcg, recall = float(values["ndcg@10"].mean()), float(values["recall@100"].mean())
                figures[f"bm25.{name}.{who}.ndcg@10"] = ndcg
                figures[f"bm25.{name}.{who}.recall@100"] = recall
                row += f"{ndcg:8.4f} {recall:6.4f}"
            else:
                row += f"{'-':>8} {'-':>6}"
            lines.append(row)
            label = ""
        same = _same_top10(rankings)
        figures[f"bm25.{name}.same_top10"] = same
        lines.append(
            f"{'':<34} tokenize {tokenize_s:.2f} s (shared, not in index s); "
            f"same 10 best scores: {100 * same:.1f}% of queries"
        )
    if "100k" not in collections:
        return lines, figures
    for key in ("index_s", "qps"):
        for who in ("ours", "bm25s"):
            figures[f"bm25.{who}.{key}"] = figures[f"bm25.100k.{who}.{key}"]
    ratio_index = figures["bm25.bm25s.index_s"] / figures["bm25.ours.index_s"]
    ratio_qps = figures["bm25.ours.qps"] / figures["bm25.bm25s.qps"]
    lines.append(
        f"at 100k: ours indexes {ratio_index:.2f}x as fast as bm25s, "
        f"and answers {ratio_qps:.2f}x the queries/s"
    )
    return lines, figures


def _version() -> str:
    import bm25s

    return str(getattr(bm25s, "__version__", "?"))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--package", required=True, help="import name of the baked package")
    parser.add_argument("--scifact", type=Path, required=True, help="folder of BEIR SciFact")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--only", default="scifact,100k", help="collections: scifact, 100k or both")
    args = parser.parse_args()
    lines, figures = section(args.package, args.scifact, tuple(args.only.split(",")))
    print("\n".join(lines), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

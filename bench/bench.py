"""The template's benchmark: `nox -s bench` (from the template root) runs this in one go.

Sections (all by default; choose with --only, e.g. --only metrics,scifact,dense,bm25,scale,
  concurrency,executor,gate,compare):
  metrics      batch metrics vs pytrec_eval vs ranx at 1k x 100, 10k x 1000, 100k x 100
  scifact      each retriever on BEIR SciFact: index time, queries/s, memory, nDCG@10, R@100
  dense        the dense retriever's precisions side by side, cold: float32 (default) vs bfloat16,
               documents/s, index seconds, nDCG@10 (dense_bench.py)
  bm25         our BM25 vs bm25s on the same tokens, on SciFact and ~100k documents (bm25_bench.py)
  scale        `evaluate()` with BM25 on 10k questions x ~100k documents, and where the time goes
  concurrency  a 50 ms HTTP retriever and generator on 127.0.0.1: 1,000 questions at 1 vs 32
               calls in flight, then a cached rerun (concurrency_bench.py)
  executor     the same evaluation locally and on a local Dask cluster: equal reports, times
  gate         wall time of `nox -R -s gate` in a warm baked demo project (venv already made)
  compare      `compare` on 1k/2k/4k queries x 100 documents, JSON and TREC text (linear: see
               compare_scaling.py)

Every section prints its table; the figures also go to one JSON file (--json PATH, default
build/bench.json at the template root), keyed by section: `concurrency.speedup_32`,
`cache.calls_on_rerun`, `bm25.ours.qps`, `scale.end_to_end_s` ...

Speed goals are read off the printed ratios; the only assertions are that every tool returns
the same metric values (1e-9) and that the executors give equal reports.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import bm25_bench
import compare_scaling
import concurrency_bench
import dense_bench
import executor_bench
import metrics_bench
import retrieval_bench

SECTIONS = ["metrics", "scifact", "dense", "bm25", "scale", "concurrency", "executor", "gate", "compare"]
DEFAULT_JSON = Path(__file__).resolve().parents[1] / "build" / "bench.json"

ANSERINI = {"stemmer": "porter", "stopwords": "lucene"}  # Anserini's analyzer, as documented


def section_scifact(package: str, scifact: Path, dense: bool) -> list[str]:
    rows = [
        ("bm25 (demo [tokenizer] defaults)", "bm25", {}, {}),
        ("bm25 (porter, lucene stop words)", "bm25", ANSERINI, {}),
    ]
    if dense:
        rows += [
            ("dense all-MiniLM-L6-v2", "dense", {}, {}),
            ("hybrid RRF (bm25 porter/lucene)", "hybrid", ANSERINI, {}),
        ]
    return retrieval_bench.table(package, scifact, rows)


@contextlib.contextmanager
def stage_timer(modules: list[object], names: list[str]) -> Iterator[dict[str, float]]:
    """Time every call of the named functions in `modules` (wrapped for the duration)."""
    totals: dict[str, float] = defaultdict(float)
    saved = []
    for module in modules:
        for name in names:
            original = getattr(module, name, None)
            if original is None:
                continue

            def timed(*args, _original=original, _name=name, **kwargs):
                start = time.perf_counter()
                try:
                    return _original(*args, **kwargs)
                finally:
                    totals[_name] += time.perf_counter() - start

            saved.append((module, name, original))
            setattr(module, name, timed)
    try:
        yield totals
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def section_scale(
    package: str, scifact: Path, copies: int, questions: int
) -> tuple[list[str], dict[str, float]]:
    """BM25 evaluation at scale: SciFact's corpus copied `copies` times (each copy's ids and one
    marker word differ), SciFact's queries repeated to `questions`, each judged against one copy."""
    import importlib

    run = importlib.import_module(f"{package}.run")  # the pipeline
    commands = importlib.import_module(f"{package}.commands")
    search = importlib.import_module(f"{package}.retrieval.search")
    api = importlib.import_module(f"{package}.api")
    stand_in = importlib.import_module(f"{package}.answers.stand_in")
    config_module = importlib.import_module(f"{package}.settings.config")
    checks = importlib.import_module(f"{package}.answers.checks")  # judge_all: inside evaluate_answers
    corpus_path, queries, qrels = retrieval_bench.load_scifact(scifact)
    documents = [json.loads(line) for line in corpus_path.read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
        root = Path(folder)
        with (root / "corpus.jsonl").open("w", encoding="utf-8") as out:
            for copy in range(copies):
                for d in documents:
                    text = f"{d['text']} edition{copy}"
                    out.write(
                        json.dumps({"id": f"{d['id']}-{copy}", "title": d["title"], "text": text}) + "\n"
                    )
        ids = list(qrels)
        with (root / "golden.jsonl").open("w", encoding="utf-8") as out:
            for i in range(questions):
                qid = ids[i % len(ids)]
                copy = i % copies
                relevant = {f"{doc}-{copy}": grade for doc, grade in qrels[qid].items()}
                out.write(json.dumps({"id": f"q{i}", "question": queries[qid], "relevant": relevant}) + "\n")
        (root / "eval.toml").write_text(
            '[data]\ncorpus = "corpus.jsonl"\ngolden = "golden.jsonl"\nbaseline = "baseline.json"\n'
            'report = "report.json"\n[retrieval]\nk = 10\ndepth = 100\n'
            'metrics = ["ndcg@10", "recall@100", "mrr", "map", "precision@10"]\n'
            '[tokenizer]\nstemmer = "porter"\nstopwords = "lucene"\n[retriever]\n'
            '[gate]\nmetrics = ["ndcg@10"]\n',
            encoding="utf-8",
        )
        config = config_module.load_config(root / "eval.toml")
        stages = [
            "load_corpus",
            "load_golden",
            "check_hits",  # build_retriever is timed by build_timed_search below
            "judge_rankings",
            "compute",
            "evaluate_answers",  # generation and the faithfulness judge
        ]
        start = time.perf_counter()
        with stage_timer([run, search], stages) as totals, stage_timer([checks], ["judge_all"]) as inner:
            bm25 = importlib.import_module(f"{package}.retrieval.retrievers.bm25").build

            def build_timed_search(*args, **kwargs):
                t = time.perf_counter()
                retriever = bm25(*args, **kwargs)
                totals["build_retriever"] += time.perf_counter() - t
                search = retriever.search_many  # the evaluator asks all questions at once

                def timed_search(*a, **k):
                    t = time.perf_counter()
                    try:
                        return search(*a, **k)
                    finally:
                        totals["search (all questions)"] += time.perf_counter() - t

                retriever.search_many = timed_search
                return retriever

            result = run.evaluate(config, api.System(build_timed_search, stand_in.build))
            t = time.perf_counter()
            commands.save_report(config.report, result)  # as the command line writes it
            totals["write_report"] += time.perf_counter() - t
        total = time.perf_counter() - start
        size = (root / "report.json").stat().st_size / 2**20
    accounted = sum(totals.values())
    lines = [
        f"BM25 eval at scale: {questions:,} questions x {copies * len(documents):,} documents, depth 100 "
        f"(porter, lucene stop words): {total:.1f} s end to end, report {size:.0f} MiB",
    ]
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        lines.append(f"  {name:<24} {seconds:7.2f} s  {100 * seconds / total:5.1f}%")
        if name == "evaluate_answers":  # a part of it, so not added to what is accounted for
            judging = inner["judge_all"]
            lines.append(f"    {'of which judge_all':<22} {judging:7.2f} s  {100 * judging / total:5.1f}%")
    lines.append(
        f"  {'rest (rows, slices)':<24} {total - accounted:7.2f} s  {100 * (total - accounted) / total:5.1f}%"
    )
    figures = {
        "scale.end_to_end_s": total,
        "scale.questions": questions,
        "scale.documents": copies * len(documents),
    }
    figures.update({f"scale.stages.{name.split(' ')[0]}_s": seconds for name, seconds in totals.items()})
    figures["scale.stages.judge_all_s"] = inner["judge_all"]
    return lines, figures


def section_gate(template: Path, repeat: int) -> tuple[list[str], dict[str, float]]:
    """Bake the demo (default answers), make its gate venv once, then time warm runs."""
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as folder:
        subprocess.run(
            [sys.executable, "-m", "cookiecutter", "--no-input", str(template), "-o", folder],
            check=True,
            capture_output=True,
        )
        (project,) = Path(folder).iterdir()
        nox = [sys.executable, "-m", "nox", "--non-interactive"]
        subprocess.run([*nox, "-s", "gate"], cwd=project, check=True, capture_output=True)  # warm-up
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([*nox, "-R", "-s", "gate"], cwd=project, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(
            [str(project / ".nox" / "gate" / "bin" / project.name.replace("-", "_")), "gate"],
            cwd=project,
            check=True,
            capture_output=True,
        )
        direct = time.perf_counter() - start
    median = statistics.median(times)
    return [
        f"nox -R -s gate in a warm baked demo project: median {median:.2f} s of {repeat} "
        f"(the gate command alone, without nox: {direct:.2f} s)"
    ], {"gate.nox_warm_s": median, "gate.command_s": direct}


def nested(figures: dict[str, float]) -> dict[str, object]:
    """{"a.b": 1} -> {"a": {"b": 1}}: the JSON file's layout (`concurrency.speedup_32` is
    figures["concurrency"]["speedup_32"])."""
    tree: dict[str, object] = {}
    for key, value in figures.items():
        *parents, leaf = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[leaf] = value  # type: ignore[index]
    return tree


def write_json(path: Path, figures: dict[str, float], header: dict[str, object]) -> None:
    """Write the figures atomically (a temporary file renamed over the target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(
        json.dumps({"machine": header, **nested(figures)}, indent=2) + "\n", encoding="utf-8"
    )
    os.replace(temporary, path)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--package", required=True, help="import name of the baked package")
    parser.add_argument("--template", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-dense", action="store_true", help="skip the dense and hybrid SciFact rows")
    parser.add_argument("--scale-copies", type=int, default=20)
    parser.add_argument("--scale-questions", type=int, default=10_000)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where the figures go (JSON)")
    args = parser.parse_args()
    sections = args.only.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {', '.join(sorted(unknown))}; choose from {','.join(SECTIONS)}")
    load = os.getloadavg()
    header = {"cores": os.cpu_count(), "python": platform.python_version(), "load_at_start": load[0]}
    print(
        f"# {platform.node()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    figures: dict[str, float] = {}

    def show(result: tuple[list[str], dict[str, float]] | list[str]) -> None:
        lines, found = result if isinstance(result, tuple) else (result, {})
        figures.update(found)
        print("\n".join(["", *lines]), flush=True)
        write_json(args.json, figures, header)  # after every section: a later failure keeps these

    if "metrics" in sections:
        show(metrics_bench.run_all(args.package, args.repeat))
    if "scifact" in sections:
        show(section_scifact(args.package, args.scifact, not args.no_dense))
    if "dense" in sections and not args.no_dense:  # float32 and bfloat16 side by side, cold
        show(dense_bench.table(args.package, args.scifact, 0))
    if "bm25" in sections:
        show(bm25_bench.section(args.package, args.scifact))
    if "scale" in sections:
        show(section_scale(args.package, args.scifact, args.scale_copies, args.scale_questions))
    if "concurrency" in sections:
        show(concurrency_bench.section(args.package))
    if "executor" in sections:
        show(executor_bench.section(args.package, args.scifact, not args.no_dense))
    if "gate" in sections:
        show(section_gate(args.template, args.repeat))
    if "compare" in sections:
        show(compare_scaling.table(args.package, [1_000, 2_000, 4_000]))
    load = os.getloadavg()
    print(f"\n# load average at end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"# figures: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`compare` at growing sizes: its time should grow with the input, not with its square.

Writes qrels and two runs of N queries x 100 documents, in JSON and as TREC text, and times
the whole `compare` command (reading, validating, scoring, printing) in this process, at
N = 1,000, 2,000 and 4,000 by default. Linear: each doubling of N about doubles the time.

    python bench/compare_scaling.py --package help_centre_rag_eval [--sizes 1000,2000,4000]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import random
import tempfile
import time
from pathlib import Path

DOCS = 100


def write_inputs(folder: Path, queries: int, seed: int = 0) -> dict[str, tuple[Path, list[Path]]]:
    """Qrels and a baseline and a candidate run, as JSON and as TREC text files."""
    rng = random.Random(seed)
    qrels = {f"q{q}": {f"d{q}-{rng.randrange(DOCS)}": 1} for q in range(queries)}
    runs = {
        name: {
            f"q{q}": {f"d{q}-{d}": round(rng.random() * 10, 4) for d in range(DOCS)} for q in range(queries)
        }
        for name in ("base", "cand")
    }
    (folder / "qrels.json").write_text(json.dumps(qrels, indent=1), encoding="utf-8")
    (folder / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items()),
        encoding="utf-8",
    )
    for name, run in runs.items():
        (folder / f"{name}.json").write_text(json.dumps(run, indent=1), encoding="utf-8")
        (folder / f"{name}.txt").write_text(
            "".join(
                f"{q} Q0 {d} {rank} {score} {name}\n"
                for q, scores in run.items()
                for rank, (d, score) in enumerate(scores.items(), start=1)
            ),
            encoding="utf-8",
        )
    return {
        "JSON": (folder / "qrels.json", [folder / "base.json", folder / "cand.json"]),
        "TREC text": (folder / "qrels.txt", [folder / "base.txt", folder / "cand.txt"]),
    }


def time_compare(package: str, qrels: Path, runs: list[Path]) -> tuple[float, int]:
    cli = importlib.import_module(f"{package}.cli")
    argv = ["compare", "--qrels", str(qrels), "--runs", *map(str, runs), "--baseline", "base"]
    argv += ["--candidate", "cand", "--k", "10"]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return time.perf_counter() - start, code


def table(package: str, sizes: list[int]) -> list[str]:
    """The timing table, one row per size: seconds (and exit code) for JSON and TREC text."""
    lines = [f"compare, N queries x {DOCS} documents, two runs (seconds; exit code)"]
    lines.append(f"{'N':>7} {'JSON':>12} {'TREC text':>12}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            cells = []
            for qrels, runs in write_inputs(Path(tmp), size).values():
                seconds, code = time_compare(package, qrels, runs)
                cells.append(f"{seconds:8.2f} ({code})")
        lines.append(f"{size:>7} {cells[0]:>12} {cells[1]:>12}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--package", required=True, help="import name of the baked package")
    parser.add_argument("--sizes", default="1000,2000,4000", help="queries per file, comma-separated")
    args = parser.parse_args()
    print("\n".join(table(args.package, [int(size) for size in args.sizes.split(",")])))


if __name__ == "__main__":
    main()

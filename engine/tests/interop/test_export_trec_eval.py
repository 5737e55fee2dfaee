"""`export-run` on the shipped demo (eval.toml and evals/, copied into tmp_path), read back by
trec_eval's own readers: every question's number equals the report's, for every metric trec_eval
shares with us, under both tie rules and at relevance levels 1 and 2.

The retriever is the shipped one, as is and with its tied scores put in the other order
(ids ascending, scores nudged apart by less than float32 can hold): the case where the tie
rule decides the numbers. Nothing here states a result: each number is the report's.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval

from conftest import PROJECT_ROOT, SHIPPED, evaluate_shipped, run_cli
from rag_regress.api import History, Hit, System
from rag_regress.retrieval.names import Metric, parse_metric, variants
from rag_regress.settings.config import load_config

TOLERANCE = 1e-9
CUTOFFS = (1, 5, 10, 20)  # the demo's depth is 20


def shared_metrics() -> dict[str, str]:
    """{our metric name: trec_eval measure} for every metric both have, at CUTOFFS."""
    shared = {}
    for name, record, _ in variants():
        if record.trec_eval:
            shared[name] = record.trec_eval
        if record.trec_eval_at_k:
            shared.update({f"{name}@{k}": record.trec_eval_at_k.format(k=k) for k in CUTOFFS})
    return shared


def demo(root: Path, ties: str, level: int) -> Path:
    """A copy of the demo measuring every shared metric with these settings; its eval.toml."""
    config = load_config(PROJECT_ROOT / "eval.toml")
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    names = ", ".join(f'"{name}"' for name in shared_metrics())
    text = re.sub(r"(?m)^metrics = \[.*\]$", f"metrics = [{names}]", text, count=1)
    text = text.replace("[retrieval]\n", f'[retrieval]\nties = "{ties}"\nrelevance_level = {level}\n', 1)
    # The answers' judge plays no part here; the lexical one needs no model files.
    text = re.sub(r'(?m)^backend = "nli"', 'backend = "lexical"', text)
    root.mkdir(parents=True, exist_ok=True)
    (root / "eval.toml").write_text(text, encoding="utf-8")
    for path in (config.corpus, config.golden):
        target = root / path.relative_to(PROJECT_ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return root / "eval.toml"


def ties_reversed(build: Callable[..., Any]) -> Callable[..., Any]:
    """The shipped retriever with each group of scores equal in float32 listed by id
    ascending, each score nudged up from the last by less than float32 can tell apart
    (rising doubles, one float32): the order trec_eval would not give them."""

    class Reversed:
        def __init__(self, inner: Any):
            self.inner = inner

        def search(self, query: str, depth: int, history: History = ()) -> list[Hit]:
            groups: dict[float, list[Hit]] = {}
            for hit in self.inner.search(query, depth, history=history):
                groups.setdefault(float(np.float32(hit.score)), []).append(hit)
            out = []
            for tied, group in groups.items():
                # Within a quarter of a float32 step of `tied`, every double rounds to `tied`.
                step = float(np.spacing(np.float32(tied))) / 4 / len(group)
                for j, hit in enumerate(sorted(group, key=lambda h: h.doc_id)):
                    out.append(Hit(hit.doc_id, tied + j * step))
            return out

    return lambda *args, **kwargs: Reversed(build(*args, **kwargs))


SYSTEMS = {
    "shipped": SHIPPED,
    "ties reversed": System(ties_reversed(SHIPPED.build_retriever), SHIPPED.build_generator),
}


@pytest.mark.parametrize("system", SYSTEMS.values(), ids=SYSTEMS.keys())
@pytest.mark.parametrize(("ties", "level"), [("trec_eval", 1), ("retriever", 1), ("trec_eval", 2)])
def test_exported_run_gives_every_number_of_the_report_in_trec_eval(
    tmp_path: Path, system: System, ties: str, level: int
) -> None:
    config_path = demo(tmp_path, ties, level)
    qrels_path, run_path = tmp_path / "golden.qrels", tmp_path / "retriever.run"
    assert run_cli(["--config", str(config_path), "export-qrels", str(qrels_path)], system) == 0
    assert run_cli(["--config", str(config_path), "export-run", str(run_path)], system) == 0
    with qrels_path.open() as qrels_file, run_path.open() as run_file:
        qrels, run = pytrec_eval.parse_qrel(qrels_file), pytrec_eval.parse_run(run_file)
    shared = shared_metrics()
    measures = {measure.replace("_cut_", "_cut.").replace("P_", "P.") for measure in shared.values()}
    measures = {re.sub(r"^(recall|success)_(\d+)$", r"\1.\2", m) for m in measures}
    # The condensed `_j` variants are the same measures of trec_eval run with -J.
    trec = {
        condensed: pytrec_eval.RelevanceEvaluator(
            qrels, measures, relevance_level=level, judged_docs_only_flag=condensed
        ).evaluate(run)
        for condensed in (False, True)
    }
    report = evaluate_shipped(load_config(config_path), system=system)
    rows = {row["id"]: row for row in report["questions"] if row["metrics"] is not None}
    assert set(qrels) == set(rows) and rows
    assert any(row.get("not_relevant") for row in report["questions"]), (
        "the demo judges documents not relevant"
    )

    def theirs(qid: str, name: str) -> float:
        value: float = trec[parse_metric(name).judged_docs_only].get(qid, {}).get(shared[name], 0.0)
        return value

    wrong = [
        f"{qid} {name}: ours {row['metrics'][name]!r}, trec_eval {theirs(qid, name)!r}"
        for qid, row in rows.items()
        for name in shared
        if abs(theirs(qid, name) - row["metrics"][name]) > TOLERANCE
    ]
    assert not wrong, f"{len(wrong)} number(s) differ:\n" + "\n".join(wrong[:20])


def test_the_tie_rule_decides_the_numbers_of_a_retriever_that_orders_ties_otherwise(tmp_path: Path) -> None:
    """Under trec_eval's rule the reversed-ties retriever gets the shipped retriever's numbers;
    under its own order, its own ranking's (which differ wherever a relevant document is tied)."""
    reversed_system = SYSTEMS["ties reversed"]
    shipped = evaluate_shipped(load_config(demo(tmp_path / "a", "trec_eval", 1)))
    as_trec = evaluate_shipped(load_config(demo(tmp_path / "b", "trec_eval", 1)), system=reversed_system)
    own = evaluate_shipped(load_config(demo(tmp_path / "c", "retriever", 1)), system=reversed_system)
    retrieval = list(shared_metrics())  # the answers follow the retriever's own order: not compared
    assert {m: as_trec["aggregate"][m] for m in retrieval} == {m: shipped["aggregate"][m] for m in retrieval}
    for row in own["questions"]:
        if row["metrics"] is not None:
            ranking = [doc_id for doc_id, _ in row["retrieved"]]
            assert row["metrics"]["mrr"] == Metric("mrr")(ranking, row["relevant"])

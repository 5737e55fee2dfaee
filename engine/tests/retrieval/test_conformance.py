"""Our hand-written metrics equal the reference implementations, to 1e-9, query by query.

- trec_eval (through pytrec-eval-terrier) for every metric it has: P_k, recall_k,
  success_k, recip_rank, ndcg, ndcg_cut_k, map, map_cut_k, Rprec, bpref, and each of them
  with -J (judged_docs_only_flag) for the condensed `_j` variants. It also checks the
  tie order: runs are given with tied scores, and near-ties 1e-9 apart that trec_eval's
  float32 scores cannot tell apart, and trec_eval ranks them itself; and the relevance
  level (`relevance_level`, trec_eval's -l) at 1, 2 and 3. judged@k, which trec_eval has
  under no name, is its P_k at -l 0 (below, `judged_as_trec_eval`).
- ranx for the same metrics and the two trec_eval lacks: mrr@k and nDCG with exponential
  gain (ndcg_burges); ranx has no -J, so it gets the condensed variants' rankings condensed
  (unjudged documents removed) and is asked for the plain metric. ranx keeps tied scores in
  input order where trec_eval sorts them by document id, so ranx gets each ranking with
  distinct, strictly decreasing scores: it is checked on metric definitions, not on tie
  handling (docs/metrics.md, "Conventions").

Which function is compared with which reference measure comes from each metric's record
(names.REGISTRY, names.variants), so a metric added there is checked here too.

Inputs are Hypothesis-generated collections (graded relevance 0-3 with judged non-relevant
grade 0, negative grades (trec_eval's "in the pool but unjudged"), unjudged documents
retrieved, many tied scores, runs shorter than k or empty, queries missing from the run or from the
qrels) plus hand-made edge cases. A changed metric definition fails here with the query,
the metric, our value and the reference value.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given
from hypothesis import strategies as st

from conftest import evaluate_shipped, run_cli
from rag_regress.api import Hit
from rag_regress.retrieval.batch import judge_run
from rag_regress.retrieval.metrics import condensed
from rag_regress.retrieval.names import Metric, compute, parse_metric, variants
from rag_regress.retrieval.ranking import trec_order
from rag_regress.settings.config import load_config

# ranx compiles its metrics with numba on first use: about a minute per fresh environment.
# The same Python code run without compilation gives the same values in milliseconds.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")
with warnings.catch_warnings():  # ranx 0.3 and its plotting imports warn while compiling
    warnings.simplefilter("ignore", SyntaxWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import ranx

TOLERANCE = 1e-9
AllQrels = dict[str, dict[str, int]]
ScoredRun = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Case:
    """One metric, with or without its cutoff, and what to compare it with."""

    function: Callable[..., float]  # our per-question function
    cut: bool  # given the cutoff k
    trec: str | None  # trec_eval measure (a template in k); None where trec_eval lacks it
    ranx: str | None  # ranx metric (a template in k); None where ranx lacks it
    condensed: bool  # a `_j` variant: trec_eval runs with -J, ranx gets the condensed rankings


def _cases() -> dict[str, Case]:
    """Every metric of the registry, with and without a cutoff where it allows both. A `_j`
    variant is compared with ranx's name for its plain metric, on condensed rankings."""
    cases = {}
    for name, record, condensed_ in variants():
        function = record.per_question
        if record.cutoff != "required":
            cases[name] = Case(function, False, record.trec_eval, record.ranx, condensed_)
        if record.cutoff != "none":
            cases[f"{name}@k"] = Case(function, True, record.trec_eval_at_k, record.ranx_at_k, condensed_)
    return cases


CASES = _cases()
# Checked against trec_eval by other means, below: recip_rank of the (condensed) top k, and P_k
# at relevance level 0.
INDIRECT = {"mrr@k", "mrr_j@k", "judged@k"}


def test_every_metric_is_checked_against_a_reference() -> None:
    """No metric escapes this file: each has a trec_eval or a ranx name or is in INDIRECT,
    and none of the plain twelve, bpref, judged@k or a condensed variant is lost."""
    assert all(case.trec or case.ranx or name in INDIRECT for name, case in CASES.items())
    plain = {
        "precision@k",
        "recall@k",
        "hit@k",
        "mrr",
        "mrr@k",
        "ndcg",
        "ndcg@k",
        "ndcg_exp",
        "ndcg_exp@k",
        "map",
        "map@k",
        "rprec",
        "bpref",
    }
    condensed_ = {name.replace("@k", "_j@k") if "@" in name else f"{name}_j" for name in plain}
    assert set(CASES) == plain | condensed_ | {"judged@k"}
    assert all(CASES[name].condensed for name in condensed_)


def ranking_of(scores: dict[str, float]) -> list[str]:
    return [hit.doc_id for hit in trec_order(Hit(doc_id, s) for doc_id, s in scores.items())]


def ours(qrels: AllQrels, run: ScoredRun, k: int, level: int = 1) -> dict[str, dict[str, float]]:
    """Every metric for every judged query; a query the run lacks has an empty ranking."""
    table = {}
    for qid, judged in qrels.items():
        ranking = ranking_of(run.get(qid, {}))
        table[qid] = {}
        for name, case in CASES.items():
            metric = parse_metric(name.replace("@k", f"@{k}"))
            table[qid][name] = metric(ranking, judged, level)
            assert metric.record.per_question is case.function
            assert metric.judged_docs_only is case.condensed
    return table


def trec_eval(qrels: AllQrels, run: ScoredRun, k: int, level: int = 1) -> dict[str, dict[str, float]]:
    """trec_eval's values, under our names: the condensed variants' from a second evaluation
    with -J. It ranks the tied scores itself."""
    result: dict[str, dict[str, float]] = {}
    # A query with an empty ranking is never given to pytrec_eval-terrier 0.5.11, which reads
    # freed memory on one (a segfault, depending on the heap). trec_eval itself never sees such
    # a query (a run file holds no line for it) and with -c counts it zero on every measure.
    ranked = {qid: ranking for qid, ranking in run.items() if ranking}
    for judged_only in (False, True):
        cases = {name: case for name, case in CASES.items() if case.trec and case.condensed is judged_only}
        measures = {case.trec.format(k=k) for case in cases.values() if case.trec}
        evaluator = pytrec_eval.RelevanceEvaluator(
            qrels, measures, relevance_level=level, judged_docs_only_flag=judged_only
        )
        found = evaluator.evaluate(ranked) if ranked else {}
        found |= {qid: dict.fromkeys(measures, 0.0) for qid in run if not run[qid] and qid in qrels}
        for qid, values in found.items():
            row = result.setdefault(qid, {})
            row |= {name: values[case.trec.format(k=k)] for name, case in cases.items() if case.trec}
    # trec_eval's recip_rank has no cutoff; over the top k of its own ranking it is mrr@k, and
    # over the top k of the condensed ranking (unjudged documents removed), mrr_j@k.
    for name, cut in (("mrr@k", False), ("mrr_j@k", True)):
        top_k = {
            qid: {
                doc_id: scores[doc_id]
                for doc_id in (
                    condensed(ranking_of(scores), qrels.get(qid, {})) if cut else ranking_of(scores)
                )[:k]
            }
            for qid, scores in run.items()
        }
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=level).evaluate(top_k)
        for qid in result:
            result[qid][name] = rr[qid]["recip_rank"]
    for qid, value in judged_as_trec_eval(qrels, run, k).items():
        result[qid]["judged@k"] = value
    return result


def judged_as_trec_eval(qrels: AllQrels, run: ScoredRun, k: int) -> dict[str, float]:
    """judged@k as trec_eval computes it: its P_k at relevance level 0 (trec_eval -l 0 counts
    every judged document, grade 0 up, as relevant). pytrec_eval refuses a level below 1, so
    every judged grade is raised by 1 and P_k taken at level 1, which counts the same
    documents; negative grades (unjudged to trec_eval) stay as they are."""
    raised = {qid: {d: g + 1 if g >= 0 else g for d, g in judged.items()} for qid, judged in qrels.items()}
    table = pytrec_eval.RelevanceEvaluator(raised, {f"P_{k}"}, relevance_level=1).evaluate(run)
    return {qid: values[f"P_{k}"] for qid, values in table.items()}


def ranx_values(qrels: AllQrels, run: ScoredRun, k: int) -> dict[str, dict[str, float]]:
    """ranx's values, under our names, given our ranking as strictly decreasing scores, and
    the condensed ranking (its judged documents only) for the condensed variants."""
    result: dict[str, dict[str, float]] = {qid: {} for qid in qrels}
    for judged_only in (False, True):
        ranked = {qid: ranking_of(scores) for qid, scores in run.items()}
        if judged_only:
            ranked = {qid: condensed(ids, qrels.get(qid, {})) for qid, ids in ranked.items()}
        if not any(ranked.values()):
            continue  # ranx cannot build a run without a single document; trec_eval covers it
        as_scores = {qid: {d: float(len(ids) - i) for i, d in enumerate(ids)} for qid, ids in ranked.items()}
        ranx_run = ranx.Run(as_scores)
        names = {
            case.ranx.format(k=k): name
            for name, case in CASES.items()
            if case.ranx and case.condensed is judged_only
        }
        # make_comparable: a query missing from the run scores 0 (as ours); one missing from the
        # qrels is dropped (nothing to judge it by)
        ranx.evaluate(
            ranx.Qrels(qrels), ranx_run, list(names), make_comparable=True, save_results_in_run=True
        )
        for qid in qrels:
            result[qid] |= {names[m]: float(ranx_run.scores[m][qid]) for m in names}
    return result


def assert_agree(
    mine: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]], tool: str, k: int
) -> None:
    problems = [
        f"{qid} {name} (k={k}): ours {mine[qid][name]!r}, {tool} {value!r}"
        for qid, values in theirs.items()
        for name, value in values.items()
        if abs(mine[qid][name] - value) > TOLERANCE
    ]
    assert not problems, f"{len(problems)} disagreement(s) with {tool}:\n" + "\n".join(problems[:20])


def check_collection(qrels: AllQrels, run: ScoredRun, k: int, level: int = 1) -> None:
    mine = ours(qrels, run, k, level)
    reference = trec_eval(qrels, run, k, level)
    # trec_eval scores exactly the judged queries that the run has; the rest are ours alone
    assert set(reference) == set(qrels) & set(run)
    assert_agree(mine, reference, "trec_eval", k)
    if level == 1:  # ranx has no relevance level: it counts every positive grade
        assert_agree(mine, ranx_values(qrels, run, k), "ranx", k)
    for qid in set(qrels) - set(run):  # no ranking at all: zero, as trec_eval -c counts it
        assert set(mine[qid].values()) == {0.0}


# Ids whose string order differs from their numeric order (d10 < d9) exercise the tie-break.
DOCS = [f"d{i}" for i in range(12)]
QUERIES = ["q1", "q2", "q3", "q4"]


@st.composite
def collections(draw: st.DrawFn) -> tuple[AllQrels, ScoredRun, int]:
    judged_queries = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    # Grades 0 to 3, and now and then -1 (trec_eval: in the pool but unjudged); at most 8 of
    # the 12 documents are judged, so runs retrieve unjudged documents too. Each query has a
    # grade of 0 or more: the trec_eval in pytrec_eval-terrier 0.5.11 crashes or hangs on a first query
    # whose every grade is negative (it sizes its per-grade counts by the highest grade).
    grades = st.integers(0, 3) | st.just(-1)
    judgments = st.dictionaries(st.sampled_from(DOCS), grades, min_size=1, max_size=8)
    qrels = {qid: draw(judgments.filter(lambda judged: max(judged.values()) >= 0)) for qid in judged_queries}
    run_queries = draw(st.lists(st.sampled_from(QUERIES), max_size=4, unique=True))
    scores = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.25, -1.0])  # few values: many ties
    run = {qid: draw(st.dictionaries(st.sampled_from(DOCS), scores, max_size=12)) for qid in run_queries}
    return qrels, run, draw(st.integers(1, 12))


@given(collections())
def test_every_metric_equals_trec_eval_and_ranx(collection: tuple[AllQrels, ScoredRun, int]) -> None:
    check_collection(*collection)


# Near-ties: scores 1e-9 apart are distinct doubles but one float32, the precision trec_eval
# keeps, so they tie there and are ranked by document id; 1e-6 apart they do not tie.
NEAR_TIES = [0.0, 1.0, 1.0 + 1e-9, 1.0 - 1e-9, 1.0 + 2e-9, 1.000001, 12.5, 12.500000001, 12.499999999, -3.0]


@st.composite
def near_tie_collections(draw: st.DrawFn) -> tuple[AllQrels, ScoredRun, int]:
    qrels, _, k = draw(collections())
    run_queries = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=4, unique=True))
    scores = st.sampled_from(NEAR_TIES)
    run = {qid: draw(st.dictionaries(st.sampled_from(DOCS), scores, max_size=12)) for qid in run_queries}
    return qrels, run, k


@given(near_tie_collections(), st.integers(1, 3))
def test_near_ties_rank_as_trec_eval_float32(collection: tuple[AllQrels, ScoredRun, int], level: int) -> None:
    """Every metric equals trec_eval's on runs full of float32 ties and near-ties, at
    relevance levels 1 to 3; so does the batch path that reads scored runs (compare)."""
    qrels, run, k = collection
    check_collection(qrels, run, k, level)
    reference = trec_eval(qrels, run, k, level)
    ids, judged = judge_run(run, qrels, level)
    metrics = {name: parse_metric(name.replace("@k", f"@{k}")) for name in CASES}
    values = compute(judged, list(metrics.values()))
    for i, qid in enumerate(ids):
        for name, value in reference.get(qid, {}).items():
            assert abs(float(values[str(metrics[name])][i]) - value) <= TOLERANCE, (qid, name)


def test_scores_equal_in_float32_tie_and_rank_by_id_as_in_trec_eval() -> None:
    """The example of the issue: z (relevant) scores 12.5, a 12.500000001; in float32 both are
    12.5, so trec_eval ranks z first (ids descending) and MRR is 1.0, not 0.5."""
    qrels, run = {"q1": {"z": 1}}, {"q1": {"z": 12.5, "a": 12.500000001}}
    assert ranking_of(run["q1"]) == ["z", "a"]
    assert ours(qrels, run, 1)["q1"]["mrr"] == 1.0
    assert trec_eval(qrels, run, 1)["q1"]["mrr"] == 1.0
    _, judged = judge_run(run, qrels)
    assert compute(judged, [Metric("mrr")])["mrr"].tolist() == [1.0]
    # Apart by more than float32 can hold, the larger score ranks first, in both.
    apart = {"q1": {"z": 12.5, "a": 12.501}}
    assert ours(qrels, apart, 1)["q1"]["mrr"] == trec_eval(qrels, apart, 1)["q1"]["mrr"] == 0.5


def test_relevance_level_2_counts_grades_2_and_up_and_ndcg_keeps_every_grade() -> None:
    """With relevance_level 2 (trec_eval -l 2) a grade-1 document is not relevant to the
    binary metrics, while nDCG still weighs it by its grade, as trec_eval's ndcg does."""
    qrels = {"q1": {"a": 1, "b": 2, "c": 3}}
    run = {"q1": {"a": 3.0, "b": 2.0, "x": 1.5, "c": 1.0}}
    at_2 = ours(qrels, run, 2, level=2)["q1"]
    assert at_2["mrr"] == 0.5 and at_2["precision@k"] == 0.5 and at_2["rprec"] == 0.5
    assert at_2["ndcg"] == ours(qrels, run, 2)["q1"]["ndcg"]
    assert_agree({"q1": at_2}, trec_eval(qrels, run, 2, level=2), "trec_eval", 2)


EDGE_CASES = {
    "all tied: ranked by id descending": ({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}, 1),
    "empty ranking": ({"q": {"a": 1}}, {"q": {}}, 3),
    "no relevant document, only grade 0": ({"q": {"a": 0, "b": 0}}, {"q": {"a": 2.0, "b": 1.0}}, 2),
    "run shorter than k": ({"q": {"a": 3, "b": 1, "c": 2}}, {"q": {"x": 2.0, "c": 1.0}}, 10),
    "query missing from the run": ({"q": {"a": 1}, "r": {"b": 2}}, {"q": {"a": 1.0}}, 1),
    "query missing from the qrels": ({"q": {"a": 1}}, {"q": {"a": 1.0}, "other": {"a": 1.0}}, 1),
    "graded, best grade last": ({"q": {"a": 1, "b": 2, "c": 3}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, 3),
    "ids compared as strings: d10 < d9, B < a": (
        {"q": {"d9": 1, "B": 2}},
        {"q": {"d10": 0.5, "d9": 0.5, "a": 0.5, "B": 0.5}},
        2,
    ),
    "negative scores and a negative grade": ({"q": {"a": -1, "b": 1}}, {"q": {"a": -0.5, "b": -2.0}}, 1),
    "k beyond every list": ({"q": {"a": 1}}, {"q": {"b": 1.0, "a": 0.5}}, 1000),
}


@pytest.mark.parametrize("case", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_edge_cases_equal_trec_eval_and_ranx(case: tuple[AllQrels, ScoredRun, int]) -> None:
    check_collection(*case)


# Incomplete judgments: bpref, judged@k and the condensed variants. R relevant, N judged
# non-relevant (grade 0, and below the relevance level), unjudged documents retrieved or not.
INCOMPLETE = {
    "N = 0: only relevant documents judged": (
        {"q": {"a": 1, "b": 2}},
        {"q": {"x": 4.0, "a": 3.0, "y": 2.0, "b": 1.0}},
        2,
    ),
    "R = 0: only grade 0 judged": ({"q": {"a": 0, "b": 0}}, {"q": {"a": 2.0, "x": 1.5, "b": 1.0}}, 2),
    "R > N": (
        {"q": {"a": 1, "b": 1, "c": 3, "n": 0}},
        {"q": {"n": 5.0, "a": 4.0, "b": 3.0, "x": 2.0, "c": 1.0}},
        3,
    ),
    "N > R": (
        {"q": {"a": 1, "n1": 0, "n2": 0, "n3": 0, "n4": 0}},
        {"q": {"n1": 5.0, "x": 4.5, "n2": 4.0, "a": 3.0, "n3": 2.0}},
        3,
    ),
    "more non-relevant above than R": (
        {"q": {"a": 1, "b": 2, "n1": 0, "n2": 0, "n3": 0}},
        {"q": {"n1": 5.0, "n2": 4.0, "n3": 3.0, "a": 2.0, "b": 1.0}},
        4,
    ),
    "every retrieved document unjudged": ({"q": {"a": 1, "n": 0}}, {"q": {"x": 3.0, "y": 2.0, "z": 1.0}}, 2),
    "unjudged documents between judged ones": (
        {"q": {"a": 2, "b": 1, "n": 0}},
        {"q": {"x": 9.0, "n": 8.0, "y": 7.0, "z": 6.0, "a": 5.0, "w": 4.0, "b": 3.0}},
        3,
    ),
    "grades 1 to 3 and 0: grade 1 is judged non-relevant at level 2": (
        {"q": {"a": 2, "b": 1, "c": 0, "d": 3, "e": 1}},
        {"q": {"b": 5.0, "x": 4.5, "a": 4.0, "c": 3.0, "e": 2.5, "d": 2.0}},
        3,
    ),
    "a negative grade is unjudged": (
        {"q": {"a": 1, "m": -1, "n": 0}},
        {"q": {"m": 3.0, "n": 2.0, "a": 1.0}},
        1,
    ),
    "a relevant document not retrieved": ({"q": {"a": 1, "b": 1, "n": 0}}, {"q": {"n": 2.0, "a": 1.0}}, 2),
    "tied unjudged and judged documents": (
        {"q": {"a": 1, "b": 0, "c": 2}},
        {"q": {"a": 1.0, "b": 1.0, "z": 1.0, "c": 1.0, "y": 1.0}},
        2,
    ),
    "empty ranking": ({"q": {"a": 1, "n": 0}}, {"q": {}}, 3),
}


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("case", INCOMPLETE.values(), ids=INCOMPLETE.keys())
def test_incomplete_judgments_equal_trec_eval(case: tuple[AllQrels, ScoredRun, int], level: int) -> None:
    """bpref, judged@k and every condensed variant equal trec_eval's (with -J) at every
    relevance level, on the cases where they differ from the plain metrics; level 3 is above
    some of these collections' grades (trec_eval then sizes its counts by the highest grade)."""
    check_collection(*case, level=level)


def test_judged_and_condensed_values_on_one_example() -> None:
    """One ranking worked by hand: x (unjudged), n (grade 0), a (1), y (unjudged), b (2);
    also judged but not retrieved: c (1), m (0). R = 3, N = 2, k = 4.

    judged@4 = 2/4 (n, a); bpref = (1 - 1/2) + (1 - 1/2) = 1, / 3 = 1/3 (a and b each have n
    above them, min(R, N) = 2); the condensed ranking is n, a, b: map_j = (1/2 + 2/3) / 3,
    precision_j@4 = 2/4, mrr_j = 1/2 (plain map = (1/3 + 2/5) / 3, mrr = 1/3)."""
    qrels = {"q": {"n": 0, "a": 1, "b": 2, "c": 1, "m": 0}}
    run = {"q": {"x": 5.0, "n": 4.0, "a": 3.0, "y": 2.0, "b": 1.0}}
    mine = ours(qrels, run, 4)["q"]
    expected = {
        "judged@k": 2 / 4,
        "bpref": 1 / 3,
        "bpref_j": 1 / 3,
        "map_j": (1 / 2 + 2 / 3) / 3,
        "map": (1 / 3 + 2 / 5) / 3,
        "precision_j@k": 2 / 4,
        "mrr_j": 1 / 2,
        "mrr": 1 / 3,
    }
    for name, value in expected.items():
        assert mine[name] == pytest.approx(value), name
    assert_agree({"q": mine}, trec_eval(qrels, run, 4), "trec_eval", 4)


def test_tied_scores_are_ranked_like_trec_eval_not_in_input_order() -> None:
    """The documented convention, spelled out: three tied documents, the relevant one `a`
    ranks third (ids descending: c, b, a), whatever order the run listed them in."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    assert ranking_of(run["q"]) == ["c", "b", "a"]
    assert ours(qrels, run, 1)["q"]["mrr"] == pytest.approx(1 / 3)
    assert trec_eval(qrels, run, 1)["q"]["mrr"] == pytest.approx(1 / 3)


def test_exported_files_give_the_report_numbers_in_trec_eval(project: Path, tmp_path: Path) -> None:
    """`export-qrels` and `export-run`, parsed by trec_eval's own readers: per question and
    averaged over every judged question (trec_eval -c), trec_eval reports our numbers."""
    qrels_path, run_path = tmp_path / "golden.qrels", tmp_path / "retriever.run"
    assert run_cli(["--config", str(project), "export-qrels", str(qrels_path)]) == 0
    assert run_cli(["--config", str(project), "export-run", str(run_path)]) == 0
    with qrels_path.open() as qrels_file, run_path.open() as run_file:
        qrels, run = pytrec_eval.parse_qrel(qrels_file), pytrec_eval.parse_run(run_file)
    measures = {
        "P_5": "precision@5",
        "recall_5": "recall@5",
        "success_5": "hit@5",
        "recip_rank": "mrr",
        "ndcg_cut_5": "ndcg@5",
        "map": "map",
        "Rprec": "rprec",
    }
    trec = pytrec_eval.RelevanceEvaluator(
        qrels, {"P.5", "recall.5", "success.5", "recip_rank", "ndcg_cut.5", "map", "Rprec"}
    ).evaluate(run)
    report = evaluate_shipped(load_config(project))
    rows = {row["id"]: row for row in report["questions"] if row["metrics"] is not None}
    assert set(qrels) == set(rows)
    for measure, name in measures.items():
        for qid, row in rows.items():
            assert abs(trec.get(qid, {}).get(measure, 0.0) - row["metrics"][name]) <= TOLERANCE, (qid, name)
        mean = sum(trec.get(qid, {}).get(measure, 0.0) for qid in qrels) / len(qrels)
        assert abs(mean - report["aggregate"][name]) <= TOLERANCE, name

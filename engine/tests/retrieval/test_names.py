"""Metric names: one canonical spelling everywhere, common aliases accepted on input; each
name leads to its metric's one record (definition, functions, trec_eval and ranx names)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ENGINE_ROOT
from rag_regress.retrieval.names import REGISTRY, Metric, parse_metric, variants

CUTOFF_REQUIRED = ["precision", "recall", "hit"]
CUTOFF_OPTIONAL = ["mrr", "ndcg", "ndcg_exp", "map"]
NO_CUTOFF = ["rprec"]

canonical_names = st.builds(
    lambda n, k: f"{n}@{k}", st.sampled_from(CUTOFF_REQUIRED + CUTOFF_OPTIONAL), st.integers(1, 1000)
) | st.sampled_from(CUTOFF_OPTIONAL + NO_CUTOFF)


@given(canonical_names)
def test_canonical_names_round_trip(text: str) -> None:
    """Config, report and gate spell a metric the same way: parse then print is the identity."""
    assert str(parse_metric(text)) == text


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("P@5", "precision@5"),
        ("R@5", "recall@5"),
        ("success@5", "hit@5"),
        ("RR", "mrr"),
        ("recip_rank", "mrr"),
        ("AP", "map"),
        ("R-prec", "rprec"),
        ("ndcg_cut@10", "ndcg@10"),
        ("NDCG@10", "ndcg@10"),
        (" recall @ 5 ", "recall@5"),
    ],
)
def test_aliases_are_written_back_in_canonical_form(alias: str, canonical: str) -> None:
    """Common spellings (trec_eval, ranx, papers) parse to the canonical metric."""
    assert parse_metric(alias) == parse_metric(canonical)
    assert str(parse_metric(alias)) == canonical


def test_unknown_name_lists_the_known_metrics() -> None:
    """A typo gets the list of valid names, not just 'invalid'."""
    with pytest.raises(ValueError, match="unknown metric") as error:
        parse_metric("recal@5")
    for name in [
        "precision@k",
        "recall@k",
        "hit@k",
        "mrr[@k]",
        "ndcg[@k]",
        "ndcg_exp[@k]",
        "map[@k]",
        "rprec",
    ]:
        assert name in str(error.value)


@pytest.mark.parametrize("text", ["", "@5", "recall@", "recall@five", "recall@5@6", 5, None])
def test_malformed_names_are_rejected(text: object) -> None:
    """Anything that is not <name> or <name>@<k> is a ValueError listing known metrics."""
    with pytest.raises(ValueError, match="known metrics"):
        parse_metric(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", CUTOFF_REQUIRED)
def test_precision_recall_hit_need_a_cutoff(name: str) -> None:
    """precision, recall and hit mean nothing without k."""
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_metric(name)


def test_rprec_takes_no_cutoff() -> None:
    """R-precision's cutoff is R itself: rprec@5 is refused."""
    with pytest.raises(ValueError, match="takes no cutoff"):
        parse_metric("rprec@5")


@pytest.mark.parametrize("text", ["recall@0", "mrr@0", "ndcg@00"])
def test_cutoff_zero_is_refused(text: str) -> None:
    """@0 would make every metric 0 or divide by zero."""
    with pytest.raises(ValueError, match="at least 1"):
        parse_metric(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ranking x, a, b, y; grades a=3, b=1; R = 2
        ("precision@2", 1 / 2),  # top 2 = x, a -> 1 relevant / 2
        ("recall@2", 1 / 2),  # 1 of 2 relevant in the top 2
        ("hit@1", 0.0),  # x is not relevant
        ("mrr", 1 / 2),  # first relevant (a) at rank 2
        ("mrr@1", 0.0),  # nothing relevant within rank 1
        ("map", (1 / 2 + 2 / 3) / 2),  # a at rank 2 -> 1/2, b at rank 3 -> 2/3
        ("rprec", 1 / 2),  # top R=2 holds a only
    ],
)
def test_calling_a_metric_computes_its_function(text: str, expected: float) -> None:
    """A parsed Metric applies its function with its own cutoff."""
    assert parse_metric(text)(["x", "a", "b", "y"], {"a": 3, "b": 1}) == pytest.approx(expected)


def test_metrics_are_hashable_values() -> None:
    """Metrics are dictionary keys in the gate: equal names give equal, hashable metrics."""
    assert parse_metric("P@5") == Metric("precision", 5)
    assert len({parse_metric("mrr"), parse_metric("RR"), parse_metric("mrr@10")}) == 2


def test_unknown_metric_cannot_be_built_directly() -> None:
    """Metric("nope") fails where it is made, not later where it is computed."""
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        Metric("nope")


def test_a_metric_shows_the_definition_and_edge_cases_of_its_function() -> None:
    """A listing (or a reader) gets the definition from the function that computes it: its
    docstring's first paragraph on one line, and the edge cases after it."""
    precision = parse_metric("P@5")
    assert precision.description == "Precision@k: relevant documents among the first k, divided by k."
    assert "Divides by k even when fewer than k documents came back" in precision.record.edge_cases
    ap = parse_metric("map")
    assert ap.description.startswith("Average precision: the mean, over ALL relevant documents, of precision")
    assert "\n" not in ap.description
    assert all(record.definition and record.edge_cases for record in REGISTRY.values())


@pytest.mark.parametrize(
    ("text", "trec_eval", "ranx"),
    [
        ("precision@10", "P_10", "precision@10"),
        ("recall@100", "recall_100", "recall@100"),
        ("hit@5", "success_5", "hit_rate@5"),
        ("mrr", "recip_rank", "mrr"),
        ("mrr@10", None, "mrr@10"),  # trec_eval's recip_rank has no cutoff
        ("ndcg@10", "ndcg_cut_10", "ndcg@10"),
        ("ndcg", "ndcg", "ndcg"),
        ("ndcg_exp@10", None, "ndcg_burges@10"),
        ("map", "map", "map"),
        ("map@10", "map_cut_10", "map@10"),
        ("rprec", "Rprec", "r-precision"),
    ],
)
def test_a_metric_knows_its_trec_eval_and_ranx_names(text: str, trec_eval: str | None, ranx: str) -> None:
    """What to ask trec_eval or ranx for to check one of our numbers."""
    metric = parse_metric(text)
    assert (metric.trec_eval, metric.ranx) == (trec_eval, ranx)


def _documented() -> dict[str, tuple[str, str]]:
    """docs/metrics.md's table: {name in eval.toml: (trec_eval cell, ranx cell)}."""
    text = (ENGINE_ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    table = text.split("| name in eval.toml |")[1].split("\n\n")[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    return {name.strip("`"): (trec, ranx) for name, _, trec, ranx in rows}


def test_docs_table_lists_every_metric_with_its_records_names() -> None:
    """docs/metrics.md cannot drift from the registry: one row per metric and cutoff form,
    with the record's trec_eval and ranx names ("(none...)" where a tool lacks one)."""
    expected = {}
    for name, record, judged_only in variants():  # ranx has no -J: no ranx name when judged-only
        if record.cutoff != "required":
            expected[name] = (record.trec_eval, None if judged_only else record.ranx)
        if record.cutoff != "none":
            expected[f"{name}@k"] = (record.trec_eval_at_k, None if judged_only else record.ranx_at_k)
    documented = _documented()
    assert set(documented) == set(expected)
    for name, names in expected.items():
        for cell, template in zip(documented[name], names, strict=True):
            if template is None:
                assert cell.startswith("(none"), (name, cell)
            else:
                assert cell == f"`{template.format(k='k')}`", (name, cell)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg_j@10", "ndcg_j@10"),
        ("map_j", "map_j"),
        ("P_j@5", "precision_j@5"),
        ("ndcg_cut_j@3", "ndcg_j@3"),
        ("RR_j", "mrr_j"),
        ("ndcg_exp_j", "ndcg_exp_j"),
        ("bpref_j", "bpref_j"),
    ],
)
def test_judged_only_is_a_parameter_spelled_j(text: str, canonical: str) -> None:
    """`_j` sets judged_only on the measure's one record, and is written back as it was read
    (canonical): trec_eval's names of the measure (with -J), no ranx name."""
    metric = parse_metric(text)
    plain = Metric(metric.name, metric.k)
    assert str(metric) == canonical and metric.judged_only and metric.judged_docs_only
    assert metric == Metric(metric.name, metric.k, judged_only=True) != plain
    assert metric.record is REGISTRY[canonical.partition("@")[0].removesuffix("_j")]
    assert (metric.trec_eval, metric.ranx) == (plain.trec_eval, None)


def test_judged_at_k_has_no_judged_only_variant() -> None:
    """Every document of a condensed ranking is judged: judged_j@k is no metric."""
    with pytest.raises(ValueError, match="unknown metric 'judged_j@5'"):
        parse_metric("judged_j@5")
    with pytest.raises(ValueError, match="unknown metric"):
        Metric("judged", 5, judged_only=True)

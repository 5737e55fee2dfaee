"""Reading data files: only a regular file of at most its stated size, and JSON read
strictly. A FIFO would hang the run, /dev/zero would fill the memory, a symlink loop or a
directory would end in a traceback: each is exit 2 naming the file, before reading a byte."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import TINY_CORPUS, run_cli, write_jsonl
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import load_corpus
from rag_regress.inputs.reading import (
    CORPUS_LIMIT,
    QUESTIONS_LIMIT,
    REPORT_LIMIT,
    parse_json,
    read_data,
    size_text,
)
from rag_regress.inputs.reports import read_report

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")


def refused(read: Callable[[], object], *words: str) -> EvalInputError:
    with pytest.raises(EvalInputError) as caught:
        read()
    text = str(caught.value)
    for word in words:
        assert word in text
    assert text.split("fix: ", 1)[1].strip()
    return caught.value


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"x" * 1000)
    assert read_data(path, "corpus", limit=1000) == b"x" * 1000


def test_a_file_over_its_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"x" * 1001)
    refused(lambda: read_data(path, "corpus", limit=1000), "data.jsonl", "larger than 1000 bytes")


@needs_fifo
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until someone writes; the reader never waits."""
    path = tmp_path / "corpus.jsonl"
    os.mkfifo(path)
    refused(lambda: load_corpus(path), "corpus.jsonl", "named pipe")


@needs_dev_zero
def test_a_device_is_refused_before_it_fills_the_memory() -> None:
    """/dev/zero never ends: reading it grew a run to 22 GB before the kernel killed it."""
    refused(lambda: load_corpus(Path("/dev/zero")), "zero", "a device")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").mkdir()
    refused(lambda: load_corpus(tmp_path / "corpus.jsonl"), "corpus.jsonl", "a directory")


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "b.jsonl")
    (tmp_path / "b.jsonl").symlink_to(tmp_path / "a.jsonl")
    refused(lambda: load_corpus(tmp_path / "a.jsonl"), "a.jsonl", "symlink loop")


def test_a_symlink_to_a_file_is_read(tmp_path: Path) -> None:
    """Links are fine (a shared corpus linked into evals/): only what they lead to matters."""
    write_jsonl(tmp_path / "real.jsonl", TINY_CORPUS)
    (tmp_path / "corpus.jsonl").symlink_to(tmp_path / "real.jsonl")
    assert len(load_corpus(tmp_path / "corpus.jsonl")) == len(TINY_CORPUS)


@needs_fifo
@pytest.mark.parametrize("kind", ["fifo", "directory", "loop"])
def test_a_baseline_that_is_not_a_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "baseline.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(path)
    refused(
        lambda: read_report(path),
        "baseline.json",
        {"fifo": "named pipe", "directory": "directory", "loop": "symlink loop"}[kind],
    )


def test_limits_are_ordered_and_stated() -> None:
    """The documented limits: the corpus is the largest input, a question file the smallest."""
    assert QUESTIONS_LIMIT < REPORT_LIMIT < CORPUS_LIMIT
    assert size_text(CORPUS_LIMIT) == "1 GiB" and size_text(REPORT_LIMIT) == "512 MiB"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"a": 1, "a": 2}', "'a' appears twice"),
        ('{"a": {"b": 1, "b": 1}}', "'b' appears twice"),
        ('{"a": NaN}', "NaN is not a number"),
        ('{"a": -Infinity}', "-Infinity is not a number"),
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ('{"a": ' + "1" * 5000 + "}", "not usable JSON"),
        ('{"a": 1,}', "not valid JSON"),
    ],
    ids=["duplicate", "nested-duplicate", "nan", "infinity", "deep", "huge-number", "syntax"],
)
def test_strict_json(tmp_path: Path, text: str, words: str) -> None:
    refused(lambda: parse_json(text, tmp_path / "x.json", "write JSON"), "x.json", words)


@needs_fifo
@needs_dev_zero
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_the_command_line_refuses_a_corpus_that_is_not_a_file(
    project: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eval` with the corpus a FIFO (hung before) or /dev/zero (ran out of memory): exit 2,
    the file named, no traceback, nothing written."""
    corpus = project.parent / "corpus.jsonl"
    if kind == "fifo":
        corpus.unlink()
        os.mkfifo(corpus)
    else:
        project.write_text(
            project.read_text(encoding="utf-8").replace('"corpus.jsonl"', '"/dev/zero"'), encoding="utf-8"
        )
    assert run_cli(["--config", str(project), "eval"]) == 2
    err = capsys.readouterr().err
    assert ("named pipe" if kind == "fifo" else "a device") in err and "Traceback" not in err
    assert not (project.parent / "build").exists()

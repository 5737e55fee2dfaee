"""write_atomic: the whole new file or the old one, with the permissions a plain write gives,
through a temporary file .gitignore covers; check_output: an output never lands on an input,
outside the project (when configured) or where no file can be."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import ENGINE_ROOT
from rag_regress.errors import EvalInputError
from rag_regress.inputs import files
from rag_regress.inputs.files import check_output, write_atomic


def test_written_file_has_the_mode_a_plain_write_gives(tmp_path: Path) -> None:
    """Reports and baselines must be readable by the team and CI, not private to the writer."""
    plain = tmp_path / "plain.json"
    plain.write_text("{}", encoding="utf-8")
    atomic = tmp_path / "atomic.json"
    write_atomic(atomic, "{}")
    assert atomic.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_replaces_the_old_content_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "build" / "report.json"
    write_atomic(target, "old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(os.listdir(target.parent)) == ["report.json"]


def test_never_replaces_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """A pipe (or a device such as /dev/null, given as --report) stays what it is: replacing
    it with a file would break every program that uses it."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(EvalInputError, match="not a regular file"):
        write_atomic(pipe, "{}")
    assert pipe.is_fifo() and not list(tmp_path.glob(".pipe.*"))  # no temporary file left


def test_temporary_files_are_named_as_the_generated_gitignore_covers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed between writing and renaming leaves its temporary file: its name must be
    one .gitignore covers (killed runs once left 265 MB of .tmp files to commit). A failed
    rename removes it."""
    seen: list[str] = []

    def killed(source: str, target: object) -> None:
        seen.append(Path(source).name)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "replace", killed)
    target = tmp_path / "out" / "report.json"
    with pytest.raises(EvalInputError, match="Input/output error"):
        write_atomic(target, "{}")
    ignored = (
        (ENGINE_ROOT.parent / "{{cookiecutter.project_slug}}" / ".gitignore")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    assert files.TEMPORARY in ignored
    (name,) = seen
    assert fnmatch.fnmatch(name, files.TEMPORARY) and name.startswith(".report.json.")
    assert os.listdir(target.parent) == []


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda target: target.mkdir(), "is a folder"),
        (lambda target: target.parent.rmdir() or target.parent.write_text(""), "is a file, not a folder"),
    ],
    ids=["folder", "parent is a file"],
)
def test_check_output_refuses_paths_that_cannot_be_files(tmp_path: Path, make: Any, said: str) -> None:
    target = tmp_path / "build" / "report.json"
    target.parent.mkdir()
    make(target)
    with pytest.raises(EvalInputError, match=said):
        check_output(target, "report", {})


def test_check_output_allows_a_fresh_file_in_a_folder_yet_to_be_made(tmp_path: Path) -> None:
    check_output(tmp_path / "build" / "deep" / "report.json", "report", {}, project=tmp_path)


def test_check_output_refuses_an_input_however_it_is_spelt(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    with pytest.raises(EvalInputError, match="would replace the golden set"):
        check_output(tmp_path / "sub" / ".." / "golden.jsonl", "report", {golden.resolve(): "the golden set"})


def test_check_output_keeps_configured_outputs_inside_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(EvalInputError, match="must be inside the project folder"):
        check_output(project / ".." / "x.json", "report", {}, project=project)
    check_output(project / ".." / "x.json", "report", {})  # given on the command line: allowed

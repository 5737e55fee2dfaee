# Engine test (the template's: `cruft update` keeps it current). It runs the shipped retriever
# and the stand-in generator, never your retriever.py or generator.py: see tests/conftest.py.
"""write_atomic: the whole new file or the old one, with the permissions a plain write gives."""

from __future__ import annotations

import os
from pathlib import Path

from {{ cookiecutter.package_name }}.inputs.files import write_atomic


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

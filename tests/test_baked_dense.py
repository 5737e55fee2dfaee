"""End to end for the choices that embed (dense, hybrid): torch, sentence-transformers and
the all-MiniLM-L6-v2 model from its PyPI package, all offline (conftest sets HF_HUB_OFFLINE).

Installing torch is the slow part, so this module keeps the installs few: the hybrid bake
(which holds the BM25 and dense retrievers and both their test files) runs its tests and
gate; the dense bake runs its gate. Both must ship the baseline they really produce.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import bake, nox
from test_baked_projects import output


@pytest.mark.parametrize(("retriever", "sessions"), [("hybrid", ("tests", "gate")), ("dense", ("gate",))])
def test_embedding_project_passes_offline_and_ships_its_true_baseline(
    tmp_path: Path, retriever: str, sessions: tuple[str, ...]
) -> None:
    project = bake(tmp_path, f"retriever={retriever}")
    result = nox(project, *sessions)
    assert result.returncode == 0, output(result)
    assert "GATE PASSED" in result.stdout
    if "tests" in sessions:
        log = result.stdout + result.stderr
        assert " passed" in log and " failed" not in log
    fresh = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    shipped = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    assert fresh == shipped, "stale shipped baseline: run `nox -s baselines` at the template root"
    assert list((project / "build" / "embeddings").glob("*.npy")), "document embeddings are cached"

"""End to end for the choices that embed (dense, hybrid): torch, sentence-transformers and
the all-MiniLM-L6-v2 model from its PyPI package, all offline (conftest sets HF_HUB_OFFLINE).

Installing torch is the slow part, so this module keeps the installs few: the hybrid bake
(which holds the BM25 and dense retrievers and both their test files) runs its tests, then
its gate from the tests environment; the dense bake runs its gate. Both must ship the
baseline they really produce.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_ships_its_true_baseline, bake, nox, package_of, run
from test_baked_projects import output

# Three engine tests run the command line dozens of times over (fuzzed inputs, four commands
# at once, a 3,000-question table into a closed pipe): with an embedding retriever each run
# loads torch and the model, minutes on 2 cores. What they check does not depend on the
# retriever, and every keyword bake runs them (test_baked_projects.py, test_day_one.py).
CLI_REPEATERS = "not (mutated_inputs_never_crash or concurrent_gate_eval or closed_pipe)"


@pytest.mark.parametrize(
    ("retriever", "sessions"), [("hybrid", ("tests", "--", "-k", CLI_REPEATERS)), ("dense", ("gate",))]
)
def test_embedding_project_passes_offline_and_ships_its_true_baseline(
    tmp_path: Path, retriever: str, sessions: tuple[str, ...]
) -> None:
    project = bake(tmp_path, f"retriever={retriever}")
    result = nox(project, *sessions)
    assert result.returncode == 0, output(result)
    said = result.stdout + result.stderr
    if "tests" in sessions:
        assert " passed" in said and " failed" not in said
        # The gate from the tests session's environment: one torch install fewer than
        # `nox -s gate` (same command, same installed project).
        result = run(project, str(next((project / ".nox").glob("tests*/bin/")) / package_of(project)), "gate")
        assert result.returncode == 0, output(result)
    assert "GATE PASSED" in result.stdout
    assert_ships_its_true_baseline(project)
    assert list((project / "build" / "embeddings").glob("*/*.npz")), "document embeddings are cached"

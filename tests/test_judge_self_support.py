"""The baked judge reads BEIR SciFact's every sentence as supported by its own document.

The generated project's test (tests/engine/answers/test_judges.py) takes any corpus through
RAG_EVAL_SELF_SUPPORT_CORPUS; here it runs once per run of the template's tests, on the
SciFact test collection beside this repository (../shared/datasets/scifact), in the default
bake's own nox `tests` session. Claims and contexts must read alike: a sentence copied from a
document is the document's, with the judge's shortcut for copied text switched off.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENV, SCIFACT


@pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"needs BEIR SciFact at {SCIFACT}")
def test_every_scifact_sentence_is_supported_by_its_own_document(default_project: Path) -> None:
    command = [sys.executable, "-m", "nox", "--non-interactive", "-s", "tests", "--"]
    command += ["-n", "0", "-p", "no:cacheprovider", "-q", "-k", "every_sentence_of_a_given_corpus"]
    command += ["tests/engine/answers/test_judges.py"]
    result = subprocess.run(
        command,
        cwd=default_project,
        capture_output=True,
        text=True,
        env={**ENV, "RAG_EVAL_SELF_SUPPORT_CORPUS": str(SCIFACT / "corpus.jsonl")},
        check=False,
        timeout=900,
    )
    assert result.returncode == 0, f"{result.stdout[-8000:]}\n{result.stderr[-4000:]}"
    assert "1 passed" in result.stdout

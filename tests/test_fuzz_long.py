"""The baked project's fuzz test (tests/engine/test_fuzz.py) in its long profile.

A team's CI runs the short profile with the rest of its suite; here, once per run of the
template's tests, the same test drives the command line with many more mutated configs, data,
baselines and caches (RAG_EVAL_FUZZ=long), in the project's own nox `tests` session.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ENV


def test_fuzz_long_profile_passes_in_a_baked_project(default_project: Path) -> None:
    command = [sys.executable, "-m", "nox", "--non-interactive", "-s", "tests", "--"]
    # one test: `-n 0` overrides the session's `-n auto` (no workers to start); no
    # .pytest_cache left in the shared bake
    command += ["-n", "0", "-p", "no:cacheprovider", "-q", "tests/engine/test_fuzz.py"]
    result = subprocess.run(
        command,
        cwd=default_project,
        capture_output=True,
        text=True,
        env={**ENV, "RAG_EVAL_FUZZ": "long"},
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, f"{result.stdout[-8000:]}\n{result.stderr[-4000:]}"
    assert "1 passed" in result.stdout

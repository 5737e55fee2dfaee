"""The receipt in every report, and the gate's refusal to compare different data."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import TINY_GOLDEN, evaluate_shipped, run_cli, write_jsonl
from rag_regress.gate.receipt import git_commit, judge_fields
from rag_regress.settings.config import load_config


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(config_path: Path, *args: str) -> int:
    return run_cli(["--config", str(config_path), *args])


def test_every_report_carries_a_receipt(project: Path) -> None:
    config = load_config(project)
    receipt = evaluate_shipped(config)["receipt"]
    root = project.parent
    assert receipt["sha256"] == {
        "corpus": sha256(root / "corpus.jsonl"),
        "golden": sha256(root / "golden.jsonl"),
        "config": sha256(project),
    }
    assert receipt["seed"] == config.stats.seed and receipt["k"] == config.k == 5
    assert {"python", "numpy", "scipy"} <= set(receipt["versions"])
    # the tiny project uses the default judge
    assert receipt["judge"] == {"name": "lexical", "model": None, "revision": None}


def test_judge_identity_comes_from_the_settings() -> None:
    settings = {"judge": {"name": "nli", "model": "cross-encoder/x", "revision": "abc123", "other": 1}}
    assert judge_fields(settings) == {"name": "nli", "model": "cross-encoder/x", "revision": "abc123"}
    assert judge_fields({}) == {"name": None, "model": None, "revision": None}


def test_git_commit_is_recorded_inside_a_repository_and_null_outside(tmp_path: Path) -> None:
    assert git_commit(tmp_path) is None  # not a repository: no failure, just null
    if shutil.which("git") is None:
        pytest.skip("git is not installed: only the no-repository case can be checked")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", *env, "commit", "-q", "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True)
    assert git_commit(tmp_path) == head.stdout.strip()


def test_changed_golden_line_refuses_the_gate_naming_the_hash(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Edit one golden question without remaking the baseline: exit 2, naming the golden
    set's hash old -> new (not the unchanged corpus), and nothing is written. The explicit
    flag compares anyway and says so."""
    assert run(project, "baseline") == 0
    golden = project.parent / "golden.jsonl"
    old = sha256(golden)
    write_jsonl(golden, [{**TINY_GOLDEN[0], "question": "SSO login"}, *TINY_GOLDEN[1:]])
    new = sha256(golden)
    capsys.readouterr()

    assert run(project, "gate") == 2
    err = capsys.readouterr().err
    assert f"golden sha256 {old[:12]} -> {new[:12]} (golden.jsonl)" in err
    assert "corpus sha256" not in err and "--accept-changed-data" in err
    assert not (project.parent / "build" / "report.json").exists()

    assert run(project, "gate", "--accept-changed-data") == 0
    out = capsys.readouterr().out
    assert "compared despite changed data" in out and f"{old[:12]} -> {new[:12]}" in out
    report = json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))
    assert report["receipt"]["sha256"]["golden"] == new


def test_changed_corpus_refuses_the_gate(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(project, "baseline") == 0
    corpus = project.parent / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("yearly", "monthly"), encoding="utf-8")
    capsys.readouterr()
    assert run(project, "gate") == 2
    assert "corpus sha256" in capsys.readouterr().err


def test_a_config_change_is_recorded_but_not_refused(project: Path) -> None:
    """Changing a setting of the system is what the gate is for: the config hash changes, the
    gate runs. (A setting that changes what a metric measures is refused: test_integrity.py.)"""
    assert run(project, "baseline") == 0
    before = json.loads((project.parent / "baseline.json").read_text(encoding="utf-8"))["receipt"]
    project.write_text(
        project.read_text(encoding="utf-8").replace("tolerance = 0.02", "tolerance = 0.03"), encoding="utf-8"
    )
    assert run(project, "gate") == 0
    after = json.loads((project.parent / "build" / "report.json").read_text(encoding="utf-8"))["receipt"]
    assert after["sha256"]["config"] != before["sha256"]["config"]
    assert after["sha256"]["golden"] == before["sha256"]["golden"]


def test_baseline_without_a_receipt_is_refused_until_remade(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A baseline from before receipts cannot prove it measured the same data."""
    assert run(project, "baseline") == 0
    path = project.parent / "baseline.json"
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["receipt"]
    path.write_text(json.dumps(old), encoding="utf-8")
    capsys.readouterr()
    assert run(project, "gate") == 2
    assert "computed by an engine that records no version" in capsys.readouterr().err
    assert run(project, "baseline") == 0 and run(project, "gate") == 0

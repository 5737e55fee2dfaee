"""Files stay whole: several commands running at once on the same project (two CI jobs, a
developer's terminal and a pre-push hook) never leave a torn report or baseline behind, and
never read one either. Reports and baselines are written through files.write_atomic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_cli

# Each process runs one command `repeat` times in a row, so the writes overlap many times.
RUNNER = """
import sys
from conftest import run_cli  # the shipped system, as in the test itself
repeat, args = int(sys.argv[1]), sys.argv[2:]
sys.exit(max(run_cli(args) for _ in range(repeat)))
"""
REPEAT = 25


def start(config: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", RUNNER, str(REPEAT), "--config", str(config), *args]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # same imports as this test
    # stdout is not read while they run: a full pipe would block the process, so discard it
    return subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment
    )


def test_concurrent_gate_eval_and_baseline_runs_keep_every_file_whole(project: Path) -> None:
    """Two gates, an eval and a baseline run at the same time, 25 times each. Every run
    exits 0 (a gate that read a half-written baseline would exit 2); every read of the
    report while they run parses; at the end report and baseline equal a sequential run's,
    and no temporary file is left behind."""
    folder = project.parent
    report, baseline = folder / "build" / "report.json", folder / "baseline.json"
    assert run_cli(["--config", str(project), "baseline"]) == 0
    assert run_cli(["--config", str(project), "gate"]) == 0
    gate_report = report.read_text("utf-8")  # the gate's report adds its verdict ("comparison")
    assert run_cli(["--config", str(project), "eval", "--quiet"]) == 0
    expected_report, expected_baseline = report.read_text("utf-8"), baseline.read_text("utf-8")

    processes = [
        start(project, "gate"),
        start(project, "gate"),
        start(project, "eval", "--quiet"),
        start(project, "baseline"),
    ]
    reads = 0
    while any(process.poll() is None for process in processes):
        for path in (report, baseline):
            json.loads(path.read_text("utf-8"))  # a torn file would raise here
            reads += 1
        time.sleep(0.001)
    for process in processes:
        _, err = process.communicate()
        assert process.returncode == 0, f"{process.args[-1]} exited {process.returncode}:\n{err[-2000:]}"

    assert reads > 0
    assert report.read_text("utf-8") in (expected_report, gate_report)  # whichever finished last
    assert baseline.read_text("utf-8") == expected_baseline
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.html", "report.json", "summary.md"]
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]

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

from {{ cookiecutter.package_name }}.cli import main

# Each process runs one command `repeat` times in a row, so the writes overlap many times.
RUNNER = """
import sys
from {{ cookiecutter.package_name }}.cli import main
repeat, args = int(sys.argv[1]), sys.argv[2:]
sys.exit(max(main(args) for _ in range(repeat)))
"""
REPEAT = 25


def start(config: Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", RUNNER, str(REPEAT), "--config", str(config), *args]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # same imports as this test
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    )


def test_concurrent_gate_eval_and_baseline_runs_keep_every_file_whole(project: Path) -> None:
    """Two gates, an eval and a baseline run at the same time, 25 times each. Every run
    exits 0 (a gate that read a half-written baseline would exit 2); every read of the
    report while they run parses; at the end report and baseline equal a sequential run's,
    and no temporary file is left behind."""
    folder = project.parent
    report, baseline = folder / "build" / "report.json", folder / "baseline.json"
    assert main(["--config", str(project), "baseline"]) == 0
    assert main(["--config", str(project), "eval", "--quiet"]) == 0
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
        out, err = process.communicate()
        assert process.returncode == 0, f"{process.args[-1]} exited {process.returncode}:\n{out[-2000:]}{err}"

    assert reads > 0
    assert report.read_text("utf-8") == expected_report
    assert baseline.read_text("utf-8") == expected_baseline
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.json"]
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]

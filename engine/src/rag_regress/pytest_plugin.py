"""The pytest plugin: the gate as tests, and the project's judge, for a team's own test suite.

Installed with the package (entry point `pytest11`), so a project's tests just ask for:

  rag_regress_gate   the outcome of `rag-regress gate` on the project: the command itself, in
                     a process of its own (so nothing the team's code does to the process can
                     end the test session or pass it), run once per session, so `pytest -m
                     gate` and `nox -s gate` can never disagree. `.exit_code` (0 pass, 2 cannot run,
                     3 regression), `.output` (what the gate printed), `.report` (the JSON
                     report it wrote), `.check()` fails the test with the gate's own words
                     unless it passed.
  rag_regress_judge  the judge eval.toml configures, as a function: `judge(claim, contexts)`
                     returns its Verdict (`.supported`, `.reason`).

`--rag-regress-config PATH` names the eval.toml (default: eval.toml in pytest's root folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .answers.judges import Verdict, build_judge
from .answers.verdicts import asked_of
from .errors import EvalInputError, ExitCode
from .settings.config import load_config


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rag-regress-config",
        default=None,
        help="the eval.toml the rag_regress fixtures read (default: eval.toml in the root folder)",
    )


def _config_path(config: pytest.Config) -> Path:
    given = config.getoption("--rag-regress-config")
    return Path(given) if given else config.rootpath / "eval.toml"


@dataclass(frozen=True)
class GateOutcome:
    """What one run of the gate ended with and said."""

    exit_code: int
    output: str  # stdout and stderr, as the console shows them
    report_path: Path | None = None
    report: dict[str, Any] = field(default_factory=dict)  # the report the gate wrote, if any

    @property
    def passed(self) -> bool:
        return self.exit_code == ExitCode.OK

    def check(self) -> None:
        """Fail the calling test, with the gate's own output, unless the gate passed."""
        if self.passed:
            return
        why = {
            int(ExitCode.REGRESSION): "quality regressed",
            int(ExitCode.INVALID_INPUT): "the gate could not run",
        }
        reason = why.get(self.exit_code, "the gate did not finish")
        pytest.fail(f"gate exit code {self.exit_code} ({reason}):\n{self.output}", pytrace=False)


def run_gate(config_path: Path) -> GateOutcome:
    """`rag-regress --config PATH gate --quiet` in a process of its own, its output captured."""
    done = subprocess.run(
        [sys.executable, "-m", "rag_regress", "--config", str(config_path), "gate", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )
    code = done.returncode if done.returncode >= 0 else 128 - done.returncode
    output = done.stdout.decode("utf-8", "replace")
    report_path, report = None, {}
    with contextlib.suppress(EvalInputError, OSError, ValueError):
        report_path = load_config(config_path).report
        if code in (ExitCode.OK, ExitCode.REGRESSION):  # only a finished gate wrote this run's report
            report = json.loads(report_path.read_text(encoding="utf-8"))
    return GateOutcome(int(code), output, report_path, report)


@pytest.fixture(scope="session")
def rag_regress_gate(pytestconfig: pytest.Config) -> GateOutcome:
    """The gate on this project, run once per test session (see the module docstring)."""
    return run_gate(_config_path(pytestconfig))


@pytest.fixture(scope="session")
def rag_regress_judge(pytestconfig: pytest.Config) -> Callable[[str, Sequence[str]], Verdict]:
    """The judge [judge] configures: `judge(claim, contexts) -> Verdict`."""
    path = _config_path(pytestconfig)
    try:
        config = load_config(path)
        judge = build_judge(config.judge, config.path)
    except EvalInputError as error:
        pytest.fail(f"the judge cannot be built: {error}", pytrace=False)

    def verdict(claim: str, contexts: Sequence[str]) -> Verdict:
        (result,) = asked_of(judge, [(claim, tuple(contexts))], config.judge, config.path)
        return result

    return verdict

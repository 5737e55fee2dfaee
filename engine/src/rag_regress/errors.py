"""The project's own error type and the exit codes every command uses."""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Exit codes of the command line; CI scripts may rely on them."""

    OK = 0
    INVALID_INPUT = 2  # bad data, config or retriever output, or a baseline we cannot compare
    REGRESSION = 3  # quality got worse: the gate failed


def shown_path(path: str | Path) -> str:
    """`path` relative to where the command runs when it lies inside (shorter, and clickable in
    most terminals), else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return str(path)


class EvalInputError(Exception):
    """Input we refuse to evaluate. Says where (file and line), what is wrong and the fix;
    `detail`, when given, is lines shown between the two (the team's own traceback).

    The command line prints it and exits with `ExitCode.INVALID_INPUT`; nothing is written.
    """

    def __init__(self, path: str | Path, problem: str, fix: str, line: int | None = None, detail: str = ""):
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        self.detail = detail
        super().__init__(str(self))

    def __reduce__(self) -> tuple[object, ...]:
        # Picklable with all its fields: an error raised on a cluster's worker comes back whole.
        return (type(self), (self.path, self.problem, self.fix, self.line, self.detail))

    def __str__(self) -> str:
        shown = shown_path(self.path)
        where = f"{shown}:{self.line}" if self.line is not None else shown
        detail = f"\n{self.detail}" if self.detail else ""
        return f"{where}: {self.problem}{detail}\n  fix: {self.fix}"


class SettingError(ValueError):
    """A problem a validator of eval.toml found, with its fix; `key` when it is not where it was raised."""

    def __init__(self, problem: str, fix: str, key: tuple[str, ...] | None = None):
        super().__init__(problem)
        self.fix, self.key = fix, key

"""How the team's code appears in an error: its own frames and lines, never the engine's.

A team reads an error about its code as Python would show it, but only the part that is
theirs: the engine's frames (the command line, the orchestrator, the worker thread that
calls them) and Python's (importlib, concurrent.futures) say nothing they can fix, and a
traceback through the engine reads as the engine's crash.
"""

from __future__ import annotations

import sysconfig
import traceback
from pathlib import Path

from ..errors import EvalInputError, shown_path

_ENGINE = Path(__file__).resolve().parents[1]
_PYTHON = tuple(
    {Path(folder).resolve() for key in ("stdlib", "platstdlib") if (folder := sysconfig.get_path(key))}
)
_INSTALLED = frozenset({"site-packages", "dist-packages"})
TEAM_FRAMES_SHOWN = 12  # the innermost ones; a deep library stack says "N earlier frames left out"


def _installed(path: Path) -> bool:
    """A file of an installed distribution (a library), not one the team is editing."""
    return not _INSTALLED.isdisjoint(path.parts)


def _theirs(filename: str) -> bool:
    """A frame of the team's code or of a library it uses: neither the engine's nor Python's
    own (the standard library; "<frozen importlib._bootstrap>" and other generated code)."""
    if not filename or filename.startswith("<"):
        return False
    try:
        path = Path(filename).resolve()
    except (OSError, RuntimeError):
        return True
    if path.is_relative_to(_ENGINE):
        return False
    # Checked before the standard library: a virtual environment's site-packages lies
    # inside its "platstdlib" folder.
    return _installed(path) or not any(path.is_relative_to(folder) for folder in _PYTHON)


def team_frames(error: BaseException) -> list[traceback.FrameSummary]:
    """The frames of `error`'s traceback that run the team's code (or a library it calls),
    outermost first; the engine's and Python's left out."""
    return [frame for frame in traceback.extract_tb(error.__traceback__) if _theirs(frame.filename)]


def _syntax(error: BaseException) -> SyntaxError | None:
    """`error` when it is a syntax error in a file of the team's (it has no frame there)."""
    if isinstance(error, SyntaxError) and error.filename and _theirs(error.filename):
        return error
    return None


def team_location(error: BaseException) -> tuple[str, int | None] | None:
    """Where the team's code failed: a syntax error's own file and line; else the innermost
    frame of a file the team edits (a library's frame, under site-packages, only when there
    is none). None when the traceback never reaches their code."""
    syntax = _syntax(error)
    if syntax is not None:
        return str(syntax.filename), syntax.lineno
    frames = team_frames(error)
    own = [frame for frame in frames if not _installed(Path(frame.filename))] or frames
    return (own[-1].filename, own[-1].lineno) if own else None


def team_trace(error: BaseException) -> str:
    """The team's own frames of `error`, innermost last, as Python prints them (paths shown as
    EvalInputError shows its own), and a syntax error's line with its caret; "" when none."""
    frames = team_frames(error)
    left_out = max(0, len(frames) - TEAM_FRAMES_SHOWN)
    lines = [f"    ... {left_out} earlier frame(s) left out"] if left_out else []
    for frame in frames[left_out:]:
        lines.append(f'    File "{shown_path(frame.filename)}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"      {frame.line.strip()}")
    syntax = _syntax(error)
    if syntax is not None:  # Python's own rendering (caret under the offending text), file shown short
        where = (shown_path(str(syntax.filename)), syntax.lineno, syntax.offset, syntax.text)
        copy = SyntaxError(syntax.msg, (*where, syntax.end_lineno, syntax.end_offset))
        rendered = "".join(traceback.format_exception_only(copy)).splitlines()[:-1]  # not "SyntaxError: msg"
        lines.extend(f"  {line}" for line in rendered)
    return "\n".join(["  in your code (most recent call last):", *lines]) if lines else ""


def raised(error: BaseException) -> str:
    """How the team's code ended, to follow what it was doing: "raised NameError: name 'x' is
    not defined", "called sys.exit(0)"."""
    if isinstance(error, SystemExit):
        return f"called sys.exit({error.code!r})"
    if isinstance(error, SyntaxError):  # its str() repeats the file and line the message names
        return f"raised {type(error).__name__}: {error.msg}"
    return f"raised {type(error).__name__}: {error}"


def team_code_error(
    error: BaseException, problem: str, fix: str, where: str | Path, line: int | None = None
) -> EvalInputError:
    """An EvalInputError for the team's code failing with `error`: `problem` named at the
    team's own file and line when the traceback reaches their code (else at `where`:`line`),
    their frames (only theirs) between the problem and the fix."""
    located = team_location(error)
    path, at = located if located is not None else (where, line)
    return EvalInputError(path, problem, fix, at, team_trace(error))

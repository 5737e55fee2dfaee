"""Write and read evaluation reports (the JSON file `eval` writes and a baseline is).

The JSON report is the machine-readable result. It is written with one question per line
so that a changed baseline reads well in a pull-request diff, and atomically so that a
crash never leaves half a file behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from .files import write_atomic

FORMAT = "rag-eval-report"
VERSION = 1


def dumps(report: dict[str, Any]) -> str:
    """JSON text of a report: indented, with each question row on a single line."""
    parts = []
    for key, value in report.items():
        if key == "questions":
            rows = ",\n".join(f"    {json.dumps(row, ensure_ascii=False)}" for row in value)
            text = f"[\n{rows}\n  ]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_report(path: Path, report: dict[str, Any]) -> None:
    write_atomic(path, dumps(report))


def read_report(path: Path, *, what: str = "baseline") -> dict[str, Any]:
    """Read a report written by `write_report`; EvalInputError if missing or not one."""
    fix = "make it with `nox -s baseline` and commit it" if what == "baseline" else "run `nox -s eval`"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalInputError(path, f"the {what} report does not exist", fix) from None
    except (OSError, UnicodeDecodeError) as error:
        raise EvalInputError(path, f"cannot read the {what} report: {error}", fix) from None
    except json.JSONDecodeError as error:
        raise EvalInputError(
            path, f"the {what} report is not valid JSON: {error.msg}", fix, error.lineno
        ) from None
    if not isinstance(report, dict) or report.get("format") != FORMAT:
        raise EvalInputError(path, f"not a {FORMAT} file", fix)
    if report.get("version") != VERSION:
        raise EvalInputError(
            path, f"made by report format version {report.get('version')!r}, this tool reads {VERSION}", fix
        )
    for key, kind in (
        ("settings", dict),
        ("counts", dict),
        ("aggregate", dict),
        ("slices", dict),
        ("questions", list),
    ):
        if not isinstance(report.get(key), kind):
            raise EvalInputError(path, f"the {what} report has no valid {key!r}", fix)
    return report

"""Write, read and print evaluation reports.

The JSON report is the machine-readable result. It is written with one question per line
so that a changed baseline reads well in a pull-request diff, and atomically so that a
crash never leaves half a file behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import EvalInputError
from .evaluate import FORMAT, VERSION
from .files import write_atomic


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


def _number(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def _ids(ids: list[str], relevant: dict[str, int]) -> str:
    """'*id(3)' marks a relevant document and its grade."""
    return (
        " ".join(f"*{doc_id}({relevant[doc_id]})" if doc_id in relevant else doc_id for doc_id in ids)
        or "(nothing)"
    )


def format_table(report: dict[str, Any]) -> str:
    """The readable per-question table, then aggregates and per-tag slices."""
    settings, counts = report["settings"], report["counts"]
    k = settings["k"]
    names = settings["metrics"]
    width = max(len(row["id"]) for row in report["questions"])
    lines = [
        f"Retriever {settings['retriever']['name']} {settings['retriever']['options']}, k={k}",
        f"Top {k} retrieved per question; *id(g) is a relevant document of grade g.",
        "",
        f"{'':5} {'id':{width}}  " + " ".join(f"{n:>{max(6, len(n))}}" for n in names),
    ]
    for row in report["questions"]:
        top = [doc_id for doc_id, _ in row["retrieved"][:k]]
        if row["metrics"] is None:
            lines.append(f"{'--':5} {row['id']:{width}}  unanswerable: left out of retrieval metrics")
            lines.append(f"{'':5} {'':{width}}  {row['question']}")
            lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, {})}")
            continue
        status = "HIT" if row["found"] else "MISS"
        values = " ".join(f"{_number(row['metrics'][n]):>{max(6, len(n))}}" for n in names)
        lines.append(f"{status:5} {row['id']:{width}}  {values}")
        lines.append(f"{'':5} {'':{width}}  {row['question']}")
        lines.append(f"{'':5} {'':{width}}  retrieved: {_ids(top, row['relevant'])}")
        if row["missing"]:
            lines.append(f"{'':5} {'':{width}}  missing:   {_ids(row['missing'], row['relevant'])}")
    lines += [
        "",
        f"Aggregate over {counts['evaluated']} of {counts['questions']} questions "
        f"({counts['left_out']} unanswerable left out: they have no relevant documents):",
    ]
    lines += [f"  {name:<12} {_number(report['aggregate'][name])}" for name in names]
    lines += ["", "Slices by tag (n = evaluated questions):"]
    tag_width = max([len(tag) for tag in report["slices"]] + [3])
    lines.append(f"  {'tag':{tag_width}} {'n':>4}  " + " ".join(f"{n:>{max(6, len(n))}}" for n in names))
    for tag, piece in report["slices"].items():
        values = " ".join(
            f"{_number(piece['metrics'][n] if piece['metrics'] else None):>{max(6, len(n))}}" for n in names
        )
        lines.append(f"  {tag:{tag_width}} {piece['evaluated']:>4}  {values}")
    minimum = settings.get("stats", {}).get("min_slice_size", 0)
    small = [tag for tag, piece in report["slices"].items() if 0 < piece["evaluated"] < minimum]
    if small:
        lines.append(
            f"warning: fewer than min_slice_size = {minimum} evaluated questions in "
            f"{', '.join(small)}: too few to tell a change from noise (the gate does not test them)"
        )
    return "\n".join(lines)

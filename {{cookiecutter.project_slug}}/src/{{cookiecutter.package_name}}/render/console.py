"""The console rendering of a report: the per-question table, aggregates, slices, answer
problems, the holdout gap and what the verdict cache did. `eval`, `baseline` and `gate`
print these; the markdown and HTML renderings are in markdown.py and html.py."""

from __future__ import annotations

from typing import Any

from ..answers.settings import ANSWER_CHECKS


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
    return "\n".join(lines) + format_answers(report)


def format_answers(report: dict[str, Any]) -> str:
    """Per-question answer checks (failures only), then the answer aggregates and the judge."""
    judge = report["settings"].get("judge", {})
    lines = ["", "Answers (abstention, key facts, faithfulness); problems only:"]
    for row in report["questions"]:
        answer = row.get("answer")
        if not answer:
            continue
        problems = []
        if answer["abstention"] < 1:
            problems.append(
                "abstained on an answerable question"
                if answer["abstained"]
                else "answered an unanswerable question"
            )
        if answer["key_facts"] == 0 and not answer["abstained"]:
            problems.append("missing key facts: " + "; ".join(repr(f) for f in answer["missing_facts"]))
        problems += [f"unsupported: {u['claim']!r} ({u['why']})" for u in answer["unsupported"]]
        if problems:
            lines.append(f"  {row['id']}: " + f"\n  {'':{len(row['id'])}}  ".join(problems))
    aggregate = report["aggregate"]
    lines.append("Answer aggregates:")
    lines += [f"  {name:<12} {aggregate[name]:6.3f}   {meaning}" for name, meaning in ANSWER_CHECKS.items()]
    model = f", model {judge.get('model')}" + (f"@{judge['revision']}" if judge.get("revision") else "")
    lines.append(
        f"Judge {judge.get('name')}{model if judge.get('model') else ''}, threshold {judge.get('threshold')}"
    )
    return "\n".join(lines)


def cache_line(cache: dict[str, int]) -> str:
    """What the verdict cache did this run (printed by eval, baseline and gate)."""
    return (
        f"Verdict cache: {cache['hits']} hits, {cache['misses']} misses; "
        f"judge model calls this run: {cache['judge_calls']}"
    )


def format_holdout(holdout: dict[str, Any], dev_report: dict[str, Any]) -> str:
    """Dev vs holdout, one metric per line."""
    lines = [
        f"Holdout {holdout['file']}: {holdout['counts']['evaluated']} evaluated "
        f"(dev: {dev_report['counts']['evaluated']}); gap = dev - holdout",
        f"  {'metric':<12} {'dev':>7} {'holdout':>8} {'gap':>7}",
    ]
    for name, gap in holdout["gap"].items():
        lines.append(
            f"  {name:<12} {dev_report['aggregate'][name]:7.3f} {holdout['aggregate'][name]:8.3f} {gap:+7.3f}"
        )
    return "\n".join(lines)

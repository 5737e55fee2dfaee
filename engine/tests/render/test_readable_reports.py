"""What people read: the markdown summary (to $GITHUB_STEP_SUMMARY in CI) and the HTML report,
both written by `gate` from its JSON report. Plus a real-browser check of the HTML page."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import zlib
from pathlib import Path

import pytest

from conftest import (
    ENGINE_ROOT,
    SHIPPED,
    TINY_CORPUS,
    TINY_GOLDEN,
    run_cli,
    set_min_length,
    write_jsonl,
    write_project,
)
from rag_regress.api import Answer, Context, System

TINY_TEXTS = {d["id"]: d["text"] for d in TINY_CORPUS}

# The screenshot helper is a developer tool outside the package (engine/tools/screenshot.py).
_spec = importlib.util.spec_from_file_location("screenshot_tool", ENGINE_ROOT / "tools" / "screenshot.py")
assert _spec is not None and _spec.loader is not None
screenshot_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshot_tool)
CHROMIUM = screenshot_tool.find_chromium()


def gate(config_path: Path, *args: str) -> int:
    return run_cli(["--config", str(config_path), "gate", *args])


@pytest.fixture
def gated(project: Path) -> Path:
    """The tiny project after a baseline and a failing gate (min_length = 4); returns its root."""
    assert run_cli(["--config", str(project), "baseline"]) == 0
    set_min_length(project, 4)
    assert gate(project) == 3
    return project.parent


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_markdown_summary_has_the_table_failures_slices_and_receipt(gated: Path) -> None:
    summary = (gated / "build" / "summary.md").read_text(encoding="utf-8")
    report = json.loads((gated / "build" / "report.json").read_text(encoding="utf-8"))
    assert summary.startswith("## ❌ GATE FAILED")
    assert "| metric | baseline | now | delta | CI of delta | p | adj. p | floor | verdict |" in summary
    # Every gated metric's row carries the delta, interval and p-values of the JSON report.
    for test in report["comparison"]["tests"]:
        if test["scope"] == "all questions":
            row = f"| {test['metric']} | {test['baseline']:.3f} | {test['now']:.3f} | {test['delta']:+.3f} "
            assert row in summary
    assert "### Why the gate failed" in summary and "must-pass" in summary
    assert "**newly failing" in summary and "`q2`" in summary  # a blocking flip, under "why"
    assert "### Slices (per tag)" in summary and "| acronym | 3 |" in summary
    assert report["receipt"]["sha256"]["golden"] in summary


def test_summary_goes_to_the_github_step_summary_when_set(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub shows that file on the run page; steps append to it, so two runs = two summaries."""
    target = tmp_path / "step-summary.md"
    target.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert run_cli(["--config", str(project), "baseline"]) == 0
    assert gate(project) == 0
    assert gate(project) == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and text.count("## ✅ GATE PASSED") == 2
    assert not (project.parent / "build" / "summary.md").exists()


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_html_report_is_self_contained_and_escapes_text(project: Path) -> None:
    """No script, no external resource; plots are inline SVG; question text is escaped."""
    hostile = {**TINY_GOLDEN[3], "question": 'download invoices <script>alert("x")</script>'}
    write_jsonl(project.parent / "golden.jsonl", [*TINY_GOLDEN[:3], hostile, TINY_GOLDEN[4]])
    assert run_cli(["--config", str(project), "baseline"]) == 0
    set_min_length(project, 4)
    assert gate(project, "--accept-changed-data") == 3
    page = (project.parent / "build" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "GATE FAILED" in page
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched
    assert "@import" not in page and "url(" not in page
    assert page.count("<svg") == 2 * 3  # slice bars and per-question deltas for 3 gated metrics
    assert "Receipt" in page and "Slices" in page


def png_pixels(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the set of distinct pixels of an 8-bit RGB/RGBA PNG (no Pillow needed)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    chunks, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunks.setdefault(kind, b"")
        chunks[kind] += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and colour in (2, 6), "expected 8-bit RGB or RGBA"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = width * channels
    pixels, previous = set(), bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):  # undo the PNG row filter
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                guess = left + up - corner
                best = min(
                    (abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner)
                )
                line[i] = (line[i] + best[2]) & 255
        if y % 8 == 0:  # a sample of rows is enough to tell a blank page from a drawn one
            pixels.update(bytes(line[i : i + 3]) for i in range(0, stride, channels * 4))
        previous = line
    return width, height, pixels


@pytest.mark.keyword  # the failing gate comes from min_length = 4
@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: `apt-get install chromium` to run this check"
)
def test_html_report_renders_in_a_real_browser(gated: Path, tmp_path: Path) -> None:
    """Headless Chromium opens the page from disk and draws it: the blue 'now' bars and the
    red per-question drops are on the screenshot. (`nox -s screenshot` does this for your
    own report after `nox -s gate`.)"""
    png = screenshot_tool.screenshot(gated / "build" / "report.html", tmp_path / "report.png")
    width, height, pixels = png_pixels(png)
    assert (width, height) == (1200, 1600)
    colours = {bytes.fromhex(c) for c in ("2f6db5", "c0392b")}  # NOW_COLOUR, DROP_COLOUR
    assert colours <= pixels, "the plots did not render"


def test_eval_table_warns_about_slices_below_the_minimum(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tiny project's tags hold 1-3 questions, under min_slice_size = 5 (the default)."""
    assert run_cli(["--config", str(project), "eval"]) == 0
    out = capsys.readouterr().out
    assert "warning: fewer than min_slice_size = 5 evaluated questions in acronym, billing, security" in out


def gated_project(tmp_path: Path, questions: int) -> Path:
    """A tiny-corpus project with `questions` questions (tagged, some must-pass), after a
    baseline and a failing gate (min_length = 4); returns the HTML report's path."""
    golden = [
        {**TINY_GOLDEN[i % 4], "id": f"question-{i:04d}", "tags": [f"tag-{i % 7}", "long-tag-name-" * 3]}
        for i in range(questions)
    ]
    config = write_project(tmp_path, golden=golden)
    assert run_cli(["--config", str(config), "baseline"]) == 0
    set_min_length(config, 4)
    assert gate(config) == 3
    return tmp_path / "build" / "report.html"


@pytest.mark.keyword  # the failing gate comes from min_length = 4
@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: `apt-get install chromium` to run this check"
)
@pytest.mark.parametrize("questions", [10, 1000])
def test_html_report_never_scrolls_sideways(tmp_path: Path, questions: int) -> None:
    """At 10 and at 1,000 questions, in a wide and a narrow window, the page is never wider
    than the window (headless Chromium measures document.documentElement.scrollWidth)."""
    page = gated_project(tmp_path, questions)
    for window in ((1200, 900), (700, 900)):
        scroll, inner = screenshot_tool.page_width(page, window)
        assert scroll <= inner, f"{questions} questions in a {window[0]} px window: {scroll} px wide"


def test_html_report_shows_each_failing_question_once_with_its_unsupported_sentences(
    project: Path,
) -> None:
    """A generator that adds a number its context lacks: the HTML lists each question once,
    with the unsupported sentence and why."""
    assert run_cli(["--config", str(project), "baseline"]) == 0

    class SaysSixty:
        def answer(self, question: str) -> Answer:
            context = TINY_TEXTS["invoices"]
            return Answer(context.replace("PDF", "PDF within 60 days"), [Context("invoices", context)])

    system = System(SHIPPED.build_retriever, lambda *args: SaysSixty())
    assert run_cli(["--config", str(project), "gate"], system) in (0, 3)
    page = (project.parent / "build" / "report.html").read_text(encoding="utf-8")
    assert "unsupported: " in page and "60 day" in page
    flips = page.split("<h2>Flips per check")[1].split("<h2>")[0]  # each check lists its questions
    assert page.replace(flips, "").count("<code>q4</code>") == 1


def test_html_report_without_tags_draws_no_slice_charts(tmp_path: Path) -> None:
    """No tags at all: no empty 'Slices' section and no empty chart."""
    golden = [{key: value for key, value in row.items() if key != "tags"} for row in TINY_GOLDEN]
    config = write_project(tmp_path, golden=golden)
    assert run_cli(["--config", str(config), "baseline"]) == 0
    assert gate(config) == 0
    page = (tmp_path / "build" / "report.html").read_text(encoding="utf-8")
    summary = (tmp_path / "build" / "summary.md").read_text(encoding="utf-8")
    assert "Slices" not in page and "Slices" not in summary


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_html_report_shows_the_notes_and_every_metric_in_one_table(gated: Path) -> None:
    """The rules the verdict applied and the flips per check are explained on the page, and
    the metric table holds the metrics the gate tests (its JSON verdict's tests) in one table."""
    page = (gated / "build" / "report.html").read_text(encoding="utf-8")
    verdict = json.loads((gated / "build" / "report.json").read_text(encoding="utf-8"))["comparison"]
    assert "Regression rules: a deterministic gated metric dropping more than 0.02" in page
    flips = page.split("<h2>Flips per check: newly failing and newly passing questions</h2>")[1]
    assert "recall@5: 3 newly failing, 0 newly passing of 4 (over the 0 allowed)" in flips.split("<h2>")[0]
    table = page.split("<table>")[1]
    for test in verdict["tests"]:
        if test["scope"] == "all questions":
            assert f"<td>{test['metric']}</td><td>{test['baseline']:.3f}</td>" in table

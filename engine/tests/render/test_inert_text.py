"""Text from the data is inert in every output: questions, ids, tags, answers and reasons can
hold anything, and none of it may act as HTML, a link or an image in the step summary, as a
CI workflow command or a terminal escape on the console, or as markup in the HTML page."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape as markup_escape

from conftest import TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, run_cli, set_min_length, write_project
from rag_regress.render.html import text as html_text
from rag_regress.render.inert import InertStream, inert, inert_console
from rag_regress.render.markdown import code, text

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![pixel](http://evil.example/p.png)",
    "[link](http://evil.example/)",
    "<http://evil.example/auto>",
    "cell|break",
    "x\n::error title=forged::from the data",
    "  ::warning::indented",
    "##[error]legacy command",
    "\x1b[31mred\x1b[0m",
    "over\rwritten",
    "\u202eright-to-left",
    "`tick`",
]
HOSTILE = " ".join(PAYLOADS)

# What a CI runner reads as a command: `::` after leading whitespace at a line start, or the
# older `##[` anywhere in a line. Terminal control: C0/C1 other than tab and newline.
COMMAND = re.compile(r"^\s*::|##(vso)?\[", re.MULTILINE)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def console_is_inert(output: str) -> None:
    assert not COMMAND.search(output), COMMAND.search(output)
    assert not CONTROL.search(output), CONTROL.search(output)


def markdown_is_inert(summary: str) -> None:
    """No raw HTML, no link or image syntax, no control character; tables keep their shape."""
    assert not re.search(r"<(?!/?(details|summary)>)", summary)  # only the receipt's own tags
    assert not re.search(r"(?<!\\)\]\(|(?<!\\)!\[", summary)  # no link or image syntax
    assert not CONTROL.search(summary)
    for block in re.split(r"\n(?!\|)", summary):
        rows = [line for line in block.split("\n") if line.startswith("|")]
        cells = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(cells) <= 1, rows  # every row of a table has as many cells as its header


@pytest.mark.parametrize("payload", PAYLOADS)
def test_inert_console_text(payload: str) -> None:
    shown = inert(f"table line\n{payload}\n")
    console_is_inert(shown)
    assert inert(shown) == shown  # applied twice, nothing more changes
    # defused, not deleted: every word of the data is still there to read
    assert all(word in shown for word in re.findall(r"[a-z]{3,}", payload))


@given(st.text())
def test_inert_console_on_any_text(value: str) -> None:
    shown = inert(value)
    console_is_inert(shown)
    assert shown.count("\n") == value.count("\n")  # the data's lines are kept, only defused


def test_a_command_split_over_writes_is_still_caught() -> None:
    """print("::", "error::x") writes three times; the runner sees one line."""
    out = io.StringIO()
    stream = InertStream(out)
    print("::", "error::x", file=stream)
    print("ok", end="", file=stream)
    assert out.getvalue() == "\\:: error::x\n"  # the partial last line waits ...
    stream.close_line()
    assert out.getvalue().endswith("ok")  # ... until the stream is given back


def test_everything_printed_by_the_command_line_is_inert() -> None:
    """stdout and stderr, whoever prints: an error, a warning, the team's code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), inert_console():
        print("id\n::error::x")
        print("\x1b[2J", file=sys.stderr)
    console_is_inert(out.getvalue() + err.getvalue())
    assert "\\::error::x" in out.getvalue() and "\\x1b[2J" in err.getvalue()


@given(st.text())
def test_markdown_text_is_one_inert_cell(value: str) -> None:
    cell = text(value)
    assert "\n" not in cell and "<" not in cell and ">" not in cell
    assert not re.search(r"(?<!\\)[|\[\]!`*_#]", cell.replace("\\\\", ""))
    assert not CONTROL.search(cell)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_renders_no_element_from_data(payload: str) -> None:
    markdown_it = pytest.importorskip("markdown_it")  # a CommonMark renderer, when installed
    renderer = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    page = renderer.render(f"| a | b |\n|---|---|\n| {text(payload)} | {code(payload)} |\n")
    assert not re.search(r"<(a|img|script)\b", page)
    assert page.count("<td>") == 2


@pytest.mark.parametrize("payload", PAYLOADS)
def test_html_text_escapes_markup_and_controls(payload: str) -> None:
    shown = html_text(payload)
    assert "<" not in shown and ">" not in shown and '"' not in shown
    assert not CONTROL.search(shown)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """The tiny project with payloads in every question, in tags, in two ids, in a slice
    floor's tag, and in a document and a key fact (so in answers and in the reasons a check
    fails); returns its eval.toml."""
    corpus = json.loads(json.dumps(TINY_CORPUS))
    # words under 4 letters: the 2FA question still misses with min_length = 4
    corpus[2]["text"] += " Tap <b>![x](y)</b> now.\n:: \x1b[2J"
    golden = json.loads(json.dumps(TINY_GOLDEN))
    golden[1]["must_include"].append("<b>![x](y)</b>")
    for i, row in enumerate(golden):
        row["question"] += " " + HOSTILE
        row["tags"] += [PAYLOADS[i % len(PAYLOADS)], "tag\n::error::in a tag"]
    golden[0]["id"] = "q1\n::error title=id::<script>x</script>"
    golden[2]["id"] = "q3![p](http://evil.example/p.png)|\x1b[2J"
    slice_floor = '[gate.slices."![pixel](http://evil.example/p.png)"]\n"hit@5" = 0.5\n\n[gate.floors]'
    config = TINY_CONFIG.replace("[gate.floors]", slice_floor, 1)
    return write_project(tmp_path / "project", config, corpus=corpus, golden=golden)


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_hostile_data_is_inert_through_eval_and_gate(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """eval, baseline and a failing gate on hostile data: the console, the step summary and
    the HTML page carry every payload as text, none of it as an action."""
    assert run_cli(["--config", str(hostile), "eval", "--all"]) == 0
    assert run_cli(["--config", str(hostile), "baseline"]) == 0
    set_min_length(hostile, 4)
    assert run_cli(["--config", str(hostile), "gate"]) == 3
    printed = capsys.readouterr()
    console_is_inert(printed.out + printed.err)
    assert "\\::error title=id::" in printed.out  # the id is shown, defused
    assert "missing key facts: 'authenticator app'; '<b>![x](y)</b>'" in printed.out
    build = hostile.parent / "build"
    summary = (build / "summary.md").read_text(encoding="utf-8")
    markdown_is_inert(summary)
    assert "&lt;script&gt;" in summary and "\\!\\[pixel\\](http://evil.example/p.png)" in summary
    assert "&lt;b&gt;\\!\\[x\\](y)&lt;/b&gt;" in summary  # a reason quoting the key fact
    page = (build / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"<(script|img|a)\b", page) and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert not CONTROL.search(page)


def test_an_error_message_quoting_data_is_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A slice floor on a tag nobody has: the error lists the tags there are, data and all."""
    golden = json.loads(json.dumps(TINY_GOLDEN))
    golden[1]["tags"].append("x\n::error title=forged::in an error")
    config = TINY_CONFIG.replace("[gate.floors]", '[gate.slices.missing]\n"hit@5" = 0.5\n\n[gate.floors]', 1)
    path = write_project(tmp_path / "project", config, golden=golden)
    assert run_cli(["--config", str(path), "baseline"]) in (0, 2)
    assert run_cli(["--config", str(path), "gate"]) == 2
    printed = capsys.readouterr()
    assert "missing" in printed.err
    console_is_inert(printed.out + printed.err)


def test_a_step_summary_that_cannot_be_written_is_exit_2(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["--config", str(project), "baseline"]) == 0
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder
    assert run_cli(["--config", str(project), "gate"]) == 2
    assert "GITHUB_STEP_SUMMARY" in capsys.readouterr().err


class _Texts(HTMLParser):
    """Every run of text of a page, with the element it is in (entities decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.texts: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "meta":  # the page's one void element (`<line .../>` ends itself here)
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (self.open, tag)  # no element closed by data
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append((self.open[-1] if self.open else "", data))


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_report_html_escapes_closing_tags_and_ampersands(project: Path) -> None:
    """A question text, an id and a tag holding `<script>`, `</svg>`, `&` and quotes print as
    text wherever report.html shows them: in the lists, in the SVG plots' titles, in the tables
    (autoescape on the page's template, render/templates/report.html.j2); every element the
    page opens, its own SVG included, is closed by the page, never by the data."""
    payload = """R&D </svg><script>alert("x")</script> &amp; it's"""
    golden = json.loads(json.dumps(TINY_GOLDEN))
    golden[1]["question"] += " " + payload  # q2 ("2FA") newly fails at min_length = 4
    golden[1]["id"] = "q2</svg>&<b>"
    golden[1]["tags"].append("tag</svg>&<b>")
    write_project(project.parent, golden=golden)
    assert run_cli(["--config", str(project), "baseline"]) == 0
    set_min_length(project, 4)
    assert run_cli(["--config", str(project), "gate"]) == 3
    page = (project.parent / "build" / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "&lt;/svg&gt;&amp;&lt;b&gt;" in page
    assert page.count("<svg") == page.count("</svg>") == 2 * 3  # slices and deltas of 3 metrics
    assert str(markup_escape(payload)) in page  # `&` as &amp;, quotes as &#34; and &#39;
    parser = _Texts()
    parser.feed(page)
    parser.close()
    assert not parser.open
    texts = parser.texts
    assert any(tag == "li" and payload in text for tag, text in texts)  # the question, as text
    assert ("title", "tag</svg>&<b>") in texts  # the tag, in a slice plot
    assert any(tag == "title" and text.startswith("q2</svg>&<b>: ") for tag, text in texts)  # a delta
    assert ("code", "q2</svg>&<b>") in texts and ("td", "tag</svg>&<b>") in texts

"""The tutorial's tokenizer regression without [gate.checks]: every failing aggregate and slice
names its questions (id, baseline -> now, delta) in all three renderings, the console, the
markdown summary and the HTML page, cut to [display] max_listed; and what the run says about
the judge is true of the judge."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from conftest import TINY_CONFIG, run_cli, set_min_length, write_project
from rag_regress.render.console import cache_line

NO_CHECKS = re.sub(r"(?s)\[gate\.checks\].*?(?=\n\[generation\])", "", TINY_CONFIG)
SLICE = '\n[gate.slices.acronym]\n"hit@5" = 0.8\n'


@pytest.fixture
def regressed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The tiny project without [gate.checks], a floor on its acronym tag, after a baseline and
    a failing gate (min_length = 4); returns the project and what the gate printed."""
    config = write_project(tmp_path, config=NO_CHECKS + SLICE + "\n[display]\nmax_listed = 2\n")
    assert run_cli(["--config", str(config), "baseline"]) == 0
    set_min_length(config, 4)
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"]) == 3
    return tmp_path, capsys.readouterr().out


@pytest.mark.keyword  # the failing gate comes from min_length = 4
def test_console_names_the_questions_behind_each_failing_mean(regressed: tuple[Path, str]) -> None:
    _, out = regressed
    assert "[newly failing" not in out  # no per-question check: only means fail
    failing = out.split("GATE FAILED")[1]
    # recall@5 0.875 -> 0.125: q1, q2, q3 each 1 -> 0; two listed (max_listed = 2), one more.
    recall = failing.split("[regression] recall@5")[1].split("\n  [")[0]
    assert "largest per-question drops of recall@5 against the baseline (3 of 4 questions dropped):" in recall
    assert re.search(r'q1\s+1\.000 -> 0\.000 \(-1\.000\)  "SSO"', recall)
    assert re.search(r'q2\s+1\.000 -> 0\.000 \(-1\.000\)  "2FA"', recall)
    assert "... and 1 more question(s)" in recall and "q4" not in recall
    # The slice floor on acronym: its own questions.
    sliced = failing.split("is below its slice floor 0.800")[1].split("\n  [")[0]
    assert "largest per-question drops of hit@5 on tag 'acronym' against the baseline (3 of 3" in sliced


@pytest.mark.keyword
def test_summary_and_page_name_the_same_questions(regressed: tuple[Path, str]) -> None:
    root, _ = regressed
    summary = (root / "build" / "summary.md").read_text(encoding="utf-8")
    why = summary.split("### Why the gate failed")[1].split("###")[0]
    assert "- **regression** recall@5 0.875 -&gt; 0.125" in why
    assert (
        "  - largest per-question drops of recall@5 against the baseline (3 of 4 questions dropped):" in why
    )
    assert '    - `q1` 1.000 -&gt; 0.000 (-1.000) "SSO"' in why
    assert "    - ... and 1 more question(s): every one is in the JSON report" in why
    assert "hit@5 on tag 'acronym'" in why
    page = (root / "build" / "report.html").read_text(encoding="utf-8")
    failed = page.split("<h2>Why the gate failed</h2>")[1].split("</ul><h2>")[0]
    assert "largest per-question drops of recall@5 against the baseline" in html.unescape(failed)
    assert '<li class="detail"><code>q1</code> 1.000 -&gt; 0.000 (-1.000) &ldquo;SSO&rdquo;</li>' in failed
    assert "and 1 more question(s)" in failed


def test_the_lexical_judge_is_not_said_to_call_a_model(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lexical judge calls no model: the run counts the sentences it judged (0 once they
    are cached), never model calls; a judge behind a server also says what it was asked."""
    assert run_cli(["--config", str(project), "eval"]) == 0
    first = capsys.readouterr().out
    assert "model" not in first.split("Verdict cache:")[1].splitlines()[0]
    assert re.search(r"sentences judged this run: [1-9]", first)
    assert run_cli(["--config", str(project), "eval"]) == 0
    assert "0 misses; sentences judged this run: 0\n" in capsys.readouterr().out
    lexical = cache_line({"hits": 2, "misses": 1, "judged": 1, "rejected": 0})
    assert lexical == "Verdict cache: 2 hits, 1 misses; sentences judged this run: 1"
    served = cache_line({"hits": 0, "misses": 1, "judged": 1, "rejected": 0, "requests": 3})
    assert "judge requests: 3" in served

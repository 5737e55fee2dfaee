"""Relevant passages in golden.jsonl: a quote found in its document (runs of whitespace do
not matter) or offsets inside it; every mistake names the file, the line and a fix (exit 2
on the command line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CORPUS, TINY_GOLDEN, run_cli, write_jsonl, write_project
from rag_regress.api import Document
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import Passage, find_quote, load_golden

CORPUS = {d["id"]: Document(d["id"], d["text"], d["title"]) for d in TINY_CORPUS}
SSO_TEXT = CORPUS["sso-setup"].text  # "Turn on SSO with SAML; members then sign in through SSO."


def with_passages(passages: Any, relevant: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """A golden set whose second line's question names `passages`."""
    question = {"id": "q2", "question": "SSO", "relevant": relevant or {"sso-setup": 3}, "passages": passages}
    return [{"id": "q1", "question": "2FA", "relevant": {"2fa-setup": 3}}, question]


def load(tmp_path: Path, rows: list[dict[str, Any]]) -> list[Any]:
    return load_golden(write_jsonl(tmp_path / "golden.jsonl", rows), CORPUS)


def test_a_quote_becomes_offsets_into_the_original_text(tmp_path: Path) -> None:
    questions = load(tmp_path, with_passages([{"doc": "sso-setup", "quote": "with\n  SAML;", "grade": 2}]))
    (passage,) = questions[1].passages
    assert SSO_TEXT[passage.start : passage.end] == "with SAML;" and passage.grade == 2
    assert questions[0].passages == []  # no passages: none, and no passage metrics for it


def test_whitespace_runs_match_either_way() -> None:
    text = "Turn  on\tSSO\n\nwith SAML."
    ((start, end),) = find_quote(text, "on SSO with")
    assert text[start:end] == "on\tSSO\n\nwith"


def test_offsets_are_kept_and_the_grade_defaults_to_the_documents(tmp_path: Path) -> None:
    questions = load(tmp_path, with_passages([{"doc": "sso-setup", "start": 0, "end": len(SSO_TEXT)}]))
    assert questions[1].passages == [Passage("sso-setup", 0, len(SSO_TEXT), 3)]


@pytest.mark.parametrize(
    ("passages", "problem", "fix"),
    [
        ([{"doc": "sso-setup", "quote": "with OIDC"}], "is not in the text of 'sso-setup'", "copy the words"),
        ([{"doc": "sso-setup", "quote": "SSO"}], "occurs 2 times", "quote more of the passage"),
        ([{"doc": "sso-setup", "quote": "turn on sso"}], "is not in the text", "case and punctuation count"),
        (
            [{"doc": "sso-setup", "start": 10, "end": 999}],
            "are not inside the text",
            "0 <= start < end <= 56",
        ),
        ([{"doc": "sso-setup", "start": 5, "end": 5}], "are not inside the text", "character offsets"),
        ([{"doc": "sso-setup", "start": "0", "end": 5}], "are not inside the text", "whole numbers"),
        ([{"doc": "api-keys", "quote": "API key"}], "not one of this question's relevant", "'relevant'"),
        ([{"doc": "sso-setup", "quote": "SAML", "grade": 0}], "grade must be a whole number", "grade"),
        ([{"doc": "sso-setup", "quote": "SAML", "start": 0, "end": 4}], "either 'quote' or", '"quote"'),
        ([{"doc": "sso-setup", "text": "SAML"}], "either 'quote' or 'start' and 'end'", '"start"'),
        ({"doc": "sso-setup", "quote": "SAML"}, "'passages' must be a list", '"passages": ['),
    ],
)
def test_a_bad_passage_names_the_line_and_the_fix(
    tmp_path: Path, passages: Any, problem: str, fix: str
) -> None:
    with pytest.raises(EvalInputError) as caught:
        load(tmp_path, with_passages(passages))
    error = caught.value
    assert error.line == 2 and "golden.jsonl:2:" in str(error)
    assert problem in error.problem and fix in error.fix


def test_a_bad_passage_exits_2_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = [dict(row) for row in TINY_GOLDEN]
    golden[0]["passages"] = [{"doc": "sso-setup", "quote": "not in it"}]
    config = write_project(tmp_path, golden=golden)
    assert run_cli(["--config", str(config), "eval", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "golden.jsonl:1:" in err and "passage 1: the quote 'not in it'" in err
    assert not (tmp_path / "build").exists()

"""Loading corpus.jsonl and golden.jsonl: every mistake names the file, the line and a fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CORPUS, TINY_GOLDEN, write_jsonl
from rag_regress.api import Document
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import MAX_GRADE, load_corpus, load_golden

CORPUS = {d["id"]: Document(d["id"], d["text"], d["title"]) for d in TINY_CORPUS}
GOOD_DOC = {"id": "doc-1", "title": "Title", "text": "Some text."}
GOOD_QUESTION = {"id": "q1", "question": "How do I set up SSO?", "relevant": {"sso-setup": 3}}


def assert_names_file_line_and_fix(error: EvalInputError, path: Path, line: int | None) -> None:
    """The message a user sees: `<file>:<line>: <problem>` then `fix: <what to do>`."""
    text = str(error)
    assert path.name in text
    if line is not None:
        assert error.line == line
        assert f"{path.name}:{line}:" in text
    assert "\n  fix: " in text
    assert text.split("fix: ", 1)[1].strip()


def corpus_error(tmp_path: Path, rows: list[Any], raw: bytes | None = None) -> EvalInputError:
    path = tmp_path / "corpus.jsonl"
    if raw is not None:
        path.write_bytes(raw)
    else:
        write_jsonl(path, rows)
    with pytest.raises(EvalInputError) as caught:
        load_corpus(path)
    return caught.value


def golden_error(tmp_path: Path, rows: list[Any]) -> EvalInputError:
    path = write_jsonl(tmp_path / "golden.jsonl", rows)
    with pytest.raises(EvalInputError) as caught:
        load_golden(path, CORPUS)
    return caught.value


# -- what is accepted ---------------------------------------------------------------------


def test_corpus_loads_in_file_order_with_optional_title(tmp_path: Path) -> None:
    """Documents come back keyed by id, in file order; a missing title is ''."""
    path = write_jsonl(tmp_path / "corpus.jsonl", [GOOD_DOC, {"id": "doc-0", "text": "No title."}])
    corpus = load_corpus(path)
    assert list(corpus) == ["doc-1", "doc-0"]
    assert corpus["doc-1"] == Document("doc-1", "Some text.", "Title")
    assert corpus["doc-0"].title == ""


def test_document_with_empty_text_is_accepted(tmp_path: Path) -> None:
    """Classic test collections judge documents with empty text relevant (only their title
    can match), so an empty text loads; a text that is not a string is still refused."""
    empty = {"id": "doc-2", "title": "Only a title", "text": ""}
    corpus = load_corpus(write_jsonl(tmp_path / "corpus.jsonl", [GOOD_DOC, empty]))
    assert corpus["doc-2"] == Document("doc-2", "", "Only a title")
    error = corpus_error(tmp_path, [GOOD_DOC, {**empty, "text": None}])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "'text' must be a string" in str(error)


def test_golden_loads_every_field_and_the_line_number(tmp_path: Path) -> None:
    """Questions keep their settings, defaults for omitted keys, and where they were defined."""
    path = write_jsonl(tmp_path / "golden.jsonl", ["", *TINY_GOLDEN])
    questions = load_golden(path, CORPUS)
    assert [q.id for q in questions] == ["q1", "q2", "q3", "q4", "q5"]
    q1, q4, q5 = questions[0], questions[3], questions[4]
    assert q1.line == 2  # line 1 is blank
    assert q1.must_pass is True and q1.answerable is True
    assert q4.relevant == {"invoices": 3, "export-data": 1}
    assert q4.must_pass is False and q4.must_include == ["PDF"]
    assert q5.answerable is False and q5.relevant == {}
    assert q5.tags == ["billing", "unanswerable"]


def test_bom_and_blank_lines_are_accepted(tmp_path: Path) -> None:
    """Editors on Windows add a byte-order mark; blank lines separate groups. Both are fine,
    and line numbers still count every physical line."""
    text = f"\n{json.dumps(GOOD_DOC)}\n\n   \n{json.dumps({'id': 'doc-2', 'text': 'More.'})}\n\n"
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert list(load_corpus(path)) == ["doc-1", "doc-2"]

    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(b"\xef\xbb\xbf" + f"{json.dumps(GOOD_QUESTION)}\r\n\r\n".encode())
    (question,) = load_golden(golden, CORPUS)
    assert question.line == 1


# -- JSON Lines problems (shared by both files) -------------------------------------------


def test_malformed_json_line_number_counts_blank_lines(tmp_path: Path) -> None:
    """Line 1 good, line 2 blank, line 3 broken: the error says line 3."""
    error = corpus_error(tmp_path, [GOOD_DOC, "", '{"id": "doc-2", "text": "oops"'])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 3)
    assert "not valid JSON" in str(error)


@pytest.mark.parametrize("line", ['["doc-1", "text"]', '"just a string"', "42", "null"])
def test_non_object_line_is_rejected(tmp_path: Path, line: str) -> None:
    """Each line must be one JSON object."""
    error = corpus_error(tmp_path, [GOOD_DOC, line])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "expected a JSON object" in str(error)


@pytest.mark.parametrize(
    "line",
    [
        '{"id": "doc-2", "text": "first", "text": "second"}',  # the reader would keep "second"
        '{"id": "doc-2", "id": "doc-3", "text": "x"}',
    ],
    ids=["text", "id"],
)
def test_a_key_given_twice_on_a_line_is_refused(tmp_path: Path, line: str) -> None:
    """JSON readers keep the last of two equal keys without a word: an edited line could
    silently mean something else. Refused, naming the line and the key."""
    error = corpus_error(tmp_path, [GOOD_DOC, line])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "appears twice in one object" in str(error)


def test_a_key_given_twice_in_a_nested_object_is_refused(tmp_path: Path) -> None:
    """Two grades for one document: which one counts would be an accident of the reader."""
    line = '{"id": "q1", "question": "SSO?", "relevant": {"sso-setup": 3, "sso-setup": 1}}'
    error = golden_error(tmp_path, [line])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "'sso-setup' appears twice" in str(error)


@pytest.mark.parametrize(
    "line",
    [
        '{"id": "doc-2", "text": ' + "[" * 200_000 + "]" * 200_000 + "}",
        '{"id": "doc-2", "text": "x", "n": ' + '{"a": ' * 200_000 + "1" + "}" * 200_000 + "}",
        '{"id": "doc-2", "text": "x", "n": NaN}',
        '{"id": "doc-2", "text": "x", "n": ' + "9" * 5000 + "}",
    ],
    ids=["nested-lists", "nested-objects", "nan", "huge-number"],
)
def test_unusable_json_is_refused_with_its_line(tmp_path: Path, line: str) -> None:
    """Nesting past the recursion limit, NaN and numbers too long to convert: exit 2 with the
    line, never a RecursionError or ValueError traceback."""
    error = corpus_error(tmp_path, [GOOD_DOC, line])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "not usable JSON" in str(error)


def test_invalid_utf8_is_rejected_with_its_line(tmp_path: Path) -> None:
    """A Latin-1 'é' (byte 0xE9) on line 2 is reported, not decoded into mojibake."""
    raw = json.dumps(GOOD_DOC).encode() + b'\n{"id": "doc-2", "text": "caf\xe9"}\n'
    error = corpus_error(tmp_path, [], raw=raw)
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "UTF-8" in str(error)


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF", "\\udbff x", "\\ude00\\ud83d"])
def test_a_lone_surrogate_escape_is_refused_with_its_line(tmp_path: Path, escape: str) -> None:
    """A \\u escape of half a surrogate pair (any case, or a pair in the wrong order) decodes
    to text that cannot be written as UTF-8: refused at its line, as the raw bytes would be."""
    raw = json.dumps(GOOD_DOC).encode() + b'\n{"id": "doc-2", "text": "a ' + escape.encode() + b'"}\n'
    error = corpus_error(tmp_path, [], raw=raw)
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "lone surrogate" in str(error)


def test_escaped_characters_and_surrogate_pairs_load(tmp_path: Path) -> None:
    """Escapes of ordinary characters and of a whole surrogate pair are text like any other."""
    raw = b'{"id": "d", "title": "\\u00e9t\\u00e9", "text": "smile \\ud83d\\ude00, \\\\ud800 is a word"}\n'
    (tmp_path / "corpus.jsonl").write_bytes(raw)
    document = load_corpus(tmp_path / "corpus.jsonl")["d"]
    assert (document.title, document.text) == ("\u00e9t\u00e9", "smile \U0001f600, \\ud800 is a word")


@pytest.mark.parametrize("content", ["", "\n\n  \n"], ids=["empty", "only-blank-lines"])
def test_empty_files_are_rejected(tmp_path: Path, content: str) -> None:
    """An empty corpus or golden set would evaluate nothing and pass every gate."""
    corpus_path = tmp_path / "corpus.jsonl"
    corpus_path.write_text(content, encoding="utf-8")
    with pytest.raises(EvalInputError, match="the corpus is empty") as caught:
        load_corpus(corpus_path)
    assert_names_file_line_and_fix(caught.value, corpus_path, None)

    golden_path = tmp_path / "golden.jsonl"
    golden_path.write_text(content, encoding="utf-8")
    with pytest.raises(EvalInputError, match="the golden set is empty") as caught:
        load_golden(golden_path, CORPUS)
    assert_names_file_line_and_fix(caught.value, golden_path, None)


def test_the_holdout_is_named_as_the_holdout(tmp_path: Path) -> None:
    """The holdout has the golden set's format; its errors say which file it is."""
    path = tmp_path / "holdout.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(EvalInputError, match="the holdout is empty"):
        load_golden(path, CORPUS, "holdout")


def test_missing_file_is_reported(tmp_path: Path) -> None:
    """A wrong path in [data] says the file does not exist and where to point it."""
    with pytest.raises(EvalInputError, match="does not exist") as caught:
        load_corpus(tmp_path / "nope.jsonl")
    assert_names_file_line_and_fix(caught.value, tmp_path / "nope.jsonl", None)


# -- corpus problems ----------------------------------------------------------------------


def test_duplicate_document_id_mentions_the_first_line(tmp_path: Path) -> None:
    """Second definition on line 3; the message points back to line 1."""
    error = corpus_error(tmp_path, [GOOD_DOC, {"id": "doc-2", "text": "x"}, GOOD_DOC])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 3)
    assert "duplicate id 'doc-1'" in str(error)
    assert "first used on line 1" in str(error)


def test_unknown_corpus_key_lists_allowed_keys(tmp_path: Path) -> None:
    """'body' instead of 'text' is a typo, not extra data to ignore."""
    error = corpus_error(tmp_path, [{"id": "doc-1", "text": "x", "body": "y"}])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 1)
    assert "unknown key(s): body" in str(error)
    assert "id, text, title" in str(error)


def test_missing_corpus_key_is_named(tmp_path: Path) -> None:
    """A document without text cannot be retrieved."""
    error = corpus_error(tmp_path, [GOOD_DOC, {"id": "doc-2", "title": "t"}])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 2)
    assert "missing key(s): text" in str(error)


@pytest.mark.parametrize("ident", ["", "   ", 7, None])
def test_document_id_must_be_a_non_empty_string(tmp_path: Path, ident: object) -> None:
    """Ids are matched against golden relevance keys: only non-empty strings."""
    error = corpus_error(tmp_path, [{"id": ident, "text": "x"}])
    assert_names_file_line_and_fix(error, tmp_path / "corpus.jsonl", 1)


# -- golden set problems ------------------------------------------------------------------


def test_duplicate_question_id_mentions_the_first_line(tmp_path: Path) -> None:
    """Two q1 lines: error on line 2 pointing at line 1."""
    error = golden_error(tmp_path, [GOOD_QUESTION, GOOD_QUESTION])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 2)
    assert "first used on line 1" in str(error)


def test_relevant_document_missing_from_corpus(tmp_path: Path) -> None:
    """A misspelt relevant id would make the question unwinnable; it is refused."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, "relevant": {"sso-set-up": 3}}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "'sso-set-up' is not in the corpus" in str(error)


@pytest.mark.parametrize("grade", [0, -1, 1.5, "2", True, None, MAX_GRADE + 1, 1024, 2**63])
def test_grade_must_be_a_whole_number_up_to_the_cap(tmp_path: Path, grade: object) -> None:
    """Grades are 1, 2 or 3 (at most MAX_GRADE); 0 means 'leave it out', true/"2"/1.5 are typos,
    and 1024 or 2**63 would make ndcg_exp's gain 2**grade - 1 infinite (NaN metric) or crash."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, "relevant": {"sso-setup": grade}}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert f"must be a whole number from 1 to {MAX_GRADE}" in str(error)


def test_the_largest_grade_keeps_every_gain_exact() -> None:
    """The cap's promise: 2**g - 1 summed over the deepest ranking is an exact float."""
    deepest = 10_000  # the largest [retrieval] depth
    total = deepest * (2**MAX_GRADE - 1)
    assert float(total) == total and total < 2**53


def test_the_largest_grade_is_accepted(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "golden.jsonl", [{**GOOD_QUESTION, "relevant": {"sso-setup": MAX_GRADE}}])
    assert load_golden(path, CORPUS)[0].relevant == {"sso-setup": MAX_GRADE}


def test_relevant_must_be_an_object(tmp_path: Path) -> None:
    """A list of ids has no grades: refused with an example of the right shape."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, "relevant": ["sso-setup"]}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)


def test_unknown_golden_key_is_rejected(tmp_path: Path) -> None:
    """'must-pass' (hyphen) is not 'must_pass': silently ignoring it would drop a guarantee."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, "must-pass": True}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "unknown key(s): must-pass" in str(error)


def test_missing_golden_key_is_named(tmp_path: Path) -> None:
    """Every question needs id, question and relevant."""
    error = golden_error(tmp_path, [{"id": "q1", "question": "SSO?"}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "missing key(s): relevant" in str(error)


def test_answerable_question_needs_a_relevant_document(tmp_path: Path) -> None:
    """Without relevant documents the question would score 0 forever."""
    error = golden_error(tmp_path, [GOOD_QUESTION, {**GOOD_QUESTION, "id": "q2", "relevant": {}}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 2)
    assert "answerable question needs at least one relevant document" in str(error)


def test_unanswerable_question_cannot_have_relevant_documents(tmp_path: Path) -> None:
    """answerable: false with relevant docs is contradictory."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, "answerable": False}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "unanswerable question cannot have relevant documents" in str(error)


def test_must_pass_question_must_be_answerable(tmp_path: Path) -> None:
    """A must-pass question that cannot retrieve anything would always fail the gate."""
    row = {**GOOD_QUESTION, "relevant": {}, "answerable": False, "must_pass": True}
    error = golden_error(tmp_path, [row])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert "must-pass question must be answerable" in str(error)


@pytest.mark.parametrize(
    ("key", "value"),
    [("answerable", "yes"), ("must_pass", 1), ("tags", "security"), ("must_include", [""]), ("question", "")],
)
def test_wrongly_typed_optional_fields_are_rejected(tmp_path: Path, key: str, value: object) -> None:
    """Flags are booleans, tags and must_include lists of non-empty strings, question text."""
    error = golden_error(tmp_path, [{**GOOD_QUESTION, key: value}])
    assert_names_file_line_and_fix(error, tmp_path / "golden.jsonl", 1)
    assert repr(key) in str(error)

"""`golden import-logs` (golden/logs.py): real questions from a JSONL or CSV log or an
OpenTelemetry/OpenInference span export, written as candidates the grading page and
`add-judgments` take. Every log is written by the test into tmp_path, on the tiny project
(tests/conftest.py); the end-to-end test grades the candidates in headless Chromium
(tests/golden/conftest.py), skipped without it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conftest import TINY_CONFIG, run_cli, write_jsonl, write_project
from rag_regress.golden.generate import token_set
from rag_regress.golden.logs import GENERATOR, REDACTED, near_duplicates, stratified

if TYPE_CHECKING:
    from playwright.sync_api import Page

EMAIL = "ana.lopez@example.com"


def project(root: Path, logs: str = "") -> Path:
    """The tiny project, with a [logs] table when given; its eval.toml."""
    return write_project(root, config=TINY_CONFIG + (f"\n[logs]\n{logs}\n" if logs else ""))


def run(config: Path, log: Path, *options: str) -> int:
    return run_cli(["--config", str(config), "golden", "import-logs", str(log), *options])


def candidates(config: Path, name: str = "evals/candidates.jsonl") -> list[dict[str, Any]]:
    text = (config.parent / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def ask(question: str, documents: list[str], **fields: Any) -> dict[str, Any]:
    return {"question": question, "documents": documents, **fields}


# -- JSONL ------------------------------------------------------------------------------------


def test_jsonl_malformed_lines_are_named_skipped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [
            ask("How do I turn on SSO with SAML?", ["sso-setup"], answer="Under Settings.", feedback="up"),
            '{"question": "cut short',
            ask("Where are my invoices as PDF?", ["invoices", "retired-doc"], timestamp="2024-05-01T10:00Z"),
            {"answer": "no question here"},
            {"question": 5},
            {"question": "   "},
            "[1, 2]",
            "",
            ask("Can I export projects to CSV?", ["export-data"]),
        ],
    )
    assert run(config, log, "--count", "10") == 0
    out = capsys.readouterr().out
    assert "read 3 questions from" in out
    assert (
        "skipped 5 lines: line 2: not JSON; line 4: no 'question' field; line 5: 'question' is not "
        "text (a int); line 6: 'question' is empty; line 7: not a JSON object"
    ) in out
    assert "1 document id not in the corpus, left out: retired-doc (1x)" in out
    assert "wrote 3 candidates to" in out
    assert "rag-regress grade --candidates" in out and "add-judgments" in out
    written = {line["question"]: line for line in candidates(config)}
    assert set(written) == {
        "How do I turn on SSO with SAML?",
        "Where are my invoices as PDF?",
        "Can I export projects to CSV?",
    }
    sso = written["How do I turn on SSO with SAML?"]
    assert (sso["status"], sso["kind"], sso["answerable"], sso["why"]) == ("candidate", "logs", True, None)
    assert sso["relevant"] == {"sso-setup": 1} and sso["reference"] == "Under Settings."
    assert sso["passages"] == [] and sso["nuggets"] == []
    assert sso["provenance"]["generator"] == GENERATOR
    assert (sso["provenance"]["file"], sso["provenance"]["line"]) == ("log.jsonl", 1)
    assert sso["provenance"]["feedback"] == "up"
    invoices = written["Where are my invoices as PDF?"]
    assert invoices["relevant"] == {"invoices": 1}  # the unknown id left out
    assert invoices["provenance"]["timestamp"] == "2024-05-01T10:00Z" and invoices["reference"] is None
    assert sorted(line["id"] for line in written.values()) == ["log-0001", "log-0002", "log-0003"]


def test_a_log_without_any_question_or_missing_is_exit_2_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(tmp_path / "log.jsonl", [{"query": "how do I reset my password"}, "not json"])
    assert run(config, log) == 2
    err = capsys.readouterr().err
    assert "no question read from this jsonl file (2 line(s) skipped: line 1: no 'question' field" in err
    assert "fix: set [logs] question" in err
    assert run(config, tmp_path / "missing.jsonl") == 2
    assert "the log file does not exist" in capsys.readouterr().err
    assert not (config.parent / "evals").exists()


def test_field_names_are_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path / "p", 'question = "request.query"\ndocuments = "shown"')
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [{"request": {"query": "Is 2FA available?"}, "shown": [{"id": "2fa-setup"}, {"id": "api-keys"}]}],
    )
    assert run(config, log) == 0, capsys.readouterr().err
    [line] = candidates(config)
    assert line["question"] == "Is 2FA available?"
    assert line["relevant"] == {"2fa-setup": 1, "api-keys": 1}


# -- CSV --------------------------------------------------------------------------------------


def test_csv_with_a_documents_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path / "p")
    log = tmp_path / "log.csv"
    with log.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["timestamp", "question", "answer", "documents", "feedback"])
        writer.writerow(["2024-05-01", "How long must passwords be?", "Twelve.", "password-policy", "down"])
        writer.writerow(["2024-05-02", "SSO, 2FA: which first?", "", "sso-setup; 2fa-setup", "up"])
        writer.writerow(["2024-05-03", "Where is my API key?", "", '["api-keys", "nope"]', ""])
        writer.writerow(["2024-05-04", "one field too many", "", "invoices", "up", "extra"])
        writer.writerow(["2024-05-05", "", "", "invoices", "up"])
    assert run(config, log, "--count", "10") == 0
    out = capsys.readouterr().out
    assert "(csv)" in out and "read 3 questions" in out
    assert "skipped 2 lines: line 5: 6 fields, more than the header's 5; line 6: 'question' is empty" in out
    written = {line["question"]: line for line in candidates(config)}
    assert written["How long must passwords be?"]["relevant"] == {"password-policy": 1}
    assert written["How long must passwords be?"]["reference"] == "Twelve."
    assert written["SSO, 2FA: which first?"]["relevant"] == {"sso-setup": 1, "2fa-setup": 1}
    assert written["SSO, 2FA: which first?"]["reference"] is None
    assert written["Where is my API key?"]["relevant"] == {"api-keys": 1}
    assert written["Where is my API key?"]["provenance"]["stratum"] == "(none)"
    assert written["How long must passwords be?"]["provenance"]["line"] == 2


def test_a_csv_without_the_question_column_is_exit_2_at_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = tmp_path / "log.csv"
    log.write_text("query,documents\nhow do I pay,invoices\n", encoding="utf-8")
    assert run(config, log) == 2
    err = capsys.readouterr().err
    assert "log.csv:1: the header row has no column 'question' (it has 'query', 'documents')" in err


# -- OpenTelemetry / OpenInference ------------------------------------------------------------


def attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    """OTLP JSON attributes."""
    typed = {str: "stringValue", int: "intValue", float: "doubleValue", bool: "boolValue"}
    return [
        {"key": key, "value": {typed[type(value)]: str(value) if type(value) is int else value}}
        for key, value in values.items()
    ]


def span(trace: str, ident: str, parent: str, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": ident,
        "parentSpanId": parent,
        "name": ident,
        "startTimeUnixNano": "1714557600000000000",
        "attributes": attributes(values),
    }


def otlp(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": list(spans)}]}]
    }


def retrieved(*ids: str) -> dict[str, Any]:
    return {
        "openinference.span.kind": "RETRIEVER",
        **{f"retrieval.documents.{i}.document.id": doc for i, doc in enumerate(ids)},
        **{f"retrieval.documents.{i}.document.score": 0.5 for i in range(len(ids))},
    }


def test_an_otlp_span_export_with_two_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path / "p")
    first = [
        span(
            "t1",
            "a",
            "",
            {
                "openinference.span.kind": "CHAIN",
                "input.value": "How do I enable 2FA?",
                "output.value": "Use an authenticator app.",
                "feedback": "up",
            },
        ),
        span("t1", "b", "a", retrieved("2fa-setup", "sso-setup")),
    ]
    second = [
        span("t2", "c", "", {"openinference.span.kind": "CHAIN"}),
        span("t2", "d", "c", retrieved("invoices")),
        span(
            "t2",
            "e",
            "c",
            {
                "openinference.span.kind": "LLM",
                "llm.input_messages.0.message.role": "system",
                "llm.input_messages.0.message.content": "You answer from the context.",
                "llm.input_messages.1.message.role": "user",
                "llm.input_messages.1.message.content": "Where can I download my invoices?",
            },
        ),
    ]
    log = tmp_path / "spans.jsonl"  # the file exporter's form: one export request a line
    log.write_text(
        json.dumps(otlp(*first)) + "\n" + json.dumps(otlp(*second)) + "\n" + "{oops\n", encoding="utf-8"
    )
    assert run(config, log) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "read 2 questions from" in out and "(otel)" in out and "line 3: not JSON" in out
    written = {line["question"]: line for line in candidates(config)}
    enable = written["How do I enable 2FA?"]
    assert enable["relevant"] == {"2fa-setup": 1, "sso-setup": 1}
    assert enable["reference"] == "Use an authenticator app."
    assert enable["provenance"]["trace"] == "t1" and enable["provenance"]["feedback"] == "up"
    assert enable["provenance"]["timestamp"] == "2024-05-01T10:00:00.000000Z"
    download = written["Where can I download my invoices?"]  # the user message, not the system's
    assert download["relevant"] == {"invoices": 1} and download["provenance"]["line"] == 2


def test_flat_spans_one_a_line_with_attribute_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(
        tmp_path / "spans.jsonl",
        [
            {
                "context": {"trace_id": "0xabc", "span_id": "0x2"},
                "parent_id": "0x1",
                "attributes": {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.id": "api-keys",
                },
            },
            {
                "context": {"trace_id": "0xabc", "span_id": "0x1"},
                "parent_id": None,
                "attributes": {
                    "input": {
                        "value": '{"query": "Where do I create an API key?"}',
                        "mime_type": "application/json",
                    }
                },
            },
            {"context": {"trace_id": "0xdef", "span_id": "0x9"}, "parent_id": None, "attributes": {}},
        ],
    )
    assert run(config, log) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "line 3: trace 0xdef: no user input (input.value or a user message)" in out
    [line] = candidates(config)
    assert (line["question"], line["relevant"]) == ("Where do I create an API key?", {"api-keys": 1})
    assert line["provenance"]["line"] == 2  # the root span's


# -- personal data, duplicates, known questions ------------------------------------------------


def test_personal_data_is_redacted_by_pattern_before_anything_is_written_or_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p", r"redact = ['[\w.+-]+@[\w-]+(?:\.[\w-]+)+', 'ACME-\d{4}']")
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [
            ask(
                f"I am {EMAIL}, customer ACME-1234: how do I reset 2FA?",
                ["2fa-setup"],
                answer=f"We wrote to {EMAIL}.",
                feedback=EMAIL,
            ),
            {"question": {"email": EMAIL}},  # skipped: its content is never shown
        ],
    )
    assert run(config, log) == 0
    said = capsys.readouterr()
    [line] = candidates(config)
    assert line["question"] == f"I am {REDACTED}, customer {REDACTED}: how do I reset 2FA?"
    assert line["reference"] == f"We wrote to {REDACTED}."
    assert "redacted 4 matches" in said.out, said.out
    text = (config.parent / "evals" / "candidates.jsonl").read_text(encoding="utf-8")
    for shown in (text, said.out, said.err):
        assert EMAIL not in shown and "ACME-1234" not in shown and "example.com" not in shown


def test_the_default_redacts_email_addresses_and_a_bad_pattern_is_exit_2_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(tmp_path / "log.jsonl", [ask(f"mail {EMAIL} about SSO", ["sso-setup"])])
    assert run(config, log) == 0
    assert candidates(config)[0]["question"] == f"mail {REDACTED} about SSO"
    capsys.readouterr()
    bad = project(tmp_path / "q", "count = 5\nredact = ['ok', '(unclosed']")
    assert run(bad, log) == 2
    err = capsys.readouterr().err
    line = bad.read_text(encoding="utf-8").splitlines().index("redact = ['ok', '(unclosed']") + 1
    assert f"eval.toml:{line}: logs.redact: '(unclosed' is not a regular expression" in err


def test_near_duplicates_and_golden_questions_are_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [
            ask("How do I set up SSO?", ["sso-setup"]),
            ask("how do I set up SSO", ["sso-setup"]),  # the same words
            ask("How do I set up SSO for my team?", ["sso-setup"]),  # 6 of 8 words: kept at 0.9
            ask("Download invoices!", ["invoices"]),  # golden q4, normalised
            ask("Is there a refund policy?", ["no-such-doc"]),  # no document of the corpus
        ],
    )
    assert run(config, log) == 0
    out = capsys.readouterr().out
    assert (
        "left out: 1 question already in the golden set, 0 already candidates, 1 with no document in "
        "the corpus, 1 near-duplicate (Jaccard >= 0.9)"
    ) in out
    assert sorted(line["question"] for line in candidates(config)) == [
        "How do I set up SSO for my team?",
        "How do I set up SSO?",
    ]
    # A second import of the same log adds nothing: its questions are candidates already.
    assert run(config, log) == 0
    out = capsys.readouterr().out
    assert "3 already candidates" in out and "wrote 0 candidates" in out
    assert len(candidates(config)) == 2


def test_near_duplicates_keep_the_first_and_match_a_plain_pairwise_check() -> None:
    questions = [
        "reset my password",
        "how to reset my password",
        "reset password my",
        "export csv files",
        "export files csv",
        "",
        "?",
        "billing invoices pdf download",
        "download pdf invoices billing now",
    ]
    sets = [token_set(q) for q in questions]
    for threshold in (0.5, 0.6, 0.75, 0.8, 0.9, 1.0):
        kept: list[int] = []
        expected: list[int | None] = []
        for number, tokens in enumerate(sets):
            match = next((j for j in kept if _jaccard(tokens, sets[j]) >= threshold), None)
            expected.append(match)
            kept += [number] if match is None else []
        found = near_duplicates(sets, threshold)
        assert [m is None for m in found] == [m is None for m in expected], threshold


def _jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    union = first | second
    return len(first & second) / len(union) if union else 1.0


# -- sampling ---------------------------------------------------------------------------------


def test_seeded_sampling_is_stable_stratified_and_extends_with_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = ["sso-setup", "password-policy", "2fa-setup", "api-keys", "invoices", "export-data"]
    rows = [ask(f"question number {n} about topic{n}", [docs[n % 6]], feedback="up") for n in range(9)]
    rows += [ask(f"complaint number {n} about subject{n}", [docs[n % 6]], feedback="down") for n in range(3)]
    log = write_jsonl(tmp_path / "log.jsonl", rows)
    config = project(tmp_path / "p")

    calls: list[int] = []

    def sample(seed: int, count: int) -> list[str]:
        calls.append(seed)
        output = f"sample-{len(calls)}.jsonl"  # a file of its own: a rerun on one would extend it
        assert (
            run(
                config,
                log,
                "--seed",
                str(seed),
                "--count",
                str(count),
                "--output",
                str(config.parent / output),
            )
            == 0
        )
        return [line["question"] for line in candidates(config, output)]

    first = sample(7, 4)
    assert first == sample(7, 4)  # the same seed: the same sample, in the same order
    assert sample(7, 8)[:4] == first  # a larger count extends it
    assert sum("complaint" in q for q in first) == 2  # 2 of each stratum, the small one included
    assert sum("complaint" in q for q in sample(7, 8)) == 3  # the small stratum runs out
    assert "by feedback: down 2, up 2" in capsys.readouterr().out
    assert {tuple(sample(seed, 4)) for seed in range(5)} != {tuple(first)}  # the seed matters


def test_stratified_round_robin() -> None:
    groups = {"a": list(range(10)), "b": [100, 101], "c": [200]}
    picked = stratified(groups, 7, seed=3)
    assert picked == stratified(dict(reversed(groups.items())), 7, seed=3)  # order of strata irrelevant
    assert sorted(p for p in picked if p >= 100) == [100, 101, 200]
    assert len(picked) == 7 and len(set(picked)) == 7
    assert stratified(groups, 100, seed=3)[:7] == picked


# -- the output file --------------------------------------------------------------------------


def test_a_file_of_golden_generate_is_never_appended_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    existing = config.parent / "evals" / "candidates.jsonl"
    existing.parent.mkdir()
    generated = {
        "id": "cand-0000",
        "slot": 0,
        "status": "candidate",
        "kind": "single",
        "question": "q",
        "relevant": {},
        "provenance": {"generator": "rag-regress golden generate", "seed": 0},
    }
    existing.write_text(json.dumps(generated) + "\n", encoding="utf-8")
    before = existing.read_bytes()
    log = write_jsonl(tmp_path / "log.jsonl", [ask("How do I turn on SSO?", ["sso-setup"])])
    assert run(config, log) == 2
    err = capsys.readouterr().err
    assert "candidates.jsonl:1: this line is `golden generate`'s" in err and "--output" in err
    assert existing.read_bytes() == before
    assert run(config, log, "--output", str(config.parent / "corpus.jsonl")) == 2
    assert "would replace the corpus" in capsys.readouterr().err
    assert run(config, log, "--output", str(log)) == 2
    assert "would replace the log file" in capsys.readouterr().err


def test_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(tmp_path / "log.jsonl", [ask("How do I turn on SSO?", ["sso-setup"])])
    assert run(config, log, "--dry-run") == 0
    assert "--dry-run: 1 candidate not written" in capsys.readouterr().out
    assert not (config.parent / "evals").exists()


# -- end to end: the page grades them, add-judgments merges them -------------------------------


def test_imported_candidates_are_graded_on_the_page_and_merged(
    tmp_path: Path, page: Page, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path / "p")
    log = write_jsonl(
        tmp_path / "log.jsonl",
        [
            ask(f"How do I turn on SSO? ({EMAIL})", ["sso-setup", "password-policy"], answer="Use SAML."),
            ask("Can I pay by cheque?", ["invoices"]),
        ],
    )
    spans = tmp_path / "spans.jsonl"
    spans.write_text(
        json.dumps(
            otlp(
                span("t9", "a", "", {"input.value": "Where do I create an API key?"}),
                span("t9", "b", "a", retrieved("api-keys")),
            )
        )
        + "\n",
        encoding="utf-8",
    )
    assert run(config, log, "--seed", "1") == 0 and run(config, spans) == 0
    lines = candidates(config)
    assert [line["id"] for line in lines] == ["log-0001", "log-0002", "log-0003"]  # numbered on
    by_question = {line["question"]: line["id"] for line in lines}
    accepted = by_question[f"How do I turn on SSO? ({REDACTED})"]
    rejected = by_question["Can I pay by cheque?"]
    base = ["--config", str(config)]
    grade = config.parent / "build" / "grade.html"
    assert (
        run_cli(
            [
                *base,
                "grade",
                "--candidates",
                str(config.parent / "evals/candidates.jsonl"),
                "--output",
                str(grade),
            ]
        )
        == 0
    )
    capsys.readouterr()
    page.goto(grade.as_uri())
    assert "shown to the user (log)" in (page.text_content("#item") or "")  # why each document is there
    page.fill("#name", "Ana")
    page.keyboard.press("Escape")
    for ident in [line["id"] for line in lines]:  # the page shows them in the file's order
        assert ident in (page.text_content("#item .meta") or "")
        if ident == accepted:
            page.keyboard.press("3")  # sso-setup answers it
            page.keyboard.press("0")  # password-policy does not
            page.keyboard.press("a")
        elif ident == rejected:
            page.keyboard.press("r")
        page.keyboard.press("n")
    with page.expect_download() as started:
        page.click("#download")
    downloaded = tmp_path / "judgments.jsonl"
    started.value.save_as(downloaded)
    assert run_cli([*base, "add-judgments", str(downloaded)]) == 0, capsys.readouterr().err
    assert "1 rejected candidate(s) left out" in capsys.readouterr().out
    merged = {
        line["id"]: line
        for line in map(json.loads, (config.parent / "golden.jsonl").read_text(encoding="utf-8").splitlines())
    }
    question = merged[accepted]
    assert question["question"] == f"How do I turn on SSO? ({REDACTED})"
    assert question["relevant"] == {"sso-setup": 3} and question["not_relevant"] == ["password-policy"]
    assert question["tags"] == ["generated", "logs"] and question["reference"] == "Use SAML."
    assert question["provenance"][0]["generated"]["generator"] == GENERATOR
    assert rejected not in merged and by_question["Where do I create an API key?"] not in merged
    assert EMAIL not in (config.parent / "golden.jsonl").read_text(encoding="utf-8")

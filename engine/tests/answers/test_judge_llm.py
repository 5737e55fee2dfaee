"""The LLM judge ([judge] backend = "llm") against a real HTTP server on 127.0.0.1, started by
these tests, that speaks the OpenAI chat-completions wire format and answers as each test
scripts it: the request it receives, retries after 429, 5xx and timeouts, replies that do
not match the schema, quotes that are not in the contexts, votes, the API key, and the gate
end to end on the tiny project. Every retry waits milliseconds ([judge] backoff), every
timeout is a fraction of a second."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import fake_http
from conftest import TINY_CONFIG, run_cli, write_project
from fake_http import Received, Reply, Server, serving
from rag_regress.answers.checks import judge_all
from rag_regress.answers.judges import build_judge, rules_digest
from rag_regress.answers.llm import judge as llm
from rag_regress.answers.llm.prompt import SHIPPED, prompt_digest
from rag_regress.answers.llm.settings import Settings as LLMSettings
from rag_regress.answers.settings import JudgeSettings
from rag_regress.answers.verdicts import judged
from rag_regress.errors import EvalInputError
from rag_regress.settings.config import load_config

CONFIG = Path("eval.toml")
INVOICES = (
    "Download invoices as PDF files from the Billing page. "
    "Invoices are issued on the first day of each month."
)
EXPORTS = "Export projects as CSV files. Exports are limited to 1000 rows."
CONTEXTS = (INVOICES, EXPORTS)

# -- the server -------------------------------------------------------------------------------


def chat(content: str, usage: dict[str, int] | None = None) -> Reply:
    """A chat completion whose message content is `content`."""
    return fake_http.chat(content, "judge-model", usage)


def verdicts(*entries: tuple[int, bool, str]) -> Reply:
    content = json.dumps({"verdicts": [{"id": i, "supported": s, "evidence": e} for i, s, e in entries]})
    return chat(content, {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})


def quoting(unsupported: Callable[[str], bool] = lambda sentence: False) -> Callable[[Received], Reply]:
    """A server that finds every sentence supported, quoting the sentence itself, except those
    `unsupported` picks."""

    def reply(request: Received) -> Reply:
        said = request.sentences
        return verdicts(
            *((n, not unsupported(text), "" if unsupported(text) else text) for n, text in said.items())
        )

    return reply


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=quoting()), "/v1") as fake:
        yield fake


def settings(server: Server, **more: Any) -> JudgeSettings:
    """[judge] backend = "llm" with its own table, [judge.llm], pointed at `server`; `more`
    holds keys of either table."""
    own: dict[str, Any] = {
        "base_url": server.url,
        "model": "judge-model",
        "timeout": 2.0,
        "retries": 2,
        "backoff": 0.01,
        "concurrency": 1,
    }
    mine = set(LLMSettings.__pydantic_fields__)
    own |= {key: value for key, value in more.items() if key in mine}
    table = {key: value for key, value in more.items() if key not in mine}
    return JudgeSettings(backend="llm", own={"llm": LLMSettings(**own)}, **table)


def judge_of(server: Server, **more: Any) -> llm.LLMJudge:
    built = build_judge(settings(server, **more), CONFIG)
    assert isinstance(built, llm.LLMJudge)
    return built


# -- one request per answer -------------------------------------------------------------------


def test_an_answer_is_one_request_holding_its_numbered_sentences_and_contexts(server: Server) -> None:
    claims = [
        "Download invoices as PDF files from the Billing page.",
        "Invoices are issued on the first day of every month.",
        "Invoices are sent by email.",
    ]
    server.script = [
        verdicts(
            (1, True, "Download invoices as PDF files from the Billing page."),
            (2, True, "Invoices are issued on the first day of each month."),
            (3, False, ""),
        )
    ]
    judge = judge_of(server, seed=7)
    found = judge.verdicts([(claim, CONTEXTS) for claim in claims])

    assert [v.supported for v in found] == [True, True, False]
    assert found[1].window == "Invoices are issued on the first day of each month." and found[1].score == 1.0
    assert found[2].reason == "the judge found no support in the contexts" and found[2].score == 0.0
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    body = request.body
    assert body["model"] == "judge-model" and body["temperature"] == 0 and body["seed"] == 7
    assert body["response_format"]["type"] == "json_schema" and body["max_tokens"] == 1024
    assert body["response_format"]["json_schema"]["schema"] == llm.REPLY_SCHEMA
    assert body["messages"][0] == {"role": "system", "content": SHIPPED.read_text(encoding="utf-8")}
    assert body["messages"][1]["role"] == "user"
    assert f"Context 1:\n{INVOICES}\n\nContext 2:\n{EXPORTS}" in request.user
    assert request.sentences == dict(enumerate(claims, start=1))
    assert "Authorization" not in request.headers  # no key in the environment: none sent
    assert judge.stats == {
        "requests": 1,
        "retries": 0,
        "failed": 0,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "reasked": 0,
        "not_judged": 0,
        "formats_refused": 0,
    }


def test_answers_of_other_contexts_are_other_requests_and_repeats_are_asked_once(server: Server) -> None:
    judge = judge_of(server, concurrency=3)
    items = [
        ("Export projects as CSV files.", (EXPORTS,)),
        ("Download invoices as PDF files from the Billing page.", (INVOICES,)),
        ("Export projects as CSV files.", (EXPORTS,)),
        ("Exports are limited to 1000 rows.", (EXPORTS,)),
    ]
    assert all(v.supported for v in judge.verdicts(items))
    asked = sorted(tuple(request.sentences.values()) for request in server.received)
    assert asked == [
        ("Download invoices as PDF files from the Billing page.",),
        ("Export projects as CSV files.", "Exports are limited to 1000 rows."),
    ]


def test_a_sentence_without_contexts_is_unsupported_without_a_request(server: Server) -> None:
    (verdict,) = judge_of(server).verdicts([("Invoices are PDF files.", ())])
    assert not verdict.supported and verdict.reason == "no context to check it against"
    assert server.received == []


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_busy_or_failing_server_is_asked_again(server: Server, status: int) -> None:
    server.script = [Reply(status, {"error": {"message": "busy, try later"}})]
    judge = judge_of(server)
    (verdict,) = judge.verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert verdict.supported
    assert len(server.received) == 2 and server.received[0].body == server.received[1].body
    assert judge.stats["requests"] == 2 and judge.stats["retries"] == 1 and judge.stats["failed"] == 1


def test_a_reply_slower_than_the_timeout_stops_the_run_within_the_timeout(server: Server) -> None:
    slow = quoting()

    def late(request: Received) -> Reply:
        reply = slow(request)
        reply.delay = 2.0
        return reply

    server.script = [late]
    judge = judge_of(server, timeout=0.3, retries=2)
    started = time.monotonic()
    with pytest.raises(EvalInputError) as caught:
        judge.verdicts([("Export projects as CSV files.", CONTEXTS)])
    # The timeout is the whole call, retries included: a slow reply is not waited for twice.
    assert time.monotonic() - started < 0.3 + 1.0 and len(server.received) == 1
    assert "no complete reply within the timeout of 0.3 s" in caught.value.problem
    assert "[judge.llm] timeout" in caught.value.fix


def test_a_server_failing_after_every_retry_stops_the_run_naming_the_answer(server: Server) -> None:
    server.default = lambda request: Reply(500, b"upstream model crashed")
    judge = judge_of(server, retries=2)
    with pytest.raises(EvalInputError) as caught:
        judge.verdicts([("Exports are limited to 1000 rows in every plan.", CONTEXTS)])
    error = caught.value
    assert len(server.received) == 3 and judge.stats["requests"] == 3 and judge.stats["retries"] == 2
    assert "'Exports are limited to 1000 rows in every plan.'" in error.problem
    assert "HTTP 500" in error.problem and "upstream model crashed" in error.problem
    assert "(3 attempts)" in error.problem
    assert server.url in error.fix and "retries" in error.fix


def test_a_server_that_is_not_there_stops_the_run(server: Server) -> None:
    with socket.socket() as free:  # a port nothing listens on once this closes
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(EvalInputError) as caught:
        judge_of(server, base_url=f"http://127.0.0.1:{port}/v1", retries=1).verdicts([("A claim.", CONTEXTS)])
    assert "cannot connect" in caught.value.problem and "(2 attempts)" in caught.value.problem


def test_a_redirect_is_not_followed(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib would resend the key, as a GET, to wherever the server points: not followed."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-789")
    server.default = lambda request: Reply(302, b"", headers={"Location": f"{server.url}/elsewhere"})
    with pytest.raises(EvalInputError) as caught:
        judge_of(server).verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert [(r.method, r.path) for r in server.received] == [("POST", "/v1/chat/completions")]
    assert f"HTTP 302 Found: redirects to {server.url}/elsewhere" in caught.value.problem
    assert "redirects are not followed" in caught.value.fix


@pytest.mark.parametrize(("status", "fix"), [(401, "OPENAI_API_KEY (now it is not set)"), (404, "base_url")])
def test_a_refused_request_is_not_retried(server: Server, status: int, fix: str) -> None:
    server.default = lambda request: Reply(status, {"error": {"message": "no such thing"}})
    with pytest.raises(EvalInputError) as caught:
        judge_of(server).verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert len(server.received) == 1
    assert f"HTTP {status}" in caught.value.problem and "no such thing" in caught.value.problem
    assert fix in caught.value.fix


@pytest.mark.parametrize(
    "refusal",
    [
        Reply(400, {"error": {"message": "response_format is not supported"}}),
        # llama-cpp-python 0.3.36's server: a validation error of the request body, as a 500
        Reply(
            500,
            {
                "error": {
                    "message": "1 validation error: {'loc': ('body', 'response_format', "
                    "'type'), 'msg': \"Input should be 'text' or 'json_object'\"}"
                }
            },
        ),
    ],
    ids=["400", "llama.cpp's 500"],
)
def test_a_server_refusing_the_reply_schema_is_asked_with_json_mode_then_without(
    server: Server, refusal: Reply, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenAI and vLLM take a JSON schema; a server that refuses it (a 400, or an error about
    response_format) is asked with json_object, then with no response_format, for the rest
    of the run."""
    answer = quoting()

    def picky(request: Received) -> Reply:
        if "response_format" in request.body:
            return refusal
        return answer(request)

    server.default = picky
    judge = judge_of(server)
    assert [v.supported for v in judge.verdicts([(claim, CONTEXTS) for claim in CLAIMS])] == [True, True]
    formats = [request.body.get("response_format", {}).get("type") for request in server.received]
    assert formats == ["json_schema", "json_object", None]  # a 500 about the format is not retried
    assert "asking with json_object from now on" in capsys.readouterr().err
    # two requests refused and asked again in the next format: counted, never as failed
    assert (judge.stats["requests"], judge.stats["formats_refused"], judge.stats["failed"]) == (3, 2, 0)
    judge.verdicts([("Invoices are issued on the first day of each month.", CONTEXTS)])
    assert "response_format" not in server.received[-1].body  # remembered


def test_a_request_refused_in_every_format_stops_the_run(server: Server) -> None:
    server.default = lambda request: Reply(400, {"error": {"message": "no such thing"}})
    with pytest.raises(EvalInputError) as caught:
        judge_of(server).verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert len(server.received) == 3 and "HTTP 400" in caught.value.problem
    assert "model ('judge-model')" in caught.value.fix


# -- replies that do not match the schema -----------------------------------------------------

CLAIMS = ["Export projects as CSV files.", "Exports are limited to 1000 rows."]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("the first sentence is supported", "it is not JSON: 'the first sentence is supported'"),
        ('{"verdicts": [{"id": 1, "supported": true', "it is not JSON"),
        ('[{"id": 1, "supported": true, "evidence": ""}]', 'key "verdicts" holds a list'),
        ('{"verdicts": [], "note": "x"}', "no verdict for sentence 1"),
        ('{"verdicts": [{"id": 1, "supported": true}]}', "verdict 1 must hold id, supported and evidence"),
        ('{"verdicts": [{"id": "1", "supported": true, "evidence": ""}]}', "id must be a sentence number"),
        ('{"verdicts": [{"id": 1, "supported": "yes", "evidence": ""}]}', "supported must be true or false"),
    ],
)
def test_a_reply_that_is_not_the_schema_is_asked_again_then_not_judged(
    server: Server, content: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a model writes is measured, never refused: the run goes on, and a sentence the
    judge gave no valid verdict, twice, is not judged (never supported, never cached)."""
    server.default = lambda request: chat(content)
    judge = judge_of(server)
    found = judge.verdicts([(claim, CONTEXTS) for claim in CLAIMS])
    assert [judged(verdict) or verdict.supported for verdict in found] == [False, False]
    assert all(said in verdict.reason and "asked twice" in verdict.reason for verdict in found)
    assert len(server.received) == 2 and server.received[1].sentences == dict(enumerate(CLAIMS, start=1))
    assert judge.stats["reasked"] == 2 and judge.stats["not_judged"] == 2
    assert "2 sentence(s) asked again, 2 of them not judged" in capsys.readouterr().err


def test_a_reply_after_reasoning_or_in_a_code_fence_is_read_as_the_plain_one(server: Server) -> None:
    """Local reasoning models send <think>...</think> first, and models without JSON mode fence
    their JSON: the verdicts are those of the plain reply (before, the run stopped there)."""
    plain = json.dumps({"verdicts": [{"id": 1, "supported": True, "evidence": CLAIMS[0]}]})
    server.script = [
        chat(plain),
        chat(f"<think>\nSentence 1 is in the context.\n</think>\n```json\n{plain}\n```"),
    ]
    first = judge_of(server).verdicts([(CLAIMS[0], CONTEXTS)])
    again = judge_of(server).verdicts([(CLAIMS[0], CONTEXTS)])
    assert first == again and first[0].supported
    assert len(server.received) == 2  # each judge asked the server itself


@pytest.mark.parametrize(
    ("entries", "reasked"),
    [
        ([(1, True, "Export projects as CSV files.")], [CLAIMS[1]]),
        ([(1, True, "Export projects as CSV files."), (2, False, ""), (3, False, "")], []),  # 3 ignored
        ([(1, True, "Export projects as CSV files."), (1, False, ""), (2, False, "")], [CLAIMS[0]]),
    ],
    ids=["missing", "extra", "contradicted"],
)
def test_only_the_sentences_a_reply_left_without_a_verdict_are_asked_again(
    server: Server, entries: list[tuple[int, bool, str]], reasked: list[str]
) -> None:
    server.script = [verdicts(*entries)]  # then the server judges well (quoting)
    judge = judge_of(server)
    found = judge.verdicts([(claim, CONTEXTS) for claim in CLAIMS])
    assert all(judged(verdict) for verdict in found)
    asked_again = [list(request.sentences.values()) for request in server.received[1:]]
    assert asked_again == ([reasked] if reasked else [])
    assert judge.stats["reasked"] == len(reasked) and judge.stats["not_judged"] == 0


def test_a_sentence_a_model_skips_every_time_is_not_judged_and_the_run_completes(server: Server) -> None:
    server.default = lambda request: verdicts(
        *((n, True, text) for n, text in request.sentences.items() if "1000 rows" not in text)
    )
    found = judge_of(server).verdicts([(claim, CONTEXTS) for claim in CLAIMS])
    assert found[0].supported and judged(found[0])
    assert not judged(found[1]) and "no verdict for sentence 1" in found[1].reason  # in the second ask


def test_a_reply_without_choices_is_no_chat_completion(server: Server) -> None:
    server.default = lambda request: Reply(200, {"object": "list", "data": []})
    with pytest.raises(EvalInputError) as caught:
        judge_of(server).verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert "not a chat completion" in caught.value.problem and "OpenAI-compatible" in caught.value.fix


# -- evidence, findings, votes ---------------------------------------------------------------


def test_a_quote_that_is_not_in_the_contexts_is_no_support(server: Server) -> None:
    server.script = [verdicts((1, True, "Exports are limited to 5000 rows on the Business plan."))]
    (verdict,) = judge_of(server).verdicts([("Exports are limited to 5000 rows.", CONTEXTS)])
    assert not verdict.supported
    assert verdict.reason == (
        "the judge's quote is not in the contexts: 'Exports are limited to 5000 rows on the Business plan.'"
    )


def test_a_quote_is_compared_after_the_judges_reading_of_text(server: Server) -> None:
    """Case, runs of whitespace, curly quotes and a final full stop do not matter."""
    server.script = [verdicts((1, True, "export  projects as\nCSV files"))]
    (verdict,) = judge_of(server).verdicts([("Projects can be exported as CSV files.", CONTEXTS)])
    assert verdict.supported and verdict.window == "Export projects as CSV files."


def test_a_quote_of_a_word_or_two_is_no_support(server: Server) -> None:
    server.script = [verdicts((1, True, "CSV files"))]
    (verdict,) = judge_of(server).verdicts([("Projects can be exported as CSV files.", CONTEXTS)])
    assert (
        not verdict.supported
        and verdict.reason == "the judge's quote is too short to show support: 'CSV files'"
    )


def test_the_checks_findings_are_reported_and_fail_only_what_fail_on_names(server: Server) -> None:
    """The model quotes the right sentence but misses the number: by default the number finding
    is reported beside its verdict, not over it; with fail_on = ["number"] it fails the sentence,
    and a supported verdict always rests on the quoted window (which the verdict cache checks)."""
    claim = ("Exports are limited to 500 rows.", CONTEXTS)
    server.script = [verdicts((1, True, "Exports are limited to 1000 rows."))]
    (verdict,) = judge_of(server).verdicts([claim])
    assert verdict.supported and verdict.window == "Exports are limited to 1000 rows."
    assert verdict.findings == ("number: '500' is not what the context says (it says '1000')",)
    server.script = [verdicts((1, True, "Exports are limited to 1000 rows."))]
    (verdict,) = judge_of(server, fail_on=["number"]).verdicts([claim])
    assert not verdict.supported and "'500'" in verdict.reason


def _labels(tmp_path: Path) -> tuple[Path, dict[str, bool]]:
    """Labelled claims about the contexts, half of them unsupported, in two domains."""
    rows = [
        ("a", "Exports are limited to 1000 rows.", EXPORTS, True, "manuals"),
        ("b", "Exports are limited to 500 rows.", EXPORTS, False, "manuals"),
        ("c", "Invoices are issued on the first day of each month.", INVOICES, True, "billing"),
        ("d", "Invoices are issued on the last day of each month.", INVOICES, False, "billing"),
        ("e", "Download invoices as PDF files from the Billing page.", INVOICES, True, "billing"),
        ("f", "Exports can be scheduled every hour.", EXPORTS, False, "manuals"),
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "claim": c, "context": x, "supported": s, "domain": d, "split": "check"})
            + "\n"
            for i, c, x, s, d in rows
        ),
        encoding="utf-8",
    )
    return path, {c: s for _, c, _, s, _ in rows}


def test_calibrate_reproduces_a_perfect_oracle_exactly(server: Server, tmp_path: Path) -> None:
    """Behind the endpoint, an oracle that knows each label and quotes its context when the
    claim is supported: calibrate agrees with it on every claim, in every domain."""
    from rag_regress.answers.calibration import calibrate

    path, truth = _labels(tmp_path)
    by_context = {text.split(".")[0]: text for text in (EXPORTS, INVOICES)}

    def oracle(request: Received) -> Reply:
        context = next(text for start, text in by_context.items() if start in request.user)
        said = request.sentences
        return verdicts(*((n, truth[text], context if truth[text] else "") for n, text in said.items()))

    server.default = oracle
    result = calibrate(settings(server), CONFIG, path, store=False)
    assert result["accuracy"] == 1.0 and result["kappa"] == 1.0 and result["false_alarms"] == 0.0
    assert {d: f["kappa"] for d, f in result["per_domain"].items()} == {"billing": 1.0, "manuals": 1.0}
    assert result["requests"]["requests"] == len(server.received) > 0


def test_no_fabricated_supported_verdict_survives(server: Server, tmp_path: Path) -> None:
    """A model that calls every claim supported with quotes it made up (close to the context,
    not in it): calibrate finds no claim supported."""
    from rag_regress.answers.calibration import calibrate

    path, _ = _labels(tmp_path)
    server.default = lambda request: verdicts(
        *((n, True, f"As the manual says, {text.lower()}") for n, text in request.sentences.items())
    )
    result = calibrate(settings(server), CONFIG, path, store=False)
    assert result["per_kind"]["(none)"]["passed"] == 0 and result["splits"]["check"]["recall"] == 1.0


def test_votes_decide_by_their_share(server: Server) -> None:
    """votes = 3: one request per vote (seeds 5, 6, 7); two of three find support."""

    def by_seed(request: Received) -> Reply:
        supported = request.body["seed"] != 6
        return verdicts((1, supported, "Export projects as CSV files." if supported else ""))

    server.default = by_seed
    judge = judge_of(server, votes=3, temperature=0.7, seed=5, concurrency=3)
    (verdict,) = judge.verdicts([("Projects can be exported as CSV files.", CONTEXTS)])
    assert verdict.supported and verdict.score == pytest.approx(2 / 3)
    assert sorted(r.body["seed"] for r in server.received) == [5, 6, 7]
    assert {r.body["temperature"] for r in server.received} == {0.7}

    server.default = lambda request: (
        by_seed(request) if request.body["seed"] == 5 else verdicts((1, False, ""))
    )
    (verdict,) = judge.verdicts([("Projects are exported as CSV files.", CONTEXTS)])
    assert not verdict.supported and verdict.score == pytest.approx(1 / 3)
    assert verdict.reason == "the judge found no support in the contexts (1 of 3 votes found support)"


# -- the API key, the identity, the settings --------------------------------------------------


def test_the_api_key_is_sent_from_the_variable_named_and_recorded_nowhere(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_JUDGE_KEY", "sk-test-secret-123")
    table = settings(server, api_key_env="TEAM_JUDGE_KEY")
    judge = build_judge(table, CONFIG)
    judge.verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert server.received[0].headers["Authorization"] == "Bearer sk-test-secret-123"
    assert judge.identity == table.identity()
    assert "sk-test-secret" not in json.dumps(judge.identity) + json.dumps(table.identity())


def test_the_identity_names_what_makes_the_verdicts(server: Server, tmp_path: Path) -> None:
    table = settings(server, votes=3, temperature=0.5, seed=11, threshold=0.6, names=["Acme"])
    assert table.identity() == {
        "name": "llm",
        "version": llm.VERSION,
        "rules": rules_digest("llm"),
        "model": "judge-model",
        "revision": None,
        "threshold": 0.6,
        "base_url": server.url,
        "prompt": prompt_digest(SHIPPED.read_text(encoding="utf-8")),
        "votes": 3,
        "temperature": 0.5,
        "seed": 11,
        "max_tokens": 1024,
        "fail_on": [],
        "names": ["Acme"],
    }
    assert build_judge(table, CONFIG).identity == table.identity()


def test_a_prompt_file_replaces_the_engines_and_changes_the_identity(server: Server, tmp_path: Path) -> None:
    text = 'Judge each sentence. Reply {"verdicts": [...]}.\n'
    (tmp_path / "prompt.txt").write_text(text, encoding="utf-8")
    config = (
        TINY_CONFIG
        + '\n[judge]\nbackend = "llm"\n'
        + f'\n[judge.llm]\nbase_url = "{server.url}"\nmodel = "m"\nprompt = "prompt.txt"\n'
    )
    table = load_config(write_project(tmp_path, config=config)).judge
    assert table.options.prompt == (tmp_path / "prompt.txt").resolve()
    assert (
        table.identity()["prompt"]
        == prompt_digest(text)
        != prompt_digest(SHIPPED.read_text(encoding="utf-8"))
    )
    build_judge(table, CONFIG).verdicts([("Export projects as CSV files.", CONTEXTS)])
    assert server.received[0].body["messages"][0]["content"] == text


@pytest.mark.parametrize(
    ("own", "key", "said"),
    [
        ('model = "m"', "judge.llm.base_url", "is required"),
        ('base_url = "http://127.0.0.1:8000/v1"', "judge.llm.model", "is required"),
        ('base_url = "127.0.0.1:8000"\nmodel = "m"', "judge.llm.base_url", "http:// or https://"),
        ('base_url = "https://me:pw@h/v1"\nmodel = "m"', "judge.llm.base_url", "a user name"),
        ('base_url = "http://h/v1"\nmodel = "m"\nprompt = "none.txt"', "judge.llm.prompt", "not a file"),
        ('base_url = "http://h/v1"\nmodel = "m"\nvotes = 0', "judge.llm.votes", "from 1 to 25"),
        ('base_url = "http://h/v1"\nmodel = " "', "judge.llm.model", "must not be blank"),
        ('base_url = "http://h/v1"\nmodel = "m"\nvote = 3', "judge.llm.vote", "unknown setting"),
    ],
)
def test_llm_settings_are_checked_when_eval_toml_is_read(
    tmp_path: Path, own: str, key: str, said: str
) -> None:
    """[judge.llm] is the llm judge's own table: each error names its key and line."""
    text = TINY_CONFIG + f'\n[judge]\nbackend = "llm"\n\n[judge.llm]\n{own}\n'
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    assert f"{key}: " in str(caught.value) and said in str(caught.value), str(caught.value)
    if "required" not in said:  # the line of the key at fault
        name = key.rsplit(".", 1)[1]
        line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith(f"{name} ="))
        assert f"eval.toml:{line}: " in str(caught.value), str(caught.value)


def test_backend_llm_without_its_table_is_named(tmp_path: Path) -> None:
    text = TINY_CONFIG + '\n[judge]\nbackend = "llm"\n'
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    assert "judge.llm.base_url: " in str(caught.value) and "is required" in str(caught.value)


def test_api_key_env_takes_a_variable_name_never_the_key(tmp_path: Path) -> None:
    text = (
        TINY_CONFIG
        + '\n[judge.llm]\nbase_url = "http://h/v1"\nmodel = "m"\napi_key_env = "sk-live-0123456789"\n'
    )
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    assert "judge.llm.api_key_env: must be the name of an environment variable" in str(caught.value)
    assert "sk-live" not in str(caught.value)


@pytest.mark.parametrize(
    ("judge", "moved"),
    [
        ('backend = "llm"\nbase_url = "http://h/v1"\nmodel = "m"', "base_url, model"),
        ('backend = "llm"\nmodel = "m"', "model"),
        ('backend = "lexical"\nvotes = 3', "votes"),
        ('backend = "nli"\nmodel = "cross-encoder/x"\nbase_url = "http://h/v1"', "base_url"),
    ],
)
def test_llm_settings_left_in_judge_are_named_with_migrate(tmp_path: Path, judge: str, moved: str) -> None:
    """An eval.toml of rag-regress 2.7 or earlier: the llm judge's keys in [judge] are exit 2 at
    the first of them, naming all and `migrate`; never read as they were, never ignored."""
    text = TINY_CONFIG + f"\n[judge]\n{judge}\n"
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    said = str(caught.value)
    first = moved.split(", ")[0]
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith(f"{first} ="))
    assert f"eval.toml:{line}: [judge] {first}: the llm judge's settings have their own table" in said
    assert f"({moved} here)" in said and "rag-regress migrate" in said


def test_the_llm_settings_mean_nothing_to_the_other_judges(tmp_path: Path) -> None:
    text = TINY_CONFIG + '\n[judge.llm]\nbase_url = "http://h/v1"\nmodel = "m"\nvotes = 3\n'
    judge = load_config(write_project(tmp_path, config=text)).judge
    assert judge.identity()["name"] == "lexical" and "votes" not in judge.identity()
    assert judge.own["llm"].votes == 3  # kept for `calibrate --compare lexical,llm`


# -- the cache and the gate, end to end -------------------------------------------------------


def test_cached_verdicts_are_not_asked_again(server: Server, tmp_path: Path) -> None:
    table = settings(server, cache=tmp_path / "verdicts.json")
    items = [(claim, CONTEXTS) for claim in CLAIMS]
    first, stats = judge_all(items, table, CONFIG)
    assert stats["misses"] == 2 and len(server.received) == 1
    again, stats = judge_all(
        [*items, ("Invoices are issued on the first day of each month.", CONTEXTS)], table, CONFIG
    )
    assert again[:2] == first and stats["hits"] == 2 and stats["rejected"] == 0
    assert list(server.received[-1].sentences.values()) == [
        "Invoices are issued on the first day of each month."
    ]


def _llm_project(tmp_path: Path, server: Server) -> Path:
    judge = (
        f'\n[judge]\nbackend = "llm"\n\n[judge.llm]\nbase_url = "{server.url}"\nmodel = "judge-model"\n'
        'api_key_env = "TEAM_JUDGE_KEY"\ntimeout = 2.0\nretries = 1\nbackoff = 0.01\n'
    )
    return write_project(tmp_path, config=TINY_CONFIG + judge)


def test_the_gate_with_the_llm_judge(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """baseline then gate: exit 0 (the second run asks nothing: every verdict is cached); the
    server then finds the SAML sentence unsupported: listed, exit 0 while the judge is not
    measured, exit 3 naming q1 with [judge] gate_unmeasured = true; the server fails:
    exit 2 naming the answer. The API key is in no file the runs wrote."""
    monkeypatch.setenv("TEAM_JUDGE_KEY", "sk-test-secret-456")
    config = _llm_project(tmp_path, server)
    assert run_cli(["--config", str(config), "baseline"]) == 0
    asked = len(server.received)
    assert asked >= 1 and all(
        r.headers["Authorization"] == "Bearer sk-test-secret-456" for r in server.received
    )
    baseline = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["settings"]["judge"] == load_config(config).judge.identity()
    assert baseline["settings"]["judge"]["name"] == "llm"
    assert "LLM judge: " in capsys.readouterr().err

    assert run_cli(["--config", str(config), "gate"]) == 0
    assert len(server.received) == asked  # every verdict came from the cache

    server.default = quoting(unsupported=lambda sentence: "SAML" in sentence)
    (tmp_path / ".cache" / "verdicts.json").unlink()
    capsys.readouterr()
    # Its agreement with people unmeasured, the judge's checks are advisory: q1 is listed, no failure.
    assert run_cli(["--config", str(config), "gate"]) == 0
    out = capsys.readouterr().out
    assert "Judge llm 2.1: not measured" in out and "[newly failing answer] q1" in out
    text = config.read_text(encoding="utf-8").replace(
        'backend = "llm"\n', 'backend = "llm"\ngate_unmeasured = true\n'
    )
    config.write_text(text, encoding="utf-8")
    assert run_cli(["--config", str(config), "gate"]) == 3
    out = capsys.readouterr().out
    assert "[newly failing answer] q1" in out and "the judge found no support in the contexts" in out
    assert "[newly failing answer] q2" not in out

    server.default = lambda request: Reply(503, b"overloaded")
    (tmp_path / ".cache" / "verdicts.json").unlink()
    assert run_cli(["--config", str(config), "gate"]) == 2
    err = capsys.readouterr().err
    assert "[judge] llm: judging the answer" in err and "HTTP 503" in err and "(2 attempts)" in err

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not [p for p in written if b"sk-test-secret" in p.read_bytes()]


def test_the_nli_and_llm_judges_each_read_their_own_model(tmp_path: Path) -> None:
    """[judge] model is the nli judge's, [judge.llm] model the llm judge's: with the nli judge
    configured, `calibrate --compare nli,llm` asks the server for its own model."""
    from rag_regress.answers.calibration import _with_backend

    text = TINY_CONFIG + (
        '\n[judge]\nbackend = "nli"\nmodel = "team/nli-model"\n'
        '\n[judge.llm]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "team-chat-model"\n'
    )
    config = write_project(tmp_path, config=text)
    judge = load_config(config).judge
    assert judge.model == "team/nli-model" and judge.identity()["model"] == "team/nli-model"
    llm_judge = _with_backend(judge, "llm", config)
    assert llm_judge.identity()["model"] == "team-chat-model"
    assert llm_judge.identity()["base_url"] == "http://127.0.0.1:8000/v1"

"""The http adapter (a retriever over a JSON search service) against a real search service on
127.0.0.1 that ranks the tiny corpus with the engine's BM25 and checks the token: the request
it sends, reading other reply layouts, the token, and each way a service fails, as the run
sees it (retried or not, and what the message names)."""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from adapter_fakes import DOCUMENTS, TOKEN, bm25_of, search_service

from conftest import TINY_CONFIG, run_cli, write_project
from fake_http import Received, Reply, Server
from rag_regress.adapters import http
from rag_regress.api import Message
from rag_regress.calling.asking import with_history
from rag_regress.calling.caller import Caller
from rag_regress.calling.retries import RetryPolicy
from rag_regress.errors import EvalInputError
from rag_regress.inputs.conversation import Turn
from rag_regress.options import OptionsError
from rag_regress.retrieval.tokens import TokenizerSettings, make_tokenizer

__all__ = ["search_service"]  # the fixture, imported for the tests below

TOKENIZE = make_tokenizer(TokenizerSettings())
AUTH = {"auth_env": "SEARCH_TOKEN"}


def retriever(server: Server, **options: Any) -> http.HTTPRetriever:
    return http.build(DOCUMENTS, TOKENIZE, {"url": server.url, **AUTH, **options})


def retrying(retries: int) -> Caller:
    """The engine's caller as [run] retries = `retries`, retry_on = ["ConnectionError"] makes it."""
    return Caller(retry=RetryPolicy.named(retries, 0.0, ["ConnectionError"]))


# -- what is sent and read --------------------------------------------------------------------


def test_the_ranking_is_the_services_own_sent_as_a_json_body_with_the_token(search_service: Server) -> None:
    expected = bm25_of(DOCUMENTS).search("download invoices", 3)
    assert expected  # the service finds something for this question
    assert retriever(search_service).search("download invoices", 3) == expected
    (request,) = search_service.received
    assert (request.method, request.path) == ("POST", "/search")
    assert request.body == {"query": "download invoices", "top_k": 3}  # depth as a number
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Content-Type"] == "application/json"


def test_get_sends_the_template_as_query_parameters(search_service: Server) -> None:
    template = {"query": "{question}", "top_k": "{depth}", "lang": "en", "tags": ["a", "b"]}
    hits = retriever(search_service, method="GET", request=template).search("SSO & SAML?", 2)
    assert hits == bm25_of(DOCUMENTS).search("SSO & SAML?", 2)
    (request,) = search_service.received
    assert request.method == "GET"
    assert request.query == {"query": ["SSO & SAML?"], "top_k": ["2"], "lang": ["en"], "tags": ["a", "b"]}


def test_placeholders_fill_strings_and_nested_values_but_braces_elsewhere_stay(
    search_service: Server,
) -> None:
    search_service.default = lambda request: Reply(body={"hits": []})
    template = {"q": {"text": "find: {question}", "json": '{"k": 1}'}, "size": ["{depth}"], "exact": True}
    retriever(search_service, request=template).search("what is {depth}?", 4)
    assert search_service.received[0].body == {
        "q": {"text": "find: what is {depth}?", "json": '{"k": 1}'},
        "size": [4],
        "exact": True,
    }


def test_other_reply_layouts_are_read_through_dotted_paths(search_service: Server) -> None:
    items = [{"doc": {"id": "invoices"}, "relevance": 2.5}, {"doc": {"id": 17}, "relevance": 1}]
    search_service.default = lambda request: Reply(body={"result": {"items": items}})
    found = retriever(search_service, hits="result.items", id="doc.id", score="relevance").search("x", 5)
    assert found == [("invoices", 2.5), ("17", 1.0)]  # a numeric id is read as its digits


def test_a_reply_that_is_the_list_itself_and_longer_than_depth_is_cut(search_service: Server) -> None:
    search_service.default = lambda request: Reply(body=[{"id": f"d{n}", "score": 10 - n} for n in range(8)])
    found = retriever(search_service, hits="").search("x", 3)
    assert [hit.doc_id for hit in found] == ["d0", "d1", "d2"]


def test_extra_headers_and_another_auth_header_without_scheme(search_service: Server) -> None:
    search_service.default = lambda request: Reply(body={"hits": []})
    options = {"headers": {"X-Team": "eval"}, "auth_header": "X-Api-Key", "auth_scheme": ""}
    retriever(search_service, **options).search("x", 1)
    headers = search_service.received[0].headers
    assert headers["X-Team"] == "eval" and headers["X-Api-Key"] == TOKEN
    assert "Authorization" not in headers


def test_concurrent_searches_each_get_their_own_ranking(search_service: Server) -> None:
    """[run] concurrency calls search from several threads on one retriever."""
    questions = ["SSO", "2FA", "API", "download invoices", "export CSV", "password"] * 4
    reference = bm25_of(DOCUMENTS)
    built = retriever(search_service)
    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lambda question: built.search(question, 3), questions))
    assert found == [reference.search(question, 3) for question in questions]


# -- conversations ----------------------------------------------------------------------------

HISTORY = (
    Message("user", "How do I sign in with SSO?"),
    Message("assistant", "Members sign in through SSO once SAML is on."),
    Message("user", "Which plans have it?"),
    Message("assistant", "The Team plan."),
)
TURNS = [
    {"role": "user", "content": "How do I sign in with SSO?"},
    {"role": "assistant", "content": "Members sign in through SSO once SAML is on."},
    {"role": "user", "content": "Which plans have it?"},
    {"role": "assistant", "content": "The Team plan."},
]


def test_history_as_a_whole_value_is_sent_as_the_list_of_turns(search_service: Server) -> None:
    search_service.default = lambda request: Reply(body={"hits": []})
    template = {"query": "{question}", "top_k": "{depth}", "history": "{history}", "nested": ["{history}"]}
    built = retriever(search_service, request=template)
    with_history(built.search, Turn("And the price?", HISTORY))("And the price?", 3)  # as the engine asks
    built.search("SSO", 3)
    after, alone = (request.body for request in search_service.received)
    assert after == {"query": "And the price?", "top_k": 3, "history": TURNS, "nested": [TURNS]}
    assert alone["history"] == [] and alone["nested"] == [[]]  # a first turn: an empty conversation


def test_history_inside_a_string_is_the_user_turns_joined_by_newlines(search_service: Server) -> None:
    search_service.default = lambda request: Reply(body={"hits": []})
    built = retriever(search_service, request={"query": "{history}\n{question}", "top_k": "{depth}"})
    built.search("And the price of {history}?", 3, HISTORY)
    built.search("SSO", 3)
    after, alone = (request.body["query"] for request in search_service.received)
    # the assistant's words left out; a question holding "{history}" is sent as it is
    assert after == "How do I sign in with SSO?\nWhich plans have it?\nAnd the price of {history}?"
    assert alone == "\nSSO"


def test_get_sends_the_list_of_turns_as_json_text(search_service: Server) -> None:
    template = {"query": "{question}", "top_k": "{depth}", "history": "{history}"}
    hits = retriever(search_service, method="GET", request=template).search("SSO", 2, HISTORY)
    assert hits == bm25_of(DOCUMENTS).search("SSO", 2)
    (request,) = search_service.received
    assert [json.loads(value) for value in request.query["history"]] == [TURNS]


def test_the_default_request_sends_no_history(search_service: Server) -> None:
    built = retriever(search_service)
    found = with_history(built.search, Turn("download invoices", HISTORY))("download invoices", 3)
    assert found == bm25_of(DOCUMENTS).search("download invoices", 3)  # the question alone is searched
    assert search_service.received[0].body == {"query": "download invoices", "top_k": 3}


# -- the token --------------------------------------------------------------------------------


def test_a_token_variable_that_is_not_set_stops_the_build(
    search_service: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEARCH_TOKEN")
    with pytest.raises(EvalInputError) as caught:
        retriever(search_service)
    assert "[retriever] auth_env" in caught.value.problem and "SEARCH_TOKEN" in caught.value.problem
    assert "export SEARCH_TOKEN" in caught.value.fix
    assert search_service.received == []


def test_a_wrong_token_is_refused_never_retried_and_never_shown(
    search_service: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    def echo(request: Received) -> Reply:  # a careless service quoting the header it got
        return Reply(403, {"error": f"bad credentials: {request.headers['Authorization']}"})

    search_service.default = echo
    monkeypatch.setenv("SEARCH_TOKEN", "wrong-token-123456")
    built = retriever(search_service)
    with pytest.raises(http.SearchError) as caught:
        retrying(3).call(built.search, "SSO", 5)
    message = str(caught.value)
    assert not isinstance(caught.value, ConnectionError) and len(search_service.received) == 1
    assert "HTTP 403" in message and search_service.url in message and "'SSO'" in message
    assert "wrong-token-123456" not in message and "Bearer ***" in message
    assert "auth_env" in message


# -- failures ---------------------------------------------------------------------------------


def test_500_and_429_are_retried_by_the_run_and_then_succeed(search_service: Server) -> None:
    search_service.script = [Reply(500, b"internal error"), Reply(429, {"error": "slow down"})]
    found = retrying(2).call(retriever(search_service).search, "SSO", 5)
    assert found == bm25_of(DOCUMENTS).search("SSO", 5)
    assert len(search_service.received) == 3


def test_a_busy_service_is_a_connection_error_naming_the_url_and_status(search_service: Server) -> None:
    search_service.default = lambda request: Reply(503, {"error": "maintenance"})
    with pytest.raises(ConnectionError) as caught:
        retrying(1).call(retriever(search_service).search, "SSO", 5)
    assert isinstance(caught.value, http.SearchUnavailable) and caught.value.status == 503
    assert f"{search_service.url} for 'SSO': HTTP 503" in str(caught.value) and "maintenance" in str(
        caught.value
    )
    assert len(search_service.received) == 2


def test_a_service_slower_than_the_timeout_is_a_connection_error(search_service: Server) -> None:
    search_service.script = [Reply(body={"hits": []}, delay=1.0)]
    built = retriever(search_service, timeout=0.2)
    with pytest.raises(http.SearchUnavailable, match=r"no complete reply within the timeout of 0\.2 s"):
        built.search("SSO", 5)
    assert retrying(1).call(built.search, "SSO", 5) == bm25_of(DOCUMENTS).search("SSO", 5)


def test_nothing_listening_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    built = http.build(DOCUMENTS, TOKENIZE, {"url": f"http://127.0.0.1:{port}/search", "timeout": 2})
    with pytest.raises(ConnectionError, match="cannot connect"):
        built.search("SSO", 5)


def test_a_reply_that_is_not_json_names_the_question(search_service: Server) -> None:
    search_service.default = lambda request: Reply(200, b"<html>gateway</html>")
    with pytest.raises(http.SearchError) as caught:
        retrying(2).call(retriever(search_service).search, "SSO", 5)
    assert "to 'SSO' is not JSON" in str(caught.value) and "<html>gateway</html>" in str(caught.value)
    assert len(search_service.received) == 1  # not retried: the same request gets the same reply


def test_a_missing_list_or_field_names_its_path(search_service: Server) -> None:
    search_service.script = [Reply(body={"result": {"docs": []}})]
    built = retriever(search_service, hits="result.items")
    with pytest.raises(http.SearchError, match=r"no list of hits at 'result\.items'.*no 'items' in result"):
        built.search("SSO", 5)
    search_service.script = [Reply(body={"hits": [{"id": "invoices", "score": 1}, {"id": "api-keys"}]})]
    with pytest.raises(http.SearchError) as caught:
        retriever(search_service).search("API", 5)
    assert "hit 2 (hits.1) has no score field 'score'" in str(caught.value) and "'API'" in str(caught.value)
    search_service.script = [Reply(body={"hits": [{"id": "invoices", "score": "high"}]})]
    with pytest.raises(http.SearchError, match="hit 1's 'score' is not a number: 'high'"):
        retriever(search_service).search("API", 5)


def test_a_redirect_is_not_followed(search_service: Server) -> None:
    search_service.default = lambda request: Reply(302, b"", headers={"Location": "http://elsewhere/"})
    with pytest.raises(http.SearchError, match="redirects to http://elsewhere/"):
        retriever(search_service).search("SSO", 5)
    assert len(search_service.received) == 1


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "key", "named"),
    [
        ({"url": "http://x/search", "depth": 5}, "depth", "unknown option 'depth'; the http retriever takes"),
        ({}, "url", "option 'url' is required by the http retriever"),
        ({"url": "search.internal"}, "url", "option 'url' must be an http:// or https:// address"),
        ({"url": "http://team:pw-1234@x/s"}, "url", "option 'url' must not hold a user name or password"),
        ({"url": "http://x/s", "timeout": "5"}, "timeout", "option 'timeout' must be a float, got '5'"),
        (
            {"url": "http://x/s", "timeout": 7200},
            "timeout",
            "option 'timeout' must be a number from 0 to 3,600",
        ),
        ({"url": "http://x/s", "method": "PUT"}, "method", 'option \'method\' must be "POST" or "GET"'),
        (
            {"url": "http://x/s", "request": {"q": "fixed"}},
            "request",
            "option 'request' never sends the question",
        ),
        (
            {"url": "http://x/s", "method": "GET", "request": {"q": {"text": "{question}"}}},
            "request",
            "request.q is a table",
        ),
        ({"url": "http://x/s", "hits": "result..items"}, "hits", "option 'hits' is not a dotted path"),
        ({"url": "http://x/s", "id": ""}, "id", "option 'id' is not a dotted path"),
        (
            {"url": "http://x/s", "headers": {"X-Team": 5}},
            "headers",
            "option 'headers' must map header names to text",
        ),
        ({"url": "http://x/s", "headers": "X-Team: 5"}, "headers", "option 'headers' must be a table"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: dict[str, Any], key: str, named: str) -> None:
    """Its Settings refuse them, naming the key: the engine shows its line of eval.toml."""
    with pytest.raises(OptionsError) as caught:
        http.build(DOCUMENTS, TOKENIZE, options)
    assert named in str(caught.value) and caught.value.key == key
    assert "pw-1234" not in str(caught.value) + (caught.value.fix or "")


def test_a_password_in_the_url_is_refused_at_its_line_and_shown_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It would be recorded in every report (and failed to connect, its message quoting it)."""
    system = '[system]\nretriever = "http"\ngenerator = "stand-in"\n\n'
    text = system + TINY_CONFIG.replace(
        "[retriever]\n", '[retriever]\nurl = "https://bob:hunter2-pw@search.internal/q"\n'
    )
    config = write_project(tmp_path, config=text)
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("url = "))
    assert f"eval.toml:{line}: retriever.url: option 'url' must not hold a user name or password" in err
    assert "auth_env" in err and "hunter2" not in err and not (tmp_path / "build").exists()


def test_an_unknown_option_lists_the_known_ones() -> None:
    with pytest.raises(OptionsError) as caught:
        http.build(DOCUMENTS, TOKENIZE, {"url": "http://x/s", "top_k": 5})
    assert "url, method, request, hits, id, score, headers" in str(caught.value)

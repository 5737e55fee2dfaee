"""The openai adapter (a generator over an OpenAI-compatible chat endpoint) against a real
server on 127.0.0.1 speaking the chat-completions wire format: the request and prompt it
sends, how a reply becomes an Answer (citations, abstentions), the prompt template, and each
way the server fails, as the run sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from adapter_fakes import DOCUMENTS, bm25_of, chat, chat_server, passages

import fake_http
from fake_http import Received, Reply, Server
from rag_regress.adapters import openai
from rag_regress.answers.contract import check_answer
from rag_regress.api import Document, History, Hit, Message
from rag_regress.calling.asking import with_history
from rag_regress.calling.caller import Caller
from rag_regress.calling.retries import RetryPolicy
from rag_regress.errors import EvalInputError
from rag_regress.inputs.conversation import Turn
from rag_regress.options import OptionsError

__all__ = ["chat_server"]  # the fixture, imported for the tests below

CORPUS = {d.id: d for d in DOCUMENTS}
QUESTION = "download invoices"


def generator(server: Server, documents: list[Document] = DOCUMENTS, **options: Any) -> openai.ChatGenerator:
    settings = {"base_url": server.url, "model": "answer-model", **options}
    return openai.build(bm25_of(documents), documents, settings)


def replying(content: str) -> Reply:
    return chat(content)


def retrying(retries: int) -> Caller:
    return Caller(retry=RetryPolicy.named(retries, 0.0, ["ConnectionError"]))


# -- the request ------------------------------------------------------------------------------


def test_one_request_holds_the_question_and_the_numbered_passages(chat_server: Server) -> None:
    answer = generator(chat_server, contexts=2).answer(QUESTION)
    (request,) = chat_server.received
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "answer-model"
    assert request.body["temperature"] == 0 and request.body["max_tokens"] == 512
    assert "seed" not in request.body and "Authorization" not in request.headers
    hits = bm25_of(DOCUMENTS).search(QUESTION, 2)
    prompt = request.user
    assert f"Question: {QUESTION}" in prompt
    for number, hit in enumerate(hits, start=1):
        assert f"[{number}] {CORPUS[hit.doc_id].title}\n{CORPUS[hit.doc_id].text}" in prompt
    assert passages(prompt) == {n: CORPUS[hit.doc_id].text for n, hit in enumerate(hits, start=1)}
    assert "reply with exactly: I don't know." in prompt and "[2][3]" not in prompt  # no citations asked
    assert answer.text == "Download invoices as PDF files from the Billing page."
    assert [c.doc_id for c in answer.contexts] == [hit.doc_id for hit in hits] and not answer.abstained
    assert check_answer(answer, CORPUS) is answer  # contexts are the corpus's own text


def test_settings_and_the_key_are_sent(chat_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_KEY", "sk-local-789")
    options = {"api_key_env": "LLM_KEY", "temperature": 0.7, "seed": 11, "max_tokens": 64}
    generator(chat_server, **options).answer(QUESTION)
    (request,) = chat_server.received
    assert (request.body["temperature"], request.body["seed"], request.body["max_tokens"]) == (0.7, 11, 64)
    assert request.headers["Authorization"] == "Bearer sk-local-789"


def test_a_prompt_file_is_filled_in_without_reading_other_braces(
    chat_server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("prompts").mkdir()
    Path("prompts/answer.txt").write_text(
        'Reply as JSON {"answer": "..."}.\nQ: {question}\n{contexts}\n{other}', encoding="utf-8"
    )
    documents = [Document("braces", "Templates use {question} and {contexts} as names.", "Braces {x}")]
    generator(chat_server, documents, prompt="prompts/answer.txt").answer("what do {contexts} mean?")
    assert chat_server.received[0].user == (
        'Reply as JSON {"answer": "..."}.\nQ: what do {contexts} mean?\n'
        "[1] Braces {x}\nTemplates use {question} and {contexts} as names.\n{other}"
    )


# -- citations --------------------------------------------------------------------------------


def test_citation_markers_stay_in_the_text_with_every_passage(chat_server: Server) -> None:
    built = generator(chat_server, citations=True, contexts=3)
    hits = bm25_of(DOCUMENTS).search("SSO", 3)
    assert len(hits) >= 2
    chat_server.script = [replying("Members sign in through SSO [2]. SAML turns it on [1, 2].")]
    answer = built.answer("SSO")
    assert "cite the passages" in chat_server.received[0].user  # the built-in prompt asks for them
    assert answer.text == "Members sign in through SSO [2]. SAML turns it on [1, 2]."  # the engine reads them
    assert [c.doc_id for c in answer.contexts] == [hit.doc_id for hit in hits]  # [n] names the n-th
    chat_server.script = [replying("[1][2]")]  # nothing but markers: no answer
    assert built.answer("SSO").abstained


def test_a_citation_of_a_passage_not_given_is_the_models_answer_measured(chat_server: Server) -> None:
    built = generator(chat_server, citations=True, contexts=2)
    chat_server.script = [replying("Members sign in through SSO [1][3].")]
    answer = built.answer("SSO")  # never refused: the engine counts and names the miscitation
    assert answer.text == "Members sign in through SSO [1][3]." and answer.citations
    assert len(answer.contexts) == 2 and answer.notes == ()


def test_a_reply_cut_at_max_tokens_empty_or_echoing_the_prompt_is_noted(chat_server: Server) -> None:
    built = generator(chat_server, max_tokens=7)
    cut = fake_http.chat("Members sign in")
    cut.body["choices"][0]["finish_reason"] = "length"  # type: ignore[call-overload,index]
    echo = "Answer the question using only the numbered passages below. Keep the answer short"
    chat_server.script = [cut, replying(""), replying(f"{echo}, and stay close. SSO.")]
    assert built.answer("SSO").notes == ("cut at max_tokens (7): finish_reason 'length'",)
    empty = built.answer("SSO")
    assert empty.abstained and empty.notes == ("empty reply",)
    assert built.answer("SSO").notes[0].startswith("echoes the prompt: 'Answer the question using")


def test_without_citations_brackets_stay_as_written(chat_server: Server) -> None:
    chat_server.script = [replying("Use the Billing page [9].")]
    answer = generator(chat_server).answer(QUESTION)
    assert answer.text == "Use the Billing page [9]." and not answer.citations  # the model's text


# -- abstaining -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "options"),
    [
        ("I don't know.", {}),
        ("I don\u2019t know", {}),  # a curly apostrophe, no full stop
        ("I don't know. The passages only cover billing.", {}),
        ("The passages do not say, so I cannot answer that.", {}),  # api.looks_like_abstention
        ("no answer found.", {"abstain": "NO ANSWER FOUND"}),
        ("", {}),
    ],
)
def test_the_abstain_reply_is_an_abstention(chat_server: Server, reply: str, options: dict[str, Any]) -> None:
    chat_server.script = [replying(reply)]
    answer = generator(chat_server, **options).answer("Is there a mobile app?")
    assert answer.abstained and answer.text
    assert check_answer(answer, CORPUS) is answer


def test_a_custom_abstain_phrase_is_in_the_built_in_prompt(chat_server: Server) -> None:
    generator(chat_server, abstain="NOT IN THE DOCS").answer(QUESTION)
    assert "reply with exactly: NOT IN THE DOCS" in chat_server.received[0].user


def test_no_passage_found_abstains_without_asking_the_model(chat_server: Server) -> None:
    answer = generator(chat_server).answer("zebra")  # in no document of the tiny corpus
    assert answer.abstained and answer.contexts == [] and chat_server.received == []


def test_a_chunk_hit_gives_its_chunk() -> None:
    class Chunked:
        def search(self, question: str, depth: int) -> list[Hit]:
            return [Hit("invoices", 1.0, start=0, end=17)]

    built = openai.build(Chunked(), DOCUMENTS, {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert built.passage(Chunked().search("", 1)[0]) == ("Invoices", "Download invoices")


# -- conversations ----------------------------------------------------------------------------

HISTORY = (
    Message("user", "How do I sign in with SSO?"),
    Message("assistant", "Members sign in through SSO once SAML is on."),
)


class Remembering:
    """A retriever that declares `history`: BM25 over the question, recording each call."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, History]] = []

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        self.asked.append((question, history))
        return bm25_of(DOCUMENTS).search(question, depth)


class Blind:
    """A retriever written before conversations: its search takes no history."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def search(self, question: str, depth: int) -> list[Hit]:
        self.asked.append(question)
        return bm25_of(DOCUMENTS).search(question, depth)


def blind(server: Server) -> openai.ChatGenerator:
    """The adapter over a retriever that ignores the history: a later turn gets the same
    passages, and so the same prompt, as the question alone."""
    return openai.build(Blind(), DOCUMENTS, {"base_url": server.url, "model": "answer-model"})


def test_the_history_is_sent_as_messages_in_order_before_the_same_prompt(chat_server: Server) -> None:
    built = blind(chat_server)
    built.answer(QUESTION)
    # as the engine asks a later turn: with_history binds it because answer declares it
    answer = with_history(built.answer, Turn(QUESTION, HISTORY))(QUESTION)
    alone, after = (request.body["messages"] for request in chat_server.received)
    assert alone == [{"role": "user", "content": alone[0]["content"]}]  # no history: one message, as before
    assert after == [
        {"role": "user", "content": "How do I sign in with SSO?"},
        {"role": "assistant", "content": "Members sign in through SSO once SAML is on."},
        {"role": "user", "content": alone[0]["content"]},  # the prompt is unchanged, and last
    ]
    assert answer.text == "Download invoices as PDF files from the Billing page." and not answer.abstained


def test_prompt_characters_count_every_message_sent(chat_server: Server) -> None:
    built = blind(chat_server)
    alone = built.answer(QUESTION)
    after = built.answer(QUESTION, HISTORY)
    sent = chat_server.received[1].body["messages"]
    assert alone.usage is not None and after.usage is not None
    assert after.usage["prompt_characters"] == sum(len(message["content"]) for message in sent)
    history = sum(len(message.content) for message in HISTORY)
    assert after.usage["prompt_characters"] == alone.usage["prompt_characters"] + history


def test_the_echo_check_still_reads_the_prompt_after_a_history(chat_server: Server) -> None:
    echo = "Answer the question using only the numbered passages below. Keep the answer short"
    chat_server.script = [replying(f"{echo}. SSO."), replying(f"{HISTORY[0].content} Use SAML.")]
    built = generator(chat_server)
    assert built.answer("SSO", HISTORY).notes[0].startswith("echoes the prompt: 'Answer the question using")
    assert built.answer("SSO", HISTORY).notes == ()  # repeating the user's earlier words is no echo


def test_a_retriever_declaring_history_receives_it_and_one_without_is_asked_the_question_alone(
    chat_server: Server,
) -> None:
    remembering, blind = Remembering(), Blind()
    options = {"base_url": chat_server.url, "model": "answer-model"}
    openai.build(remembering, DOCUMENTS, options).answer(QUESTION, HISTORY)
    answer = openai.build(blind, DOCUMENTS, options).answer(QUESTION, HISTORY)  # no TypeError
    assert remembering.asked == [(QUESTION, HISTORY)] and blind.asked == [QUESTION]
    assert answer.text.startswith("Download invoices")
    assert len(chat_server.received[1].body["messages"]) == 3  # the model still gets the conversation


# -- failures ---------------------------------------------------------------------------------


def test_429_and_500_are_retried_by_the_run_and_then_answered(chat_server: Server) -> None:
    chat_server.script = [Reply(429, {"error": {"message": "rate limited"}}), Reply(500, b"oops")]
    answer = retrying(2).call(generator(chat_server).answer, QUESTION)
    assert answer.text.startswith("Download invoices") and len(chat_server.received) == 3


def test_a_busy_server_is_a_connection_error_naming_the_url(chat_server: Server) -> None:
    chat_server.default = lambda request: Reply(503, {"error": {"message": "overloaded"}})
    with pytest.raises(ConnectionError) as caught:
        retrying(1).call(generator(chat_server).answer, QUESTION)
    message = str(caught.value)
    assert isinstance(caught.value, openai.ChatUnavailable) and len(chat_server.received) == 2
    assert (
        f"{chat_server.url}/chat/completions" in message and "HTTP 503" in message and "overloaded" in message
    )
    assert repr(QUESTION) in message


def test_a_slow_server_is_a_connection_error(chat_server: Server) -> None:
    slow = chat("late")
    slow.delay = 1.0
    chat_server.script = [slow]
    with pytest.raises(openai.ChatUnavailable, match=r"timeout of 0\.2 s"):
        generator(chat_server, timeout=0.2).answer(QUESTION)


def test_a_reply_that_is_not_a_chat_completion_is_not_retried(chat_server: Server) -> None:
    chat_server.default = lambda request: Reply(200, b"{not json")
    with pytest.raises(openai.ChatError) as caught:
        retrying(3).call(generator(chat_server).answer, QUESTION)
    assert not isinstance(caught.value, ConnectionError) and len(chat_server.received) == 1
    assert "not JSON" in str(caught.value) and "base_url" in str(caught.value)


def test_a_refused_key_is_named_by_its_variable_never_shown(
    chat_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0000")

    def refuse(request: Received) -> Reply:
        return Reply(401, {"error": {"message": "invalid api key"}})

    chat_server.default = refuse
    with pytest.raises(openai.ChatError) as caught:
        generator(chat_server).answer(QUESTION)
    assert caught.value.status == 401 and "api_key_env" in str(caught.value)
    assert "sk-wrong-0000" not in str(caught.value)


# -- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "key", "named"),
    [
        ({"model": "m"}, "base_url", "option 'base_url' is required by the openai generator"),
        ({"base_url": "http://x/v1"}, "model", "option 'model' is required by the openai generator"),
        ({"base_url": "x/v1", "model": "m"}, "base_url", "option 'base_url' must be an http"),
        (
            {"base_url": "http://x/v1", "model": "m", "min_score": 1.0},
            "min_score",
            "unknown option 'min_score'; the openai generator takes",
        ),
        (
            {"base_url": "http://x/v1", "model": "m", "temperature": "0"},
            "temperature",
            "option 'temperature' must be a float",
        ),
        (
            {"base_url": "http://x/v1", "model": "m", "temperature": 3},
            "temperature",
            "option 'temperature' must be a number from 0 to 2, got 3",
        ),
        ({"base_url": "http://x/v1", "model": "m", "seed": 1.5}, "seed", "option 'seed' must be a int"),
        (
            {"base_url": "http://x/v1", "model": "m", "contexts": 0},
            "contexts",
            "option 'contexts' must be a whole number from 1 to 100",
        ),
        ({"base_url": "http://x/v1", "model": "m", "citations": "yes"}, "citations", "must be a bool"),
        ({"base_url": "http://x/v1", "model": "m", "abstain": " "}, "abstain", "'abstain' must not be empty"),
        ({"base_url": "http://u:pw@x/v1", "model": "m"}, "base_url", "must not hold a user name or password"),
    ],
)
def test_bad_options_are_refused_naming_the_option(options: dict[str, Any], key: str, named: str) -> None:
    """Its Settings refuse them, naming the key: the engine shows its line of eval.toml."""
    with pytest.raises(OptionsError) as caught:
        openai.build(bm25_of(DOCUMENTS), DOCUMENTS, options)
    assert named in str(caught.value) and caught.value.key == key


def test_a_prompt_file_that_cannot_be_read_is_refused() -> None:
    options = {"base_url": "http://x/v1", "model": "m", "prompt": "missing.txt"}
    with pytest.raises(EvalInputError) as caught:
        openai.build(bm25_of(DOCUMENTS), DOCUMENTS, options)
    assert "[generation] prompt names" in caught.value.problem and caught.value.fix


def test_a_prompt_file_without_contexts_is_refused(tmp_path: Path) -> None:
    template = tmp_path / "prompt.txt"
    template.write_text("Answer: {question}", encoding="utf-8")
    options = {"base_url": "http://x/v1", "model": "m", "prompt": str(template)}
    with pytest.raises(EvalInputError, match=r"a template without \{contexts\}"):
        openai.build(bm25_of(DOCUMENTS), DOCUMENTS, options)

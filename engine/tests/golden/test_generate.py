"""`golden generate` (golden/generate.py) against a real HTTP server on 127.0.0.1, started by
these tests, that speaks the OpenAI chat-completions wire format: it reads each request's kind
and passages from the user message and replies with a plausible candidate, or with what a test
scripts (faults, malformed replies, copied questions ...). The project is the demo's corpus,
golden set and eval.toml, copied into tmp_path with a [golden] table pointing at the server.
Retries wait milliseconds ([golden] backoff), timeouts are fractions of a second."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import fake_http
from conftest import PROJECT_ROOT
from fake_http import Received, Reply, Server, serving
from rag_regress.answers.judges.claims import split_sentences
from rag_regress.answers.llm.client import Client, json_content
from rag_regress.api import Document
from rag_regress.errors import EvalInputError
from rag_regress.golden import generate
from rag_regress.golden.generate import plan, run_generate, strata
from rag_regress.inputs.data import load_corpus
from rag_regress.settings.config import Config, load_config
from rag_regress.settings.schema import GOLDEN_KINDS
from rag_regress.text.words import ENGLISH_STOPWORDS

# -- the server -------------------------------------------------------------------------------


def chat(content: str) -> Reply:
    """A chat completion whose message content is `content`: 350 tokens, as the summaries count."""
    return fake_http.chat(
        content, "gen-model", {"prompt_tokens": 300, "completion_tokens": 50, "total_tokens": 350}
    )


def asked(request: Received) -> tuple[str, list[tuple[str, str]]]:
    """The kind and the (title, text) of each passage of a generate request."""
    kind = re.search(r"(?m)^KIND: (.+)$", request.user)
    assert kind is not None, request.user
    passages = re.findall(
        r"(?ms)^PASSAGE \d+\nTitle: (.*?)\n(.*?)\n\n(?=PASSAGE \d+\n|END OF PASSAGES)", request.user
    )
    return kind.group(1), passages


def first_sentence(text: str) -> str:
    return split_sentences(text)[0]


def draft(request: Received) -> dict[str, Any]:
    """A plausible reply to `request`: a question in its kind's style, built from the titles
    (distinct words per document), and a reference that is the first sentence of each passage,
    quoted exactly."""
    kind, passages = asked(request)
    words = re.findall(r"[a-z0-9]+", passages[0][0].lower())
    last = re.findall(r"[a-z0-9]+", passages[-1][0].lower())
    initials = "".join(word[0] for word in words) + "x"
    if kind == "unanswerable":
        return {
            "question": f"does the {' '.join(words)} feature run on a smart fridge",
            "reference": None,
            "nuggets": [],
            "quotes": [],
        }
    question = {
        "single": f"what should I know about {' '.join(words)}",
        "two-passage": f"how do {' '.join(words)} and {' '.join(last)} fit together",
        "terse": f"{' '.join(words[:2])} howto",
        "acronym": f"how does {initials.upper()} work",
        "users-words": f"quick query regarding {initials} stuff",
    }[kind]
    sentences = [first_sentence(text) for _, text in passages]
    return {
        "question": question,
        "reference": " ".join(sentences),
        "nuggets": [{"text": " ".join(sentences[0].split()[:3]), "vital": True}],
        "quotes": [{"doc": n, "quote": sentence} for n, sentence in enumerate(sentences, start=1)],
    }


def plausible(request: Received) -> Reply:
    return chat(json.dumps(draft(request)))


def changed(**replace: Any) -> Callable[[Received], Reply]:
    """A plausible reply with some keys replaced: a value, or a function of the request."""

    def reply(request: Received) -> Reply:
        content = draft(request)
        for key, value in replace.items():
            content[key] = value(request) if callable(value) else value
        return chat(json.dumps(content))

    return reply


def refusing_at(seed: int) -> Callable[[Received], Reply]:
    """Plausible replies, except 401 for the request sending `seed`."""

    def reply(request: Received) -> Reply:
        if request.body["seed"] == seed:
            return Reply(401, {"error": {"message": "invalid api key"}})
        return plausible(request)

    return reply


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=plausible), "/v1") as fake:
        yield fake


def project(root: Path, server: Server, **golden: Any) -> Config:
    """The demo project in `root`, its [golden] table pointing at `server` (plus `golden`)."""
    (root / "evals").mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "golden.jsonl"):
        shutil.copy(PROJECT_ROOT / "evals" / name, root / "evals" / name)
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    if "\n[golden]" in text:  # the demo may one day set its own: this test's table replaces it
        head, _, rest = text.partition("\n[golden]")
        following = re.search(r"(?m)^\[", rest)
        text = head + ("\n" + rest[following.start() :] if following else "\n")
    values: dict[str, Any] = {
        "base_url": server.url,
        "model": "gen-model",
        "timeout": 0.5,
        "retries": 2,
        "backoff": 0.01,
        "concurrency": 1,
    } | golden
    table = "\n".join(f"{key} = {json.dumps(value)}" for key, value in values.items())
    (root / "eval.toml").write_text(f"{text}\n[golden]\n{table}\n", encoding="utf-8")
    return load_config(root / "eval.toml")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def output(config: Config) -> Path:
    return config.path.parent / "evals" / "candidates.jsonl"


def generated(config: Config, all_dropped: bool = False, **options: Any) -> list[dict[str, Any]]:
    """run_generate as the command line calls it (no progress bar), then the file's lines. A
    run whose every slot is dropped (`all_dropped`) wrote nothing it was asked for: exit 2,
    its lines kept."""
    if all_dropped:
        with pytest.raises(EvalInputError, match="golden generate wrote no candidate"):
            run_generate(config, show_progress=False, **options)
    else:
        assert run_generate(config, show_progress=False, **options) == 0
    return lines(options.get("output") or output(config))


# -- the plan ---------------------------------------------------------------------------------


def demo_corpus() -> dict[str, Document]:
    return load_corpus(PROJECT_ROOT / "evals" / "corpus.jsonl")


def test_the_plan_is_the_same_for_the_same_corpus_seed_and_count_and_grows_by_its_end() -> None:
    corpus = demo_corpus()
    first = plan(corpus, GOLDEN_KINDS, 7, 12)
    assert first == plan(corpus, GOLDEN_KINDS, 7, 12)
    assert plan(corpus, GOLDEN_KINDS, 7, 6) == first[:6]  # a larger --count extends the plan
    assert plan(dict(reversed(corpus.items())), GOLDEN_KINDS, 7, 12) == first  # file order aside
    assert [slot.sources for slot in plan(corpus, GOLDEN_KINDS, 8, 12)] != [slot.sources for slot in first]
    assert [slot.kind for slot in first] == [*GOLDEN_KINDS, *GOLDEN_KINDS]


def test_documents_are_drawn_round_robin_over_strata_without_replacement() -> None:
    corpus = demo_corpus()
    groups = strata(list(corpus.values()))
    assert list(groups) == ["short", "medium", "long"]  # demo ids have no folders: length terciles
    assert sorted(len(ids) for ids in groups.values()) == [13, 13, 14]
    stratum = {doc: name for name, ids in groups.items() for doc in ids}
    singles = plan(corpus, ["single"], 0, 39)
    spread = Counter(stratum[slot.sources[0]] for slot in singles)
    assert spread == {"short": 13, "medium": 13, "long": 13}
    assert len({slot.sources[0] for slot in singles}) == 39  # no document twice in a round
    pairs = [slot for slot in plan(corpus, GOLDEN_KINDS, 0, 60) if slot.kind == "two-passage"]
    assert pairs and all(stratum[a] != stratum[b] for a, b in (slot.sources for slot in pairs))


def test_ids_like_folder_name_are_stratified_by_folder() -> None:
    docs = [Document(f"{folder}/doc{n}", f"Text {n} of {folder}.") for folder in "abc" for n in range(4)]
    groups = strata(docs)
    assert groups == {f: [f"{f}/doc{n}" for n in range(4)] for f in "abc"}
    first_three = [slot.sources[0].split("/")[0] for slot in plan({d.id: d for d in docs}, ["single"], 3, 3)]
    assert sorted(first_three) == ["a", "b", "c"]


def test_a_long_document_is_sent_as_a_seeded_window_cut_at_whitespace() -> None:
    words = " ".join(f"word{n}" for n in range(3000))  # about 26,000 characters
    corpus = {"long": Document("long", words), "short": Document("short", "A short text.")}
    slots = [slot for slot in plan(corpus, ["single"], 1, 4) if slot.sources == ("long",)]
    assert slots and slots == [slot for slot in plan(corpus, ["single"], 1, 4) if slot.sources == ("long",)]
    for slot in slots:
        ((start, end),) = slot.windows
        assert 0 < end - start <= generate.PASSAGE_CHARS
        assert words[start - 1] == " " and (end == len(words) or words[end] == " ")
    assert len({slot.windows for slot in slots}) == len(slots)  # each slot its own window


def test_a_two_passage_slot_of_a_one_document_corpus_is_dropped_without_a_request(
    tmp_path: Path, server: Server
) -> None:
    (tmp_path / "corpus.jsonl").write_text(json.dumps({"id": "only", "text": "The one text.."}) + "\n")
    table = f'base_url = "{server.url}"\nmodel = "gen-model"\nkinds = ["two-passage"]\n'
    (tmp_path / "eval.toml").write_text(f'[data]\ncorpus = "corpus.jsonl"\n\n[golden]\n{table}')
    config = load_config(tmp_path / "eval.toml")  # no golden set yet: nothing to duplicate
    found = generated(config, True, count=1)
    assert found[0]["why"] == "plan: a two-passage question needs two documents; the corpus has one"
    assert server.received == []


# -- requests and candidates ------------------------------------------------------------------


def test_each_slot_is_one_request_and_one_line_of_every_kind(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server)
    found = generated(config, count=6)
    corpus = load_corpus(config.corpus)

    assert [line["slot"] for line in found] == list(range(6))
    assert [line["kind"] for line in found] == list(GOLDEN_KINDS)
    assert all(line["status"] == "candidate" and line["why"] is None for line in found), found
    assert [line["id"] for line in found] == [f"cand-{n:04d}" for n in range(6)]
    assert list(found[0]) == [
        "id", "slot", "status", "why", "kind", "question", "answerable", "reference", "nuggets",
        "relevant", "passages", "provenance",
    ]  # fmt: skip
    slots = plan(corpus, GOLDEN_KINDS, 0, 6)
    for line, slot in zip(found, slots, strict=True):
        provenance = line["provenance"]
        assert provenance["generator"] == "rag-regress golden generate"
        assert (provenance["model"], provenance["prompt_version"]) == ("gen-model", "1")
        assert (provenance["seed"], provenance["slot"]) == (0, slot.number)
        assert provenance["validated_by"]["name"] == "lexical"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", provenance["at"])
        if slot.kind == "unanswerable":
            assert (line["answerable"], line["reference"], line["relevant"]) == (False, None, {})
            assert line["passages"] == [] and line["nuggets"] == []
            continue
        assert line["answerable"] is True and line["relevant"] == dict.fromkeys(slot.sources, 3)
        for passage in line["passages"]:  # the offsets point at the quote (here: the reference)
            text = corpus[passage["doc"]].text[passage["start"] : passage["end"]]
            assert " ".join(text.split()) in line["reference"] and passage["grade"] == 3
    two = found[1]
    assert {p["doc"] for p in two["passages"]} == set(two["relevant"]) and len(two["relevant"]) == 2

    assert len(server.received) == 6
    for request, slot in zip(server.received, slots, strict=True):
        body = request.body
        assert request.path == "/v1/chat/completions"
        assert body["model"] == "gen-model" and body["temperature"] == 0.7 and body["seed"] == slot.number
        assert body["response_format"] == {"type": "json_object"}
        assert body["messages"][0] == {"role": "system", "content": generate.PROMPT.read_text("utf-8")}
        kind, passages = asked(request)
        assert kind == slot.kind
        assert [text for _, text in passages] == [corpus[doc].text.strip() for doc in slot.sources]
        assert "Authorization" not in request.headers


def test_the_same_seed_and_count_make_the_same_slots_sources_and_request_seeds(
    tmp_path: Path, server: Server
) -> None:
    config = project(tmp_path, server, seed=11)
    first = generated(config, count=6, output=tmp_path / "one.jsonl")
    seeds = [request.body["seed"] for request in server.received]
    server.received.clear()
    second = generated(config, count=6, output=tmp_path / "two.jsonl")
    same = ("slot", "kind", "relevant", "question", "passages")
    assert [[line[k] for k in same] for line in first] == [[line[k] for k in same] for line in second]
    assert seeds == [request.body["seed"] for request in server.received] == list(range(11, 17))
    other = generated(config, count=6, seed=12, output=tmp_path / "three.jsonl")
    assert [line["relevant"] for line in other] != [line["relevant"] for line in first]


def test_concurrent_requests_write_every_slot_in_slot_order(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server, concurrency=3)
    found = generated(config, count=12)
    assert [line["slot"] for line in found] == list(range(12))
    assert all(line["status"] == "candidate" for line in found), [line["why"] for line in found]
    assert sorted(request.body["seed"] for request in server.received) == list(range(12))


# -- faults: retried, or the run stops ----------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        Reply(429, {"error": {"message": "rate limited"}}),
        Reply(500, {"error": {"message": "overloaded"}}),
    ],
    ids=["429", "500"],
)
def test_a_transient_failure_is_retried(
    tmp_path: Path, server: Server, fault: Reply, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = [fault]
    found = generated(project(tmp_path, server), count=1)
    assert [line["status"] for line in found] == ["candidate"]
    assert len(server.received) == 2
    err = capsys.readouterr().err
    assert "wrote 1 candidate and 0 dropped" in err and "2 requests (1 retries), 350 tokens" in err


def test_a_refused_request_stops_the_run_naming_the_key_variable_and_keeps_the_file(
    tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    server.default = refusing_at(2)
    config = project(tmp_path, server)
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=6, show_progress=False)
    error = raised.value
    assert "[golden] generating slot 2 (unanswerable)" in error.problem and "HTTP 401" in error.problem
    assert "OPENAI_API_KEY" in error.fix and "now it is set" in error.fix
    assert error.path == str(config.path) and error.line == config.line_of("golden", "base_url")
    assert [line["slot"] for line in lines(output(config))] == [0, 1]  # whole lines, kept
    assert server.received[0].headers["Authorization"] == "Bearer sk-very-secret"
    assert "sk-very-secret" not in str(error) + capsys.readouterr().err
    assert len(server.received) == 3  # no request after the refused one


def test_a_server_that_stays_down_stops_the_run_after_its_retries(tmp_path: Path, server: Server) -> None:
    server.default = lambda request: Reply(503, {"error": {"message": "down"}})
    config = project(tmp_path, server, retries=1)
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=2, show_progress=False)
    assert "HTTP 503" in raised.value.problem and "(2 attempts)" in raised.value.problem
    assert "raise [golden] timeout or retries" in raised.value.fix
    assert lines(output(config)) == [] and len(server.received) == 2


def test_a_reply_slower_than_the_timeout_stops_the_run_within_it(tmp_path: Path, server: Server) -> None:
    server.default = lambda request: Reply(body=b"{}", delay=3.0)  # beyond [golden] timeout (0.5 s)
    config = project(tmp_path, server, retries=2)
    started = time.monotonic()
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=1, show_progress=False)
    assert time.monotonic() - started < 0.5 + 1.0  # the timeout holds the retries too
    assert "no complete reply within the timeout of 0.5 s" in raised.value.problem
    assert len(server.received) == 1


# -- what drops a slot ------------------------------------------------------------------------


def dropped(tmp_path: Path, server: Server, reply: Callable[[Received], Reply] | Reply, **golden: Any) -> str:
    """The `why` of slot 0 (a "single" question) when the server replies `reply`."""
    server.script = [reply]
    found = generated(project(tmp_path, server, kinds=["single"], **golden), True, count=1)
    assert [line["status"] for line in found] == ["dropped"]
    return str(found[0]["why"])


def test_a_malformed_reply_drops_the_slot_and_the_run_goes_on(tmp_path: Path, server: Server) -> None:
    server.script = [chat("Sure! Here is a question: {")]
    found = generated(project(tmp_path, server, kinds=["single"]), count=2)
    assert [line["status"] for line in found] == ["dropped", "candidate"]
    assert found[0]["why"].startswith("malformed: the reply is not JSON: 'Sure! Here is a question: {'")
    assert found[0]["question"] == "" and found[0]["relevant"]  # the file shows what was tried


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ({"question": "q?", "reference": "r.", "nuggets": []}, "malformed: it lacks quotes"),
        (  # what the model wrote is shown, and both what it lacks and what it added
            {"question": "q?", "answer": "r."},
            "malformed: it lacks reference, nuggets, quotes; it has unknown key(s) answer (it wrote "
            '\'{"question": "q?", "answer": "r."}\')',
        ),
        ({"question": "", "reference": "r.", "nuggets": [], "quotes": []}, "malformed: question must be"),
        ({"question": "q?", "reference": None, "nuggets": [], "quotes": []}, "malformed: reference must be"),
        ({"question": "q?", "reference": "r.", "nuggets": [{"txt": 1}], "quotes": []}, "malformed: nugget 1"),
        (
            {"question": "q?", "reference": "r.", "nuggets": [], "quotes": [{"doc": 2, "quote": "x"}]},
            "malformed: quote 1",
        ),
        (
            {"question": "q?", "reference": "r.", "nuggets": [], "quotes": []},
            "malformed: it quotes no passage",
        ),
    ],
)
def test_a_reply_that_does_not_match_the_schema_is_dropped_saying_why(
    tmp_path: Path, server: Server, content: dict[str, Any], why: str
) -> None:
    assert dropped(tmp_path, server, chat(json.dumps(content))).startswith(why)


def test_a_quote_not_in_its_passage_drops_the_slot(tmp_path: Path, server: Server) -> None:
    quotes = [{"doc": 1, "quote": "Tidemark never says this."}]
    why = dropped(tmp_path, server, changed(quotes=quotes))
    assert why.startswith("quote: the quote 'Tidemark never says this.' is not in passage 1 (")


def test_a_question_copied_from_its_passage_is_dropped(tmp_path: Path, server: Server) -> None:
    why = dropped(tmp_path, server, changed(question=lambda request: first_sentence(asked(request)[1][0][1])))
    assert why.startswith("copied: the question repeats ") and "fewer than 6 allowed" in why


def test_a_users_words_question_with_a_three_word_phrase_of_the_passage_is_dropped(
    tmp_path: Path, server: Server
) -> None:
    def three_words(request: Received) -> str:
        text = asked(request)[1][0][1]
        content = [w for w in re.findall(r"[A-Za-z]+", text) if w.lower() not in ENGLISH_STOPWORDS]
        return f"hey {' '.join(content[:3])} pls"  # three content words in a row of the passage

    server.script = [changed(question=three_words)]
    found = generated(project(tmp_path, server, kinds=["users-words"]), True, count=1)
    assert found[0]["why"].startswith("copied: ") and "fewer than 3 allowed" in found[0]["why"]


def test_a_terse_question_of_too_many_words_is_dropped(tmp_path: Path, server: Server) -> None:
    server.script = [changed(question="how do I turn this thing on")]
    found = generated(project(tmp_path, server, kinds=["terse"]), True, count=1)
    assert found[0]["why"] == "shape: a terse question has 2 to 4 words, this one 7"


def test_a_reference_the_judge_does_not_find_in_the_passage_is_dropped(
    tmp_path: Path, server: Server
) -> None:
    reference = "Tidemark mails a paper catalogue to every customer each winter."
    why = dropped(tmp_path, server, changed(reference=reference))
    assert why.startswith("unsupported: reference sentence 1 ('Tidemark mails a paper catalogue")


def test_near_duplicates_of_golden_questions_and_earlier_candidates_are_dropped(
    tmp_path: Path, server: Server
) -> None:
    golden = json.loads((PROJECT_ROOT / "evals" / "golden.jsonl").read_text("utf-8").splitlines()[0])
    why = dropped(tmp_path, server, changed(question=golden["question"] + "?"))
    assert why.startswith(f"near-duplicate: Jaccard 1.00 with golden question {golden['id']} ")

    again = tmp_path / "again"
    server.script = [changed(question="where are my monthly invoice files kept")] * 2
    found = generated(project(again, server, kinds=["single"]), count=3)
    assert [line["status"] for line in found] == ["candidate", "dropped", "candidate"]
    assert found[1]["why"].startswith("near-duplicate: Jaccard 1.00 with candidate cand-0000 ")


def test_an_unanswerable_candidate_has_no_reference(tmp_path: Path, server: Server) -> None:
    server.script = [changed(reference="It does.")]
    found = generated(project(tmp_path, server, kinds=["unanswerable"]), count=2)
    assert found[0]["status"] == "dropped" and "unanswerable question has reference null" in found[0]["why"]
    assert found[1]["status"] == "candidate" and found[1]["answerable"] is False


def test_the_summary_counts_dropped_slots_by_reason(
    tmp_path: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = [chat("nope"), changed(quotes=[{"doc": 1, "quote": "not there"}]), chat("{")]
    generated(project(tmp_path, server, kinds=["single"]), count=4)
    err = capsys.readouterr().err
    assert "wrote 1 candidate and 3 dropped to " in err
    assert "dropped: 2 malformed, 1 quote" in err and "4 requests (0 retries), 1,400 tokens" in err


def test_the_summary_prices_the_tokens_under_the_golden_model(
    tmp_path: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script = [chat("nope"), chat("{")]  # 2 x (300 prompt + 50 completion) tokens
    config = project(tmp_path / "priced", server, kinds=["single"])
    with config.path.open("a", encoding="utf-8") as file:
        file.write('\n[prices]\n"gen-model" = { input = 10.0, output = 100.0 }\n')
    generated(load_config(config.path), all_dropped=True, count=2)
    err = capsys.readouterr().err
    assert "2 requests (0 retries), 700 tokens" in err
    assert f"cost ${(600 * 10.0 + 100 * 100.0) / 1e6:.4f} (model 'gen-model')" in err

    server.script = [chat("nope")]
    generated(project(tmp_path / "unpriced", server, kinds=["single"]), all_dropped=True, count=1)
    assert 'cost no price (add [prices] "gen-model")' in capsys.readouterr().err


# -- the output file and resuming ---------------------------------------------------------------


def test_an_interrupted_run_resumes_with_only_the_missing_slots(tmp_path: Path, server: Server) -> None:
    server.default = refusing_at(3)
    config = project(tmp_path, server)
    with pytest.raises(EvalInputError):
        run_generate(config, count=6, show_progress=False)
    assert [line["slot"] for line in lines(output(config))] == [0, 1, 2]

    server.default, server.received = plausible, []
    found = generated(config, count=6)
    assert [request.body["seed"] for request in server.received] == [3, 4, 5]
    assert [line["slot"] for line in found] == list(range(6)) and len({line["id"] for line in found}) == 6

    server.received = []
    assert generated(config, count=6) == found and server.received == []  # nothing left to do
    assert [line["slot"] for line in generated(config, count=8)] == list(range(8))
    assert [request.body["seed"] for request in server.received] == [6, 7]


def test_ctrl_c_leaves_whole_lines_and_the_rerun_resumes(
    tmp_path: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = project(tmp_path, server)
    complete = Client.complete
    calls = []

    def interrupted(self: Client, body: dict[str, Any], *deadline: Any) -> Any:
        calls.append(body["seed"])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return complete(self, body, *deadline)

    monkeypatch.setattr(Client, "complete", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_generate(config, count=5, show_progress=False)
    assert [line["slot"] for line in lines(output(config))] == [0, 1]
    monkeypatch.setattr(Client, "complete", complete)
    assert [line["slot"] for line in generated(config, count=5)] == list(range(5))


def test_a_cut_short_last_line_is_removed_with_a_warning(
    tmp_path: Path, server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, server)
    generated(config, count=2)
    with output(config).open("a", encoding="utf-8") as out:
        out.write('{"id": "cand-0002", "slot": 2, "sta')
    found = generated(config, count=3)
    assert [line["slot"] for line in found] == [0, 1, 2]
    assert "the last line is cut short (an interrupted run); it is removed" in capsys.readouterr().err


@pytest.mark.parametrize(
    "last",
    ["my notes, kept here", '{"note": "mine"}', '{"id": "cand-0002", "slot": 2, "status": "candidate"}'],
    ids=["not-json", "foreign-json", "no-provenance"],
)
def test_a_last_line_not_written_by_generate_is_never_cut(tmp_path: Path, server: Server, last: str) -> None:
    """--output onto a file whose last line (no newline) is not a candidate line of this plan:
    exit 2 naming the file and the line, the file byte for byte as it was, no request made."""
    config = project(tmp_path, server)
    generated(config, count=2)
    with output(config).open("a", encoding="utf-8") as out:
        out.write(last)
    before = output(config).read_bytes()
    server.received = []
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=3, show_progress=False)
    assert (raised.value.path, raised.value.line) == (str(output(config)), 3)
    assert output(config).read_bytes() == before and server.received == []


def test_a_bad_line_in_the_file_is_an_error_naming_it(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server)
    generated(config, count=2)
    first, second = output(config).read_text("utf-8").splitlines()
    output(config).write_text(f"{first}\nnot json\n{second}\n", encoding="utf-8")
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=3, show_progress=False)
    assert raised.value.line == 2 and "not valid JSON" in raised.value.problem

    output(config).write_text(f"{first}\n{first}\n", encoding="utf-8")
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=3, show_progress=False)
    assert raised.value.line == 2 and "slot 0 was already written on line 1" in raised.value.problem


def test_a_file_of_another_seed_or_plan_is_not_resumed(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server)
    generated(config, count=2)
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=2, seed=5, show_progress=False)
    assert "generated with seed 0, not 5" in raised.value.problem
    assert "--seed 0" in raised.value.fix and "--output" in raised.value.fix
    changed_kinds = project(tmp_path, server, kinds=["terse"])
    with pytest.raises(EvalInputError) as raised:
        run_generate(changed_kinds, count=2, show_progress=False)
    assert "slot 0 holds a 'single' question" in raised.value.problem and raised.value.line == 1


def test_the_golden_set_and_the_corpus_are_never_the_output(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server)
    before = config.golden.read_bytes()
    for target in (config.golden, config.corpus):
        with pytest.raises(EvalInputError) as raised:
            run_generate(config, count=1, output=target, show_progress=False)
        assert "would replace the" in raised.value.problem
    configured = project(tmp_path, server, candidates="evals/golden.jsonl")
    with pytest.raises(EvalInputError) as raised:
        run_generate(configured, count=1, show_progress=False)
    assert "would replace the golden set ([data] golden)" in raised.value.problem
    assert config.golden.read_bytes() == before and server.received == []


def test_candidate_ids_never_collide_with_golden_ids(tmp_path: Path, server: Server) -> None:
    config = project(tmp_path, server, kinds=["single"], seed=4)
    merged = {"id": "cand-0000", "question": "an accepted candidate", "relevant": {"audit-log": 3}}
    with config.golden.open("a", encoding="utf-8") as out:
        out.write(json.dumps(merged) + "\n")
    assert [line["id"] for line in generated(config, count=2)] == ["cand-4-0000", "cand-0001"]


# -- settings ---------------------------------------------------------------------------------


def test_golden_settings_have_their_defaults(tmp_path: Path, server: Server) -> None:
    settings = load_config(PROJECT_ROOT / "eval.toml").golden_settings
    assert (settings.base_url, settings.model, settings.api_key_env) == (None, None, "OPENAI_API_KEY")
    assert (settings.temperature, settings.seed, settings.count, settings.near_duplicate) == (0.7, 0, 50, 0.8)
    assert settings.kinds == list(GOLDEN_KINDS)
    assert settings.candidates == (PROJECT_ROOT / "evals" / "candidates.jsonl").resolve()


def test_without_a_server_or_a_model_the_command_says_what_to_set(tmp_path: Path, server: Server) -> None:
    for missing, said in [
        ("base_url", "[golden] base_url is not set"),
        ("model", "[golden] model is not set"),
    ]:
        config = project(tmp_path, server)
        text = re.sub(rf"(?m)^{missing} = .*\n", "", config.path.read_text("utf-8"))
        config.path.write_text(text, encoding="utf-8")
        with pytest.raises(EvalInputError) as raised:
            run_generate(load_config(config.path), show_progress=False)
        assert said in raised.value.problem and raised.value.line == config.line_of("golden")


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('kinds = ["single", "riddle"]', 'golden.kinds: must be one of "single", "two-passage"'),
        ("kinds = []", "golden.kinds:"),
        ('api_key_env = "sk-123"', "golden.api_key_env: must be the name of an environment variable"),
        ('base_url = "ftp://host"', "golden.base_url: must be an http:// or https:// address"),
        ("near_duplicate = 0.2", "golden.near_duplicate: must be a number between 0.5 and 1"),
        ("colour = 1", "golden.colour: unknown setting"),
    ],
)
def test_a_bad_golden_setting_is_exit_2_at_its_line(tmp_path: Path, setting: str, said: str) -> None:
    text = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8") + f"\n[golden]\n{setting}\n"
    (tmp_path / "eval.toml").write_text(text, encoding="utf-8")
    with pytest.raises(EvalInputError) as raised:
        load_config(tmp_path / "eval.toml")
    assert said in str(raised.value) and raised.value.line == text.count("\n")


def test_a_reply_in_a_code_fence_is_read_and_json_mode_can_be_switched_off(
    tmp_path: Path, server: Server
) -> None:
    def fenced(request: Received) -> Reply:
        assert "response_format" not in request.body  # json_mode = false sends none
        return chat("```json\n" + json.dumps(draft(request)) + "\n```")

    server.default = fenced
    config = project(tmp_path, server, json_mode=False)
    found = generated(config, count=3)
    assert [line["status"] for line in found] == ["candidate"] * 3, found
    assert len(server.received) == 3


def test_a_server_refusing_json_mode_names_the_setting_that_turns_it_off(
    tmp_path: Path, server: Server
) -> None:
    def strict(request: Received) -> Reply:
        if "response_format" in request.body:
            return Reply(400, {"error": {"message": "response_format is not supported"}})
        return plausible(request)

    server.default = strict
    config = project(tmp_path, server)
    with pytest.raises(EvalInputError) as raised:
        run_generate(config, count=2, show_progress=False)
    assert "json_mode = false" in raised.value.fix
    (tmp_path / "eval.toml").write_text(
        (tmp_path / "eval.toml").read_text(encoding="utf-8") + "json_mode = false\n", encoding="utf-8"
    )
    found = generated(load_config(tmp_path / "eval.toml"), count=2)
    assert [line["status"] for line in found] == ["candidate"] * 2, found


@pytest.mark.parametrize(
    "wrap",
    [
        lambda reply: reply,
        lambda reply: f"```json\n{reply}\n```",
        lambda reply: f"```\n{reply}\n```\n",
        lambda reply: f"<think>\nThe passage says {{...}}; a question.\n</think>\n\n{reply}",
        lambda reply: f"<think>plan</think>```json\n{reply}\n```",
    ],
    ids=["plain", "json-fence", "bare-fence", "thinking", "thinking-and-fence"],
)
def test_what_models_wrap_around_the_json_is_read(wrap: Callable[[str], str]) -> None:
    reply = json.dumps({"question": "q?", "reference": None, "nuggets": [], "quotes": []})
    assert json.loads(json_content(wrap(reply))) == json.loads(reply)


def test_json_inside_prose_is_not_guessed_at() -> None:
    reply = 'Here it is: {"question": "q?"} hope that helps'
    assert json_content(reply) == reply  # malformed, dropped saying so: never half-read

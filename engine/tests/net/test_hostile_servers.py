"""Every client of the engine against a hostile server on 127.0.0.1: the openai generator,
the LLM judge, `golden generate` and the http retriever, each through the command line on the
tiny project, against a server that echoes the API key back in every form (as written,
JSON-escaped, URL-encoded, HTML-escaped, cut at the 200th character, in a redirect's
Location, in the model's answer, in a hit's id), sends a JSON nesting bomb, drips its reply
one byte at a time, or sends more than the reply limit.

What must hold, whatever the server does: no piece of 8 characters of the key reaches the
console or any file the command writes; the command ends with 0 or 2, never a traceback;
a dripping server is given up at the timeout plus a second."""

from __future__ import annotations

import html
import json
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import fake_http
from conftest import SHIPPED, TINY_CONFIG, run_cli, write_project
from fake_http import Received, Reply, Server, serving
from rag_regress.adapters import http, openai
from rag_regress.api import System
from rag_regress.net import redact
from rag_regress.retrieval.retrievers import bm25

# A key with every character the forms treat differently: quotes and backslashes (JSON),
# reserved characters and a space (URL), markup (HTML).
KEY = 'sk-proj-Hx7"Q\\z+9/w=Lm<&>Tq2 RvK8nB4cD6eF'
ENV = "HOSTILE_KEY"


def pieces(key: str = KEY) -> set[str]:
    """Every 8-character piece of every form of `key` a server could echo."""
    return {
        form[start : start + redact.FRAGMENT]
        for form in redact.forms(key)
        for start in range(len(form) - redact.FRAGMENT + 1)
    }


def leaks(text: str) -> list[str]:
    return sorted(piece for piece in pieces() if piece in text)


def written(root: Path) -> dict[str, str]:
    """Every file under `root` (the project: reports, caches, candidates, pages), as text."""
    return {
        str(path.relative_to(root)): path.read_bytes().decode("utf-8", "replace")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


# -- what a hostile server sends --------------------------------------------------------------------


def echoing(header: str) -> dict[str, Reply]:
    """The replies of a server that quotes the Authorization header it received."""
    return {
        "401 message": Reply(401, {"error": {"message": f"Invalid credentials: {header}"}}),
        "401 json-escaped": Reply(
            401, {"error": {"message": json.dumps({"got": {"Authorization": header}})}}
        ),
        "401 url-encoded": Reply(
            401, {"error": {"message": "see /?h=" + urllib.parse.quote(header, safe="")}}
        ),
        "401 form-encoded": Reply(401, {"error": {"message": "h=" + urllib.parse.quote_plus(header)}}),
        "401 html": Reply(401, f"<p>Bad header {html.escape(header)}</p>".encode()),
        "401 cut at 200": Reply(401, {"error": {"message": "x" * 190 + header}}),
        "403 text": Reply(403, f"Forbidden: {header}".encode()),
        "500 message": Reply(500, {"error": {"message": f"upstream saw {header}"}}),
        "302 query": Reply(
            302, headers={"Location": "https://login.example/cb?t=" + urllib.parse.quote(KEY)}
        ),
        "307 path": Reply(307, headers={"Location": f"http://127.0.0.1:9/{urllib.parse.quote(KEY)}/x"}),
        "200 not json": Reply(200, f"<html>{header}</html>".encode()),
        "200 wrong shape": Reply(200, {"choices": header, "hits": header}),
    }


ECHOES = list(echoing("-"))


def answer_holding(header: str) -> Reply:
    """A chat completion whose content (the model's answer, or the judge's reply) is the key."""
    return fake_http.chat(f"The credentials are {header}.")


# -- the four clients, each on the tiny project -------------------------------------------------------


@dataclass
class Client:
    """How one client of the engine is pointed at `server` and run through the command line."""

    name: str
    setup: Callable[[Path, str], Path]  # (root, server url) -> eval.toml
    argv: list[str]
    system: System
    path: str  # where the client sends its requests, below the server's address


def pointed(table: str, replaces: str = "", head: str = "", **values: object) -> Callable[[Path, str], Path]:
    """A project maker: the tiny project with [`table`] holding `values` and the server's
    address (`url` for the retriever, `base_url` for the others) and key variable, after the
    text `head`; the table replaces the text `replaces` of the tiny config (appended when "")."""

    def make(root: Path, url: str) -> Path:
        address = (
            {"url": url, "auth_env": ENV} if table == "retriever" else {"base_url": url, "api_key_env": ENV}
        )
        lines = "\n".join(f"{key} = {json.dumps(value)}" for key, value in {**address, **values}.items())
        text = f"{head}\n[{table}]\n{lines}\n"
        return write_project(root, TINY_CONFIG.replace(replaces, text, 1) if replaces else TINY_CONFIG + text)

    return make


LLM = {"model": "m", "timeout": 2, "retries": 1, "backoff": 0.01, "concurrency": 1}
generator_project = pointed(
    "generation", "[generation]\nmin_score = 0.0\n", model="m", timeout=2, citations=True
)
judge_project = pointed("judge.llm", head='\n[judge]\nbackend = "llm"\n', **LLM)
golden_project = pointed("golden", count=2, kinds=["single"], **LLM)
retriever_project = pointed("retriever", "[retriever]\n", timeout=2)


STAND_IN = SHIPPED  # the shipped BM25 and the stand-in generator: no server of their own
CLIENTS = {
    "generator": Client("generator", generator_project, ["eval"], System(bm25.build, openai.build), "/v1"),
    "judge": Client("judge", judge_project, ["eval"], STAND_IN, "/v1"),
    "golden generate": Client(
        "golden generate", golden_project, ["golden", "generate", "--quiet"], STAND_IN, "/v1"
    ),
    "retriever": Client(
        "retriever", retriever_project, ["eval"], System(http.build, STAND_IN.build_generator), "/search"
    ),
}


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv(ENV, KEY)
    with serving(monkeypatch, Server()) as fake:
        yield fake


def run(client: Client, root: Path, server: Server) -> int:
    """The client's command on a fresh project in `root` pointed at `server`."""
    config = client.setup(root, server.url + client.path)
    return run_cli(["--config", str(config), *client.argv], client.system)


def reply_for(mode: str) -> Callable[[Received], Reply]:
    def reply(request: Received) -> Reply:
        header = request.headers.get("Authorization", "")
        return answer_holding(header) if mode == "200 answer" else echoing(header)[mode]

    return reply


@pytest.mark.parametrize("mode", [*ECHOES, "200 answer"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_no_piece_of_the_key_reaches_the_console_or_a_file(
    client: str, mode: str, hostile: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.default = reply_for(mode)
    code = run(CLIENTS[client], tmp_path / "project", hostile)
    out, err = capsys.readouterr()
    assert code in (0, 2), err
    assert hostile.received, "the client never called the server"
    assert KEY in hostile.received[0].headers["Authorization"]  # the key was sent, and echoed
    assert "Traceback" not in err
    assert leaks(out + err) == [], out + err
    for name, text in written(tmp_path / "project").items():
        assert leaks(text) == [], name


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_redirect_is_never_followed_and_its_query_never_shown(
    client: str, hostile: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = Server()
    with serving(pytest.MonkeyPatch(), target):
        hostile.default = lambda request: Reply(
            302, headers={"Location": f"{target.url}/next?session=abc123"}
        )
        assert run(CLIENTS[client], tmp_path / "project", hostile) == 2
    err = capsys.readouterr().err
    assert target.received == []  # the key never went to where the server pointed
    assert f"redirects to {target.url}/next" in err and "session=abc123" not in err


# -- nesting bombs, drips, huge replies -------------------------------------------------------------

BOMB = b"[" * 1_000_000


@pytest.mark.parametrize(
    "reply",
    [Reply(200, BOMB), fake_http.chat(BOMB.decode()), Reply(401, BOMB), Reply(500, BOMB)],
    ids=["body", "content", "401 body", "500 body"],
)
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_nesting_bomb_is_exit_0_or_2_never_a_traceback(
    client: str, reply: Reply, hostile: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.default = lambda request: reply
    code = run(CLIENTS[client], tmp_path / "project", hostile)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err
    # Brackets as a model's content are a measurement: the generator's answer, a candidate
    # dropped as malformed. As a whole reply, or as the judge's verdicts, they stop the run.
    # The generator's bracket answer is measured (exit 0); the judge's sentences are not
    # judged (exit 0, counted); a candidate is dropped as malformed, and a run that wrote no
    # candidate is exit 2. A whole reply of brackets is no chat completion: exit 2.
    measured = reply.status == 200 and not isinstance(reply.body, bytes)
    assert code == (0 if measured and client in ("generator", "judge") else 2), err


@pytest.mark.parametrize("head", [False, True], ids=["body drips", "head drips"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_dripping_server_is_given_up_at_the_timeout(
    client: str, head: bool, hostile: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.default = lambda request: Reply(200, b" " * 400 + b"{}", drip=0.05, drip_head=head)
    started = time.monotonic()
    code = run(CLIENTS[client], tmp_path / "project", hostile)
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "within the timeout of 2 s" in err, err
    assert took < 2 + 1, f"{took:.1f} s"  # the timeout (2 s, retries included) plus a second


@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_reply_over_the_limit_is_refused(
    client: str,
    hostile: Server,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from rag_regress.answers.llm import client as llm_client

    monkeypatch.setattr(llm_client, "REPLY_LIMIT", 10_000)
    monkeypatch.setattr(http, "REPLY_LIMIT", 10_000)
    hostile.default = lambda request: Reply(200, b" " * 20_000)
    assert run(CLIENTS[client], tmp_path / "project", hostile) == 2
    assert "larger than 10,000 bytes" in capsys.readouterr().err

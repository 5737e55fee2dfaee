"""A scripted HTTP server on 127.0.0.1 for the tests of the engine's HTTP clients (the LLM
judge, the adapters): each request is recorded and answered by the next scripted reply, or
by `default`. A reply is a status, a body (a dict is sent as JSON, bytes as they are: the
malformed-reply tests), extra headers and a delay before it is sent (the timeout tests).
GET requests are answered too (their query string is in `Received.query`)."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """What the server sends for one request: a status, a body (a dict is sent as JSON), after
    `delay` seconds."""

    status: int = 200
    body: dict[str, Any] | list[Any] | bytes = b""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    drip: float = 0.0  # seconds between single bytes of the reply: a server that never quite stops
    drip_head: bool = False  # drip the status line and headers too, not only the body


def chat(content: str, model: str = "test-model", usage: dict[str, int] | None = None) -> Reply:
    """A chat completion (OpenAI's wire format) whose one choice's message content is
    `content`, with `usage` (token counts) when given."""
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return Reply(body=body)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    method: str = "POST"

    @property
    def query(self) -> dict[str, list[str]]:
        """The parameters of the request's query string."""
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)

    @property
    def user(self) -> str:
        """The user message of a chat-completions request (the last one)."""
        return str(self.body["messages"][-1]["content"])

    @property
    def sentences(self) -> dict[int, str]:
        """The numbered sentences of an LLM judge's request."""
        part = self.user.split("SENTENCES\n\n", 1)[1]
        return {int(n): text for n, text in re.findall(r"(?m)^(\d+)\. (.*)$", part)}


def _not_scripted(request: Received) -> Reply:
    return Reply(404, {"error": {"message": f"nothing scripted for {request.path}"}})


@dataclass
class Server:
    """The scripted server: `script` answers the next requests, in order, then `default`."""

    url: str = ""
    script: list[Reply | Callable[[Received], Reply]] = field(default_factory=list)
    default: Callable[[Received], Reply] = _not_scripted
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Received) -> Reply:
        with self.lock:
            self.received.append(request)
            step = self.script.pop(0) if self.script else self.default
        return step(request) if callable(step) else step


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length)) if length else {}
        received = Received(self.path, dict(self.headers.items()), body, self.command)
        reply = self.server.fake.answer(received)
        time.sleep(reply.delay)
        data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
        if reply.drip:
            self._drip(reply, data)
            return
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up waiting (the timeout tests)
            pass

    do_GET = do_POST  # a GET request, or a followed redirect: recorded too

    def _drip(self, reply: Reply, data: bytes) -> None:
        """The reply one byte every `reply.drip` seconds (its head at once unless drip_head),
        until it is sent or the client hangs up."""
        head = f"HTTP/1.1 {reply.status} OK\r\nContent-Type: application/json\r\n"
        head += f"Content-Length: {len(data)}\r\n\r\n"
        slow = head.encode() + data if reply.drip_head else data
        try:
            if not reply.drip_head:
                self.wfile.write(head.encode())
                self.wfile.flush()
            for byte in slow:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.drip)
        except OSError:  # the client gave up: what a deadline should make it do
            pass
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler still sleeping for a timed-out client is not waited for
    fake: Server

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@contextmanager
def serving(monkeypatch: pytest.MonkeyPatch, fake: Server, path: str = "") -> Iterator[Server]:
    """`fake` served on a free port of 127.0.0.1 for the block; its `url` is set to the
    server's address followed by `path` (e.g. "/v1"). Proxies are bypassed for 127.0.0.1."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    http = _HTTPServer(("127.0.0.1", 0), _Handler)
    http.fake = fake
    fake.url = f"http://127.0.0.1:{http.server_address[1]}{path}"
    thread = threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        http.shutdown()
        http.server_close()
        thread.join(5)

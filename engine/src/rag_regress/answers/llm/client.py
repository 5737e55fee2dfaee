"""One chat-completions request over HTTP (net/http.py: a deadline on the whole request, no
redirect followed, a capped reply).

`Client.complete(body)` POSTs `body` as JSON to `{base_url}/chat/completions` and returns the
first choice's message content and the reply's token usage. What can go wrong is sorted in
three, for the caller's retry policy (calling/retries.py):

  Transient  worth another attempt: HTTP 429 and 5xx, a refused or dropped connection, a
             reply cut short
  OutOfTime  the call's time is spent (`timeout`, from connecting to the last byte, across
             the attempts that share a `Deadline`): never retried, there is no time left
  Refused    never retried: any other HTTP error (400, 401, 403, 404 ...; a redirect, which
             is not followed), or a reply that is not a chat completion (the server is not
             what base_url should point at)

The API key is sent as "Authorization: Bearer ..." when one is given, and never appears in
an error: a server's message is redacted (net/redact.py) before it is shortened.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ... import __version__
from ...net import redact
from ...net.http import Deadline, OutOfTime, TooLarge, Unreachable, problem, send
from ...net.parse import loads
from ...net.redact import shortened

REPLY_LIMIT = 8_000_000  # bytes of one reply read at most: a chat completion is far smaller
FENCED = re.compile(r"```(?:json)?[ \t]*\n(.*)\n```", re.S | re.I)
THINKING = re.compile(r"\s*<think>.*?</think>", re.S)  # a reasoning model's reasoning, before its reply


class Transient(Exception):
    """The request failed in a way another attempt may not (module doc)."""


class Refused(Exception):
    """The server refused the request, or replied with something that is no chat completion;
    `status` is the HTTP status (0 when the reply itself was wrong)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def json_content(content: str) -> str:
    """`content` without what chat models put around a JSON reply: a leading reasoning block
    (<think>...</think>, as reasoning models served locally send it) and a Markdown code
    fence (```json ... ```, when JSON mode is off or unsupported). Anything else is
    returned as it is."""
    content = THINKING.sub("", content, count=1) if THINKING.match(content) else content
    match = FENCED.fullmatch(content.strip())
    return match.group(1) if match else content


@dataclass(frozen=True)
class Completion:
    content: str  # the first choice's message content
    usage: dict[str, int]  # prompt_tokens, completion_tokens, total_tokens: those the server gave
    finish_reason: str | None  # "stop", "length" ...: said when the content cannot be read


def _usage(reply: dict[str, Any]) -> dict[str, int]:
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return {}
    names = ("prompt_tokens", "completion_tokens", "total_tokens")
    return {
        name: usage[name]
        for name in names
        if isinstance(usage.get(name), int) and not isinstance(usage[name], bool) and usage[name] >= 0
    }


def completion(raw: bytes) -> Completion:
    """The content of a chat-completions reply; Refused(0, why) when it is not one."""
    try:
        reply = loads(raw)
    except ValueError:
        text = shortened(raw.decode("utf-8", "replace"))
        raise Refused(0, f"the server's reply is not JSON: {text!r}") from None
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        shown = shortened(json.dumps(reply))
        raise Refused(0, f"the server's reply is not a chat completion (no choices): {shown}")
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        said = f": {shortened(refusal)!r}" if isinstance(refusal, str) and refusal else ""
        raise Refused(0, f"the model's reply holds no text (finish_reason {finish!r}){said}")
    return Completion(content, _usage(reply), finish)


class Client:
    """POSTs chat-completions requests to one server (module doc)."""

    def __init__(self, base_url: str, api_key: str | None, timeout: float):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"rag-regress/{__version__}",
        }
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
            redact.remember(api_key)
        self.timeout = timeout  # seconds a call may take in all, connect to last byte (0: no limit)

    def complete(self, body: dict[str, Any], deadline: Deadline | None = None) -> Completion:
        """One attempt; `deadline` is shared by a call's attempts (default: this one alone)."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        seconds = (deadline or Deadline(self.timeout)).remaining()
        try:
            reply = send(self.url, headers=self.headers, data=data, seconds=seconds, limit=REPLY_LIMIT)
        except OutOfTime:
            raise OutOfTime(f"no complete reply within the timeout of {self.timeout:g} s") from None
        except Unreachable as error:
            raise Transient(str(error)) from None
        except TooLarge as error:
            raise Refused(0, f"the server's {error}") from None
        if reply.status == 429 or reply.status >= 500:
            raise Transient(problem(reply))
        if not 200 <= reply.status < 300:
            raise Refused(reply.status, problem(reply))
        return completion(reply.body)

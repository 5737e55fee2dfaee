"""One chat-completions request over HTTP, with the standard library only (urllib.request).

`Client.complete(body)` POSTs `body` as JSON to `{base_url}/chat/completions` and returns the
first choice's message content and the reply's token usage. What can go wrong is sorted in
two, for the caller's retry policy (retrieval/retries.py):

  Transient  worth another attempt: HTTP 429 and 5xx, a timeout, a refused or dropped
             connection, a reply cut short
  Refused    never retried: any other HTTP error (400, 401, 403, 404 ...; a redirect, which
             is not followed), or a reply that is not a chat completion (the server is not
             what base_url should point at)

The API key is sent as "Authorization: Bearer ..." when one is given, and never appears in
an error: messages quote the server's reply, shortened, not the request.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from ... import __version__

REPLY_LIMIT = 8_000_000  # bytes of one reply read at most: a chat completion is far smaller
SHOWN = 200  # characters of a server's reply quoted in an error
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


def shortened(text: str, limit: int = SHOWN) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


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


def _server_says(error: urllib.error.HTTPError) -> str:
    """The error message in a server's error reply (OpenAI's {"error": {"message": ...}}, or
    the body as text), shortened; "" when it sent none."""
    try:
        raw = error.read(64_000).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        return ""
    finally:
        error.close()
    try:
        data = json.loads(raw)
    except ValueError:
        return shortened(raw)
    found = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(found, dict) and isinstance(found.get("message"), str):
        found = found["message"]
    return shortened(found if isinstance(found, str) else json.dumps(found))


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
        reply = json.loads(raw)
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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: urllib would resend the Authorization header to wherever
    the server points, and turn the POST into a GET. A 3xx is then an HTTP error (Refused)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)  # proxies from the environment, as urlopen's


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
        self.timeout = timeout  # seconds to connect, and to wait for each piece of the reply (0: no limit)

    def complete(self, body: dict[str, Any]) -> Completion:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(self.url, data=data, headers=self.headers, method="POST")
        try:
            with _OPENER.open(request, timeout=self.timeout or None) as response:
                raw = response.read(REPLY_LIMIT + 1)
        except urllib.error.HTTPError as error:
            moved = error.headers.get("Location") if 300 <= error.code < 400 and error.headers else None
            said = f"redirects to {moved}" if moved else _server_says(error)
            error.close()  # a redirect's reply too: its socket is freed now, not by the collector
            problem = f"HTTP {error.code} {error.reason}" + (f": {said}" if said else "")
            if error.code == 429 or error.code >= 500:
                raise Transient(problem) from None
            raise Refused(error.code, problem) from None
        except urllib.error.URLError as error:  # could not connect: refused, unknown host, timed out
            reason = error.reason
            if isinstance(reason, TimeoutError):
                raise Transient(f"no reply within the timeout of {self.timeout:g} s") from None
            raise Transient(f"cannot connect: {reason}") from None
        except TimeoutError:
            raise Transient(f"no reply within the timeout of {self.timeout:g} s") from None
        except (OSError, http.client.HTTPException) as error:  # the connection dropped mid-reply
            raise Transient(f"the connection failed: {type(error).__name__}: {error}") from None
        if len(raw) > REPLY_LIMIT:
            raise Refused(0, f"the server's reply is larger than {REPLY_LIMIT:,} bytes")
        return completion(raw)

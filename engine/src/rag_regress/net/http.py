"""One HTTP request with a deadline on the whole of it, for every client of the engine (the
LLM judge, `golden generate`, the openai and http adapters).

`send` returns the reply, whatever its status, or raises:

  OutOfTime    the deadline passed before the last byte of the reply: the connection is
               shut then, which also tells the server to stop working on the request
  Unreachable  no reply: the connection was refused or dropped, or the reply was cut short
  TooLarge     the reply's body is larger than the limit

The deadline covers everything from connecting to the last byte. A socket timeout alone
bounds each read, so a server that sends a byte a second would keep a call alive for ever;
here a timer shuts the connection at the deadline, wherever the call is waiting.

Redirects are never followed (urllib would send the Authorization header wherever the server
points): a 3xx is returned like any other status, its Location without query or fragment
(`Reply.location`), which is all an error message may show of it. Proxies come from the
environment, as urllib's.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from .parse import loads
from .redact import shortened

ERROR_BODY = 64_000  # bytes of an error reply read: enough for its message


class OutOfTime(Exception):
    """The deadline passed before the whole reply arrived (module doc)."""


class Unreachable(Exception):
    """No reply: refused, dropped, or cut short (module doc)."""


class TooLarge(Exception):
    """The reply's body is larger than the limit."""


@dataclass(frozen=True)
class Reply:
    status: int
    reason: str
    body: bytes  # an error's body at most ERROR_BODY bytes
    location: str | None = None  # a redirect's target, without query or fragment


def shown_location(location: str | None) -> str | None:
    """A Location header as it may be shown: scheme, host and path only (a query may hold a
    key), or None when there is none."""
    if not location:
        return None
    parts = urllib.parse.urlsplit(location.strip())
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", "")) or None


class Deadline:
    """The time one call may take in all, counted from its first `remaining()` (so that a
    call waiting for its turn under a rate limit does not spend it); `seconds` 0: no limit."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._end: float | None = None

    def remaining(self) -> float | None:
        """Seconds left (at most `seconds`, possibly <= 0), or None when there is no limit."""
        if not self.seconds:
            return None
        if self._end is None:
            self._end = time.monotonic() + self.seconds
        return self._end - time.monotonic()


def server_says(body: bytes) -> str:
    """The message of an error reply (OpenAI's {"error": {"message": ...}}, or the body as
    text), redacted and shortened; "" when it sent none."""
    raw = body.decode("utf-8", "replace")
    try:
        data = loads(raw)
    except ValueError:
        return shortened(raw)
    found = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(found, dict) and isinstance(found.get("message"), str):
        found = found["message"]
    return shortened(found if isinstance(found, str) else json.dumps(found))


def problem(reply: Reply) -> str:
    """An error reply in one line: its status, and what the server said or where it
    redirects (without the query)."""
    said = f"redirects to {shortened(reply.location)}" if reply.location else server_says(reply.body)
    return f"HTTP {reply.status} {shortened(reply.reason, 80)}" + (f": {said}" if said else "")


class _Watch:
    """Shuts a request's connection when its deadline passes."""

    def __init__(self, seconds: float | None):
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire) if seconds is not None else None
        if self._timer is not None:
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._sock
        if sock is not None:
            _shut(sock)

    def attach(self, sock: socket.socket) -> None:
        """The connection's socket, once connected (shut at once when the deadline passed)."""
        with self._lock:
            self._sock = sock
            expired = self.expired
        if expired:
            _shut(sock)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def connection(self, base: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        """`base` (HTTPConnection or HTTPSConnection) reporting its socket to this watch."""
        watch = self

        class Watched(base):  # type: ignore[valid-type,misc]
            def connect(self) -> None:
                super().connect()
                watch.attach(self.sock)

        return Watched


def _shut(sock: socket.socket) -> None:
    # socket.socket's own shutdown, under TLS too: it wakes a read blocked in another thread.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _HTTP(urllib.request.HTTPHandler):
    watch: _Watch

    def do_open(self, http_class: Any, req: Any, **http_conn_args: Any) -> Any:
        return super().do_open(self.watch.connection(http_class), req, **http_conn_args)


class _HTTPS(urllib.request.HTTPSHandler):
    watch: _Watch

    def do_open(self, http_class: Any, req: Any, **http_conn_args: Any) -> Any:
        return super().do_open(self.watch.connection(http_class), req, **http_conn_args)


def _opener(watch: _Watch) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_NoRedirect(), _HTTP(), _HTTPS()]
    for handler in handlers[1:]:
        handler.watch = watch
    return urllib.request.build_opener(*handlers)  # proxies from the environment, as urlopen's


def send(
    url: str,
    *,
    method: str = "POST",
    headers: dict[str, str],
    data: bytes | None = None,
    seconds: float | None,
    limit: int,
) -> Reply:
    """One request; the reply whatever its status (module doc). `seconds`: the time it may
    take in all (None: no limit); `limit`: bytes of the body read at most."""
    if seconds is not None and seconds <= 0:
        raise OutOfTime("no time was left for the request")
    watch = _Watch(seconds)
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        try:
            with _opener(watch).open(request, timeout=seconds) as response:
                reply = Reply(response.status, response.reason, response.read(limit + 1))
        except urllib.error.HTTPError as error:  # any status but 2xx: urllib raises it
            with error:
                location = error.headers.get("Location") if error.headers else None
                body = b"" if 300 <= error.code < 400 else error.read(ERROR_BODY)
            reply = Reply(error.code, str(error.reason), body, shown_location(location))
    except (OSError, http.client.HTTPException) as error:  # URLError and timeouts are OSErrors
        if watch.expired:
            raise OutOfTime("the deadline passed") from None
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        if isinstance(reason, TimeoutError):
            raise OutOfTime("the deadline passed") from None
        if isinstance(error, urllib.error.URLError):
            raise Unreachable(f"cannot connect: {reason}") from None
        raise Unreachable(f"the connection failed: {type(error).__name__}: {error}") from None
    finally:
        watch.stop()
    if watch.expired:  # a reply read to the end only because the connection was shut
        raise OutOfTime("the deadline passed")
    if len(reply.body) > limit:
        raise TooLarge(f"the reply is larger than {limit:,} bytes")
    return reply

"""A retriever over a JSON search service: each question is one HTTP request, the ranking is
read from the service's JSON reply.

retriever.py:

    from rag_regress.adapters import http

    build_retriever = http.build

eval.toml, every option (only `url` is required):

    [retriever]
    url = "https://search.internal/api/search"  # the service's address
    method = "POST"          # "POST": the request is a JSON body; "GET": query parameters
    # The request: a table whose string values may hold {question}, {depth} and {history}; a
    # value that is exactly "{depth}" is sent as a number. Nested tables and lists are sent as
    # they are (POST only: GET takes text, numbers, true/false or lists of them).
    request = { query = "{question}", top_k = "{depth}" }  # the default
    hits = "hits"            # dotted path to the list of hits in the reply ("" : the reply is the list;
                             # "result.items", "data.0.hits": a number picks an element of a list)
    id = "id"                # field of a hit holding the document id (dotted: "document.id");
                             # text, or a whole number (read as its digits)
    score = "score"          # field of a hit holding its score (dotted too), a number
    headers = { "X-Team" = "search-eval" }  # extra request headers (default none)
    auth_env = "SEARCH_TOKEN"       # environment variable holding the token (default "": no auth)
    auth_header = "Authorization"   # the header that carries it
    auth_scheme = "Bearer"          # sent as "Bearer <token>"; "" sends the token alone
    timeout = 30             # seconds one request may take in all, connect to last byte (0: no limit)

Conversations: `{history}` is the turns before the question (a golden item's `history`,
api.py), oldest first. A value that is exactly "{history}" is sent as a JSON list of
{"role": ..., "content": ...} objects (GET: that list as JSON text, one parameter); inside a
longer string it is the user turns' contents joined by newlines (the assistant's turns left
out: a search query wants what the user asked), "" without history. The default request
sends no history, so the default retriever searches the question alone; to send it, name it
in the request, e.g. request = { query = "{question}", top_k = "{depth}", history = "{history}" }.

The hits are kept in the service's order (best first, as the engine checks), at most
`depth` of them (a service that returns more is cut).

What can go wrong, and what the run does:

  SearchUnavailable  HTTP 429 or 5xx, a timeout, a refused or dropped connection: a
                     ConnectionError, so [run] retries it when told to:
                     `retries = 3` and `retry_on = ["ConnectionError"]` in [run]
  SearchError        any other HTTP error (400, 401, 404 ...; a redirect, which is not
                     followed), a reply that is not JSON, or lacks a field: never retried;
                     the message names the URL, the question and the field's path

The token is read from the environment once, when the retriever is built (a missing or
empty variable stops the run then), and never appears in an error message, a report or any
file: every text the engine shows or writes has it, in any form a server may echo it,
replaced by "***" (net/redact.py). Requests go through net/http.py: `timeout` bounds the
whole request, redirects are never followed, replies are capped and JSON nests at most 100
levels. The retriever keeps no state between requests and
may be called from several threads at once ([run] concurrency).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from typing import Annotated, Any

from pydantic import Field, StrictStr, ValidationInfo, field_validator, model_validator

from .. import __version__
from ..api import Document, History, Hit, Tokenizer
from ..net import redact
from ..net.http import OutOfTime, TooLarge, Unreachable, send
from ..net.http import problem as http_problem
from ..net.parse import loads
from ..net.redact import shortened
from ..options import OptionsError, PartSettings, RequestSeconds, validated
from . import refused, without_credentials

VERSION = "1.0"  # bumped whenever what is sent or read may change for the same settings
PART = "the http retriever"  # who refuses a bad option
DEFAULT_REQUEST: dict[str, Any] = {"query": "{question}", "top_k": "{depth}"}
REPLY_LIMIT = 64_000_000  # bytes of one reply read at most
_PLACEHOLDER = re.compile(r"\{(question|depth|history)\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class SearchUnavailable(ConnectionError):
    """The service could not answer now: HTTP 429 or 5xx, a timeout, a refused or dropped
    connection. A ConnectionError, so that `[run] retry_on = ["ConnectionError"]` retries it.
    `status` is the HTTP status (0 when there was no reply)."""

    def __init__(self, message: str, url: str, status: int = 0):
        super().__init__(message)
        self.url = url
        self.status = status

    def __str__(self) -> str:
        return str(self.args[0])


class SearchError(Exception):
    """The service refused the request, or its reply cannot be read as a ranking."""

    def __init__(self, message: str, url: str, status: int = 0):
        super().__init__(message)
        self.url = url
        self.status = status


def render(template: Any, question: str, depth: int, history: History = (), flat: bool = False) -> Any:
    """`template` with {question}, {depth} and {history} put in its strings; a string that is
    exactly "{depth}" becomes the number, one that is exactly "{history}" the list of turns
    (its JSON text when `flat`: a GET parameter), and {history} inside a longer string the
    user turns joined by newlines (module doc). Replacement, not str.format: other braces
    stay as written, and a question holding "{depth}" is sent as it is."""
    if isinstance(template, str):
        if template == "{depth}":
            return depth
        if template == "{history}":
            turns = [{"role": message.role, "content": message.content} for message in history]
            return json.dumps(turns, ensure_ascii=False) if flat else turns
        said = {
            "question": question,
            "depth": str(depth),
            "history": "\n".join(message.content for message in history if message.role == "user"),
        }
        return _PLACEHOLDER.sub(lambda found: said[found[1]], template)
    if isinstance(template, dict):
        return {key: render(value, question, depth, history, flat) for key, value in template.items()}
    if isinstance(template, list):
        return [render(value, question, depth, history, flat) for value in template]
    return template


def _uses_question(template: Any) -> bool:
    if isinstance(template, str):
        return "{question}" in template
    if isinstance(template, dict):
        return any(_uses_question(value) for value in template.values())
    if isinstance(template, list):
        return any(_uses_question(value) for value in template)
    return False


def _json_problem(value: Any, where: str, flat: bool) -> str | None:
    """Why `value`, at `where` in [retriever] request, cannot be sent (a TOML date, a table
    in a GET's query parameters); None when it can."""
    if isinstance(value, str | bool | int | float):
        return None
    if isinstance(value, list):
        for number, item in enumerate(value):
            if flat and isinstance(item, dict | list):
                return f"{where}[{number}] is a {type(item).__name__}: a GET parameter takes text or numbers"
            problem = _json_problem(item, f"{where}[{number}]", flat)
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        if flat:
            return f'{where} is a table: a GET request sends flat query parameters (or use method = "POST")'
        return next(
            (p for key, item in value.items() if (p := _json_problem(item, f"{where}.{key}", flat))), None
        )
    return f"{where} is a {type(value).__name__}, which JSON cannot hold"


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_of(value: Any, path: str) -> Any:
    """The value at dotted `path` in `value` ("" : `value` itself); a number picks an element
    of a list. KeyError naming the part of the path that is missing."""
    if not path:
        return value
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            inside = ".".join(walked) or "the reply"
            kind = "an object" if isinstance(value, dict) else type(value).__name__
            raise KeyError(f"no {part!r} in {inside} (which is {kind})")
        walked.append(part)
    return value


def _dotted(key: str, path: str, empty: bool = False) -> str:
    """A dotted path option; "" only where `empty` allows it (the reply itself)."""
    if (path or not empty) and any(not part for part in path.split(".")):
        raise OptionsError(
            f"option {key!r} is not a dotted path: {path!r}", key, f'e.g. {key} = "result.{key}"'
        )
    return path


class Settings(PartSettings):
    """[retriever] of the http retriever (module doc)."""

    url: Annotated[
        StrictStr, Field(examples=["http://127.0.0.1:8080/search"], description="the service's address")
    ]
    method: Annotated[
        StrictStr, Field(description='"POST": the request is a JSON body; "GET": query parameters')
    ] = "POST"
    request: Annotated[
        dict[str, Any] | None,
        Field(description="the request's fields, whose text may hold {question}, {depth} and {history}"),
    ] = None
    hits: Annotated[
        StrictStr, Field(description='dotted path to the list of hits in the reply ("": the reply)')
    ] = "hits"
    id: Annotated[StrictStr, Field(description="field of a hit holding the document id (dotted)")] = "id"
    score: Annotated[StrictStr, Field(description="field of a hit holding its score (dotted)")] = "score"
    headers: Annotated[dict[str, Any], Field(description="extra request headers")] = {}  # noqa: RUF012
    auth_env: Annotated[
        StrictStr, Field(description='environment variable holding the token ("": no auth)')
    ] = ""
    auth_header: Annotated[StrictStr, Field(description="the header that carries the token")] = (
        "Authorization"
    )
    auth_scheme: Annotated[StrictStr, Field(description='sent before the token ("": the token alone)')] = (
        "Bearer"
    )
    timeout: RequestSeconds = 30.0

    @field_validator("url")
    @classmethod
    def _an_address(cls, url: str) -> str:
        without_credentials(url, "url", "auth_env (sent with auth_header)")  # before any message shows it
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise OptionsError(
                f"option 'url' must be an http:// or https:// address, got {url!r}",
                "url",
                'e.g. url = "http://127.0.0.1:8080/search"',
            )
        return url

    @field_validator("method")
    @classmethod
    def _a_method(cls, method: str) -> str:
        if method.upper() not in ("POST", "GET"):
            raise OptionsError(f'option \'method\' must be "POST" or "GET", got {method!r}', "method")
        return method.upper()

    @field_validator("hits")
    @classmethod
    def _hits_path(cls, path: str) -> str:
        return _dotted("hits", path, empty=True)

    @field_validator("id", "score")
    @classmethod
    def _field_path(cls, path: str, info: ValidationInfo) -> str:
        return _dotted(str(info.field_name), path)

    @field_validator("headers")
    @classmethod
    def _header_names(cls, headers: dict[str, Any]) -> dict[str, Any]:
        for name, value in headers.items():
            if not _HEADER_NAME.match(name) or not isinstance(value, str):
                raise OptionsError(
                    f"option 'headers' must map header names to text, got {name!r} = {value!r}",
                    "headers",
                    'e.g. headers = { "X-Team" = "eval" }',
                )
        return headers

    @field_validator("auth_header")
    @classmethod
    def _a_header_name(cls, name: str) -> str:
        if not _HEADER_NAME.match(name):
            raise OptionsError(
                f"option 'auth_header' is not a header name: {name!r}",
                "auth_header",
                'e.g. auth_header = "X-Api-Key"',
            )
        return name

    @model_validator(mode="after")
    def _sendable(self) -> Settings:
        """The request can be sent with the method, and sends the question."""
        if self.request is None:
            return self
        flat = self.method == "GET"
        problem = next(
            (p for key, item in self.request.items() if (p := _json_problem(item, f"request.{key}", flat))),
            None,
        )
        if problem:
            raise OptionsError(
                f"option 'request' cannot be sent: {problem}",
                "request",
                "use text, numbers, true/false, tables and lists",
            )
        if not _uses_question(self.request):
            raise OptionsError(
                "option 'request' never sends the question: no value holds {question}",
                "request",
                'e.g. request = { query = "{question}", top_k = "{depth}" }',
            )
        return self


class HTTPRetriever:
    """Searches one JSON service (module doc)."""

    def __init__(
        self,
        url: str,
        method: str = "POST",
        request: Any = None,
        hits: str = "hits",
        id: str = "id",
        score: str = "score",
        headers: dict[str, str] | None = None,
        token: str = "",
        timeout: float = 30.0,
    ):
        self.url = url
        self.method = method
        self.request = DEFAULT_REQUEST if request is None else request
        self.hits_path, self.id_path, self.score_path = hits, id, score
        self.headers = {"Accept": "application/json", "User-Agent": f"rag-regress/{__version__}"}
        if method == "POST":
            self.headers["Content-Type"] = "application/json"
        self.headers.update(headers or {})
        redact.remember(token)
        redact.remember_headers(self.headers)
        self.timeout = timeout

    def _request(self, question: str, depth: int, history: History = ()) -> tuple[str, bytes | None]:
        """The address and body of the request for `question` after `history`."""
        rendered = render(self.request, question, depth, history, flat=self.method == "GET")
        if self.method == "GET":
            query = urllib.parse.urlencode(
                [
                    (key, _query_value(item))
                    for key, value in rendered.items()
                    for item in (value if isinstance(value, list) else [value])
                ]
            )
            return (f"{self.url}{'&' if '?' in self.url else '?'}{query}" if query else self.url), None
        return self.url, json.dumps(rendered, ensure_ascii=False).encode("utf-8")

    def _fetch(self, question: str, depth: int, history: History) -> bytes:
        asked = f"searching {self.url} for {question!r}"
        url, data = self._request(question, depth, history)
        seconds = self.timeout or None  # the whole request, connect to last byte (0: no limit)
        try:
            reply = send(
                url, method=self.method, headers=self.headers, data=data, seconds=seconds, limit=REPLY_LIMIT
            )
        except OutOfTime:
            problem = f"{asked}: no complete reply within the timeout of {self.timeout:g} s"
            raise SearchUnavailable(problem, self.url) from None
        except Unreachable as error:
            raise SearchUnavailable(f"{asked}: {error}", self.url) from None
        except TooLarge as error:
            raise SearchError(f"{asked}: {error}", self.url) from None
        if 200 <= reply.status < 300:
            return reply.body
        problem = f"{asked}: {http_problem(reply)}"
        if reply.status == 429 or reply.status >= 500:
            raise SearchUnavailable(problem, self.url, reply.status)
        raise SearchError(problem + self._hint(reply.status), self.url, reply.status)

    def _hint(self, status: int) -> str:
        if status in (401, 403):
            return " (check the token in the variable [retriever] auth_env names, and auth_header)"
        if status in (404, 405):
            return " (check [retriever] url and method)"
        if 300 <= status < 400:
            return " (redirects are not followed: set [retriever] url to the address it names)"
        return " (check [retriever] request against what the service expects)"

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        """The service's ranking for `question`; `history` is sent where the request names
        {history} (module doc: Conversations), else not at all."""
        raw = self._fetch(question, depth, history)
        about = f"the reply of {self.url} to {question!r}"
        try:
            reply = loads(raw)
        except ValueError as error:
            shown = shortened(raw.decode("utf-8", "replace"))
            raise SearchError(f"{about} is not JSON: {shown!r} ({error})", self.url) from None
        try:
            found = field_of(reply, self.hits_path)
        except KeyError as error:
            raise SearchError(
                f"{about} has no list of hits at {self.hits_path!r} ([retriever] hits): {error.args[0]}",
                self.url,
            ) from None
        if not isinstance(found, list):
            shown = shortened(json.dumps(found, ensure_ascii=False), 80)
            where = self.hits_path or "the reply"
            raise SearchError(f"{about}: {where} ([retriever] hits) is not a list: {shown}", self.url)
        return [self._hit(entry, number, about) for number, entry in enumerate(found[:depth], start=1)]

    def _hit(self, entry: Any, number: int, about: str) -> Hit:
        values = []
        for option, path in (("id", self.id_path), ("score", self.score_path)):
            try:
                values.append(field_of(entry, path))
            except KeyError as error:
                where = f"{self.hits_path}.{number - 1}" if self.hits_path else str(number - 1)
                raise SearchError(
                    f"{about}: hit {number} ({where}) has no {option} field {path!r} "
                    f"([retriever] {option}): {error.args[0]}",
                    self.url,
                ) from None
        doc_id, score = values
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str):
            shown = shortened(repr(doc_id), 80)
            raise SearchError(f"{about}: hit {number}'s {self.id_path!r} is not an id: {shown}", self.url)
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise SearchError(
                f"{about}: hit {number}'s {self.score_path!r} is not a number: {shortened(repr(score), 80)}",
                self.url,
            )
        return Hit(doc_id, float(score))


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> HTTPRetriever:
    """The retriever of the [retriever] table (module doc). `documents` and `tokenize` are
    unused: the service has its own index."""
    settings = validated(Settings, options, PART)
    headers = dict(settings.headers)
    token = ""
    if settings.auth_env:
        token = os.environ.get(settings.auth_env, "").strip()
        if not token:
            raise refused(
                "retriever",
                "auth_env",
                f"names the environment variable {settings.auth_env}, which is not set (or empty)",
                f"export {settings.auth_env}=<the service's token> before the run, or remove auth_env "
                "for no auth",
            )
        if any(name.lower() == settings.auth_header.lower() for name in headers):
            raise refused(
                "retriever",
                "headers",
                f"sets {settings.auth_header} too, which auth_env sends",
                "set it in one place only",
            )
        scheme = settings.auth_scheme
        headers = {**headers, settings.auth_header: f"{scheme} {token}" if scheme else token}
    return HTTPRetriever(
        settings.url,
        settings.method,
        settings.request,
        settings.hits,
        settings.id,
        settings.score,
        headers,
        token,
        settings.timeout,
    )

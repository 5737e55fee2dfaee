"""The secrets of a run, and one function that removes them from any text.

A secret is registered once (`remember`): the value of every environment variable a setting
names (`[generation] api_key_env`, `[judge.llm] api_key_env`, `[golden] api_key_env`,
`[retriever] auth_env`, any `*_env`; load_config registers them in every process) and every
value of a header that carries credentials. `redact(text)` then replaces, in `text`:

  - each form a server may echo a secret in: as written, JSON-escaped (both with and without
    \\u escapes), URL-encoded (%20 and + for spaces) and HTML-escaped;
  - any fragment of 8 or more characters of any of those forms, so that a message cut in the
    middle of a key, or a key split over two fields, still shows none of it.

Each run of such characters becomes "***". The sinks call it: the console streams
(render/inert.py), every file written (inputs/files.py), and each client before it
shortens a server's message, so that no cut can leave part of a key behind. A secret shorter
than 8 characters is replaced only where it appears whole.
"""

from __future__ import annotations

import html
import json
import threading
import urllib.parse
from collections.abc import Iterable, Mapping

FRAGMENT = 8  # characters of a secret that are never shown together
MASK = "***"
SHOWN = 200  # characters of another machine's text quoted in a message
# Header names whose values are credentials, in lower case.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie", "x-auth-token"}
)

_lock = threading.Lock()
_secrets: set[str] = set()
_grams: frozenset[str] = frozenset()  # every FRAGMENT-long piece of every form of every secret
_short: frozenset[str] = frozenset()  # forms shorter than FRAGMENT, replaced only whole


def forms(secret: str) -> set[str]:
    """The ways `secret` may appear in a server's reply or in what the engine writes."""
    return {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret, safe=""),
        html.escape(secret),
    }


def remember(secret: str | None) -> None:
    """Register `secret` (a key or token read from the environment); None or blank: nothing."""
    secret = (secret or "").strip()
    if not secret:
        return
    global _grams, _short
    with _lock:
        if secret in _secrets:
            return
        _secrets.add(secret)
        grams, short = set(_grams), set(_short)
        for form in forms(secret):
            if len(form) < FRAGMENT:
                short.add(form)
            else:
                grams.update(form[start : start + FRAGMENT] for start in range(len(form) - FRAGMENT + 1))
        _grams, _short = frozenset(grams), frozenset(short)


def remember_environment(names: Iterable[str], environ: Mapping[str, str]) -> None:
    """Register the value of each environment variable in `names` that is set."""
    for name in names:
        remember(environ.get(name))


def remember_headers(headers: Mapping[str, object]) -> None:
    """Register the value of each header in `headers` that carries credentials."""
    for name, value in headers.items():
        if name.lower() in CREDENTIAL_HEADERS and isinstance(value, str):
            scheme, _, credential = value.strip().partition(" ")
            # "Bearer <key>": the key is the secret ("Bearer ***" says which header it was)
            remember(credential if credential and scheme.isalpha() else value)


def forget_all() -> None:
    """Forget every secret (tests)."""
    global _grams, _short
    with _lock:
        _secrets.clear()
        _grams, _short = frozenset(), frozenset()


def redact(text: str) -> str:
    """`text` with every secret, and every piece of one of FRAGMENT characters or more,
    replaced by MASK (module doc). Without secrets it is `text` itself."""
    grams, short = _grams, _short
    if not (grams or short) or not text:
        return text
    spans: list[tuple[int, int]] = []
    for needle, size in [*((gram, FRAGMENT) for gram in grams), *((form, len(form)) for form in short)]:
        start = text.find(needle)
        while start != -1:
            spans.append((start, start + size))
            start = text.find(needle, start + 1)
    if not spans:
        return text
    merged: list[list[int]] = []  # runs of secret characters: overlapping or touching pieces joined
    for start, stop in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    pieces: list[str] = []
    shown = 0
    for start, stop in merged:
        pieces += [text[shown:start], MASK]
        shown = stop
    pieces.append(text[shown:])
    return "".join(pieces)


def shortened(text: str, limit: int = SHOWN) -> str:
    """Another machine's `text` as a message may quote it: without secrets (redacted before
    it is cut, so that no cut leaves part of one), on one line, cut to `limit` characters."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def redact_bytes(data: bytes) -> bytes:
    """`data` redacted as UTF-8 text; bytes that are not UTF-8 are redacted as Latin-1."""
    if not (_grams or _short):
        return data
    try:
        return redact(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return redact(data.decode("latin-1")).encode("latin-1")

"""What every chat server the engine calls ([judge.llm], [golden]) is set with, declared once:
its address, which every report records (so no user name or password in it: a key goes in
an environment variable), the name of the variable holding its key (never the key), and the
ranges of the limits and sampling of its calls (with the words, where every table says the
same). Each table gives its own defaults."""

from __future__ import annotations

import re
import urllib.parse
from typing import Annotated

from pydantic import AfterValidator, Field, StrictFloat, StrictInt, StrictStr

_ADDRESS = re.compile(r"https?://[^\s/?#@]+(/[^\s?#]*)?")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def server_address(url: str) -> str:
    """`url` when it is an http:// or https:// address without a query or a user name."""
    if not _ADDRESS.fullmatch(url):
        raise ValueError("must be an http:// or https:// address, without a query or a user name")
    return url


def credentials_in(url: str) -> bool:
    """Whether `url` names a user or a password (http://user:password@host/): an address the
    engine records in every report and may show in a message, so never a credential's place."""
    return "@" in urllib.parse.urlsplit(url).netloc


def variable_name(name: str) -> str:
    """`name` when it can name an environment variable; the value is never echoed (a key
    written here by mistake would otherwise be shown)."""
    if not _VARIABLE.fullmatch(name):
        raise ValueError("must be the name of an environment variable (letters, digits, _), not a key")
    return name


ServerAddress = Annotated[StrictStr, AfterValidator(server_address)]
KeyVariable = Annotated[
    StrictStr,
    AfterValidator(variable_name),
    Field(
        description="the name of the environment variable holding the API key (never the key "
        "itself); unset or empty: no key is sent"
    ),
]
Timeout = Annotated[StrictFloat, Field(ge=0, le=3600)]  # seconds, retries included (0: none)
Retries = Annotated[StrictInt, Field(ge=0, le=10)]
Backoff = Annotated[
    StrictFloat, Field(ge=0, le=60, description="seconds before the first retry, doubled before each next")
]
Concurrency = Annotated[StrictInt, Field(ge=1, le=256, description="requests in flight at once")]
RateLimit = Annotated[
    StrictFloat, Field(ge=0, le=100_000, description="requests a second at most (0: no limit)")
]
MaxTokens = Annotated[StrictInt, Field(ge=16, le=100_000)]
Temperature = Annotated[StrictFloat, Field(ge=0, le=2, description="the sampling temperature")]
Seed = Annotated[StrictInt, Field(ge=0, le=2**31 - 1)]

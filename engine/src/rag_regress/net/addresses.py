"""The two settings every server the engine calls is named by, checked where they are written:
its address, which every report records (so no user name or password in it: a key goes in
an environment variable), and the name of the variable holding its key (never the key)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, StrictStr

_ADDRESS = re.compile(r"https?://[^\s/?#@]+(/[^\s?#]*)?")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def server_address(url: str) -> str:
    """`url` when it is an http:// or https:// address without a query or a user name."""
    if not _ADDRESS.fullmatch(url):
        raise ValueError("must be an http:// or https:// address, without a query or a user name")
    return url


def variable_name(name: str) -> str:
    """`name` when it can name an environment variable; the value is never echoed (a key
    written here by mistake would otherwise be shown)."""
    if not _VARIABLE.fullmatch(name):
        raise ValueError("must be the name of an environment variable (letters, digits, _), not a key")
    return name


ServerAddress = Annotated[StrictStr, AfterValidator(server_address)]
KeyVariable = Annotated[StrictStr, AfterValidator(variable_name)]

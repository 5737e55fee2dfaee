"""Jinja filters for this template (cookiecutter and cruft load them from the template root)."""

from __future__ import annotations

import json

from jinja2.ext import Extension


def toml_string(value: object) -> str:
    """Render any answer as one TOML basic string, whatever quotes, backslashes, newlines or
    non-ASCII characters it holds. JSON's escapes are TOML's, except that TOML forbids
    surrogate escapes (so non-ASCII stays literal) and a raw DEL character."""
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


class TomlExtension(Extension):
    def __init__(self, environment):
        super().__init__(environment)
        environment.filters["toml_string"] = toml_string

"""Jinja extensions for this template (cookiecutter and cruft load them from the template root).

All done by `TomlExtension`, the one name cookiecutter.json lists:

- the `toml_string` filter, which writes any answer into TOML;
- answers stay text: an answer (typed at a prompt, given as `key=value` or to the API, taken
  from a cookiecutter config's `default_context` or from a project's `.cruft.json`) is compiled
  as a string constant. Cookiecutter renders every context value as a Jinja template, so
  without this `{{ 7*7 }}` would bake as `49` and `{{ cycler.__init__.__globals__.os.popen(...) }}`
  would run a shell command;
- every template is compiled in Jinja's immutable sandbox, in case an answer ever reaches Jinja
  by another road.

Why the name stays `TomlExtension`: `cruft update` imports this module once, from the commit a
project was made from, and reuses it for the target commit's render. A class name that older
commits' modules lack would fail to import there, so new behaviour joins the existing class.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any, cast

from jinja2 import Environment, FileSystemLoader
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment, safe_range

CONTEXT_FILE = Path(__file__).resolve().parent / "cookiecutter.json"
# Each choice's part file, templates/<kind>/<name>.jinja: what a project baked with that choice
# says (cookiecutter's loader finds this folder, so the template's files import them).
TEMPLATES = Path(__file__).resolve().parent / "templates"
# Jinja's default globals that this template never uses; they are where template-injection
# escapes usually start (`cycler.__init__.__globals__`).
UNUSED_GLOBALS = ("cycler", "joiner", "namespace", "lipsum")


def toml_string(value: object) -> str:
    """Render any answer as one TOML basic string, whatever quotes, backslashes, newlines or
    non-ASCII characters it holds. JSON's escapes are TOML's, except that TOML forbids
    surrogate escapes (so non-ASCII stays literal) and a raw DEL character."""
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def template_strings(context_file: Path) -> frozenset[str]:
    """Every string the template wrote in cookiecutter.json (values, choices, keys, prompts).

    These are the only context values rendered as Jinja, e.g. project_slug's default
    `{{ cookiecutter.project_name | slugify }}`. Read when an environment is made, not at
    import: cruft reuses this module after checking out another commit of the template."""
    found: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                collect(key)
                collect(item)

    collect(json.loads(context_file.read_text(encoding="utf-8")))
    return frozenset(found)


def literal_source(text: str) -> str:
    """Jinja source that renders to exactly `text`: one string constant.

    Jinja reads a string constant by turning non-ASCII into backslash escapes and decoding
    Python's escapes, which include all of JSON's; escaping newlines keeps a carriage return
    from being normalised to a newline, as raw template text would be."""
    return "{{ " + json.dumps(text, ensure_ascii=False) + " }}"


def rendering_a_context_value() -> bool:
    """True while cookiecutter's prompt step renders a context value (`render_variable` in
    `cookiecutter.prompt`, used by `cookiecutter` and by `cruft create/diff/update`).

    File names, file contents and hooks are compiled elsewhere and stay templates. If a
    cookiecutter release renamed that function, answers would be rendered again, in the
    sandbox (no attribute escapes, no calls to unsafe callables); tests/test_answers_inert.py
    would fail on the `{{ 7*7 }}` answer."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code, module = frame.f_code.co_name, frame.f_globals.get("__name__")
        if code == "render_variable" and module == "cookiecutter.prompt":
            return True
        frame = frame.f_back
    return False


_SANDBOXED: dict[type, type] = {}


def sandbox(environment: Environment) -> None:
    """Make `environment` an immutable sandbox, in place, with everything else kept.

    Cookiecutter creates the environment itself, so the class is swapped for a subclass that
    also derives from jinja2's ImmutableSandboxedEnvironment: templates compiled from now on
    check every attribute, item and call (no `__globals__`, no `str.format` escapes, no
    mutating methods). The template's own Jinja (filters, `if`, `in`, `replace`) is unaffected.
    """
    base = type(environment)
    if not issubclass(base, ImmutableSandboxedEnvironment):
        if base not in _SANDBOXED:
            _SANDBOXED[base] = type(f"Sandboxed{base.__name__}", (base, ImmutableSandboxedEnvironment), {})
        environment.__class__ = _SANDBOXED[base]
    sandboxed = cast(ImmutableSandboxedEnvironment, environment)
    # What SandboxedEnvironment.__init__ sets on an instance: it never runs here (this is
    # called from Environment.__init__, while it loads the extensions).
    sandboxed.globals["range"] = safe_range
    sandboxed.binop_table = dict(sandboxed.default_binop_table)
    sandboxed.unop_table = dict(sandboxed.default_unop_table)
    for name in UNUSED_GLOBALS:
        sandboxed.globals.pop(name, None)


class TomlExtension(Extension):
    """The `toml_string` filter, a sandboxed environment, and answers kept as typed."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        environment.filters["toml_string"] = toml_string
        sandbox(environment)
        self.template_strings = template_strings(CONTEXT_FILE)

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        """Compile an answer as a constant; leave the template's own Jinja alone."""
        if name is None and source not in self.template_strings and rendering_a_context_value():
            return literal_source(source)
        return source


def choice_parts(kind: str) -> dict[str, Any]:
    """The part files of one kind of choice ("retrievers", "generators", "judges"), by the
    choice's name, each as the template's files import it: its `set` values are attributes
    (a retriever's extra, torch, secret_env, service). For the template's own noxfile and
    tests; a bake never calls it."""
    environment = Environment(loader=FileSystemLoader(TEMPLATES))
    return {
        path.stem: environment.get_template(f"{kind}/{path.name}").module
        for path in sorted((TEMPLATES / kind).glob("*.jinja"))
    }

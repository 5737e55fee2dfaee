"""Adapters: ready-made retrievers and generators for systems that already run somewhere,
so that a team evaluates its real system without writing a client. Each module has
`build(...)` with the signature of the team's factory it stands for (`http` and `qdrant`:
`build(documents, tokenize, options)`, as `build_retriever`; `openai`: `build(retriever,
documents, options)`, as `build_generator`), so the team's retriever.py or generator.py is
three lines (`from rag_regress.adapters import http` and `build_retriever = http.build`),
or eval.toml names it (`[system] retriever = "http"`: each is a registered part, parts.py).
Each reads its settings from the [retriever] or [generation] table of eval.toml, documented
in the module's docstring and declared by its `Settings` (options.py): an unknown option, a
missing one or one of the wrong type stops the run with exit 2 naming it, its line and the fix.
"""

from __future__ import annotations

from ..errors import EvalInputError
from ..net.server_settings import credentials_in
from ..options import OptionsError

CONFIG = "eval.toml"  # where the options come from, as an error names it


def refused(table: str, key: str, problem: str, fix: str) -> EvalInputError:
    """An option that is well formed but cannot be used where the run is (an environment
    variable that is not set, a file that cannot be read, a model that does not load):
    exit 2 naming `[table] key`. Malformed options are the adapter's Settings' to refuse."""
    return EvalInputError(CONFIG, f"[{table}] {key} {problem}", fix)


def without_credentials(url: str, key: str, variable: str) -> str:
    """`url`, unless it names a user or a password: every report records a part's settings,
    so that is refused (OptionsError naming `key`, never the address), the fix naming the
    option `variable` that takes the credential's environment variable instead."""
    if credentials_in(url):
        raise OptionsError(
            f"option {key!r} must not hold a user name or password: every report records the address",
            key,
            f"put the credential in an environment variable, and name it in {variable}",
        )
    return url

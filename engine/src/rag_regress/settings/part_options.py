"""The options tables of the registered parts [system] names: [retriever] checked by the
retriever's `Settings`, [generation] by the generator's, when eval.toml is read, so a typo is
exit 2 at its line before anything is built. A table of the team's own factory
("module:function") is the factory's to read: it is not checked here.

Also where an OptionsError (options.py), raised here or by a part's `build`, becomes an error
at the option's line of eval.toml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import PydanticSchemaGenerationError

from ..errors import EvalInputError
from ..execution.team_trace import raised, team_code_error
from ..options import OptionsError, validated
from ..registry import Kind, load
from .lines import line_of
from .schema import SystemSettings

TABLES: dict[Kind, str] = {"retriever": "retriever", "generator": "generation"}  # each kind's table


def option_error(path: Path, text: str, table: str, error: OptionsError) -> EvalInputError:
    """A bad option of [table] (`text`: eval.toml as read): its key and line, else the table's."""
    line = (line_of(text, (table, error.key)) if error.key else None) or line_of(text, (table,))
    key = f"{table}.{error.key}" if error.key else f"[{table}]"
    return EvalInputError(path, f"{key}: {error}", error.fix or "fix or remove that option", line)


def check_part_options(system: SystemSettings, tables: dict[str, Any], path: Path, text: str) -> None:
    """Validate the table of each registered part [system] names with the part's `Settings`
    (none declared: nothing to check). A part whose module lacks a library is checked when it
    is built, which names the library; one that fails otherwise while imported (code the
    engine does not own) is exit 2 at its own line, else at its [system] line."""
    for kind, table in TABLES.items():
        name = getattr(system, kind)
        if name is None or ":" in name:
            continue
        try:
            module = load(kind, name)
        except ImportError:
            continue
        except Exception as error:
            raise team_code_error(
                error,
                f"[system] {kind} {name!r}: its module {raised(error)} on import",
                f"fix that module, or choose another {kind}",
                path,
                line_of(text, ("system", kind)),
            ) from None
        settings = getattr(module, "Settings", None)
        if settings is None:
            continue
        try:
            validated(settings, tables.get(table) or {}, f"the {name} {kind}")
        except PydanticSchemaGenerationError:  # the part's module breaks the contract
            raise EvalInputError(
                path,
                f"[system] {kind} {name!r}: its module's Settings is no model of settings ({settings!r})",
                "declare Settings as a pydantic model of the part's options",
                line_of(text, ("system", kind)),
            ) from None
        except OptionsError as error:
            raise option_error(path, text, table, error) from None

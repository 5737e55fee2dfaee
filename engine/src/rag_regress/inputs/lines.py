"""One line of a JSON Lines file, checked by the pydantic model of its format (as eval.toml
and reports are: settings/schema.py, inputs/reports.py): a `Line` declares each key with its
type, default and what it must be, and `checked` turns the first mistake into an
EvalInputError naming the file, the line, the key and the fix.

A line's model refuses a key it does not declare (a typo is no extra data to ignore) and
coerces nothing (true is no string, "yes" no true). Missing and unknown keys are listed
together ("missing key(s): claim, supported"); a value of the wrong type names its key and
what it must be, from the field's description ("'claim' must be a non-empty string, got ''").
What types cannot say (an id used twice, a document the corpus lacks) the reader checks after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from ..errors import EvalInputError


class Line(BaseModel):
    """The base of a line's model: undeclared keys refused (the types below coerce nothing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "is blank")
    return value


def _not_null(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError("null", "is null")
    return value


# A key that may be left out (its default, None, is not validated) but is never written as null.
NotNull = AfterValidator(_not_null)

# Each type strict (no coercion), so that a nested part (a dataclass) may be read from its object.
Text = Annotated[str, Strict(), Field(description="a string")]
NonEmpty = Annotated[str, Strict(), AfterValidator(_not_blank), Field(description="a non-empty string")]
Flag = Annotated[bool, Strict(), Field(description="true or false")]
Strings = Annotated[list[NonEmpty], Field(description="a list of non-empty strings")]
Object = Annotated[dict[str, Any], Field(description="an object")]
Objects = Annotated[list[dict[str, Any]], Field(description="a list of objects")]

M = TypeVar("M", bound=Line)


def keys_table(model: type[Line]) -> str:
    """The keys of a line's model as a markdown table (key, default, what it must be): the
    tables of docs/formats.md, which a test compares with these declarations."""
    rows = ["| key | default | must be |", "| --- | --- | --- |"]
    for name, field in model.model_fields.items():
        wanted = field.description or _description(field.annotation) or "-"
        rows.append(f"| `{field.alias or name}` | {_default(field)} | {wanted} |")
    return "\n".join(rows)


def _default(field: FieldInfo) -> str:
    """A key's default as the docs show it: "required", or its JSON value."""
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
    return f"`{json.dumps(value)}`"


def _description(annotation: Any) -> str | None:
    """The description a type inside an optional field declares (`NonEmpty | None`)."""
    for part in get_args(annotation):
        described = next(
            (m.description for m in getattr(part, "__metadata__", ()) if isinstance(m, FieldInfo)), None
        )
        if described:
            return described
    return None


def checked(model: type[M], item: dict[str, Any], path: Path, number: int, fix: str | None = None) -> M:
    """Line `number` of `path`, `item`, as `model`; EvalInputError at that line otherwise,
    with `fix` when given (a file a tool wrote is made again, not edited by hand)."""
    try:
        return model.model_validate(item)
    except ValidationError as error:
        refusal = _refusal(model, item, error, path, number)
        if fix is not None:
            refusal = EvalInputError(path, refusal.problem, fix, number)
        raise refusal from None


def _refusal(
    model: type[Line], item: dict[str, Any], error: ValidationError, path: Path, number: int
) -> EvalInputError:
    """The first mistake of a line in the engine's words: the keys missing, else the keys
    unknown, else the first key whose value is wrong (its description says what it must be;
    its example, when it declares one, is the fix)."""
    errors = error.errors(include_url=False)
    top = [(str(e["loc"][0]), e["type"]) for e in errors if len(e["loc"]) == 1]
    missing = [key for key, kind in top if kind == "missing"]
    if missing:
        return EvalInputError(path, f"missing key(s): {', '.join(missing)}", f"add {missing[0]!r}", number)
    fields = {field.alias or name: field for name, field in model.model_fields.items()}  # as written
    unknown = [key for key, kind in top if kind == "extra_forbidden"]
    if unknown:
        declared = ", ".join(sorted(fields))
        return EvalInputError(
            path, f"unknown key(s): {', '.join(unknown)}", f"use only these keys: {declared}", number
        )
    key = str(errors[0]["loc"][0])
    field = fields[key]
    wanted = field.description or _description(field.annotation) or "as documented"
    fix = f"write {key!r} as {wanted}"
    if field.examples:
        fix = f"write e.g. {json.dumps({key: field.examples[0]})[1:-1]}"  # "key": value
    return EvalInputError(path, f"{key!r} must be {wanted}, got {item.get(key)!r:.60}", fix, number)

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

from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from ..errors import EvalInputError


class Line(BaseModel):
    """The base of a line's model: undeclared keys refused, nothing coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "is blank")
    return value


Text = Annotated[str, Field(description="a string")]
NonEmpty = Annotated[str, AfterValidator(_not_blank), Field(description="a non-empty string")]
Flag = Annotated[bool, Field(description="true or false")]
Strings = Annotated[list[NonEmpty], Field(description="a list of non-empty strings")]
Objects = Annotated[list[dict[str, Any]], Field(description="a list of objects")]

M = TypeVar("M", bound=Line)


def checked(model: type[M], item: dict[str, Any], path: Path, number: int) -> M:
    """Line `number` of `path`, `item`, as `model`; EvalInputError at that line otherwise."""
    try:
        return model.model_validate(item)
    except ValidationError as error:
        raise _refusal(model, item, error, path, number) from None


def _refusal(
    model: type[Line], item: dict[str, Any], error: ValidationError, path: Path, number: int
) -> EvalInputError:
    """The first mistake of a line in the engine's words: the keys missing, else the keys
    unknown, else the first value of the wrong type (its key's description says the fix)."""
    errors = error.errors(include_url=False)
    keys = [str(e["loc"][0]) if e["loc"] else "" for e in errors]
    missing = [key for key, e in zip(keys, errors, strict=True) if e["type"] == "missing"]
    if missing:
        return EvalInputError(path, f"missing key(s): {', '.join(missing)}", f"add {missing[0]!r}", number)
    unknown = [key for key, e in zip(keys, errors, strict=True) if e["type"] == "extra_forbidden"]
    declared = ", ".join(sorted(model.model_fields))
    if unknown:
        return EvalInputError(
            path, f"unknown key(s): {', '.join(unknown)}", f"use only these keys: {declared}", number
        )
    key = keys[0]
    field = model.model_fields[key]
    wanted = field.description or "as documented"
    return EvalInputError(
        path, f"{key!r} must be {wanted}, got {item.get(key)!r:.60}", f"write {key!r} as {wanted}", number
    )

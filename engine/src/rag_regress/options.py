"""The options table of a part ([retriever] or [generation] of eval.toml), read by the part's
`Settings`: a pydantic model (or pydantic dataclass) declaring each option with its type,
default, range (Field constraints) and description.

`validated` is the one place where pydantic's errors become `OptionsError`: a message naming
the option in the engine's words ("option 'b' must be a number from 0 to 1, got 1.5") and
its key, which the engine turns into an error at the option's line of eval.toml. An infinite
number is a setting only where the default is infinite (`min_score = -inf`: never abstain);
NaN never is. `options_table` writes the same declarations as the tables of docs/settings.md.
"""

from __future__ import annotations

import math
import types
from pathlib import Path
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictFloat, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError, PydanticUndefined

# A part's options table: a key it does not declare is refused (a typo would otherwise be
# ignored), and no value is coerced (true is no number, "5" no whole number).
OPTIONS = ConfigDict(extra="forbid", strict=True, frozen=True)

_RANGE_ERRORS = {"greater_than_equal", "less_than_equal", "greater_than", "less_than", "finite_number", "nan"}
_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str"}
T = TypeVar("T")


class PartSettings(BaseModel):
    """The base of the engine's own parts' Settings: OPTIONS' rules."""

    model_config = OPTIONS


class OptionsError(ValueError):
    """An option in the [retriever] (or [generation]) table of eval.toml is unknown, missing,
    has the wrong type or is out of range; `key` names it, for the line in the error message,
    and `fix`, when given, says how to correct it."""

    def __init__(self, message: str, key: str | None = None, fix: str | None = None):
        super().__init__(message)
        self.key = key
        self.fix = fix


def _refuse_nan(value: float) -> float:
    if math.isnan(value):
        raise PydanticCustomError("nan", "nan is no setting")
    return value


# A number that may be infinite (its default is) but never NaN.
NotNaN = AfterValidator(_refuse_nan)

# An adapter's `timeout`: the seconds one request to the team's service may take.
RequestSeconds = Annotated[
    StrictFloat,
    Field(ge=0, le=3600, allow_inf_nan=False, description="seconds one request may take (0: no limit)"),
]


def validated(settings: type[T], options: dict[str, Any], part: str) -> T:
    """`options` (a table of eval.toml) validated by the model `settings`; OptionsError names
    the first bad option and `part` ("the bm25 retriever"), which refused it."""
    try:
        return TypeAdapter(settings).validate_python(options)
    except ValidationError as error:
        raise refusal(error, settings, part) from None


def refusal(error: ValidationError, settings: type[Any], part: str) -> OptionsError:
    """The first of pydantic's errors in the engine's words, as OptionsError."""
    fields = fields_of(settings)
    item: ErrorDetails = error.errors(include_url=False)[0]
    key = str(item["loc"][0]) if item["loc"] else None
    value = item.get("input")
    cause = item.get("ctx", {}).get("error")
    if isinstance(cause, OptionsError):  # a validator's own words
        return OptionsError(str(cause), cause.key or key, cause.fix)
    if item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        return OptionsError(f"unknown option {key!r}; {part} takes: {', '.join(fields) or 'none'}", key)
    field = fields.get(key or "")
    if item["type"] == "missing" or field is None:
        shown = f" = {field.examples[0]!r}" if field and field.examples else " = ..."
        problem = "is required" if item["type"] == "missing" else str(cause or item["msg"])
        return OptionsError(f"option {key!r} {problem} by {part}", key, f"set it: {key}{shown}")
    if isinstance(cause, ValueError):
        return OptionsError(f"option {key!r} {cause}", key)
    if item["type"] in _RANGE_ERRORS:
        return OptionsError(f"option {key!r} must be {allowed(field)}, got {value!r}", key)
    return OptionsError(f"option {key!r} must be {expected(field)}, got {value!r}", key)


def fields_of(settings: type[Any]) -> dict[str, FieldInfo]:
    """The declared options of a Settings model or pydantic dataclass, in order."""
    found: dict[str, FieldInfo] = getattr(settings, "__pydantic_fields__", None) or {}
    return found


def _kind(annotation: Any) -> Any:
    """The type of an option without Annotated[...] and `| None`."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) in (Union, types.UnionType):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(rest) != 1:
                return annotation
            annotation = rest[0]
        else:
            return annotation


def expected(field: FieldInfo) -> str:
    """The type an option must have, as the engine has always named it ("a float", "a table")."""
    kind = _kind(field.annotation)
    if kind in _TYPE_NAMES:
        return f"a {_TYPE_NAMES[kind]}"
    origin = get_origin(kind) or kind
    return {dict: "a table", list: "a list", Path: "a file path"}.get(origin, "text")


def _bounds(field: FieldInfo) -> tuple[float, float]:
    """An option's inclusive limits (Field's ge and le); without them, 0 and up."""
    low: float = 0
    high: float = math.inf
    for item in field.metadata:
        ge, le = getattr(item, "ge", None), getattr(item, "le", None)
        low = ge if isinstance(ge, int | float) else low
        high = le if isinstance(le, int | float) else high
    return low, high


def allowed(field: FieldInfo) -> str:
    """The range of a number option in words ("a number from 0 to 1"), for errors and docs."""
    default = field.default
    whole = _kind(field.annotation) is int
    kind_name = "a whole number" if whole else "a number"
    if isinstance(default, float) and math.isinf(default):
        return f"{kind_name} ({default} included), not nan"
    low, high = _bounds(field)

    def shown(value: float) -> str:
        return f"{int(value):,}" if whole else f"{value:,g}"

    return (
        f"{kind_name} from {shown(low)} to {shown(high)}"
        if high != math.inf
        else f"{kind_name} of {shown(low)} or more"
    )


def options_table(settings: type[Any]) -> str:
    """The options of `settings` as a markdown table (option, default, allowed, meaning): the
    tables of docs/settings.md, which a test compares with these declarations."""
    rows = ["| option | default | allowed | meaning |", "| --- | --- | --- | --- |"]
    for name, field in fields_of(settings).items():
        rows.append(f"| `{name}` | {_default(field)} | {_accepted(field)} | {field.description} |")
    return "\n".join(rows)


def _default(field: FieldInfo) -> str:
    """An option's default as the docs show it: as written in eval.toml, "required" or "-"."""
    default = field.default
    if default is PydanticUndefined:
        return "required"
    if default is None:
        return "-"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, float):
        return f"`{default:g}`"
    if isinstance(default, str):
        return f'`"{default}"`'
    return f"`{default}`"


def _accepted(field: FieldInfo) -> str:
    """What an option accepts, in the docs' words."""
    kind = _kind(field.annotation)
    if kind is bool:
        return "true or false"
    if kind in (int, float):
        return allowed(field)
    return "text" if kind is str else expected(field)

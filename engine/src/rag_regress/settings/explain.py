"""Settings in words, taken from the schema: what each setting accepts ("a whole number from
1 to 1,000"), for the errors of load_config and for the table of docs/settings.md.

An error names the dotted key, its line in eval.toml (lines.py), what is wrong and a fix; when
pydantic reports several, the first in the file is shown.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticUndefined

from ..errors import EvalInputError, SettingError
from ..retrieval.names import Metric
from .lines import KeyPath, dotted, line_of
from .schema import EvalFile

_TABLE_ERRORS = {"dict_type", "dataclass_type", "dataclass_exact_type", "model_type", "model_attributes_type"}
_UNKNOWN_KEY = {"extra_forbidden", "unexpected_keyword_argument"}


@dataclasses.dataclass
class _Slot:
    """What the schema says about one place of the file: its type, constraints and field."""

    annotation: Any
    metadata: list[Any]
    field: FieldInfo | None = None


def explain(
    error: ValidationError, path: Path, text: str, root: Any = EvalFile, prefix: KeyPath = ()
) -> EvalInputError:
    """The first problem of `error` in eval.toml (`text`), as EvalInputError: key, line, fix.
    `root`: the model validated, at `prefix` in the file (a part's own table, [judge.NAME],
    is validated by the part's model: its errors read like the engine's)."""
    errors = error.errors(include_url=False)
    # a default computed from other settings is not computed once one of them is invalid
    problems = [
        _problem(item, root, prefix) for item in errors if item["type"] != "default_factory_not_called"
    ]
    located = [(line_of(text, key), key, problem, fix) for key, problem, fix in problems]
    line, key, problem, fix = min(located, key=lambda found: found[0] or math.inf)
    return EvalInputError(path, f"{dotted(key)}: {problem}", fix, line)


def _problem(item: ErrorDetails, root: Any, prefix: KeyPath) -> tuple[KeyPath, str, str]:
    """(key path, problem, fix) of one pydantic error of `root`, validated at `prefix`."""
    key: KeyPath = tuple(item["loc"])  # relative to `root`
    cause = item.get("ctx", {}).get("error")
    if isinstance(cause, SettingError) and cause.key:
        key = cause.key
    if key and key[-1] == "[key]":  # a bad name as a table's key: the table is to blame
        key = key[:-2]
    slot = _slot(key, root)
    if item["type"] in _UNKNOWN_KEY:
        table = _slot(key[:-1], root)
        key = (*prefix, *key)
        allowed = sorted(_fields(_unwrap(table.annotation, [])[0]) or {}) if table else []
        close = difflib.get_close_matches(str(key[-1]), allowed, n=1)
        return (
            key,
            "unknown setting",
            f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(allowed)}",
        )
    key = (*prefix, *key)
    if item["type"] == "missing":
        return key, "is required", f"add {key[-1]} = ... under [{dotted(key[:-1])}]"
    if isinstance(cause, SettingError):
        return key, str(cause), cause.fix
    if isinstance(cause, ValueError):
        return key, str(cause), _example(key, slot)
    if item["type"] in _TABLE_ERRORS:
        return (
            key,
            f"must be a table, got {_short(item['input'])}",
            f"write [{dotted(key)}] followed by its settings",
        )
    expected = describe(slot) if slot else item["msg"].lower()
    return key, f"must be {expected}, got {_short(item['input'])}", _example(key, slot)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unwrap(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """The type without Annotated[...] and `| None`, and every constraint found on the way."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation, *extra = get_args(annotation)
            for item in extra:  # a Field(...) inside Annotated holds its constraints in .metadata
                metadata = [*metadata, *(item.metadata if isinstance(item, FieldInfo) else [item])]
        elif get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(rest) > 1:
                return annotation, metadata
            annotation = rest[0]
        else:
            return annotation, metadata


def _fields(annotation: Any) -> dict[str, FieldInfo] | None:
    """The fields of a table class (a pydantic model or dataclass), by their name in eval.toml."""
    fields: dict[str, FieldInfo] | None = getattr(annotation, "__pydantic_fields__", None)
    return None if fields is None else {info.alias or name: info for name, info in fields.items()}


def _slot(key: KeyPath, root: Any = EvalFile) -> _Slot | None:
    """What the schema (`root`) says about `key` (None inside a free-form table)."""
    slot = _Slot(root, [])
    for part in key:
        annotation, _ = _unwrap(slot.annotation, [])
        fields = _fields(annotation)
        if fields is not None:
            if part not in fields:
                return None
            slot = _Slot(fields[part].annotation, list(fields[part].metadata), fields[part])
        elif get_origin(annotation) in (dict, list) and get_args(annotation)[-1] is not Any:
            slot = _Slot(get_args(annotation)[-1], [])
        else:
            return None
    return slot


def describe(slot: _Slot) -> str:
    """What a setting accepts, in words."""
    annotation, metadata = _unwrap(slot.annotation, slot.metadata)
    bounds = _bounds(metadata)
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is bool:
        return "true or false"
    if annotation in (int, float):
        return ("a whole number" if annotation is int else "a number") + _range(bounds, annotation)
    if annotation is str:
        return "text"
    if annotation is Path:
        return "a file path"
    if annotation is Metric:
        return "a metric name"
    if Metric in args:
        return "a metric or answer-check name"
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(choice) for choice in args)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(_Slot(choice, [])) for choice in args)
    if origin is list:
        empty = any(getattr(m, "min_length", 0) for m in metadata)
        return f"a {'non-empty ' if empty else ''}list, each {describe(_Slot(args[0], []))}"
    if origin is dict and args[-1] is not Any:
        return f"a table, each value {describe(_Slot(args[-1], []))}"
    return "a table"


def _bounds(metadata: list[Any]) -> dict[str, float]:
    """A number's limits: {"ge": 0, "le": 1}; gt and lt for limits themselves excluded."""
    return {name: getattr(m, name) for m in metadata for name in ("ge", "le", "gt", "lt") if hasattr(m, name)}


def _range(bounds: dict[str, float], kind: type) -> str:
    def number(value: float) -> str:
        return f"{value:,}" if kind is int else f"{value:g}"

    if "ge" in bounds and "le" in bounds:
        low, high = number(bounds["ge"]), number(bounds["le"])
        return f" from {low} to {high}" if kind is int else f" between {low} and {high}"
    if "gt" in bounds and "lt" in bounds:
        return f" strictly between {number(bounds['gt'])} and {number(bounds['lt'])}"
    return ""  # every number of the schema has both limits


def _default(field: FieldInfo | None) -> Any:
    """The field's default (computed as when no other setting is written); None when it has none."""
    default = (
        PydanticUndefined
        if field is None
        else field.get_default(call_default_factory=True, validated_data={})
    )
    return None if default is PydanticUndefined or default in ([], {}) else default


def _example(key: KeyPath, slot: _Slot | None) -> str:
    """A fix: the setting written with its default, or with a value in its range."""
    field = slot.field if slot else None
    value = field.examples[0] if field and field.examples else _default(field)
    if value is None and slot:  # a number of a table without defaults (a floor): its middle
        annotation, metadata = _unwrap(slot.annotation, slot.metadata)
        bounds = _bounds(metadata)
        low, high = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
        if annotation in (int, float) and low is not None and high is not None:
            value = annotation(low + (high - low) / 2)
    names = [part for part in key if isinstance(part, str)]
    if value is None or not names:
        return "see docs/settings.md for the allowed values"
    name = names[-1] if re.fullmatch(r"[A-Za-z0-9_-]+", names[-1]) else json.dumps(names[-1])
    return f"e.g. {name} = {toml(value)}"


def toml(value: Any) -> str:
    """A value as it is written in eval.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml(item) for item in value) + "]"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)  # str, Path, Metric
    return f"'{text}'" if "\\" in text and "'" not in text else json.dumps(text)


def reference() -> str:
    """Every setting of eval.toml as markdown, one table per [table]: docs/settings.md."""
    out: list[str] = []
    for table, info in EvalFile.model_fields.items():
        section = _fields(info.annotation)
        about = (info.annotation.__doc__ or "").split(":", 1)[-1] if section else (info.description or "")
        about = " ".join(about.split()).split(". ")[0].rstrip(".")  # its first sentence
        out += [f"### [{table}]", "", f"{about[:1].upper()}{about[1:]}.", ""]
        keyed = get_args(info.annotation)[1:] if get_origin(info.annotation) is dict else ()
        entry = _fields(keyed[0]) if keyed else None  # [prices]: a table per key
        if entry is not None:
            out += ["One table per key, each with:", ""]
            section = entry
        elif not section:
            out += ["Free-form: any keys, checked by the code that reads them.", ""]
            continue
        out += ["| setting | default | allowed | meaning |", "| --- | --- | --- | --- |"]
        for name, field in section.items():
            default = _default(field)
            shown = "-" if default is None else f"`{toml(default)}`"
            allowed = describe(_Slot(field.annotation, field.metadata))
            out.append(f"| `{name}` | {shown} | {allowed} | {field.description} |")
        out.append("")
    return "\n".join(out)

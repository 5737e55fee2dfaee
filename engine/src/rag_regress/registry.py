"""The registered parts: retrievers, generators and judges found by entry point, the engine's
own exactly as any installed package's.

A part is a module registered under its kind's entry-point group (`name = "module"` in the
package's `[project.entry-points."rag_regress.retrievers"]`); loading it imports that module.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from types import ModuleType
from typing import Literal

Kind = Literal["retriever", "generator"]
GROUPS: dict[Kind, str] = {"retriever": "rag_regress.retrievers", "generator": "rag_regress.generators"}


class UnknownPart(LookupError):
    """No installed package registers a part of that kind by that name; the message lists the
    registered ones."""


def registered(kind: Kind) -> dict[str, str]:
    """Every registered part of `kind`: its name and the module the entry point names, by name.
    The first distribution to register a name keeps it (as for the judges)."""
    found: dict[str, str] = {}
    for point in importlib.metadata.entry_points(group=GROUPS[kind]):
        found.setdefault(point.name, point.value)
    return dict(sorted(found.items()))


def module_of(kind: Kind, name: str) -> str:
    """The module part `name` of `kind` is registered as; UnknownPart when none is, naming
    the registered ones."""
    known = registered(kind)
    if name not in known:
        raise UnknownPart(f"unknown {kind} {name!r}; the registered {kind}s: {', '.join(known) or 'none'}")
    return known[name].partition(":")[0]


def load(kind: Kind, name: str) -> ModuleType:
    """The module of part `name` of `kind`, imported: UnknownPart when none is registered by
    that name; whatever the module raises while imported (ImportError: a library it needs is
    not installed) is raised here."""
    return importlib.import_module(module_of(kind, name))

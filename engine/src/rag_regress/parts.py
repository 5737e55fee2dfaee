"""The one import path for a part of the system a package adds to the engine, and for loading
any registered part (docs/parts.md; judges: docs/judges.md, "A judge of your own").

Retrievers and generators: a part is one module, registered under the entry-point group
`rag_regress.retrievers` or `rag_regress.generators` (`name = "module"` in its package's
pyproject.toml; the engine's own, bm25, tfidf, dense, hybrid, qdrant, http, stand-in and
openai, register there the same way). The module declares

  VERSION   a string, bumped whenever its results may change for the same settings
  Settings  a pydantic model of its options table ([retriever] or [generation] of
            eval.toml): `PartSettings` gives the engine's rules (an unknown key refused, no
            value coerced); declare each option's type, default, range (Field's ge and le)
            and description
  build     `build(documents, tokenize, options) -> Retriever` or `build(retriever,
            documents, options) -> Generator`, `options` the table as written; read it with
            `validated(Settings, options, "the NAME retriever")`, whose OptionsError names
            the bad option

`[system] retriever = "NAME"` (or `generator`) chooses it: the engine loads the module
through its entry point, checks the table with `Settings` when eval.toml is read (an error
names the option's line) and builds the part with `build`. `retriever(name)` and
`generator(name)` return a registered part's module; `judge(name)` a judge's.

A judge is one module, registered under the entry-point group `rag_regress.judges`
(`name = "module"`), declaring `build(settings, config_path) -> Judge`, `VERSION`, and, when
it has settings of its own, `Settings`: a pydantic model of its table [judge.NAME], whose
validated value `build` reads as `settings.options` and every report records in the judge's
identity.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .answers.judges import Item, Judge, Verdict, backends
from .answers.settings import JudgeSettings
from .api import Answer, Context, Document, Generator, History, Hit, Message, Retriever, Tokenizer
from .options import OptionsError, PartSettings, validated
from .registry import UnknownPart, load, registered

__all__ = [
    "Answer",
    "Context",
    "Document",
    "Generator",
    "History",
    "Hit",
    "Item",
    "Judge",
    "JudgeSettings",
    "Message",
    "OptionsError",
    "PartSettings",
    "Retriever",
    "Tokenizer",
    "UnknownPart",
    "Verdict",
    "generator",
    "generators",
    "judge",
    "retriever",
    "retrievers",
    "validated",
]


def retriever(name: str) -> ModuleType:
    """The module of the retriever registered as `name` (UnknownPart lists the registered ones)."""
    return load("retriever", name)


def generator(name: str) -> ModuleType:
    """The module of the generator registered as `name` (UnknownPart lists the registered ones)."""
    return load("generator", name)


def retrievers() -> list[str]:
    """The names of the registered retrievers, sorted."""
    return list(registered("retriever"))


def generators() -> list[str]:
    """The names of the registered generators, sorted."""
    return list(registered("generator"))


def judge(name: str) -> ModuleType:
    """The module of judge backend `name` ([judge] backend; UnknownPart lists the known ones)."""
    known = backends()
    if name not in known:
        raise UnknownPart(f"unknown judge {name!r}; the registered judges: {', '.join(sorted(known))}")
    return importlib.import_module(known[name])

"""The engine's own retrievers and generators are registered parts (parts.py): each is found by
its entry point, declares VERSION and Settings, and its Settings accept its defaults and
refuse a value out of range, naming the option."""

from __future__ import annotations

from typing import Any

import pytest

from rag_regress import parts
from rag_regress.options import OptionsError, validated

REQUIRED: dict[str, dict[str, Any]] = {  # what a part needs besides its defaults
    "http": {"url": "http://127.0.0.1:8080/search"},
    "qdrant": {"path": ":memory:"},
    "openai": {"base_url": "http://127.0.0.1:8000/v1", "model": "m"},
}
OUT_OF_RANGE = {  # one option each, out of its range, and the words that refuse it
    "bm25": ("b", 1.5, "must be a number from 0 to 1, got 1.5"),
    "tfidf": ("chunk_size", -1, "must be a whole number of 0 or more, got -1"),
    "dense": ("batch_size", 0, "must be a whole number from 1 to 4,096, got 0"),
    "hybrid": ("candidates", 100_001, "must be a whole number from 1 to 100,000, got 100001"),
    "qdrant": ("batch_size", 5000, "must be a whole number from 1 to 4,096, got 5000"),
    "http": ("timeout", -1, "must be a number from 0 to 3,600, got -1"),
    "stand-in": ("min_score", float("nan"), "must be a number (-inf included), not nan"),
    "openai": ("temperature", 2.5, "must be a number from 0 to 2, got 2.5"),
}
BUILT_IN = [("retriever", name) for name in ("bm25", "tfidf", "dense", "hybrid", "qdrant", "http")] + [
    ("generator", name) for name in ("stand-in", "openai")
]


def module(kind: str, name: str) -> Any:
    return parts.retriever(name) if kind == "retriever" else parts.generator(name)


def test_the_built_in_parts_are_registered_by_entry_point() -> None:
    assert {"bm25", "tfidf", "dense", "hybrid", "qdrant", "http"} <= set(parts.retrievers())
    assert {"stand-in", "openai"} <= set(parts.generators())
    assert parts.retriever("bm25").__name__ == "rag_regress.retrieval.retrievers.bm25"
    assert parts.generator("stand-in").__name__ == "rag_regress.answers.stand_in"


@pytest.mark.parametrize(("kind", "name"), BUILT_IN, ids=[name for _, name in BUILT_IN])
def test_a_built_in_part_s_settings_accept_its_defaults(kind: str, name: str) -> None:
    part = module(kind, name)
    assert isinstance(part.VERSION, str) and callable(part.build)
    given = REQUIRED.get(name, {})
    settings = validated(part.Settings, given, f"the {name} {kind}")
    for option, field in part.Settings.model_fields.items():
        expected = given.get(option, field.default)
        assert getattr(settings, option) == expected, option
        assert field.description, f"{name}: {option} has no description"


@pytest.mark.parametrize(("kind", "name"), BUILT_IN, ids=[name for _, name in BUILT_IN])
def test_a_built_in_part_s_settings_refuse_a_value_out_of_range(kind: str, name: str) -> None:
    part = module(kind, name)
    option, value, said = OUT_OF_RANGE[name]
    with pytest.raises(OptionsError) as caught:
        validated(part.Settings, {**REQUIRED.get(name, {}), option: value}, f"the {name} {kind}")
    assert caught.value.key == option
    assert str(caught.value).startswith(f"option {option!r} {said}")


def test_an_unknown_name_lists_the_registered_parts() -> None:
    with pytest.raises(
        parts.UnknownPart, match=r"unknown retriever 'bm52'; the registered retrievers: bm25, "
    ):
        parts.retriever("bm52")
    with pytest.raises(parts.UnknownPart, match=r"unknown judge 'gpt'; the registered judges: .*lexical"):
        parts.judge("gpt")

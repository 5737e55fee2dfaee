"""Line models: the one way the engine reads the fields of its JSON Lines formats. Each error
names the file, the line, the key and the fix; docs/formats.md shows the models' own tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from rag_regress.answers.calibration import _LabelLine
from rag_regress.errors import EvalInputError
from rag_regress.golden.candidates import CandidateLine
from rag_regress.golden.labels import _GradedLine
from rag_regress.golden.merge import _ItemLine
from rag_regress.golden.pool import Pooled, PoolLine
from rag_regress.inputs.data import Nuggets, _DocumentLine, _QuestionLine
from rag_regress.inputs.lines import Flag, Line, NonEmpty, checked, keys_table

ENGINE_ROOT = Path(__file__).resolve().parents[2]
MODELS = [_DocumentLine, _QuestionLine, _LabelLine, CandidateLine, PoolLine, Pooled, _GradedLine, _ItemLine]


class Sample(Line):
    name: NonEmpty
    flag: Flag = True
    nuggets: Nuggets = Field(default_factory=list)


def refusal(item: dict[str, Any], fix: str | None = None) -> EvalInputError:
    with pytest.raises(EvalInputError) as caught:
        checked(Sample, item, Path("file.jsonl"), 7, fix)
    assert caught.value.line == 7 and caught.value.path == "file.jsonl"
    return caught.value


def test_missing_keys_come_first_and_are_listed_together_then_unknown_ones() -> None:
    error = refusal({"flag": "no", "color": 1, "size": 2})
    assert (error.problem, error.fix) == ("missing key(s): name", "add 'name'")
    error = refusal({"name": "x", "color": 1, "size": 2})
    assert error.problem == "unknown key(s): color, size"
    assert error.fix == "use only these keys: flag, name, nuggets"


@pytest.mark.parametrize(
    ("item", "problem", "fix"),
    [
        ({"name": " "}, "'name' must be a non-empty string, got ' '", "write 'name' as a non-empty string"),
        ({"name": 5}, "'name' must be a non-empty string, got 5", "write 'name' as a non-empty string"),
        (
            {"name": "x", "flag": "true"},
            "'flag' must be true or false, got 'true'",
            "write 'flag' as true or false",
        ),
        (
            {"name": "x", "nuggets": [{"text": "a", "weight": 1}]},
            '\'nuggets\' must be a list of {"text": ..., "vital": true or false} (vital by default), '
            "got [{'text': 'a', 'weight': 1}]",
            'write e.g. "nuggets": [{"text": "30 days"}, {"text": "by card", "vital": false}]',
        ),
    ],
)
def test_a_wrong_value_names_its_key_what_it_must_be_and_an_example(
    item: dict[str, Any], problem: str, fix: str
) -> None:
    error = refusal(item)
    assert (error.problem, error.fix) == (problem, fix)


def test_a_file_a_tool_wrote_is_made_again_not_edited() -> None:
    error = refusal({"name": ""}, fix="download it again")
    assert error.fix == "download it again" and "'name' must be a non-empty string" in error.problem


def test_nothing_is_coerced_and_defaults_are_fresh() -> None:
    first = checked(Sample, {"name": "x"}, Path("f"), 1)
    second = checked(Sample, {"name": "y"}, Path("f"), 2)
    assert first.flag is True and first.nuggets == [] and first.nuggets is not second.nuggets


def test_the_docs_show_each_formats_keys_as_the_models_declare_them() -> None:
    docs = (ENGINE_ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for model in MODELS:
        assert keys_table(model) in docs, f"{model.__name__}:\n{keys_table(model)}"


def test_a_key_written_under_another_name_is_named_as_written() -> None:
    """A key that is a Python word is declared under an alias ("in"): errors name it as the
    file writes it."""
    with pytest.raises(EvalInputError) as caught:
        checked(Pooled, {"doc": "d", "in": ["mine"]}, Path("pool.jsonl"), 2)
    assert caught.value.problem.startswith('\'in\' must be a list of "baseline" and/or "candidate"')
    with pytest.raises(EvalInputError) as caught:
        checked(Pooled, {"doc": "d", "in_": []}, Path("pool.jsonl"), 2)
    assert caught.value.fix == "use only these keys: doc, in"


def test_a_key_that_may_be_left_out_is_never_null() -> None:
    """A candidate's slot (its default, None: import-logs and hand-made lines may lack one) is
    never written as null, as golden generate's resume reads it."""
    assert checked(CandidateLine, {"id": "c", "status": "dropped"}, Path("c.jsonl"), 1).slot is None
    with pytest.raises(EvalInputError) as caught:
        checked(CandidateLine, {"id": "c", "status": "dropped", "slot": None}, Path("c.jsonl"), 4)
    assert caught.value.problem == "'slot' must be a whole number of 0 or more, got None"

"""A line of a candidates file: one candidate question, as `golden generate` and `golden
import-logs` write it, and as the grading page (golden/page.py) and generate's resume read it.

Each reader adds what it needs beyond the types: the page, that a candidate's documents are
in the corpus with grades it allows and passages inside their texts; the resume, that the
line is one of this plan's slots.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, Strict

from ..inputs.data import Grades, Nuggets
from ..inputs.lines import Flag, Line, NonEmpty, NotNull, Object, Objects, Text


class CandidateLine(Line):
    """Keys beyond these are kept unread (the writers record the model, why it was dropped...).
    A key given must have its type; `question` and `relevant` must be given for a candidate
    the page shows (`model_fields_set` says which were)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: NonEmpty
    status: Annotated[Literal["candidate", "dropped"], Field(description='"candidate" or "dropped"')]
    slot: Annotated[
        Annotated[int, Strict(), Field(ge=0, description="a whole number of 0 or more")] | None, NotNull
    ] = None
    kind: Text = ""
    question: Text = ""  # a dropped line's may be empty; a candidate's the page requires
    relevant: Grades = Field(default_factory=dict)
    passages: Objects = Field(default_factory=list)
    reference: Annotated[Text | None, Field(description="a string or null")] = None
    nuggets: Nuggets = Field(default_factory=list)
    answerable: Flag = True
    provenance: Object = Field(default_factory=dict)

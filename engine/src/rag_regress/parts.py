"""The one import path for a part a package of its own adds to the engine (docs/judges.md, "A
judge of your own"): what a judge returns and is built from. The team's retriever and generator
import theirs from api.py.

A judge is one module, registered under the entry-point group `rag_regress.judges`
(`name = "module"`), declaring `build(settings, config_path) -> Judge`, `VERSION`, and, when
it has settings of its own, `Settings`: a pydantic model of its table [judge.NAME], whose
validated value `build` reads as `settings.options` and every report records in the judge's
identity.
"""

from __future__ import annotations

from .answers.judges import Item, Judge, Verdict
from .answers.settings import JudgeSettings

__all__ = ["Item", "Judge", "JudgeSettings", "Verdict"]

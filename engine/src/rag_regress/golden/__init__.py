"""The golden set's lifecycle: generate candidates, grade them, merge judgments, pool unjudged
documents. Candidate questions come from the corpus (generate), a person grades them and the
documents other retrievers surface in a self-contained HTML page (page), the downloaded
judgments go back into golden.jsonl (add-judgments), and pooling lists what is still unjudged
(pool); the file formats they share are described in each module."""

from typing import Literal

# How add-judgments settles a conflict (`--on-conflict`): here, so the command line can offer
# the choices without importing the merge.
Resolve = Literal["keep", "replace", "max", "min"]
RESOLVE: tuple[Resolve, ...] = ("keep", "replace", "max", "min")

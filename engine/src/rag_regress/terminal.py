"""Whether a person is watching the command.

One test shared by the run's progress bars (render/progress.py) and the model loaders' own bars
(retrieval/retrievers/dense.py). It imports nothing of the engine, so any layer may ask.
"""

from __future__ import annotations

import sys


def interactive() -> bool:
    """True when a person is watching: stdout and stderr are both terminals."""
    return sys.stdout.isatty() and sys.stderr.isatty()

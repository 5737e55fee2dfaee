"""Inputs that must not change while a run reads them.

The system under test runs in the same process tree as the evaluation and may write files; a
corpus, golden set or eval.toml rewritten halfway through a run would give numbers that
describe neither version. `fingerprint` hashes every input before the run; `check_unchanged`
hashes them again after the team's code has run and before anything is written: a file that
changed (or appeared, or went) is exit 2 naming it, and nothing is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from ..errors import EvalInputError

CHUNK = 1 << 20


def _digest(path: Path) -> str | None:
    """sha256 of the file's bytes; None when there is no such regular file (a pipe or a device
    is never opened: reading one could wait forever)."""
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            digest = hashlib.sha256()
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
            return digest.hexdigest()
    except OSError:  # missing, a folder, unreadable: the run reports it in its own words
        return None


def fingerprint(named: Mapping[Path, str]) -> dict[Path, tuple[str, str | None]]:
    """Each input (path -> its name for a message) with its name and current sha256."""
    return {path: (name, _digest(path)) for path, name in named.items()}


def check_unchanged(before: Mapping[Path, tuple[str, str | None]]) -> None:
    """Refuse (exit 2) when any input's bytes differ from `before` (fingerprint's result)."""
    for path, (name, digest) in before.items():
        now = _digest(path)
        if now != digest:
            state = "was removed" if now is None else "appeared" if digest is None else "changed"
            raise EvalInputError(
                path,
                f"{name} {state} while the run was evaluating (sha256 "
                f"{(digest or 'none')[:12]} before, {(now or 'none')[:12]} after): the numbers "
                "would describe neither version, so nothing was written",
                "nothing in the system under test may write the evaluation's inputs: find what "
                "wrote it (git diff shows it), restore it and run again",
            )

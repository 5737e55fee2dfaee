"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TEXT_MODE = {"encoding": "utf-8", "newline": "\n"}


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` in one step: a crash or a concurrent run leaves either
    the old file or the new one, never a truncated mix (temporary file + fsync + os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        binary = isinstance(text, bytes)
        with os.fdopen(handle, "wb" if binary else "w", **({} if binary else TEXT_MODE)) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

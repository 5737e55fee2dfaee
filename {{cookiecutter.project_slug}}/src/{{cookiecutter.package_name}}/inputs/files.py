"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _default_mode() -> int:
    """The mode a plain `open()` would give (0o666 minus the umask): mkstemp's private 0o600
    would otherwise leave reports and baselines unreadable to the rest of the team and CI."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` in one step: a crash or a concurrent run leaves either
    the old file or the new one, never a truncated mix (temporary file + fsync + os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        binary = isinstance(text, bytes)
        encoding, newline = (None, None) if binary else ("utf-8", "\n")  # text: UTF-8, \n line ends
        with os.fdopen(handle, "wb" if binary else "w", encoding=encoding, newline=newline) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, _default_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

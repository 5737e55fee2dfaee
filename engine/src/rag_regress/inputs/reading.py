"""Reading a data file safely: only a regular file, never more than a stated size, and JSON
read strictly.

Every file the tool reads as data (corpus, golden set, holdout, judge labels, baseline and
run reports; for interop/'s qrels and runs, the verdict cache and eval.toml it is there to
call too) goes through `read_data`, which refuses, with EvalInputError (exit 2) naming the
file and the fix, before reading a byte:

  a directory, a named pipe (FIFO), a device such as /dev/zero, a socket: reading one
      would fail, block forever or never end;
  a symlink loop (a link that leads back to itself);
  a file larger than its limit (below), checked on the size the file system reports and
      again while reading, so a file that grows while it is read is refused too.

Limits, in bytes. A file is parsed whole in memory, where Python objects take several
times the bytes of their JSON text; the limits keep the largest accepted input within the
memory of a CI machine (7 GB on a standard GitHub-hosted runner):

  CORPUS_LIMIT     1 GiB    the corpus (`[data] corpus`), and qrels and runs in interop/
  QUESTIONS_LIMIT  256 MiB  the golden set, the holdout, the judge labels
  REPORT_LIMIT     512 MiB  a baseline or run report (a run report at depth 1,000 holds
                            every retrieved id and score: about 40 MB per 1,000 questions)
  CACHE_LIMIT      256 MiB  the verdict cache
  CONFIG_LIMIT     1 MiB    eval.toml (a few KB in practice)

Strict JSON (`parse_json`): a key given twice in one object is refused (the standard
reader keeps the last value without a word, so an edited line could silently mean
something else); so are NaN and Infinity (not JSON, and they never compare as a
regression), numbers too long to convert, and nesting deeper than the interpreter's
recursion limit (about a thousand levels; no input of this tool nests more than five).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from ..errors import EvalInputError

MIB = 1 << 20
CORPUS_LIMIT = 1024 * MIB
QUESTIONS_LIMIT = 256 * MIB
REPORT_LIMIT = 512 * MIB
CACHE_LIMIT = 256 * MIB
CONFIG_LIMIT = 1 * MIB

# Open without blocking: opening a FIFO for reading otherwise waits for a writer forever.
# A regular file ignores the flag. (Windows has neither the flag nor FIFOs.)
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def size_text(size: int) -> str:
    """A byte count as people read it: 512 MiB, 1 GiB, 1.5 GiB, 300 bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


def _not_regular(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a file: reading it would wait for a writer"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file: reading it may never end"
    if stat.S_ISSOCK(mode):
        return "a socket, not a file"
    return "not a regular file"


def read_data(path: Path, what: str, *, limit: int, missing_fix: str = "check the path") -> bytes:
    """The bytes of the data file `path` (the `what`, e.g. "corpus", in messages).

    Refuses (EvalInputError) what is not a regular file, a symlink loop, and a file larger
    than `limit` bytes (see the module docstring); `missing_fix` is the fix printed when
    the file does not exist.
    """
    try:
        handle = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise EvalInputError(path, f"the {what} file does not exist", missing_fix) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise EvalInputError(
                path,
                f"the {what} path is a symlink loop (a link that leads back to itself)",
                "point it at the real file (`ls -l` shows where each link leads)",
            ) from None
        if error.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing only
            raise EvalInputError(
                path, f"the {what} path is not a regular file", "point it at a file"
            ) from None
        raise EvalInputError(path, f"cannot read the {what}: {error.strerror}", "check the path") from None
    info = os.fstat(handle)  # of what was opened: no window to swap the file after the check
    kind = _not_regular(info.st_mode)
    if kind is not None:
        os.close(handle)
        raise EvalInputError(path, f"the {what} path is {kind}", f"point it at the {what} file")
    with os.fdopen(handle, "rb") as file:
        if info.st_size > limit:
            raise _too_large(path, what, limit)
        try:
            data = file.read(limit + 1)  # one byte more than allowed: a file that grew is caught
        except OSError as error:
            raise EvalInputError(
                path, f"cannot read the {what}: {error.strerror}", "check the path"
            ) from None
    if len(data) > limit:
        raise _too_large(path, what, limit)
    return data


def _too_large(path: Path, what: str, limit: int) -> EvalInputError:
    return EvalInputError(
        path,
        f"the {what} file is larger than {size_text(limit)}, the most this tool reads as a {what} "
        "(it is parsed in memory)",
        f"keep the {what} under {size_text(limit)}: split or sample it (`import --sample N` for a "
        "test collection), or check that the path names the right file",
    )


class DuplicateKey(ValueError):
    """A key given twice in one JSON object (`args[0]` is the key)."""


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An `object_pairs_hook` that refuses a key given twice (DuplicateKey) instead of keeping
    the last value without a word."""
    result = dict(pairs)  # built in C: a corpus has an object per document
    if len(result) < len(pairs):
        raise DuplicateKey(_first_repeat(pairs))
    return result


def _first_repeat(pairs: list[tuple[str, Any]]) -> str:
    """The first key of `pairs` that an earlier pair already gave (there is one)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    raise ValueError("no key is given twice")


def no_constant(name: str) -> Any:
    """A `parse_constant` that refuses NaN and Infinity."""
    raise ValueError(f"{name} is not a number JSON allows")


# The strict decoder (a key twice, NaN), one for every parse: json.loads with hooks builds a
# new one per call, which costs more than parsing a short line (a corpus has one per document).
STRICT_JSON = json.JSONDecoder(object_pairs_hook=unique_pairs, parse_constant=no_constant)


def parse_json(text: str, path: Path, fix: str, line: int | None = None, prefix: str = "") -> Any:
    """Parse `text` strictly (see the module docstring); EvalInputError naming the file, the
    line (for a JSON Lines file, `line` is the line `text` came from) or the key, and `fix`.
    `prefix`, when given, starts each problem (e.g. "the baseline report is ")."""
    try:
        return STRICT_JSON.decode(text)
    except json.JSONDecodeError as error:
        where = line if line is not None else error.lineno
        problem = f"{prefix}not valid JSON: {error.msg} (column {error.colno})"
        raise EvalInputError(path, problem, fix, where) from None
    except DuplicateKey as error:
        problem = f"{prefix}not usable JSON: key {error.args[0]!r:.80} appears twice in one object"
        raise EvalInputError(
            path, problem, "keep one entry per key (the reader never picks one)", line
        ) from None
    except RecursionError:
        problem = f"{prefix}not usable JSON: nested too deeply (more than about a thousand levels)"
        raise EvalInputError(path, problem, fix, line) from None
    except ValueError as error:  # NaN or Infinity, or a number too long to convert
        problem = f"{prefix}not usable JSON: {str(error)[:120]}"
        raise EvalInputError(path, problem, f"write finite numbers; {fix}", line) from None

"""Writing files so that a reader never sees half of one, and never where an input lives.

`check_output` is asked before a run starts, for every file the run will write: an output
that would replace an input (the corpus, the golden set, eval.toml ...), escape the project,
go through a symlink, or cannot be a file (a folder, a parent that is a file, a symlink loop)
is refused with exit 2 and its fix, before anything is evaluated or written.

`write_atomic` writes through a temporary file next to the target, named `.NAME.XXXX.tmp`
(TEMPORARY: the generated .gitignore covers it, so a killed run never leaves one to commit),
removed on any failure.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import EvalInputError
from ..net.redact import redact, redact_bytes

TEMPORARY = ".*.tmp"  # the name of write_atomic's temporary files, as a .gitignore pattern


def _default_mode() -> int:
    """The mode a plain `open()` would give (0o666 minus the umask): mkstemp's private 0o600
    would otherwise leave reports and baselines unreadable to the rest of the team and CI."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` in one step: a crash or a concurrent run leaves either
    the old file or the new one, never a truncated mix (temporary file + fsync + os.replace).
    A secret the settings name is never written (net/redact.py).
    A file system that refuses (no space, no permission, a folder in the way) is EvalInputError
    naming the path; the temporary file is removed whatever happened. Only a regular file is
    ever replaced: a device, a pipe or a socket at `path` (say `/dev/null`, given on the
    command line) is refused, as os.replace would swap the device node for a file."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise _cannot_write(path, error) from None
    if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise EvalInputError(
            path,
            "this is not a regular file (a folder, a device, a pipe or a socket)",
            "write to a file path",
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise _cannot_write(path, error) from None
    text = redact_bytes(text) if isinstance(text, bytes) else redact(text)  # no secret in any file
    try:
        binary = isinstance(text, bytes)
        encoding, newline = (None, None) if binary else ("utf-8", "\n")  # text: UTF-8, \n line ends
        with os.fdopen(handle, "wb" if binary else "w", encoding=encoding, newline=newline) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, _default_mode())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise _cannot_write(path, error) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _cannot_write(path: Path, error: OSError) -> EvalInputError:
    reason = error.strerror or str(error)
    return EvalInputError(
        path, f"cannot write this file: {reason}", "free space, fix its permissions, or write elsewhere"
    )


def _resolved(path: Path, what: str, fix: str) -> Path:
    """`path` with every symlink followed; a symlink loop is EvalInputError."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as error:  # a loop: RuntimeError before Python 3.13, OSError after
        raise EvalInputError(path, f"the {what}: this path cannot be followed ({error})", fix) from None


def _through_symlink(path: Path, root: Path) -> Path | None:
    """The first symlink on the way from `root` down to `path` (`path` itself included)."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def check_output(
    path: Path,
    what: str,
    inputs: Mapping[Path, str],
    *,
    project: Path | None = None,
    protected: Path | None = None,
) -> None:
    """Refuse (EvalInputError) to write `what` to `path` when that would replace an input or
    could not work. `inputs` maps each input file (resolved) to its name ("the golden set");
    any existing file under `protected` (the project's evals/ folder) counts as one too.

    `project`, for an output configured in eval.toml: `path` must be inside that folder and
    reached without a symlink (lexically, as written: load_config keeps that form). A path
    given on the command line (project None) may point anywhere, never onto an input.
    """
    fix = f"choose another file for the {what}"
    real = _resolved(path, what, fix)
    if project is not None:
        lexical = Path(os.path.normpath(path))
        if not lexical.is_relative_to(project):
            raise EvalInputError(path, f"the {what} must be inside the project folder {project}", fix)
        link = _through_symlink(lexical, project)
        if link is not None:
            raise EvalInputError(
                path,
                f"the {what} would be written through the symlink {link}",
                f"remove the symlink, or {fix}",
            )
    name = inputs.get(real)
    if name is None and protected is not None and real.is_relative_to(protected) and real.exists():
        name = f"a file under {protected.name}/ (inputs live there)"
    if name is not None:
        raise EvalInputError(path, f"the {what} would replace {name}", fix)
    if real.is_dir():
        raise EvalInputError(
            path, f"the {what} is a folder, not a file", f"{fix}, e.g. {path / 'report.json'}"
        )
    parent = real.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise EvalInputError(path, f"the {what} cannot be written: {parent} is a file, not a folder", fix)


def sha256_file(path: Path) -> str:
    """Hex sha256 of the file's bytes (line endings included: .gitattributes pins them).
    A path that is not a regular file (a folder, a pipe, a device) is exit 2, not a hang."""
    if not path.is_file():
        raise EvalInputError(
            path, "this input is not a regular file", "point its setting in eval.toml at a file"
        )
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()

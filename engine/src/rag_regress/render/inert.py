"""Text from the data made inert wherever it is printed.

Questions, ids, tags, answers and reasons reach the terminal or the CI log through `inert`: a
control character shows as an escape, no line can be read as a CI workflow command, and no
secret the settings name shows (net/redact.py). `inert_console` applies it to everything the
command line prints, stdout and stderr, so no message, warning or error can forget it. This
module imports nothing heavy: the command line's first process, which only starts and
watches the one that does the work, runs inside it too.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TextIO

from ..net.redact import redact

# C0 and C1 control characters except tab and newline (ESC starts terminal sequences, CR
# overwrites a line), and the invisible characters that reorder or split text on screen
# (bidirectional overrides and isolates, line and paragraph separators).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def show_controls(text: str) -> str:
    """`text` with every control or invisible character written as its escape (`\\x1b`,
    `\\x0d`, `\\u202e`): data shows as what it holds and cannot move the cursor, overwrite a
    line or reorder what a reader sees. Tabs and newlines stay; each medium decides what a
    newline in the data becomes. The first step of every renderer's escaping."""
    return _CONTROL.sub(_escape_control, text)


# A GitHub runner reads a line as a workflow command when, after leading whitespace, it
# starts with `::` (`::error title=x::y` makes an annotation, `::add-mask::`, `::stop-commands::`
# ...); its older `##[command]` form, and Azure's `##vso[`, are read anywhere in a line.
_COMMAND_START = re.compile(r"^(\s*)(?=::)", re.MULTILINE)
_LEGACY_COMMAND = re.compile(r"##(vso)?\[")


def inert(text: str) -> str:
    """`text` safe to print in a terminal or a CI log, whatever the data holds.

    A control or invisible character shows as its escape (`\\x1b`, `\\x0d`, `\\u202e`); a line
    that a CI runner would read as a command is broken with a backslash: `::error::x` prints
    as `\\::error::x`, `##[error]` as `##\\[error]`. Tabs and newlines are kept (the table's
    own); a newline inside the data starts a line that is checked like any other. A secret
    the settings name never shows (net/redact.py). Applying it twice changes nothing more.
    """
    text = show_controls(redact(text))
    text = _COMMAND_START.sub(lambda match: match.group(1) + "\\", text)
    return _LEGACY_COMMAND.sub(lambda match: match.group()[:-1] + "\\[", text)


class InertStream(io.TextIOBase):
    """A text stream that passes what is written to `target` through `inert`, a whole line at
    a time: a command split over two writes (`print("::", "x")` writes three times) is still
    one line to a CI runner. A partial last line waits for its newline or for `close_line`."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        end = self._pending.rfind("\n") + 1
        if end:
            lines, self._pending = self._pending[:end], self._pending[end:]
            self.target.write(inert(lines))
        return len(text)

    def flush(self) -> None:
        # Only whole lines are written before `close_line`: a flushed ":" could become "::x".
        self.target.flush()

    def close_line(self) -> None:
        """Write the partial last line, if any (the stream is being given back)."""
        pending, self._pending = self._pending, ""
        if pending:
            self.target.write(inert(pending))
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only here, as on a real stream
        return self.target.encoding


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under an InertStream (progress bars draw with CR and ESC on purpose)."""
    return stream.target if isinstance(stream, InertStream) else stream


@contextmanager
def inert_console() -> Iterator[None]:
    """Within it, everything printed to stdout and stderr is made inert (see `inert`).
    Also a decorator: the command line's `main` runs inside it."""
    saved = sys.stdout, sys.stderr
    out, err = InertStream(sys.stdout), InertStream(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for stream in (out, err):
            with suppress(OSError, ValueError):  # a closed pipe: nobody is reading any more
                stream.close_line()

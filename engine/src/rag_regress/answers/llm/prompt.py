"""The LLM judge's instructions: the engine's versioned prompt, or a team's own file.

The prompt is the system message of every request; its sha256 (the first 16 hex digits, of
the text with CRLF line ends read as LF) is part of the judge's identity, so a report and
the verdict cache always say which instructions made the verdicts, and the gate refuses a
baseline judged with other ones. The engine's prompt is `prompt_v1.txt` beside this module;
a new wording is a new file and a new judge VERSION, never an edit of the old one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SHIPPED = Path(__file__).with_name("prompt_v1.txt")
LIMIT = 100_000  # bytes: a prompt is instructions, not data


def read_prompt(path: Path | None) -> str:
    """The prompt's text: `path`'s ([judge.llm] prompt) or the engine's. ValueError saying why
    when the file cannot serve as one (missing, not UTF-8, empty, too large)."""
    source = SHIPPED if path is None else path
    try:
        if not source.is_file():
            raise ValueError(f"{source} is not a file")
        raw = source.read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read {source}: {error.strerror or error}") from None
    if len(raw) > LIMIT:
        raise ValueError(f"{source} holds {len(raw):,} bytes; a prompt may hold {LIMIT:,}")
    try:
        text = raw.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError:
        raise ValueError(f"{source} is not UTF-8 text") from None
    if not text.strip():
        raise ValueError(f"{source} is empty")
    return text


def prompt_digest(text: str) -> str:
    """The prompt's entry of the judge identity."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

"""A JSON file of signed entries: what the verdict cache and the system-output cache share.

Both caches must never change a verdict, so an entry is used only when it verifies: it
carries an HMAC-SHA256 signature over its key and value, made with a random secret kept
beside the file (`<file>.key`, readable by its owner only, never committed). An entry edited
by hand, copied under another key, or written on another machine does not verify and is
ignored (the caller counts it as rejected and computes the value again).

Reading never raises for the file's content: a file that is not valid JSON, or not of the
expected `format`, is ignored with a `note` (said in the run's output) and rewritten at the
end of the run. Only a path that cannot be a cache stops the run with exit 2: not a regular
file (a folder, a FIFO, a device) or larger than the limit (reading.py). Saving rewrites the
file atomically, keeping the entries it held plus the ones used or made this run (a caller
may drop held entries it no longer needs, `keep`, and store a few fields of its own beside
them, `header`: the output cache keeps only its most recent systems' entries).

What is signed is what is stored: an entry is signed over the JSON text of [key, value] and
verified over the JSON text of the value read back, which is the same text (a tuple is
stored as a list, and signs as one; text of any kind, a lone surrogate from a model's
reply included, is signed and stored as written). A caller stores only values its reader
accepts back, or the entry would be rejected on every later run.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import EvalInputError
from .files import write_atomic
from .reading import CACHE_LIMIT, read_data


def read_secret(path: Path, what: str) -> bytes:
    """The signing secret at `path`, made on first use (readable by its owner only)."""
    if path.is_file() and not path.is_symlink():
        secret = read_data(path, f"{what} key", limit=4096)
        if len(secret) >= 32:
            return secret
    elif path.exists() or path.is_symlink():
        raise EvalInputError(path, f"the {what} key is not a regular file", "delete it; it is remade")
    secret = secrets.token_bytes(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "wb") as handle:
        handle.write(secret)
    return secret


class SignedFile:
    """Entries `{key: {field: value, "signature": hex}}` under `section` of a JSON document
    `{"format": format, section: {...}}`. Safe to use from several threads at once."""

    def __init__(self, path: Path, *, format: str, section: str, field: str, what: str):
        self.path, self.format, self.section, self.field, self.what = path, format, section, field, what
        self.note = ""  # said once in the run's output when the file was ignored
        self._secret_path = path.with_name(path.name + ".key")
        self._secret: bytes | None = None
        self._stored: dict[str, Any] = {}
        self._used: dict[str, dict[str, Any]] = {}
        self.header: dict[str, Any] = {}  # the document's other fields, as read (`save`'s header)
        self._lock = threading.Lock()
        if not path.exists() and not path.is_symlink():
            return
        raw = read_data(path, what, limit=CACHE_LIMIT)  # a FIFO or a device is exit 2
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # unreadable: start afresh, and say so
            self.note = f"ignored the unreadable {what} {path.name}; it will be rewritten"
            return
        if isinstance(data, dict) and data.get("format") == format and isinstance(data.get(section), dict):
            self._stored = data[section]
            self.header = {key: value for key, value in data.items() if key not in ("format", section)}
        else:
            article = "an" if what[:1] in "aeiou" else "a"
            self.note = f"ignored {path.name}: it is not {article} {what}; it will be rewritten"

    def sign(self, key: str, value: object) -> str:
        """The signature of `value` stored under `key`."""
        with self._lock:
            if self._secret is None:
                self._secret = read_secret(self._secret_path, self.what)
            secret = self._secret
        text = json.dumps([key, value], sort_keys=True, ensure_ascii=False)
        message = text.encode("utf-8", "surrogatepass")  # a lone surrogate from a reply signs too
        return hmac.new(secret, message, hashlib.sha256).hexdigest()

    def lookup(self, key: str) -> tuple[bool, object]:
        """(present, value) of the entry stored under `key`: (False, None) when there is none;
        (True, None) when there is one but it does not verify (not a signed entry, or its
        signature is not the one `sign(key, value)` makes: edited, copied, another machine's)."""
        with self._lock:
            if key not in self._stored:
                return False, None
            entry = self._stored[key]
        if not isinstance(entry, dict) or not isinstance(entry.get("signature"), str):
            return True, None
        value = entry.get(self.field)
        if not hmac.compare_digest(entry["signature"], self.sign(key, value)):
            return True, None
        return True, value

    def keep(self, key: str) -> None:
        """Keep the stored entry under `key` (it verified and was used)."""
        with self._lock:
            self._used[key] = self._stored[key]

    def used(self, key: str) -> bool:
        with self._lock:
            return key in self._used

    def put(self, key: str, value: object) -> None:
        """Store `value` under `key`, signed."""
        entry = {self.field: value, "signature": self.sign(key, value)}
        with self._lock:
            self._used[key] = entry

    def save(
        self, keep: Callable[[str], bool] | None = None, header: Mapping[str, Any] | None = None
    ) -> None:
        """Rewrite the file atomically: what it held (only the keys `keep` accepts, when given)
        plus what this run used or made, and `header`'s fields beside them."""
        with self._lock:
            kept = {
                key: entry
                for key, entry in self._stored.items()
                if isinstance(entry, dict) and (keep is None or keep(key))
            }
            entries = dict(sorted({**kept, **self._used}.items()))
            document = {"format": self.format, **(header or {}), self.section: entries}
        text = json.dumps(document, indent=1, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: escaped, it reads back as the same text
            text = json.dumps(document, indent=1)
        write_atomic(self.path, text + "\n")

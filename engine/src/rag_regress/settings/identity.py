"""The identity of the system under test, as the output cache ([run] output_cache) keys it.

  code      a hash of the package's source: every .py, .txt, .toml and .json file under
            src/<package>/ (the team's retriever.py and generator.py, the shipped
            retrievers and text helpers they build on, and the engine). dispatch.py computes it
            (calling/outputs.py: code_digest) when it imports the team's files; tests
            pass their own.
  settings  [retriever], [generation] and [tokenizer] as read, [retrieval] depth, and the
            corpus file's hash (the system is built from the corpus).
  version   ("version" mode only) `[run] system_version`, the string the team bumps when
            what it calls changed outside this package: a remote service, a model it
            downloads, a library. "code" mode cannot see those.

Any change to any part is another identity: nothing cached under the old one is used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .config import Config


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def system_identity(config: Config, code: str) -> dict[str, Any] | None:
    """The identity the output cache keys by; None when the cache is off (mode "off", or a
    system whose code is unknown: a cache that cannot see a change must not be used)."""
    mode = config.run.output_cache
    if mode == "off" or not code:
        return None
    identity: dict[str, Any] = {
        "code": code,
        "retriever": config.retriever,
        "generation": config.generation,
        "tokenizer": vars(config.tokenizer).copy(),
        "depth": config.depth,
        "corpus": _file_digest(config.corpus),
    }
    if mode == "version":
        identity["version"] = config.run.system_version
    return identity

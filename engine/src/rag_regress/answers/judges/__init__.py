"""Faithfulness judges: is a claim supported by the contexts the answer used?

One small protocol; backends chosen by `backend` in the [judge] table of eval.toml and found by
entry point (group `rag_regress.judges`), the built-in ones being:

  lexical  content-word coverage of the best window; no model, no torch (judges/lexical.py)
  nli      a local sequence-classification entailment model (judges/nli.py)
  llm      any OpenAI-compatible chat-completions endpoint (answers/llm/)

Each scores a claim against one- and two-sentence windows of the contexts and keeps the best.
The narrow checks (judges/findings.py: numbers, names, polarity, hedges...) then read the claim
against that window; each reports a finding beside the backend's verdict, and only the findings
[judge] fail_on names fail a claim. A claim copied from its context, word for word
(claims.copied), is always supported by the backends that score windows (settle). A backend
that cannot run stops with a clear error (exit 2): there is never a silent fallback to
another judge, because a different judge means different numbers.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import EvalInputError


@dataclass(frozen=True)
class Verdict:
    supported: bool
    score: float  # the best window's score (coverage, entailment or the votes' share)
    window: str  # the window the verdict rests on ("" when there was none)
    reason: str  # why it is unsupported ("" when supported)
    findings: tuple[str, ...] = ()  # each narrow check's finding, "name: message", failing or not


# Each built-in judge's version: bumped whenever its verdict on any claim may change. Reports
# record it (with the digest of the rules it was measured with), and the gate refuses a
# baseline judged by another version. A test pins RULES_DIGEST to these versions, so a change
# to a judge's rules cannot ship without a new version (and a line in CHANGELOG.md).
JUDGE_VERSIONS = {"lexical": "2.2", "nli": "2.1"}
# rules_digest(name) of the rules each version names
RULES_DIGEST = {"lexical": "6007366b4514675c", "nli": "f8ed1eb738e01c89"}
# The module of each built-in backend: a backend's rules are the shared files of judges/ and
# text/ and its own module, never another backend's, so adding a backend changes no other.
BUILTIN = {"lexical": "rag_regress.answers.judges.lexical", "nli": "rag_regress.answers.judges.nli"}
ENTRY_POINTS = "rag_regress.judges"  # the group a package registers a judge backend under
_RULES = (Path(__file__).parent, Path(__file__).parents[2] / "text")  # judges/ and text/


def rules_digest(name: str) -> str:
    """sha256 (first 16 hex digits) of the rules of built-in judge `name`: every .py and .toml
    file under answers/judges/ and text/ (names and bytes), less the other backends' modules."""
    others = {module.rsplit(".", 1)[1] + ".py" for key, module in BUILTIN.items() if key != name}
    digest = hashlib.sha256()
    for folder in _RULES:
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".py", ".toml") or "__pycache__" in path.parts or path.name in others:
                continue
            if folder.name == "judges" and path.parent != folder:
                continue  # a backend's own folder of helpers belongs to that backend only
            digest.update(f"{folder.name}/{path.relative_to(folder).as_posix()}".encode() + b"\0")
            text = path.read_bytes().replace(b"\r\n", b"\n")
            digest.update(re.sub(rb"(?m)^RULES_DIGEST = .*$", b"", text) + b"\0")  # not itself
    return digest.hexdigest()[:16]


def versioned(name: str) -> dict[str, Any]:
    """The identity entries a judge records: its name, version and rules' digest. A backend a
    package registers declares `VERSION` in its module (its rules are that package's)."""
    if name in BUILTIN:
        return {"name": name, "version": JUDGE_VERSIONS[name], "rules": rules_digest(name)}
    module = backends().get(name)
    try:
        version = getattr(importlib.import_module(module), "VERSION", None) if module else None
    except ImportError:
        version = None  # building the judge says what is missing
    return {"name": name, "version": version, "rules": None}


def backends() -> dict[str, str]:
    """Every judge backend by [judge] backend name: the built-in ones, and any an installed
    package registers under the entry-point group `rag_regress.judges` ("name = module", the
    module holding `build(settings, config_path) -> Judge`)."""
    found = dict(BUILTIN)
    for point in importlib.metadata.entry_points(group=ENTRY_POINTS):
        found.setdefault(point.name, point.value)
    return found


# One thing to judge: a claim and the contexts (texts) the answer used.
Item = tuple[str, tuple[str, ...]]


class Judge(Protocol):
    identity: dict[str, Any]  # {"name", "version", "rules", "model", "revision", "threshold"}: in reports

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        """One verdict per item, in order. Batch the work: this is called once per run."""
        ...


def judged_names(names: Sequence[str]) -> dict[str, list[str]]:
    """The identity's entry for [judge] names: none while there are none."""
    return {"names": sorted(names)} if names else {}


def settle(
    claim: str,
    scored: list[tuple[float, str]],
    threshold: float,
    context: str,
    fail_on: Sequence[str],
    names: Sequence[str] = (),
) -> Verdict:
    """The verdict on a claim from its windows' scores, shared by the backends that score
    windows: the best window (highest score; among equals the one sharing most of the claim's
    words, then the shorter), the findings of the narrow checks against it (`context`, all the
    answer's contexts, is where numbers and names are looked up; `names`, [judge] names, any
    context may use), and the threshold. Supported when the score reaches the threshold and no
    finding `fail_on` names is found. A claim copied from a window (its words,
    claims.copied) is supported, whatever its scores."""
    from .claims import copied_from
    from .findings import findings
    from .lexical import coverage

    if not scored:
        return Verdict(False, 0.0, "", "no context to check it against")
    copy = copied_from(claim, [window for _, window in scored])
    if copy is not None:
        return Verdict(True, 1.0, copy, "")
    score, window = max(scored, key=lambda pair: (pair[0], coverage(claim, pair[1]), -len(pair[1])))
    found = findings(claim, window, context, names)
    failing = [f for f in found if f.name in fail_on]
    shown = tuple(f"{f.name}: {f.message}" for f in found)
    if score < threshold:
        why = f"best support {score:.2f} is below the threshold {threshold:g}"
        return Verdict(False, score, window, why, shown)
    if failing:
        return Verdict(False, score, window, failing[0].message, shown)
    return Verdict(True, score, window, "", shown)


def build_judge(settings: Any, config_path: Any) -> Judge:
    """The judge named by [judge] backend (see `backends`). EvalInputError if its module, or a
    library it needs, is not installed: never a silent fallback to another judge."""
    module_name = backends().get(settings.backend)
    if module_name is None:
        raise EvalInputError(
            config_path,
            f"[judge] backend = {settings.backend!r} is no judge installed here",
            f"use one of: {', '.join(sorted(backends()))}, or install the package that provides it",
            settings.line,
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise EvalInputError(
            config_path,
            f"[judge] backend = {settings.backend!r} needs {error.name!r}, which is not installed",
            f"install what it needs, e.g. the engine's extra: pip install 'rag-regress[{settings.backend}]'",
            settings.line,
        ) from None
    judge: Judge = module.build(settings, config_path)  # each backend's build() returns its Judge
    return judge

"""Faithfulness judges: is a claim supported by the contexts the answer used?

One small protocol, two backends, chosen by `backend` in the [judge] table of eval.toml:

  lexical  content-word coverage of the best window; no model, no torch (judges/lexical.py)
  nli      an NLI cross-encoder via sentence-transformers (judges/nli.py, when chosen)

Both score a claim against one- and two-sentence windows of each context, keep the best
window, and then apply the shared guard (judges/guard.py), which compares the claim's structure
with the window's: numbers and units, dates, names, negation and antonyms, quantifiers,
modality, and who does what to whom. A claim copied from its context is always supported.
A backend that cannot run stops with a clear error (exit 2): there is never a silent
fallback to another judge, because a different judge means different numbers.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...errors import EvalInputError


@dataclass(frozen=True)
class Verdict:
    supported: bool
    score: float  # the best window's score (coverage or entailment), 0 when the guard rejects
    window: str  # the window the verdict rests on ("" when there was none)
    reason: str  # why it is unsupported ("" when supported)


# Each built-in judge's version: bumped whenever its verdict on any claim may change. Reports
# record it (with the digest of the rules it was measured with), and the gate refuses a
# baseline judged by another version. A test pins RULES_DIGEST to these versions, so a change
# to a judge's rules cannot ship without a new version (and a line in CHANGELOG.md).
JUDGE_VERSIONS = {"lexical": "1.0", "nli": "1.0"}
# rules_digest(name) of the rules each version names
RULES_DIGEST = {"lexical": "481b83505f6a8d0c", "nli": "4124afc98ff5e9cd"}
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


_TRIED = 5  # windows a claim is checked against, best first: enough for the sentence it came from

# One thing to judge: a claim and the contexts (texts) the answer used.
Item = tuple[str, tuple[str, ...]]


class Judge(Protocol):
    identity: dict[str, Any]  # {"name", "version", "rules", "model", "revision", "threshold"}: in reports

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        """One verdict per item, in order. Batch the work: this is called once per run."""
        ...


def judged_names(names: Sequence[str], tiers: Sequence[str] = ()) -> dict[str, list[str]]:
    """The identity's entries for [judge] names and tiers: none while there are none, so a
    report made without the settings records the judge as it always has. Tiers keep their
    order, which is what they say."""
    return ({"names": sorted(names)} if names else {}) | ({"tiers": list(tiers)} if tiers else {})


def decide(
    claim: str,
    scored: list[tuple[float, str]],
    threshold: float,
    check: Callable[[str, str], str | None] | None = None,
    context: str = "",
    names: Sequence[str] = (),
    tiers: Sequence[str] = (),
) -> Verdict:
    """Pick the best window (highest score; among equals, the one sharing most words with
    the claim, then the shorter), apply the guard (and a backend's own `check`, if any;
    `context`, all the answer's contexts, is where the guard looks up names and dates;
    `names`, [judge] names, are names any context may use; `tiers`, [judge] tiers, what
    "the Team plan and above" reaches), compare with the threshold.
    Shared by every backend, so they differ only in how they score a window."""
    from .guard import ABSENT, copied, guard
    from .lexical import coverage

    if not scored:
        return Verdict(False, 0.0, "", "no context to check it against")
    if not context or copied(claim, context):  # a copied sentence is supported, by any judge
        for _, window in sorted(scored, key=lambda pair: len(pair[1])):
            if copied(claim, window):
                return Verdict(True, 1.0, window, "")
    ranked = sorted(scored, key=lambda pair: (pair[0], coverage(claim, pair[1]), -len(pair[1])), reverse=True)
    score, window = ranked[0]
    if score < threshold:
        return Verdict(False, score, window, f"best support {score:.2f} is below the threshold {threshold:g}")
    first = None
    for score, window in ranked[:_TRIED]:  # the best window the guard accepts, if one reaches the threshold
        if score < threshold:
            break
        problem = guard(claim, window, context, names, tiers) or (check(claim, window) if check else None)
        if not problem:
            tied = _tied(claim, ranked, (score, window), context, check, names, tiers)
            return tied or Verdict(True, score, window, "")
        first = first or Verdict(False, 0.0, window, problem)
        if ABSENT not in problem:  # a window that contradicts the claim settles it
            break
    assert first is not None  # the best window reached the threshold, so it was tried
    return first


def _tied(
    claim: str,
    ranked: list[tuple[float, str]],
    accepted: tuple[float, str],
    context: str,
    check: Any,
    names: Sequence[str],
    tiers: Sequence[str],
) -> Verdict | None:
    """A window that scores exactly as well as the accepted one (and shares as much of the
    claim) and contradicts the claim: two windows equally good, one of them against it, do not
    support it ("Several timers can run at once" matches "you can edit ... while the timer is
    running" as well as "Only one timer can run at a time")."""
    from .guard import ABSENT, guard
    from .lexical import coverage

    level = (accepted[0], coverage(claim, accepted[1]))
    for score, window in ranked[:_TRIED]:
        if window == accepted[1] or (score, coverage(claim, window)) != level:
            continue
        problem = guard(claim, window, context, names, tiers) or (check(claim, window) if check else None)
        if problem and ABSENT not in problem:
            return Verdict(False, 0.0, window, problem)
    return None


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

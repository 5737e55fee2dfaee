"""`rag-regress migrate`: bring a project's own files up to this release's formats.

What each file's format is, and how it is told:

  eval.toml      format 1 has a [system] table naming the team's factories; a file without
                 one is format 0 (a project made before rag-regress 1.0.0, whose command
                 found retriever.py and generator.py in its own package). Migrated: the
                 [system] table is written above the first table, naming the package under
                 src/ beside eval.toml that holds both files; every other byte stays.
                 Format 2 (rag-regress 2.0) has no [judge] tiers, which the judge no longer
                 reads: the key is removed, with its comment. Format 3 (after rag-regress 2.7)
                 keeps the llm judge's settings in its own table, [judge.llm]: they are
                 moved there from [judge], each with its comment, in their order (`model`
                 too where it was the llm judge's: answers/llm/settings.py).
  baseline       the report's own "version" (inputs/reports.py). A baseline older than
                 format 3 records no engine and no judge version, so no migration can say
                 which judge made it: migrate says so and leaves it; `baseline` remakes it.
  golden set,    JSON Lines whose format has not changed since the first release (format 1,
  labels         implied): nothing to do.
  retriever.py,  before 1.0.0 they sat inside the engine's copy and imported it relatively
  generator.py   (`from .api import Hit`, `from .retrieval.retrievers import bm25`); those
                 imports become imports of the library (`from rag_regress.api import Hit`).

Every change is shown as a unified diff first; `--dry-run` stops there. The files are then
written atomically (each whole or not at all). A second run finds nothing to do.
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..answers.llm.settings import moved_to_llm_table
from ..errors import EvalInputError, ExitCode
from ..inputs.files import write_atomic
from ..inputs.reports import VERSION as REPORT_VERSION

TABLE_HEADER = re.compile(r"^\s*\[", re.MULTILINE)
ENGINE_ROOT = Path(__file__).resolve().parents[1]
# `from .api import`, `from .retrieval.retrievers import`: a relative import of an engine module.
RELATIVE = re.compile(r"^(\s*from )\.([A-Za-z_][\w.]*)( import )", re.MULTILINE)


@dataclass(frozen=True)
class Change:
    path: Path
    before: str
    after: str

    def diff(self) -> str:
        name = self.path.name
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True), name, name
        )
        return "".join(lines)


def _package_of(folder: Path, config: Path) -> str:
    """The one package under src/ (or beside eval.toml) holding retriever.py and generator.py."""
    found = sorted(
        {
            path.parent.name
            for root in (folder / "src", folder)
            if root.is_dir()
            for path in root.glob("*/retriever.py")
            if (path.parent / "generator.py").is_file()
        }
    )
    if len(found) != 1:
        what = "no package" if not found else f"{len(found)} packages ({', '.join(found)})"
        raise EvalInputError(
            config,
            f"eval.toml has no [system] table and {what} under src/ holds retriever.py and generator.py",
            'add it by hand: [system] retriever = "pkg.retriever:build_retriever", '
            'generator = "pkg.generator:build_generator"',
        )
    return found[0]


def migrate_config(path: Path) -> Change | None:
    """The change that brings eval.toml to format 3, or None when it is there already."""
    try:
        text = path.read_text(encoding="utf-8")
        tables = tomllib.loads(text)
    except FileNotFoundError:
        raise EvalInputError(
            path, "no such file", "run from the project folder, or pass --config PATH"
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise EvalInputError(path, f"cannot read it: {error}", "fix the file, then migrate again") from None
    after = text if "system" in tables else _with_system(text, path)
    if "tiers" in tables.get("judge", {}):
        after = _without_tiers(after)
    judge = tables.get("judge")
    moved = moved_to_llm_table(judge) if isinstance(judge, dict) else []
    if moved:
        after = _llm_table(after, moved, path)
    return None if after == text else Change(path, text, after)


def _llm_table(text: str, moved: list[str], path: Path) -> str:
    """eval.toml with the [judge] lines of the keys `moved` in [judge.llm], each line whole (its
    comment with it) and in its order: at the end of [judge.llm]'s keys, or in a [judge.llm]
    made right after [judge]'s last key, so the comments above the next table stay above it.
    Every other byte stays; a file this cannot do that for is named, to be moved by hand."""
    lines = text.splitlines(keepends=True)
    headers = [n for n, line in enumerate(lines) if TABLE_HEADER.match(line)]

    def table(name: str) -> tuple[int, int] | None:  # (header line, line after the table)
        found = [n for n in headers if re.match(rf"\s*\[\s*{re.escape(name)}\s*\]", lines[n])]
        if not found:
            return None
        return found[0], next((n for n in headers if n > found[0]), len(lines))

    def last_key(start: int, end: int) -> int:
        """The table's last key line, and the indented comment lines that go on from it."""
        last = max(n for n in range(start, end) if lines[n].strip() and not lines[n].lstrip().startswith("#"))
        while last + 1 < end and re.match(r"[ \t]+#", lines[last + 1]):
            last += 1
        return last

    judge, own = table("judge"), table("judge.llm")
    assert judge is not None  # moved_to_llm_table found keys in it
    pattern = re.compile(rf"\s*({'|'.join(map(re.escape, moved))})\s*=")
    taken = [n for n in range(judge[0] + 1, judge[1]) if pattern.match(lines[n])]
    block = [lines[n] if lines[n].endswith("\n") else lines[n] + "\n" for n in taken]
    if own is None:
        at = last_key(*judge) + 1
        block = ["\n", "[judge.llm]\n", *block]
    else:
        at = last_key(*own) + 1
    kept = [(n, line) for n, line in enumerate(lines) if n not in taken]
    after = "".join(line for n, line in kept if n < at) + "".join(block)
    after += "".join(line for n, line in kept if n >= at)
    was = tomllib.loads(text)  # read by migrate_config already: valid TOML
    try:
        read: dict[str, Any] | None = tomllib.loads(after)
    except tomllib.TOMLDecodeError:
        read = None
    judged = dict(was.get("judge", {}))
    expected = {**was, "judge": {k: v for k, v in judged.items() if k not in moved}}
    expected["judge"]["llm"] = {**judged.get("llm", {}), **{k: judged[k] for k in judged if k in moved}}
    if read != expected:  # a value over several lines, or a table written inline
        raise EvalInputError(
            path,
            f"[judge] {', '.join(moved)}: the llm judge's settings cannot be moved to [judge.llm] "
            "line by line in this file",
            "move them under a [judge.llm] table by hand, then check with `rag-regress eval --dry-run`",
        )
    return after


def _without_tiers(text: str) -> str:
    """eval.toml without [judge] tiers (and the comment on its line); every other byte stays."""
    import tomlkit

    document = tomlkit.parse(text)
    judge = document["judge"]
    assert isinstance(judge, tomlkit.items.Table)
    judge.remove("tiers")
    after = tomlkit.dumps(document)
    tomllib.loads(after)
    return after


def _with_system(text: str, path: Path) -> str:
    package = _package_of(path.parent, path)
    block = (
        '[system]                         # the system under test: your two factories ("module:function")\n'
        f'retriever = "{package}.retriever:build_retriever"\n'
        f'generator = "{package}.generator:build_generator"\n\n'
    )
    first = TABLE_HEADER.search(text)
    at = first.start() if first else len(text)
    after = text[:at] + block + text[at:]
    tomllib.loads(after)  # the result must still be TOML; a failure here is a bug, not input
    return after


def _engine_module(dotted: str) -> bool:
    top = dotted.split(".", 1)[0]
    return (ENGINE_ROOT / top).is_dir() or (ENGINE_ROOT / f"{top}.py").is_file()


def migrate_system_file(path: Path) -> Change | None:
    """The change that makes a team file of the previous layout import the library."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # a file migrate did not find is not one it can fix
    after = RELATIVE.sub(lambda m: f"{m[1]}rag_regress.{m[2]}{m[3]}" if _engine_module(m[2]) else m[0], text)
    return Change(path, text, after) if after != text else None


def system_files(config_path: Path) -> list[Path]:
    """retriever.py and generator.py of the one package under src/ (the previous layout)."""
    try:
        package = _package_of(config_path.parent, config_path)
    except EvalInputError:
        return []
    folder = next(
        root / package
        for root in (config_path.parent / "src", config_path.parent)
        if (root / package).is_dir()
    )
    return [folder / "retriever.py", folder / "generator.py"]


def baseline_note(path: Path) -> str | None:
    """What migrate cannot do for the baseline, or None when it is current (or absent)."""
    try:
        version = json.loads(path.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None  # absent or unreadable: the gate says what is wrong with it
    if version == REPORT_VERSION:
        return None
    return (
        f"{path.name} is report format {version!r}; this release writes format {REPORT_VERSION}, which "
        "records the engine and the judge version. No migration can tell which judge made the old "
        "numbers: remake it with `nox -s baseline` (review the diff, then commit it)"
    )


def _baseline_path(config_path: Path) -> Path:
    try:
        data = tomllib.loads(config_path.read_text(encoding="utf-8")).get("data", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    named = data.get("baseline") if isinstance(data, dict) else None
    return config_path.parent / (named if isinstance(named, str) else "evals/baseline.json")


def run_migrate(config_path: Path, dry_run: bool) -> int:
    """Show each change as a diff; write them unless `dry_run`. Exit 0 (done or nothing to do)."""
    baseline = _baseline_path(config_path)
    found = [migrate_config(config_path), *(migrate_system_file(p) for p in system_files(config_path))]
    changes = [change for change in found if change is not None]
    for change in changes:
        print(change.diff(), end="")
    if not changes:
        print(
            "eval.toml, retriever.py and generator.py: already in this release's format; nothing to migrate"
        )
    elif dry_run:
        print(f"\n--dry-run: {len(changes)} file(s) would change; nothing written")
    else:
        for change in changes:
            write_atomic(change.path, change.after)
        print(f"\nmigrated {', '.join(c.path.name for c in changes)}")
        print("check: rag-regress eval (the system as eval.toml's [system] names it)")
    note = baseline_note(baseline)
    if note:
        print(f"note: {note}")
    return ExitCode.OK

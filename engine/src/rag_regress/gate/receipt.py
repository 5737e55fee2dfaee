"""The receipt in every report: exactly which data, settings and code made these numbers.

  sha256     of the corpus, the golden set (and the holdout when there is one) and eval.toml
  git_commit the commit checked out where eval.toml lives, or null (no git, or not a repo)
  engine     {"name": "rag-regress", "version"}: the engine that computed the numbers
  judge      judge, model id and revision when the settings name a judge, else nulls
  versions   Python and the libraries that shape the numbers
  seed, k    the statistics seed and the cutoff

The gate refuses (exit 2) to compare reports whose corpus or golden-set hashes differ: the
numbers would describe two different experiments. `--accept-changed-data` overrides that.
It also refuses a baseline computed by another major version of the engine: a major version
is what changes a metric's definition (check_same_engine).
"""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import EvalInputError
from ..inputs.files import sha256_file
from ..inputs.reports import Report
from ..settings.config import Config

# Compared by the gate: a change here means the baseline measured something else.
DATA_HASHES = ("corpus", "golden")
ENGINE = "rag-regress"
LIBRARIES = ("numpy", "scipy", "scikit-learn", "sentence-transformers", "torch")


def git_commit(folder: Path) -> str | None:
    """The commit checked out at `folder`, or None without git or outside a repository."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def judge_fields(settings: dict[str, Any]) -> dict[str, Any]:
    """Judge name, model id and revision from the report settings' "judge" entry, else nulls.

    The one place a judge's identity enters the receipt: a judge setting that records
    `name`, `model` and `revision` (or `model_revision`) shows up here unchanged.
    """
    judge = settings.get("judge")
    if not isinstance(judge, dict):
        return {"name": None, "model": None, "revision": None}
    return {
        "name": judge.get("name"),
        "model": judge.get("model"),
        "revision": judge.get("revision", judge.get("model_revision")),
    }


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def data_hashes(config: Config) -> dict[str, str]:
    """sha256 of every input file that shapes the numbers."""
    hashes = {"corpus": sha256_file(config.corpus), "golden": sha256_file(config.golden)}
    if config.holdout is not None and config.holdout.exists():
        hashes["holdout"] = sha256_file(config.holdout)
    hashes["config"] = sha256_file(config.path)
    return hashes


def build_receipt(config: Config, settings: dict[str, Any]) -> dict[str, Any]:
    """The receipt stored in every report (see the module docstring)."""
    return {
        "engine": {"name": ENGINE, "version": __version__},
        "sha256": data_hashes(config),
        "git_commit": git_commit(config.path.parent),
        "judge": judge_fields(settings),
        "versions": library_versions(),
        "seed": config.stats.seed,
        "k": config.k,
    }


def check_same_data(baseline: Report, config: Config, baseline_path: Path, *, accept: bool) -> list[str]:
    """Refuse a baseline made from another corpus or golden set; return notes when accepted.

    Raises EvalInputError naming each changed hash (old -> new) unless `accept` is true.
    """
    recorded = baseline.receipt.get("sha256")
    old: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    new = data_hashes(config)
    files = {"corpus": config.corpus, "golden": config.golden}
    changed = [
        f"{name} sha256 {(old.get(name) or 'not recorded')[:12]} -> {new[name][:12]} ({files[name].name})"
        for name in DATA_HASHES
        if old.get(name) != new[name]
    ]
    if not changed:
        return []
    if accept:
        return [f"compared despite changed data (--accept-changed-data): {'; '.join(changed)}"]
    raise EvalInputError(
        baseline_path,
        "the baseline was made from other data: " + "; ".join(changed),
        "if the change is intended, remake the baseline (`nox -s baseline`) and commit it, or "
        "compare anyway with `gate --accept-changed-data` (`nox -s gate -- --accept-changed-data`)",
    )


def _major(version: str) -> str:
    return version.split(".", 1)[0]


def check_same_engine(baseline: Report, baseline_path: Path) -> None:
    """Refuse (exit 2) a baseline whose numbers another major version of the engine computed,
    or that records no engine (made by the engine copied into projects before 1.0.0)."""
    engine = baseline.receipt.get("engine")
    recorded = engine.get("version") if isinstance(engine, dict) else None
    if isinstance(recorded, str) and _major(recorded) == _major(__version__):
        return
    made_by = f"rag-regress {recorded}" if isinstance(recorded, str) else "an engine that records no version"
    raise EvalInputError(
        baseline_path,
        f"the baseline was computed by {made_by}; this is rag-regress {__version__}, whose major "
        "version may define metrics differently",
        "remake the baseline with this engine (`nox -s baseline`, on the commit that bumps the engine "
        "pin) and commit it together with the pin",
    )

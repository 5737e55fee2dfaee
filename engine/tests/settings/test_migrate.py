"""`migrate` upgrades the files a project made by the previous release holds (tests/demo/previous:
its eval.toml, baseline, retriever.py and generator.py, as the template before rag-regress 1.0.0
wrote them for the default answers)."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import rag_regress
from conftest import PROJECT_ROOT, TINY_CONFIG, run_cli, write_project
from rag_regress.settings.config import load_config

PREVIOUS = PROJECT_ROOT / "previous"
PACKAGE = "help_centre_rag_eval"


@pytest.fixture
def old_project(tmp_path: Path) -> Path:
    """A project laid out as the previous release made it: eval.toml, evals/, src/<package>/."""
    shutil.copyfile(PREVIOUS / "eval.toml", tmp_path / "eval.toml")
    (tmp_path / "evals").mkdir()
    shutil.copyfile(PREVIOUS / "baseline.json", tmp_path / "evals" / "baseline.json")
    package = tmp_path / "src" / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in ("retriever.py", "generator.py"):
        shutil.copyfile(PREVIOUS / name, package / name)
    for name in ("corpus.jsonl", "golden.jsonl"):
        shutil.copyfile(PROJECT_ROOT / "evals" / name, tmp_path / "evals" / name)
    return tmp_path / "eval.toml"


@pytest.fixture
def clean_imports() -> Iterator[None]:
    """The old project's package is imported from its src/ by the command: forget it after."""
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def test_dry_run_shows_the_diff_and_writes_nothing(
    old_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_project.read_bytes()
    assert run_cli(["--config", str(old_project), "migrate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f'+retriever = "{PACKAGE}.retriever:build_retriever"' in out and "+[system]" in out
    assert "nothing written" in out
    assert old_project.read_bytes() == before


def test_migrate_writes_system_keeps_every_other_byte_and_is_idempotent(
    old_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_project.read_text(encoding="utf-8")
    assert run_cli(["--config", str(old_project), "migrate"]) == 0
    after = old_project.read_text(encoding="utf-8")
    config = load_config(old_project)
    assert config.system.retriever == f"{PACKAGE}.retriever:build_retriever"
    assert config.system.generator == f"{PACKAGE}.generator:build_generator"
    # [system] above the first table; [judge] tiers gone with its line; every other line stays
    tiers = next(line for line in before.splitlines(keepends=True) if line.startswith("tiers = "))
    kept = before.replace(tiers, "")
    assert after.index("[system]") < after.index("[data]") and "tiers" not in after.split("[judge]")[1]
    added = after.replace(kept[kept.index("[data]") :], "")
    assert kept.startswith(added.split("[system]")[0]) and after.endswith(kept[kept.index("[data]") :])
    assert "judge.tiers" not in json.dumps(config.judge.identity())
    out = capsys.readouterr().out
    assert "baseline.json is report format 2" in out and "nox -s baseline" in out
    assert run_cli(["--config", str(old_project), "migrate"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out
    assert old_project.read_text(encoding="utf-8") == after


def test_a_project_whose_package_cannot_be_found_is_exit_2_naming_the_fix(
    old_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(old_project.parent / "src")
    before = old_project.read_bytes()
    assert run_cli(["--config", str(old_project), "migrate"]) == 2
    err = capsys.readouterr().err
    assert "no [system] table" in err and '[system] retriever = "pkg.retriever:build_retriever"' in err
    assert old_project.read_bytes() == before


def test_the_gate_refuses_the_previous_release_baseline_naming_the_versions(
    old_project: Path, capsys: pytest.CaptureFixture[str], clean_imports: None
) -> None:
    """Migrated settings, old baseline: exit 2 naming what made it and this engine."""
    assert run_cli(["--config", str(old_project), "migrate"]) == 0
    assert run_cli(["--config", str(old_project), "gate"]) == 2
    err = capsys.readouterr().err
    assert (
        "an engine that records no version" in err
        and f"rag-regress {rag_regress.__version__}" in err
        and "nox -s baseline" in err
    )


def test_the_previous_release_system_files_import_the_library_and_run(
    old_project: Path, capsys: pytest.CaptureFixture[str], clean_imports: None
) -> None:
    """Its retriever.py and generator.py imported the engine's copy relatively; migrated, they
    import rag_regress, and the old project evaluates and makes a baseline the gate accepts."""
    package = old_project.parent / "src" / PACKAGE
    assert "from .api import" in (package / "retriever.py").read_text(encoding="utf-8")
    assert run_cli(["--config", str(old_project), "migrate"]) == 0
    out = capsys.readouterr().out
    assert "+from rag_regress.api import" in out and "-from .api import" in out
    for name in ("retriever.py", "generator.py"):
        assert "from ." not in (package / name).read_text(encoding="utf-8"), name
    assert run_cli(["--config", str(old_project), "baseline", "--quiet"]) == 0
    assert run_cli(["--config", str(old_project), "gate", "--quiet"]) == 0


# An eval.toml of rag-regress 2.7: the llm judge's settings in [judge], comments and all.
LLM_IN_JUDGE = """
[judge]
backend = "llm"
base_url = "http://127.0.0.1:8000/v1"  # the team's server
model = "qwen2.5:7b"
votes = 3                              # odd, with temperature above 0
temperature = 0.7
threshold = 0.6
min_kappa = 0.3                        # the judge gates once its kappa reaches this:
                                       # calibrate measures it

# What each model costs (a comment of the table below)
[prices]
"""


def test_migrate_moves_the_llm_judges_settings_to_their_own_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused as written (exit 2 naming migrate), then moved by `migrate` to [judge.llm] with
    their comments, [judge]'s own keys left where they were; the judge reads what was written."""
    system = '[system]\nretriever = "bm25"\ngenerator = "stand-in"\n\n'  # nothing else to migrate
    config = write_project(tmp_path, config=system + TINY_CONFIG + LLM_IN_JUDGE)
    before = config.read_text(encoding="utf-8")
    assert run_cli(["--config", str(config), "eval"]) == 2
    assert "[judge] base_url: the llm judge's settings have their own table" in capsys.readouterr().err

    assert run_cli(["--config", str(config), "migrate"]) == 0
    after = config.read_text(encoding="utf-8")
    judge, own = after.split("[judge]\n", 1)[1].split("[judge.llm]\n", 1)
    kept = ["backend", "threshold", "min_kappa", ""]  # "": min_kappa's comment going on below it
    assert (
        judge.splitlines() == [line for line in LLM_IN_JUDGE.splitlines() if line.split(" ")[0] in kept][1:]
    )
    moved = ["base_url", "model", "votes", "temperature"]
    lines = [line for line in before.splitlines(keepends=True) if line.split(" ", 1)[0] in moved]
    # each line whole, its comment with it, in its order; the next table's comment stays above it
    assert own == "".join(lines) + "\n# What each model costs (a comment of the table below)\n[prices]\n"
    assert after.split("[judge]")[0] == before.split("[judge]")[0]  # nothing else moves

    settings = load_config(config).judge
    assert (settings.threshold, settings.min_kappa) == (0.6, 0.3)
    assert (settings.options.base_url, settings.options.model) == ("http://127.0.0.1:8000/v1", "qwen2.5:7b")
    assert (settings.options.votes, settings.options.temperature) == (3, 0.7)
    assert run_cli(["--config", str(config), "migrate"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out and config.read_text(encoding="utf-8") == after


def test_a_judge_setting_migrate_cannot_move_line_by_line_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = '[system]\nretriever = "bm25"\ngenerator = "stand-in"\n\n'
    judge = '\n[judge]\nbackend = "llm"\nmodel = """\nqwen"""\nbase_url = "http://h/v1"\n'
    config = write_project(tmp_path, config=system + TINY_CONFIG + judge)
    before = config.read_bytes()
    assert run_cli(["--config", str(config), "migrate"]) == 2
    err = capsys.readouterr().err
    assert "cannot be moved to [judge.llm] line by line" in err and "by hand" in err
    assert config.read_bytes() == before

"""A judge a package of its own registers: one module and one entry point, with settings of its
own in [judge.NAME], validated by the module's model, its errors at their line in eval.toml,
its settings in the judge's identity (so the gate refuses a baseline judged with others).

The package is written to a temporary folder and put on sys.path as an installed
distribution would be (a .dist-info with entry_points.txt), so the engine finds it exactly
as it finds a pip-installed one."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import TINY_CONFIG, run_cli, write_project
from rag_regress.answers.judges import backends
from rag_regress.settings.config import load_config

# The whole plug-in: a judge counting the words a claim shares with its best context, with two
# settings of its own.
PLUGIN = """
from pydantic import BaseModel, ConfigDict, Field

from rag_regress.parts import Verdict

VERSION = "0.1"


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_shared: int = Field(default=2, ge=1, le=50, description="words a claim shares with a context")
    ignore_case: bool = True


class SharedWords:
    def __init__(self, identity, settings):
        self.identity, self.settings = identity, settings

    def words(self, text):
        text = text.lower() if self.settings.ignore_case else text
        return {word.strip(".,;:!?") for word in text.split() if len(word) > 3}

    def verdicts(self, items):
        found = []
        for claim, contexts in items:
            shared = max((len(self.words(claim) & self.words(c)) for c in contexts), default=0)
            ok = shared >= self.settings.min_shared
            score = min(1.0, shared / self.settings.min_shared)
            found.append(Verdict(ok, score, "", "" if ok else "few words"))
        return found


def build(settings, config_path):
    return SharedWords(settings.identity(), settings.options)
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The judge `shared_words`, registered under rag_regress.judges by an installed package."""
    site = tmp_path / "site"
    info = site / "shared_words_judge-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "shared_words_judge.py").write_text(PLUGIN, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shared-words-judge\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rag_regress.judges]\nshared_words = shared_words_judge\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield "shared_words"
    sys.modules.pop("shared_words_judge", None)


def project(root: Path, own: str) -> Path:
    """The tiny project judged by the plug-in, with `own` as its [judge.shared_words] table."""
    judge = f'[judge]\nbackend = "shared_words"\n\n[judge.shared_words]\n{own}\n'
    return write_project(root, config=TINY_CONFIG + "\n" + judge)


def report(config: Path) -> dict:
    return json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))


def test_a_judge_a_package_registers_reads_its_own_settings(plugin: str, tmp_path: Path) -> None:
    assert plugin in backends()
    lenient = project(tmp_path / "lenient", "min_shared = 1")
    strict = project(tmp_path / "strict", "min_shared = 50\nignore_case = false")
    assert run_cli(["--config", str(lenient), "eval"]) == 0
    assert run_cli(["--config", str(strict), "eval"]) == 0
    judge = report(lenient)["settings"]["judge"]
    assert (judge["name"], judge["version"]) == ("shared_words", "0.1")
    assert judge["settings"] == {"min_shared": 1, "ignore_case": True}
    assert report(strict)["settings"]["judge"]["settings"] == {"min_shared": 50, "ignore_case": False}
    # its settings decide its verdicts: no answer shares 50 long words with a passage
    assert report(lenient)["aggregate"]["faithfulness"] > 0.5
    assert report(strict)["aggregate"]["faithfulness"] == 0.0
    assert load_config(lenient).judge.options.min_shared == 1


def test_the_findings_its_module_declares_fail_a_sentence_unless_fail_on_is_written(
    plugin: str, tmp_path: Path
) -> None:
    """A judge's default failing findings are its module's FAIL_ON, as the built-in ones'
    are; they are in its identity, and [judge] fail_on still overrides them."""
    module = tmp_path / "site" / "shared_words_judge.py"  # the plugin fixture's package
    module.write_text(PLUGIN + '\nFAIL_ON = ("number", "polarity")\n', encoding="utf-8")
    sys.modules.pop("shared_words_judge", None)
    declared = load_config(project(tmp_path / "declared", "min_shared = 1")).judge
    assert declared.failing() == ("number", "polarity")
    assert declared.identity()["fail_on"] == ["number", "polarity"]
    written = write_project(
        tmp_path / "written",
        config=TINY_CONFIG + '\n[judge]\nbackend = "shared_words"\nfail_on = ["name"]\n',
    )
    assert load_config(written).judge.failing() == ("name",)


def test_its_settings_default_from_its_model(plugin: str, tmp_path: Path) -> None:
    config = write_project(tmp_path, config=TINY_CONFIG + '\n[judge]\nbackend = "shared_words"\n')
    options = load_config(config).judge.options
    assert (options.min_shared, options.ignore_case) == (2, True)


@pytest.mark.parametrize(
    ("own", "problem", "fix"),
    [
        ("min_shard = 3", "judge.shared_words.min_shard: unknown setting", "did you mean 'min_shared'?"),
        (
            "min_shared = 0",
            "judge.shared_words.min_shared: must be a whole number from 1 to 50, got 0",
            "min_shared = 2",
        ),
        ('ignore_case = "maybe"', "judge.shared_words.ignore_case: must be true or false", "= true"),
    ],
)
def test_a_bad_setting_of_its_own_is_named_at_its_line(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], own: str, problem: str, fix: str
) -> None:
    config = project(tmp_path, own)
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    line = config.read_text(encoding="utf-8").splitlines().index(own) + 1
    assert f"eval.toml:{line}: {problem}" in err
    assert "fix: " in err and fix in err.split("fix: ", 1)[1]


def test_a_changed_setting_of_its_own_refuses_the_baseline(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Verdicts of the judge with other settings are other numbers: like another judge's."""
    config = project(tmp_path, "min_shared = 1")
    assert run_cli(["--config", str(config), "baseline"]) == 0
    assert run_cli(["--config", str(config), "gate"]) == 0
    config.write_text(config.read_text(encoding="utf-8").replace("min_shared = 1", "min_shared = 3"))
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"]) == 2
    err = capsys.readouterr().err
    assert "judged by a different judge" in err
    assert "'min_shared': 1" in err and "'min_shared': 3" in err


def test_a_table_for_a_judge_without_settings_of_its_own_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    own = '\n[judge]\nbackend = "lexical"\n\n[judge.lexical]\nx = 1\n'
    config = write_project(tmp_path, config=TINY_CONFIG + own)
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    line = config.read_text(encoding="utf-8").splitlines().index("[judge.lexical]") + 1
    assert f"eval.toml:{line}: [judge.lexical]: the 'lexical' judge declares no settings of its own" in err


def test_a_required_setting_left_out_is_named(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "site" / "shared_words_judge.py").write_text(
        PLUGIN.replace("ignore_case: bool = True", "ignore_case: bool"), encoding="utf-8"
    )
    config = project(tmp_path / "p", "min_shared = 2")
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    assert "judge.shared_words.ignore_case: is required" in err
    assert "add ignore_case = ... under [judge.shared_words]" in err


def test_calibrate_compares_it_with_its_own_settings_or_its_defaults(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`calibrate --compare lexical,shared_words` with lexical configured: the plug-in judges
    with [judge.shared_words] when written, else with its model's defaults."""
    rows = [
        {"id": f"r{n}", "claim": claim, "context": context, "supported": ok, "split": split}
        for n, (claim, context, ok, split) in enumerate(
            [
                ("The kettle holds water safely.", "The kettle holds water safely.", True, "check"),
                ("The filter needs weekly cleaning.", "Clean the filter every week.", True, "check"),
                ("The warranty covers three years.", "The warranty lasts two years.", False, "dev"),
                ("Batteries charge overnight fully.", "Charge batteries fully overnight.", True, "dev"),
            ]
        )
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    compare = ["calibrate", "--labels", str(labels), "--compare", "lexical,shared_words", "--json"]
    for own, accuracy_of_check in (("", 0.5), ("\n[judge.shared_words]\nmin_shared = 1\n", 1.0)):
        config = tmp_path / "eval.toml"
        config.write_text('[judge]\nbackend = "lexical"\n' + own, encoding="utf-8")
        assert run_cli(["--config", str(config), *compare]) == 0
        figures = json.loads(capsys.readouterr().out)["backends"]
        assert set(figures) == {"lexical", "shared_words"}
        # defaults (min_shared 2): the paraphrase shares one long word, "filter", so it is missed
        assert figures["shared_words"]["splits"]["check"]["accuracy"] == accuracy_of_check


def test_the_table_of_another_installed_judge_is_checked_too(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table kept for a judge not configured now is still validated: a typo there is named
    before it could surprise a later `calibrate --compare` or a change of backend."""
    config = write_project(tmp_path, config=TINY_CONFIG + "\n[judge.shared_words]\nmin_shared = 99\n")
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    assert "judge.shared_words.min_shared: must be a whole number from 1 to 50, got 99" in err


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("def build(:\n", "shared_words_judge.py:1: [judge] 'shared_words': its module raised SyntaxError"),
        ("Settings = 42\n", "[judge] 'shared_words': its module's Settings is no model of settings (42)"),
    ],
)
def test_a_judge_module_that_breaks_its_contract_is_exit_2_naming_it(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], module: str, expected: str
) -> None:
    """The judge's module is code the engine does not own: its failure is named where it is,
    never a traceback through the engine."""
    (tmp_path / "site" / "shared_words_judge.py").write_text(module, encoding="utf-8")
    config = write_project(tmp_path / "p", config=TINY_CONFIG + '\n[judge]\nbackend = "shared_words"\n')
    assert run_cli(["--config", str(config), "eval"]) == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ("found[:-1]", "its verdicts() returned 4 verdicts for 5 items"),
        ("found + found[:1]", "its verdicts() returned 6 verdicts for 5 items"),
        ("[True for _ in found]", "its verdicts() returned a bool among its verdicts"),
    ],
)
def test_a_judge_that_returns_other_than_one_verdict_per_item_is_exit_2(
    plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], returned: str, expected: str
) -> None:
    """A verdict read against another sentence would be a wrong number with no error: the
    judge's reply is counted against what was asked before any is used."""
    broken = PLUGIN.replace("        return found\n", f"        return {returned}\n")
    assert broken != PLUGIN
    (tmp_path / "site" / "shared_words_judge.py").write_text(broken, encoding="utf-8")
    config = project(tmp_path / "p", "min_shared = 1")
    assert run_cli(["--config", str(config), "eval"]) == 2
    err = capsys.readouterr().err
    assert f"[judge] backend = 'shared_words': {expected}" in err
    assert "return one rag_regress.parts.Verdict per item, in the order given" in err

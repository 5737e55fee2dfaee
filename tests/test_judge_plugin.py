"""A judge of the team's own in a baked project: one module in its package and one entry-point
line in its pyproject.toml, with two settings of its own in [judge.NAME]. The project's
sessions install the project, so the engine finds the judge; its settings reach the report's
judge identity, and the gate refuses the shipped baseline, judged by another judge, until the
team remakes it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import BAKE_ENV, bake, nox, output, package_of, run, venv_bin

JUDGE = '''"""Our judge: a sentence is supported when it shares enough words with one of its contexts."""

from pydantic import BaseModel, ConfigDict, Field

from rag_regress.parts import JudgeSettings, Verdict

VERSION = "1.0"


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_shared: int = Field(default=3, ge=1, le=50)
    min_word: int = Field(default=4, ge=1, le=20)


class SharedWords:
    def __init__(self, settings: JudgeSettings) -> None:
        self.identity, self.own = settings.identity(), settings.options

    def words(self, text: str) -> set[str]:
        return {w.strip(".,;:!?").lower() for w in text.split() if len(w) >= self.own.min_word}

    def verdicts(self, items):
        found = []
        for claim, contexts in items:
            shared = max((len(self.words(claim) & self.words(c)) for c in contexts), default=0)
            ok = shared >= self.own.min_shared
            score = min(1.0, shared / self.own.min_shared)
            found.append(Verdict(ok, score, "", "" if ok else "too few words"))
        return found


def build(settings: JudgeSettings, config_path) -> SharedWords:
    return SharedWords(settings)
'''


def test_a_team_registers_a_judge_with_settings_of_its_own(tmp_path: Path) -> None:
    project = bake(tmp_path)
    package = package_of(project)
    (project / "src" / package / "shared_words.py").write_text(JUDGE, encoding="utf-8")
    pyproject = project / "pyproject.toml"
    entry = f'\n[project.entry-points."rag_regress.judges"]\nshared_words = "{package}.shared_words"\n'
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + entry, encoding="utf-8")
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert '\nbackend = "lexical"' in text
    text = text.replace('\nbackend = "lexical"', '\nbackend = "shared_words"', 1)
    config.write_text(text + "\n[judge.shared_words]\nmin_shared = 2\nmin_word = 5\n", encoding="utf-8")

    evaluated = nox(project, "eval")
    assert evaluated.returncode == 0, output(evaluated)
    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    judge = report["settings"]["judge"]
    assert (judge["name"], judge["version"]) == ("shared_words", "1.0")
    assert judge["settings"] == {"min_shared": 2, "min_word": 5}
    assert 0 < report["aggregate"]["faithfulness"] <= 1

    rag = str(venv_bin(project, "eval") / "rag-regress")
    refused = run(project, rag, "gate", env=BAKE_ENV)
    assert refused.returncode == 2, output(refused)
    assert "judged by a different judge" in refused.stderr
    assert "'shared_words'" in refused.stderr

    assert run(project, rag, "baseline", env=BAKE_ENV).returncode == 0
    held = run(project, rag, "gate", env=BAKE_ENV)
    assert held.returncode == 0, output(held)

    config.write_text(config.read_text(encoding="utf-8").replace("min_shared = 2", "min_shard = 2"))
    typo = run(project, rag, "eval", env=BAKE_ENV)
    assert typo.returncode == 2, output(typo)
    line = config.read_text(encoding="utf-8").splitlines().index("min_shard = 2") + 1
    assert f"eval.toml:{line}: judge.shared_words.min_shard: unknown setting" in typo.stderr
    assert "did you mean 'min_shared'?" in typo.stderr

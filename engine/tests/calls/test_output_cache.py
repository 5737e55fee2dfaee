"""[run] output_cache: a rerun of an unchanged system makes zero calls and gives the same
report; any change to the system's identity (its code, [retriever] or [generation]
settings, system_version) is a miss; an entry edited by hand or copied to another key is
never used; a corrupt file is ignored with a warning, never a traceback; the parts declared
stochastic and the gate's determinism re-ask always reach the real system."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from team_doubles import counting, with_run

from conftest import TINY_GOLDEN, run_cli

QUESTIONS = len(TINY_GOLDEN)


def cache_file(config: Path) -> Path:
    return config.parent / ".cache" / "outputs.json"


def evaluate(config: Path, code: str = "code-v1") -> tuple[int, dict[str, Any]]:
    """Evaluate with a counting system: (calls it received, the report)."""
    system, log = counting(code=code)
    assert run_cli(["--config", str(config), "eval", "--quiet"], system) == 0
    report = json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))
    return log.calls, report


def same_numbers(first: dict[str, Any], second: dict[str, Any]) -> bool:
    return first["questions"] == second["questions"] and first["aggregate"] == second["aggregate"]


@pytest.fixture
def cached(project: Path) -> Path:
    return with_run(project, 'output_cache = "code"')


def test_a_rerun_of_an_unchanged_system_makes_zero_calls_and_the_same_report(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls, first = evaluate(cached)
    assert calls == 2 * QUESTIONS and first["run"]["system"]["cached"] == 0
    calls, again = evaluate(cached)
    assert calls == 0 and same_numbers(first, again)
    assert again["run"]["system"] == {**again["run"]["system"], "calls": 0, "cached": 2 * QUESTIONS}
    system, _ = counting()
    assert run_cli(["--config", str(cached), "eval"], system) == 0
    assert f"System calls this run: 0; outputs from the cache: {2 * QUESTIONS}" in capsys.readouterr().out


def test_the_cache_is_off_unless_asked(project: Path) -> None:
    evaluate(project)
    calls, _ = evaluate(project)
    assert calls == 2 * QUESTIONS and not cache_file(project).exists()


def test_a_change_to_the_code_hash_is_a_miss(cached: Path) -> None:
    evaluate(cached, code="code-v1")
    calls, _ = evaluate(cached, code="code-v2")
    assert calls == 2 * QUESTIONS


@pytest.mark.parametrize("table", ["[retriever]", "[generation]"])
def test_a_change_to_the_retriever_or_generation_settings_is_a_miss(cached: Path, table: str) -> None:
    """`team_option` is an option of the counting system's own (team_doubles.py)."""
    text = cached.read_text(encoding="utf-8")
    cached.write_text(text.replace(f"{table}\n", f"{table}\nteam_option = 1\n", 1), encoding="utf-8")
    evaluate(cached)
    assert evaluate(cached)[0] == 0
    text = cached.read_text(encoding="utf-8")
    cached.write_text(text.replace("team_option = 1", "team_option = 2"), encoding="utf-8")
    assert evaluate(cached)[0] == 2 * QUESTIONS


def test_version_mode_misses_when_the_version_is_bumped(project: Path) -> None:
    with_run(project, 'output_cache = "version"', 'system_version = "2024-06-01"')
    evaluate(project)
    assert evaluate(project)[0] == 0
    text = project.read_text(encoding="utf-8")
    project.write_text(text.replace('"2024-06-01"', '"2024-06-02"'), encoding="utf-8")
    assert evaluate(project)[0] == 2 * QUESTIONS


def test_version_mode_without_a_version_is_exit_2_with_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_run(project, 'output_cache = "version"')
    line = project.read_text(encoding="utf-8").splitlines().index('output_cache = "version"') + 1
    system, log = counting()
    assert run_cli(["--config", str(project), "eval", "--quiet"], system) == 2
    err = capsys.readouterr().err
    assert f"eval.toml:{line}:" in err and "system_version" in err and log.calls == 0


def test_an_unknown_code_keeps_the_cache_off(cached: Path, capsys: pytest.CaptureFixture[str]) -> None:
    evaluate(cached, code="")
    calls, _ = evaluate(cached, code="")
    assert calls == 2 * QUESTIONS and "output cache is off" in capsys.readouterr().err


def edit_entries(config: Path, change: Any) -> None:
    path = cache_file(config)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data["outputs"])
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_hand_edited_ranking_or_answer_is_not_used(cached: Path) -> None:
    _, first = evaluate(cached)

    def tamper(outputs: dict[str, Any]) -> None:
        for entry in outputs.values():
            output = entry["output"]
            if isinstance(output, list):  # a ranking: another score, or a hit more
                if output:
                    output[0][1] += 1
                else:
                    output.append(["sso-setup", 1.0])
            else:  # an answer: claim something else
                output["text"] = "Everything is supported."

    edit_entries(cached, tamper)
    calls, again = evaluate(cached)
    assert calls == 2 * QUESTIONS and again["run"]["system"]["rejected"] == 2 * QUESTIONS
    assert same_numbers(first, again)


def test_an_entry_copied_to_another_key_is_not_used(cached: Path) -> None:
    _, first = evaluate(cached)

    def swap(outputs: dict[str, Any]) -> None:
        keys = sorted(outputs)
        values = [outputs[key] for key in keys]
        for key, value in zip(keys, values[1:] + values[:1], strict=True):
            outputs[key] = value

    edit_entries(cached, swap)
    calls, again = evaluate(cached)
    assert calls == 2 * QUESTIONS and same_numbers(first, again)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"format": "rag-eval-outputs", "outputs": []}', b"\xff\xfe", b'{"format": 1}'],
    ids=["truncated", "a list", "outputs not an object", "not utf-8", "another format"],
)
def test_a_corrupt_cache_file_is_ignored_with_a_warning_and_rewritten(
    cached: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = cache_file(cached)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    calls, _ = evaluate(cached)
    err = capsys.readouterr().err
    assert calls == 2 * QUESTIONS and "Traceback" not in err and "warning: ignored" in err
    assert evaluate(cached)[0] == 0  # rewritten as a cache


def test_a_corrupt_entry_among_good_ones_is_asked_again(cached: Path) -> None:
    evaluate(cached)

    def break_one(outputs: dict[str, Any]) -> None:
        key = sorted(outputs)[0]
        outputs[key] = {"output": None, "signature": 7}

    edit_entries(cached, break_one)
    assert evaluate(cached)[0] == 1


def test_a_stochastic_generator_bypasses_the_cache_for_answers(cached: Path) -> None:
    text = cached.read_text(encoding="utf-8")
    cached.write_text(
        text.replace("[gate]\n", '[gate]\nstochastic = ["generator"]\nrepeats = 2\n', 1), encoding="utf-8"
    )
    evaluate(cached)
    system, log = counting()
    assert run_cli(["--config", str(cached), "eval", "--quiet"], system) == 0
    assert log.searches == [] and len(log.answers) == 2 * QUESTIONS  # two repeats, each asked afresh


def test_the_gate_s_determinism_re_ask_calls_the_real_system(cached: Path) -> None:
    system, _ = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    system, log = counting()
    assert run_cli(["--config", str(cached), "gate"], system) == 0
    # everything evaluated came from the cache; the determinism check asked the system itself
    questions = sorted(row["question"] for row in TINY_GOLDEN)
    assert sorted(set(log.searches)) == questions and sorted(log.answers) == questions


def test_the_baseline_is_byte_for_byte_the_same_with_a_warm_cache(cached: Path) -> None:
    system, _ = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    cold = (cached.parent / "baseline.json").read_bytes()
    system, log = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    assert log.calls == 0 and (cached.parent / "baseline.json").read_bytes() == cold

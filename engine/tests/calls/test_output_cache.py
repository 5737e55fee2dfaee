"""[run] output_cache: a rerun of an unchanged system makes zero calls and gives the same
report; any change to the system's identity (its code, [retriever] or [generation]
settings, system_version) is a miss; an entry edited by hand or copied to another key is
never used; a corrupt file is ignored with a warning, never a traceback; the parts declared
stochastic and the gate's determinism re-ask always reach the real system, and are never
kept; a gate served wholly from the cache makes no call and says so."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from team_doubles import counting, with_run

from conftest import TINY_GOLDEN, run_cli
from rag_regress.api import Answer, Context
from rag_regress.calling import outputs

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
    cache_file(cached).unlink()  # the system changed: nothing of it is cached
    system, log = counting()
    assert run_cli(["--config", str(cached), "gate"], system) == 0
    # each question asked for the evaluated run, then again by the determinism check, whose
    # answers never come from what the evaluated run has just cached
    questions = sorted(row["question"] for row in TINY_GOLDEN)
    assert sorted(log.answers) == sorted(questions * 2)


def test_a_gate_of_an_unchanged_system_makes_no_call_and_says_so(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What CI does with the cache it keeps: every ranking and answer from the cache, the
    determinism check included (those outputs were recorded from this very system)."""
    system, _ = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    capsys.readouterr()
    system, log = counting()
    assert run_cli(["--config", str(cached), "gate"], system) == 0
    out = capsys.readouterr().out
    assert log.calls == 0
    assert f"Answers: {QUESTIONS} from the output cache, 0 generator calls" in out
    assert "determinism: not checked again: every output of this run came from the output cache" in out
    ran = json.loads((cached.parent / "build" / "report.json").read_text(encoding="utf-8"))["run"]["system"]
    assert (ran["answers_cached"], ran["generator_calls"], ran["calls"]) == (QUESTIONS, 0, 0)


def test_the_console_counts_generator_calls_apart_from_searches(
    cached: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system, _ = counting()
    assert run_cli(["--config", str(cached), "eval"], system) == 0
    out = capsys.readouterr().out
    assert f"System calls this run: {2 * QUESTIONS}; outputs from the cache: 0" in out
    assert f"Answers: 0 from the output cache, {QUESTIONS} generator calls" in out


def test_a_prompt_file_an_option_names_is_part_of_the_system(cached: Path) -> None:
    """[generation] prompt = "prompts/answer.txt": its words change the answers while the
    option stays the same, so an edited prompt is a miss."""
    prompt = cached.parent / "prompts" / "answer.txt"
    prompt.parent.mkdir()
    prompt.write_text("Answer from the passages.\n", encoding="utf-8")
    text = cached.read_text(encoding="utf-8")
    cached.write_text(text.replace("[generation]\n", '[generation]\nteam_option = "prompts/answer.txt"\n', 1))
    evaluate(cached)
    assert evaluate(cached)[0] == 0
    prompt.write_text("Answer from the passages, in French.\n", encoding="utf-8")
    assert evaluate(cached)[0] == 2 * QUESTIONS


def test_another_engine_is_another_system(cached: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped retrievers, the stand-in and the adapters live in the engine, outside the
    team's package: an engine update (a moved pin) never reuses the old engine's outputs."""
    evaluate(cached)
    assert evaluate(cached)[0] == 0
    monkeypatch.setattr(outputs, "engine_digest", lambda: "another engine")
    assert evaluate(cached)[0] == 2 * QUESTIONS


def declare(config: Path, parts: str) -> None:
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[gate]\n", f"[gate]\nstochastic = {parts}\nrepeats = 2\n", 1))


def test_a_stochastic_retriever_never_reads_the_cache(cached: Path) -> None:
    """A stochastic retriever moves the answers too: neither a ranking nor an answer comes
    from the cache, however warm."""
    evaluate(cached)
    declare(cached, '["retriever"]')
    system, log = counting()
    assert run_cli(["--config", str(cached), "eval", "--quiet"], system) == 0
    assert len(log.searches) >= 2 * QUESTIONS and len(log.answers) == 2 * QUESTIONS


def test_a_stochastic_part_never_writes_the_cache(cached: Path) -> None:
    """One draw of a stochastic generator is never kept: once the declaration is removed,
    every answer is asked afresh, none is a stochastic run's."""
    declare(cached, '["generator"]')
    evaluate(cached)
    kept = json.loads(cache_file(cached).read_text(encoding="utf-8"))["outputs"]
    assert len(kept) == QUESTIONS and all(isinstance(entry["output"], list) for entry in kept.values())
    text = cached.read_text(encoding="utf-8")
    cached.write_text(text.replace('stochastic = ["generator"]\nrepeats = 2\n', ""), encoding="utf-8")
    system, log = counting()
    assert run_cli(["--config", str(cached), "eval", "--quiet"], system) == 0
    assert log.searches == [] and len(log.answers) == QUESTIONS


def test_the_file_keeps_the_most_recent_systems_only(cached: Path) -> None:
    """A cache carried from run to run (CI restores it by a prefix of its key) keeps the
    entries of the KEPT_SYSTEMS systems used last, not of every version there ever was."""
    for version in range(outputs.KEPT_SYSTEMS + 2):
        evaluate(cached, code=f"v{version}")
    newest = outputs.KEPT_SYSTEMS + 1
    kept = json.loads(cache_file(cached).read_text(encoding="utf-8"))
    assert len(kept["systems"]) == outputs.KEPT_SYSTEMS
    assert len(kept["outputs"]) == outputs.KEPT_SYSTEMS * 2 * QUESTIONS
    assert evaluate(cached, code=f"v{newest}")[0] == 0
    assert evaluate(cached, code="v2")[0] == 0  # the oldest kept
    assert evaluate(cached, code="v1")[0] == 2 * QUESTIONS  # dropped


def test_every_field_of_an_answer_is_stored() -> None:
    """A field left out would come back as its default: a cached answer checked otherwise
    than the fresh one."""
    assert {field.name for field in fields(Answer)} == set(outputs.ANSWER_FIELDS)
    answer = Answer(
        "Refunds take 10 days [1]. \ud83d",
        [Context("refunds", "Refunds take 10 days.")],
        citations=False,
        notes=("cut at max_tokens (512)",),
    )
    assert outputs.decode_answer(json.loads(json.dumps(outputs.encode_answer(answer)))) == answer


def test_the_baseline_is_byte_for_byte_the_same_with_a_warm_cache(cached: Path) -> None:
    system, _ = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    cold = (cached.parent / "baseline.json").read_bytes()
    system, log = counting()
    assert run_cli(["--config", str(cached), "baseline", "--quiet"], system) == 0
    assert log.calls == 0 and (cached.parent / "baseline.json").read_bytes() == cold

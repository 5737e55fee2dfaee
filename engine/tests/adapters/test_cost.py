"""What a run costs ([prices], the report's `run.cost`, `--dry-run`, [run] max_cost), end to
end: `eval` of the demo project whose generator is the openai adapter, pointed at a chat
server on 127.0.0.1 that reports its usage deterministically (prompt tokens: the prompt's
characters // 4; a fixed number of completion tokens)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from adapter_fakes import chat_server, writing
from test_adapters_end_to_end import demo_copy

import fake_http
from conftest import SHIPPED, TINY_CONFIG, run_cli, write_project
from fake_http import Received, Reply, Server, serving
from rag_regress.adapters import openai
from rag_regress.answers import stand_in
from rag_regress.answers.contract import AnswerOutputError, check_answer
from rag_regress.api import Answer, System

__all__ = ["chat_server"]  # the fixture, imported for the tests below

SYSTEM = System(SHIPPED.build_retriever, openai.build)
INPUT, OUTPUT = 1000.0, 3000.0  # USD per million tokens: large, so that 4 decimals tell them apart
PRICED = f'\n[prices]\n"answer-model" = {{ input = {INPUT}, output = {OUTPUT} }}\n'


def metered(completion: int) -> Callable[[Received], Reply]:
    """The model of `writing()` (it answers from passage [1]), reporting `usage`: prompt tokens
    = the prompt's characters // 4, `completion` completion tokens."""
    answer = writing()

    def reply(request: Received) -> Reply:
        body = dict(answer(request).body)  # type: ignore[arg-type]
        prompt = len(request.user) // 4
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        return Reply(body=body)

    return reply


def project(root: Path, chat: Server, *, max_tokens: int, more: str = PRICED) -> Path:
    """The demo project (lexical judge) answering through the openai adapter, `more` appended."""

    def edit(text: str) -> str:
        text = re.sub(r"(?m)^min_score = .*\n", "", text)  # the stand-in's option
        generation = (
            f'[generation]\nbase_url = "{chat.url}"\nmodel = "answer-model"\nmax_tokens = {max_tokens}\n'
        )
        return text.replace("[generation]\n", generation, 1) + more

    return demo_copy(root, edit)


def report_of(config: Path) -> dict[str, Any]:
    return dict(json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8")))


def estimated_total(out: str) -> float:
    found = re.search(r"(?m)^  total: \$([\d,.]+)$", out)
    assert found, out
    return float(found.group(1).replace(",", ""))


def test_a_dry_run_estimates_the_cost_of_the_run_within_ten_percent_and_calls_nothing(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=24)  # a model that writes up to its max_tokens
    config = project(tmp_path, chat_server, max_tokens=24)
    assert run_cli(["--config", str(config), "eval", "--dry-run"], SYSTEM) == 0
    out = capsys.readouterr().out
    assert chat_server.received == [] and not (tmp_path / "build" / "report.json").exists()
    assert "generator: 81 calls" in out  # 74 questions, 7 assistant turns to write
    estimate = estimated_total(out)

    assert run_cli(["--config", str(config), "eval"], SYSTEM) == 0
    out = capsys.readouterr().out
    spent = report_of(config)["run"]["cost"]
    received = chat_server.received
    generator = spent["generator"]
    # The tokens are those the server reported, request by request, priced from [prices].
    assert generator["calls"] == len(received) > 0
    assert generator["prompt_tokens"] == sum(len(request.user) // 4 for request in received)
    assert generator["completion_tokens"] == 24 * len(received)
    assert generator["model"] == "answer-model" and generator["cached"] == 0
    expected = (generator["prompt_tokens"] * INPUT + generator["completion_tokens"] * OUTPUT) / 1e6
    assert generator["usd"] == pytest.approx(expected)
    assert spent["total"]["usd"] == pytest.approx(expected)
    assert "judge" not in spent  # the lexical judge calls no model
    assert re.search(r"(?m)^Cost, generator: \d+ calls, [\d,]+ prompt \+ [\d,]+ completion tokens", out)
    assert abs(estimate - spent["total"]["usd"]) <= 0.10 * spent["total"]["usd"], (estimate, spent)


def test_a_dry_run_after_a_run_uses_its_measured_tokens(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model that stops far below max_tokens: the first estimate is an upper bound; once a
    report measured the completions, the estimate follows them."""
    chat_server.default = metered(completion=6)
    config = project(tmp_path, chat_server, max_tokens=200)
    assert run_cli(["--config", str(config), "eval", "--dry-run"], SYSTEM) == 0
    cold = estimated_total(capsys.readouterr().out)
    assert run_cli(["--config", str(config), "eval"], SYSTEM) == 0
    spent = report_of(config)["run"]["cost"]["total"]["usd"]
    assert cold > 1.5 * spent  # max_tokens a call: far above what the model wrote
    asked = len(chat_server.received)
    assert run_cli(["--config", str(config), "eval", "--dry-run"], SYSTEM) == 0
    out = capsys.readouterr().out
    assert "(measured" in out and len(chat_server.received) == asked
    assert abs(estimated_total(out) - spent) <= 0.10 * spent


def test_max_cost_below_the_estimate_refuses_before_any_request(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=24)
    config = project(tmp_path, chat_server, max_tokens=24, more=PRICED + "\n[run]\nmax_cost = 0.5\n")
    assert run_cli(["--config", str(config), "eval"], SYSTEM) == 2
    err = capsys.readouterr().err
    line = config.read_text(encoding="utf-8").splitlines().index("max_cost = 0.5") + 1
    assert f"eval.toml:{line}:" in err and "max_cost = 0.5" in err and "estimated at $" in err
    assert chat_server.received == []  # refused before any model call
    assert not (tmp_path / "build" / "report.json").exists()

    # A limit above the estimate lets the run start.
    roomy = project(
        tmp_path / "roomy", chat_server, max_tokens=24, more=PRICED + "\n[run]\nmax_cost = 1000.0\n"
    )
    assert run_cli(["--config", str(roomy), "eval"], SYSTEM) == 0
    assert report_of(roomy)["run"]["cost"]["total"]["usd"] <= 1000.0


def test_max_cost_refuses_a_model_without_a_price(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=24)
    config = project(tmp_path, chat_server, max_tokens=24, more="\n[run]\nmax_cost = 1000.0\n")
    assert run_cli(["--config", str(config), "eval"], SYSTEM) == 2
    err = capsys.readouterr().err
    assert "cannot be bounded" in err and "'answer-model' has no price" in err
    assert '[prices] "answer-model"' in err
    assert chat_server.received == []


def test_a_model_without_a_price_shows_no_price_and_still_counts_its_tokens(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=7)
    other = '\n[prices]\n"another-model" = { input = 1.0, output = 1.0 }\n'
    config = project(tmp_path, chat_server, max_tokens=24, more=other)
    assert run_cli(["--config", str(config), "eval"], SYSTEM) == 0
    out = capsys.readouterr().out
    generator = report_of(config)["run"]["cost"]["generator"]
    assert generator["usd"] is None and report_of(config)["run"]["cost"]["total"]["usd"] is None
    assert generator["prompt_tokens"] == sum(len(r.user) // 4 for r in chat_server.received) > 0
    assert generator["completion_tokens"] == 7 * len(chat_server.received)
    assert 'no price (add [prices] "answer-model")' in out
    assert "$0.0000" not in out  # never a made-up 0


def test_answers_from_the_output_cache_cost_nothing_the_second_run(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=24)
    system = System(SHIPPED.build_retriever, openai.build, code="the-team-code")
    config = project(tmp_path, chat_server, max_tokens=24, more=PRICED + '\n[run]\noutput_cache = "code"\n')
    assert run_cli(["--config", str(config), "eval"], system) == 0
    first = report_of(config)["run"]["cost"]["generator"]
    asked = len(chat_server.received)
    assert first["calls"] == asked > 0 and first["usd"] > 0

    assert run_cli(["--config", str(config), "eval", "--dry-run"], system) == 0
    assert "generator: 0 calls" in capsys.readouterr().out  # the cache holds every answer

    assert run_cli(["--config", str(config), "eval"], system) == 0
    second = report_of(config)["run"]["cost"]
    assert len(chat_server.received) == asked  # no request this time
    assert second["generator"]["cached"] == 81
    assert second["generator"]["calls"] == second["generator"]["prompt_tokens"] == 0
    assert second["generator"]["usd"] == 0 and second["total"]["usd"] == 0


def judging(request: Received) -> Reply:
    """An LLM judge that finds every sentence supported, reporting usage as `metered` does."""
    verdicts = [{"id": n, "supported": True, "evidence": text} for n, text in request.sentences.items()]
    usage = {"prompt_tokens": len(request.user) // 4, "completion_tokens": 11}
    return fake_http.chat(json.dumps({"verdicts": verdicts}), usage=usage)


def test_the_llm_judge_is_priced_under_its_model_and_estimated_from_the_last_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=judging), "/v1") as judge:
        table = f'base_url = "{judge.url}"\nmodel = "judge-model"\nconcurrency = 1\n'
        prices = '\n[prices]\n"judge-model" = { input = 2.0, output = 8.0 }\n'
        config = write_project(
            tmp_path, TINY_CONFIG + '\n[judge]\nbackend = "llm"\n\n[judge.llm]\n' + table + prices
        )
        assert run_cli(["--config", str(config), "eval", "--dry-run"], SHIPPED) == 0
        cold = capsys.readouterr().out
        assert "judge:" in cold and "unknown: no earlier report" in cold and judge.received == []

        assert run_cli(["--config", str(config), "eval"], SHIPPED) == 0
        out = capsys.readouterr().out
        spent = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))["run"]["cost"]
        asked = judge.received
        assert spent["judge"]["calls"] == len(asked) > 0 and spent["judge"]["model"] == "judge-model"
        prompt = sum(len(request.user) // 4 for request in asked)
        assert spent["judge"]["prompt_tokens"] == prompt and spent["judge"]["completion_tokens"] == 11 * len(
            asked
        )
        assert spent["judge"]["usd"] == pytest.approx((prompt * 2.0 + 11 * len(asked) * 8.0) / 1e6)
        # The stand-in generator calls no model: its calls are counted, no tokens reported.
        assert spent["generator"]["unreported"] == spent["generator"]["calls"] > 0
        assert spent["generator"]["prompt_tokens"] == 0
        assert "Cost, judge:" in out and "model 'judge-model'" in out

        assert run_cli(["--config", str(config), "eval", "--dry-run"], SHIPPED) == 0
        warm = capsys.readouterr().out
        found = re.search(r"judge: (\d+) calls, ~([\d,]+) prompt", warm)
        assert found, warm
        assert int(found.group(1)) == len(asked) and int(found.group(2).replace(",", "")) == prompt


def test_a_gate_dry_run_counts_the_determinism_re_asks_and_the_repeats(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    chat_server.default = metered(completion=24)
    config = project(tmp_path / "plain", chat_server, max_tokens=24)
    determinism = 10  # [gate] determinism_check's default: 10 questions asked again
    assert run_cli(["--config", str(config), "gate", "--dry-run"], SYSTEM) == 0
    assert f"generator: {81 + determinism} calls" in capsys.readouterr().out

    stochastic = project(tmp_path / "stochastic", chat_server, max_tokens=24)
    text = stochastic.read_text(encoding="utf-8")
    stochastic.write_text(text.replace("[gate]\n", '[gate]\nstochastic = ["generator"]\nrepeats = 3\n', 1))
    assert run_cli(["--config", str(stochastic), "eval", "--dry-run"], SYSTEM) == 0
    # each question 3 times, no re-ask; the 7 assistant turns to write once
    assert "generator: 229 calls" in capsys.readouterr().out
    assert chat_server.received == []


@pytest.mark.parametrize(
    ("usage", "said"),
    [
        ({"prompt_tokens": -1}, "prompt_tokens must be a whole number"),
        ({"completion_tokens": "12"}, "completion_tokens must be a whole number"),
        ({"model": 7}, "model must be the model's name"),
        (["prompt_tokens", 3], "must be a dict"),
    ],
)
def test_a_team_generators_usage_that_is_no_token_count_is_refused(usage: Any, said: str) -> None:
    with pytest.raises(AnswerOutputError, match=said):
        check_answer(Answer("an answer", usage=usage), {})
    fine = {"model": "m", "prompt_tokens": 3, "completion_tokens": 1}
    assert check_answer(Answer("an answer", usage=fine), {}).usage == fine


def test_a_team_factory_returning_the_adapter_or_the_stand_in_is_estimated_as_it(
    tmp_path: Path, chat_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the generator is comes from the object the team's build_generator returns, as in the
    template's generator.py: the adapter is estimated from its prompt, the stand-in costs 0, and
    nothing is asked of the server."""

    def team_adapter(retriever: Any, documents: Any, options: dict[str, Any]) -> Any:
        return openai.build(retriever, documents, options)

    config = project(tmp_path, chat_server, max_tokens=24)
    assert (
        run_cli(["--config", str(config), "eval", "--dry-run"], System(SHIPPED.build_retriever, team_adapter))
        == 0
    )
    out = capsys.readouterr().out
    assert re.search(
        r"generator: 81 calls, ~[\d,]+ prompt \+ 1,944 completion tokens, model 'answer-model'", out
    )
    assert estimated_total(out) > 0 and chat_server.received == []

    def team_stand_in(retriever: Any, documents: Any, options: dict[str, Any]) -> Any:
        return stand_in.build(retriever, documents, {"min_score": 0.0})

    assert (
        run_cli(
            ["--config", str(config), "eval", "--dry-run"], System(SHIPPED.build_retriever, team_stand_in)
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "the stand-in generator, which calls no model" in out and estimated_total(out) == 0.0

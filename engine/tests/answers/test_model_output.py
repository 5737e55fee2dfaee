"""What a model writes is a measurement, never invalid input: output defects (answers/defects.py)
counted and named, a miscitation scored, a sentence the judge skipped counted as not judged;
end to end against scripted OpenAI-compatible servers on 127.0.0.1 (the generator's and the
judge's), through the command line on the tiny project."""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fake_http
from conftest import SHIPPED, TINY_CONFIG, TINY_CORPUS, run_cli, write_project
from fake_http import Received, Reply, Server, serving
from rag_regress.adapters import openai
from rag_regress.answers.checks import evaluate_answers
from rag_regress.answers.defects import defects
from rag_regress.answers.settings import JudgeSettings
from rag_regress.api import Answer, Context, Document, System
from rag_regress.errors import EvalInputError
from rag_regress.inputs.data import Question
from rag_regress.retrieval.retrievers import bm25

CORPUS = {row["id"]: Document(row["id"], row["text"], row["title"]) for row in TINY_CORPUS}
SSO = CORPUS["sso-setup"].text


@pytest.mark.parametrize(
    ("answer", "found"),
    [
        (Answer(SSO), []),
        (Answer(""), ["empty answer"]),
        (Answer("", abstained=True), []),  # an abstention says nothing, on purpose
        (Answer("<think>SSO? SAML.</think> Turn on SSO."), ["reasoning block (<think>) in the answer"]),
        (Answer("Turn on SSO. [/INST] [INST] more"), ["template tokens [/INST] [INST]"]),
        (Answer("Turn on SSO.<|im_end|>\n<|im_start|>user"), ["template tokens <|im_end|> <|im_start|>"]),
        (Answer("Turn on SSO.<end_of_turn>"), ["template token <end_of_turn>"]),
        (Answer("Use [1] or <b>bold</b> as you like: 2 < 3 > 1."), []),  # markup and brackets are text
        (Answer(SSO, notes=("cut at max_tokens (5): finish_reason 'length'",)), ["cut at max_tokens (5)"]),
    ],
)
def test_defects_name_what_went_wrong_with_the_output(answer: Answer, found: list[str]) -> None:
    named = defects(answer)
    assert len(named) == len(found) and all(n.startswith(f) for n, f in zip(named, found, strict=True))


def answers_of(tmp_path: Path, *answers: Answer) -> list[Any]:
    """The checked rows of `answers`, one question each, with the lexical judge."""

    class Fixed:
        def __init__(self) -> None:
            self.left = list(answers)

        def answer(self, question: str) -> Answer:
            return self.left.pop(0)

    questions = [
        Question(f"q{n}", "How do members sign in?", {"sso-setup": 3}, line=n)
        for n in range(1, len(answers) + 1)
    ]
    judge = JudgeSettings(cache=tmp_path / "verdicts.json")
    results = evaluate_answers(
        Fixed(), questions, CORPUS, judge, golden=tmp_path / "golden.jsonl", config_path=tmp_path
    )
    return [*results.rows, results.aggregate]


def test_an_empty_answer_or_a_leaked_token_is_counted_never_refused(tmp_path: Path) -> None:
    context = [Context("sso-setup", SSO)]
    empty, leaked, good, aggregate = answers_of(
        tmp_path, Answer("", context), Answer(f"{SSO}<|eot_id|>", context), Answer(SSO, context)
    )
    assert empty.defects == ["empty answer"] and empty.well_formed == 0.0 and not empty.abstained
    assert (
        leaked.defects == ["template token <|eot_id|>"]
        and "output defect: template token" in leaked.wrong()[0]
    )
    assert good.defects == [] and good.well_formed == 1.0
    assert aggregate["well_formed"] == pytest.approx(1 / 3)
    assert good.judged is None  # the lexical judge gives every item a verdict: nothing to count
    assert "judged" not in aggregate


def test_a_reference_not_stated_by_an_answer_too_short_to_read_says_so(tmp_path: Path) -> None:
    question = Question("q1", "SSO?", {"sso-setup": 3}, reference="Turn on SSO with SAML.", line=1)

    class Terse:
        def answer(self, question: str) -> Answer:
            return Answer("Yes", [Context("sso-setup", SSO)])

    judge = JudgeSettings(cache=tmp_path / "verdicts.json")
    (row,) = evaluate_answers(
        Terse(), [question], CORPUS, judge, golden=tmp_path / "g.jsonl", config_path=tmp_path
    ).rows
    assert [f.why for f in row.not_stated] == ["the answer holds no sentence to check it against"]


def test_a_failing_adapter_is_named_with_its_settings_never_the_teams_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusing = Server(default=lambda request: Reply(400, {"error": {"message": "bad request"}}))
    with serving(monkeypatch, refusing, "/v1") as server:
        built = openai.build(
            bm25.build(list(CORPUS.values()), str.split, {}),
            list(CORPUS.values()),
            {"base_url": server.url, "model": "m"},
        )
        judge = JudgeSettings(cache=tmp_path / "verdicts.json")
        question = Question("q1", "Turn on SSO", {"sso-setup": 3}, line=1)  # retrieved: the model is asked
        with pytest.raises(EvalInputError) as caught:
            evaluate_answers(
                built, [question], CORPUS, judge, golden=tmp_path / "g.jsonl", config_path=tmp_path
            )
    assert "the openai adapter (rag_regress.adapters.openai) raised ChatError" in caught.value.problem
    assert "check [generation]" in caught.value.fix and "generator.py" not in caught.value.fix


# -- end to end: a generator that cites passages it was not given --------------------------------------


def citing_nine(request: Received) -> Reply:
    """A model that writes each passage's first sentence and cites [9]: three passages at most."""
    passages = re.findall(r"(?m)^\[(\d+)\][^\n]*\n(.*)$", request.user)
    text = passages[0][1].split(". ")[0].rstrip(".") + " [9]." if passages else "I don't know."
    return fake_http.chat(text)


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=citing_nine), "/v1") as fake:
        yield fake


def generating(url: str, **judge: Any) -> str:
    table = f'[generation]\nbase_url = "{url}"\nmodel = "m"\ncitations = true\ncontexts = 3\n'
    config = TINY_CONFIG.replace("[generation]\nmin_score = 0.0\n", table)
    if judge:
        config += "\n[judge]\n" + "\n".join(f"{key} = {json.dumps(value)}" for key, value in judge.items())
    return config


def test_a_model_citing_a_passage_it_never_had_still_makes_a_baseline_naming_the_miscitations(
    tmp_path: Path, chat: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path, generating(chat.url))
    assert run_cli(["--config", str(config), "baseline"], System(bm25.build, openai.build)) == 0
    report = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
    answered = [row["answer"] for row in report["questions"] if not row["answer"]["abstained"]]
    assert answered and all(a["citation_precision"] == 0.0 for a in answered)
    assert all(
        f["why"].startswith("cites [9], but the answer was given") for a in answered for f in a["miscited"]
    )
    capsys.readouterr()
    assert run_cli(["--config", str(config), "eval"], System(bm25.build, openai.build)) == 0
    out = capsys.readouterr().out
    assert "miscited:" in out and "cites [9], but the answer was given" in out


# -- end to end: a judge model that skips sentences ---------------------------------------------------------


def skipping_every_fifth(every: int = 5) -> Any:
    """A judge that quotes each sentence as its evidence, but leaves the last sentence out of
    every fifth reply."""
    replies = {"n": 0}

    def reply(request: Received) -> Reply:
        replies["n"] += 1
        sentences = list(request.sentences.items())
        if replies["n"] % every == 0:
            sentences = sentences[:-1]
        verdicts = [{"id": n, "supported": True, "evidence": text} for n, text in sentences]
        return fake_http.chat(json.dumps({"verdicts": verdicts}))

    return reply


LLM_JUDGE = '\n[judge]\nbackend = "llm"\n\n[judge.llm]\n'  # its own table follows


def test_a_judge_that_skips_sentences_gives_a_complete_run_counting_what_it_did_not_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    skip_always = Server(default=lambda request: fake_http.chat(json.dumps({"verdicts": []})))
    with serving(monkeypatch, Server(default=skipping_every_fifth()), "/v1") as judge:
        table = {"base_url": judge.url, "model": "j", "concurrency": 1, "backoff": 0.01}
        config = write_project(tmp_path / "fifth", TINY_CONFIG + LLM_JUDGE + _toml(table))
        assert run_cli(["--config", str(config), "eval"], SHIPPED) == 0
        err = capsys.readouterr().err
        assert "asked again" in err  # every fifth reply's skipped sentence, asked on its own
        report = json.loads((tmp_path / "fifth" / "build" / "report.json").read_text(encoding="utf-8"))
        assert report["aggregate"]["judged"] == 1.0  # each re-ask was answered
        counted = report["run"]["judge"]
        assert counted["reasked"] >= 1 and counted["not_judged"] == 0 and counted["judged"] >= 5
    with serving(monkeypatch, skip_always, "/v1") as judge:
        table["base_url"] = judge.url
        config = write_project(tmp_path / "never", TINY_CONFIG + LLM_JUDGE + _toml(table))
        assert run_cli(["--config", str(config), "eval"], SHIPPED) == 0  # complete, never refused
        report = json.loads((tmp_path / "never" / "build" / "report.json").read_text(encoding="utf-8"))
        skipped = [f for row in report["questions"] for f in row["answer"]["not_judged"]]
        assert skipped and report["aggregate"]["judged"] == 0.0
        assert report["run"]["judge"]["not_judged"] >= len({f["text"] for f in skipped}) > 0
        assert "not judged (the judge's replies gave no verdict, twice)" in capsys.readouterr().out
        assert all(f["why"].startswith(("faithfulness: not judged", "citation")) for f in skipped)
        assert run_cli(["--config", str(config), "baseline"], SHIPPED) == 0
        assert run_cli(["--config", str(config), "gate"], SHIPPED) == 3  # below the floor on judged
        assert "judged" in capsys.readouterr().out


def _toml(table: dict[str, Any]) -> str:
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())


def test_fit_floors_fits_the_floor_on_judged_that_min_judged_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge model that never gives a verdict to some sentences (here: those of an even
    length, however often asked): the first baseline's judged is below [judge] min_judged.
    `baseline` names the fix; `baseline --fit-floors` adds the fitted floor to [gate.floors]
    (which overrides min_judged), says so, and the gate then holds on that baseline."""

    def odd_only(request: Received) -> Reply:
        verdicts = [
            {"id": n, "supported": True, "evidence": text}
            for n, text in request.sentences.items()
            if len(text) % 2
        ]
        return fake_http.chat(json.dumps({"verdicts": verdicts}))

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serving(monkeypatch, Server(default=odd_only), "/v1") as judge:
        table = {"base_url": judge.url, "model": "j", "concurrency": 1, "backoff": 0.01}
        config = write_project(tmp_path, TINY_CONFIG + LLM_JUDGE + _toml(table))
        assert run_cli(["--config", str(config), "baseline"], SHIPPED) == 0
        said = capsys.readouterr()
        out = said.out + said.err
        report = json.loads((tmp_path / "baseline.json").read_text(encoding="utf-8"))
        judged = report["aggregate"]["judged"]
        assert 0 < judged < 0.95
        assert f"[gate.floors] judged = 0.95: the new baseline's judged is {judged:.3f}, below" in out
        assert "add judged = " in out and "overrides [judge] min_judged" in out
        assert run_cli(["--config", str(config), "gate"], SHIPPED) == 3

        assert run_cli(["--config", str(config), "baseline", "--fit-floors"], SHIPPED) == 0
        said = capsys.readouterr()
        out = said.out + said.err
        written = config.read_text(encoding="utf-8")
        floor = tomllib.loads(written)["gate"]["floors"]["judged"]
        assert floor == math.floor(round((judged - 0.02) * 100, 9)) / 100
        assert f"eval.toml: [gate.floors] judged = 0.95 -> {floor:g}" in out, out
        assert written.index("judged = ") < written.index("[gate.checks]")
        assert run_cli(["--config", str(config), "gate"], SHIPPED) == 0

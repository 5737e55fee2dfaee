"""Whether the judge has earned the gate (answers/trust.py): measured on the held-out labels
of [judge] labels in every run, recorded in the receipt; the judge's checks advisory until
kappa reaches min_kappa on min_labels labels; the team's own labels correcting faithfulness,
whose floor the corrected interval then holds. End to end on the tiny project."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import TINY_CORPUS, run_cli, write_jsonl, write_project
from rag_regress.answers.trust import advisory_checks, judge_checks, measure
from rag_regress.api import ABSTENTION, Answer, Context, Document, Retriever, System
from rag_regress.retrieval.retrievers import bm25
from rag_regress.settings.config import load_config

INVENTED = "The company was founded in 1987 by forty engineers in Lisbon."
TEXTS = {document["id"]: str(document["text"]) for document in TINY_CORPUS}


def labels(n: int, *, agree: bool = True, domain: str = "team", split: str = "check") -> list[dict[str, Any]]:
    """`n` labels, alternately a sentence of a document (supported) and the invented one
    against it (not supported); `agree` False labels each the other way."""
    rows = []
    for i in range(n):
        text = list(TEXTS.values())[i % len(TEXTS)]
        supported = i % 2 == 0
        claim = text if supported else INVENTED
        rows.append(
            {
                "id": f"{split}-{i}",
                "claim": claim,
                "context": text,
                "supported": supported if agree else not supported,
                "domain": domain,
                "split": split,
            }
        )
    return rows


def project(tmp_path: Path, judge: str = "", rows: list[dict[str, Any]] | None = None) -> Path:
    config = write_project(tmp_path)
    if rows is not None:
        write_jsonl(tmp_path / "labels.jsonl", rows)
        judge = 'labels = "labels.jsonl"\n' + judge
    if judge:
        config.write_text(config.read_text(encoding="utf-8") + f"\n[judge]\n{judge}", encoding="utf-8")
    return config


def measured(config: Path) -> dict[str, Any]:
    settings = load_config(config).judge
    return measure(settings, config, [])


def test_too_few_held_out_labels_is_not_measured_and_the_checks_are_advisory(tmp_path: Path) -> None:
    rows = labels(8) + labels(40, split="dev")  # tuning labels never measure the judge
    record = measured(project(tmp_path, "min_labels = 10\n", rows))
    assert record["status"] == "advisory" and record["kappa"] is None
    assert record["why"] == "not measured: 8 held-out label(s) in labels.jsonl, 10 needed"
    assert set(advisory_checks(record)) == set(judge_checks(load_config(tmp_path / "eval.toml").judge))
    assert "key_facts" not in advisory_checks(record) and "abstention" not in advisory_checks(record)


def test_a_judge_that_agrees_with_the_labels_gates_one_that_does_not_is_advisory(tmp_path: Path) -> None:
    earned = measured(project(tmp_path / "a", "min_labels = 10\n", labels(12)))
    assert earned["status"] == "gates" and earned["kappa"] == 1.0 and earned["held_out"] == 12
    assert earned["why"].startswith("kappa 1.00 (95% 1.00 to 1.00) on 12 held-out labels of labels.jsonl")
    assert advisory_checks(earned) == {}
    assert len(earned["sha256"]) == 64

    against = measured(project(tmp_path / "b", "min_labels = 10\n", labels(12, agree=False)))
    assert against["status"] == "advisory" and against["kappa"] == -1.0
    assert "below min_kappa 0.4" in against["why"]
    anyway = measured(
        project(tmp_path / "c", "min_labels = 10\ngate_unmeasured = true\n", labels(12, agree=False))
    )
    assert anyway["status"] == "gates" and anyway["why"].endswith(
        "gated anyway ([judge] gate_unmeasured = true)"
    )


def test_kappa_at_min_kappa_with_an_interval_reaching_zero_stays_advisory(tmp_path: Path) -> None:
    # 10 labels, 2 of them the other way: kappa 0.6 but its bootstrap interval reaches 0.
    rows = labels(10)
    rows[0]["supported"], rows[1]["supported"] = not rows[0]["supported"], not rows[1]["supported"]
    record = measured(project(tmp_path, "min_labels = 10\nmin_kappa = 0.5\n", rows))
    assert record["kappa"] == pytest.approx(0.6)
    assert record["kappa_95"][0] <= 0 and record["status"] == "advisory"
    assert record["why"].endswith("its interval reaches 0")


def test_matched_facts_rest_on_the_judge_only_when_it_matches_them(tmp_path: Path) -> None:
    assert "key_facts" not in judge_checks(load_config(project(tmp_path / "a")).judge)
    assert "key_facts" in judge_checks(load_config(project(tmp_path / "b", 'match = "judge"\n')).judge)


class Inventing:
    """Answers q2 ("2FA") with its passage and an invented sentence; the others with their passage."""

    def __init__(self, retriever: Retriever, documents: list[Document], options: dict[str, Any]):
        self.retriever = retriever

    def answer(self, question: str) -> Answer:
        hits = self.retriever.search(question, 1)
        if not hits:
            return Answer(ABSTENTION, [], abstained=True)
        text = TEXTS[hits[0].doc_id]
        said = f"{text} {INVENTED}" if question == "2FA" else text
        return Answer(said, [Context(hits[0].doc_id, text)])


class Quoting(Inventing):
    def answer(self, question: str) -> Answer:
        answer = super().answer(question)
        return Answer(answer.text.replace(f" {INVENTED}", ""), answer.contexts, answer.abstained)


def faithfulness_floor(config: Path, floor: float) -> None:
    text = config.read_text(encoding="utf-8").replace(
        '"hit@5" = 0.5\n', f'"hit@5" = 0.5\nfaithfulness = {floor}\n'
    )
    config.write_text(text, encoding="utf-8")


def gate(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = run_cli(["--config", str(config), "gate"], System(bm25.build, Inventing))
    return code, capsys.readouterr().out


def test_an_invented_sentence_is_advisory_until_the_judge_earned_the_gate_then_it_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path)
    faithfulness_floor(config, 0.95)
    assert run_cli(["--config", str(config), "baseline"], System(bm25.build, Quoting)) == 0
    code, out = gate(config, capsys)
    assert code == 0, out
    assert "its checks are advisory" in out and "GATE PASSED" in out
    assert (
        "advisory, not failing the gate: faithfulness = 0.900 is below its floor 0.950 (advisory; the "
        "judge: not measured: 0 held-out label(s)" in out
    )
    assert re.search(r"  faithfulness +1\.000 +0\.900 .* advisory: floor", out), out
    assert "[newly failing answer] q2" in out and "(advisory, listed and not counted" in out
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))
    assert report["receipt"]["calibration"]["status"] == "advisory"
    assert report["comparison"]["flips"][-1]["advisory"].startswith("not measured")

    write_jsonl(tmp_path / "labels.jsonl", labels(12))
    config.write_text(
        config.read_text(encoding="utf-8") + '\n[judge]\nlabels = "labels.jsonl"\nmin_labels = 10\n',
        encoding="utf-8",
    )
    code, out = gate(config, capsys)
    assert code == 3, out
    assert "reaches min_kappa 0.4; its checks gate" in out and "[newly failing answer] q2" in out
    assert "note: the judge's checks were advisory at the baseline and gate now; labels.jsonl changed" in out
    assert "faithfulness corrected by 12 labels of your own answers" in out


def test_a_faithfulness_floor_is_held_by_the_corrected_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge alone puts faithfulness at 0.9 (5 answers, q2 with 1 of 2 sentences); 12 labels agree with
    it, so the corrected estimate is 0.9 too, but its interval's lower end is below a floor
    of 0.8: the floor fails on what the labels can show, not on the judge's own figure."""
    config = project(tmp_path, "min_labels = 10\n", labels(12))
    faithfulness_floor(config, 0.8)
    assert run_cli(["--config", str(config), "baseline"], System(bm25.build, Inventing)) == 0
    code, out = gate(config, capsys)
    assert code == 3, out
    report = json.loads((tmp_path / "build" / "report.json").read_text(encoding="utf-8"))
    corrected = report["receipt"]["calibration"]["faithfulness"]
    assert report["aggregate"]["faithfulness"] == pytest.approx(0.9)
    assert corrected["raw"] == pytest.approx(0.9) and corrected["estimate"] == pytest.approx(0.9)
    assert corrected["low"] < 0.8 < corrected["high"]
    assert "[floor] faithfulness" in out and "its lower end is below the floor 0.800" in out

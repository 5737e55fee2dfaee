"""`calibrate`: agreement figures defined as documented, labels validated, shipped labels run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import PROJECT_ROOT, run_cli, write_jsonl, write_project
from rag_regress.answers.calibration import agreement, load_labels
from rag_regress.answers.judges import JUDGE_VERSIONS
from rag_regress.errors import EvalInputError


def test_agreement_figures_by_hand() -> None:
    """truth: 2 supported, 2 unsupported. Judge flags one unsupported and one supported.
    accuracy 2/4; precision 1/2; recall 1/2; p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa 0."""
    figures = agreement([True, True, False, False], [True, False, False, True])
    assert figures == pytest.approx({"accuracy": 0.5, "precision": 0.5, "recall": 0.5, "kappa": 0.0})


def test_perfect_and_constant_judges() -> None:
    assert agreement([True, False], [True, False])["kappa"] == 1.0
    flag_nothing = agreement([True, False, True], [True, True, True])
    assert flag_nothing == pytest.approx({"accuracy": 2 / 3, "precision": 0.0, "recall": 0.0, "kappa": 0.0})
    assert agreement([True, True], [True, True]) == {  # one class: kappa is not defined
        "accuracy": 1.0,
        "precision": 0.0,
        "recall": 1.0,
        "kappa": None,
    }


def test_kappa_below_accuracy_when_chance_agreement_is_high() -> None:
    """9 of 10 supported; a judge that misses the one unsupported claim is 90% accurate, kappa 0."""
    truth = [True] * 9 + [False]
    figures = agreement(truth, [True] * 10)
    assert figures["accuracy"] == pytest.approx(0.9) and figures["kappa"] == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"id": "c1", "claim": "x", "context": "y"}, "missing key(s): supported"),
        ({"id": "c1", "claim": "x", "context": "y", "supported": "yes"}, "'supported' must be true or false"),
        ({"id": "c1", "claim": "", "context": "y", "supported": True}, "'claim' must be a non-empty string"),
        ({"id": "c1", "claim": "x", "context": "y", "supported": True, "label": 1}, "unknown key(s): label"),
        ({"id": "c1", "claim": "x", "context": "y", "supported": True, "split": "train"}, "'split' must be"),
        ({"id": "c1", "context": "y", "kind": "x"}, "missing key(s): claim, supported"),
    ],
)
def test_bad_labels_name_file_and_line(tmp_path: Path, line: dict, problem: str) -> None:
    path = write_jsonl(
        tmp_path / "labels.jsonl", [{"id": "c0", "claim": "a", "context": "b", "supported": True}, line]
    )
    with pytest.raises(EvalInputError) as caught:
        load_labels(path)
    assert caught.value.line == 2 and problem in str(caught.value)


def test_shipped_labels_hold_a_held_out_part_of_every_kind_both_ways() -> None:
    labels = load_labels(PROJECT_ROOT / "evals" / "judge_labels.jsonl")
    assert len(labels) >= 150
    held_out = [label for label in labels if label.split == "holdout"]
    kinds = {label.kind for label in held_out}
    assert len(kinds) >= 10
    for kind in kinds:  # each kind: hallucinations and their faithful paraphrases
        assert {label.supported for label in held_out if label.kind == kind} == {True, False}, kind
    faithful = sum(label.supported for label in labels) / len(labels)
    assert 0.4 <= faithful <= 0.6


def test_calibrate_reports_each_split_per_kind_and_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {
            "id": "a",
            "claim": "Refunds take 10 days.",
            "context": "Refunds take 10 days.",
            "supported": True,
            "kind": "numbers",
        },
        {
            "id": "b",
            "claim": "Refunds take 20 days.",
            "context": "Refunds take 10 days.",
            "supported": False,
            "kind": "numbers",
        },
        {
            "id": "c",
            "claim": "Exports are disabled.",
            "context": "Exports are enabled.",
            "supported": False,
            "kind": "antonym",
            "split": "holdout",
        },
        {
            "id": "d",
            "claim": "Exports are enabled.",
            "context": "Exports are enabled.",
            "supported": True,
            "kind": "antonym",
            "split": "holdout",
        },
    ]
    labels = tmp_path / "mine.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = tmp_path / "eval.toml"
    config.write_text('[judge]\nbackend = "lexical"\n', encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "holdout" and result["threshold"] == 0.5
    assert result["accuracy"] == 1.0 and result["kappa"] == 1.0
    assert result["per_kind"] == {
        "antonym": {"n": 2, "faithful": 1, "passed": 1, "unsupported": 1, "caught": 1, "accuracy": 1.0}
    }
    assert set(result["splits"]) == {"tune", "holdout"} and "best_threshold" in result["splits"]["tune"]
    tune = result["splits"]["tune"]
    assert tune["per_finding"] == {"number": {"found": 1, "unsupported": 1, "fails": True, "precision": 1.0}}
    assert result["splits"]["holdout"]["per_finding"]["polarity"]["found"] == 1
    assert "best_threshold" not in result["splits"]["holdout"]  # never tuned on
    # one class only: kappa is n/a, not a number that means nothing
    labels.write_text(json.dumps(rows[1]) + "\n", encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "n/a" in out and "numbers" in out


def test_calibrate_prints_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lexical judge on the shipped labels (the NLI judge needs its model: see README):
    every held-out row and one tuning row in 20, as they are written (`nox -s calibrate`
    judges the whole file, thousands of claims)."""
    lines = (PROJECT_ROOT / "evals" / "judge_labels.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for n, line in enumerate(lines) if n % 20 == 0 or json.loads(line).get("split") == "holdout"]
    labels = tmp_path / "sample.jsonl"
    labels.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    config = tmp_path / "eval.toml"
    config.write_text(f'[judge]\nbackend = "lexical"\nlabels = "{labels.as_posix()}"\n', encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate"]) == 0
    out = capsys.readouterr().out
    assert "held-out labels (never tuned on)" in out
    header = r"^  threshold +accuracy +precision +recall +kappa   \(positive = unsupported\)$"
    assert re.search(header, out, re.M)
    assert "configured" in out and "best (max kappa)" in out and "faithful passed" in out


def test_held_out_disagreements_are_counted_never_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A held-out claim the judge gets wrong is shown as a number only, on the console and in
    JSON: its id, text and the judge's reason stay unread, so it stays held out."""
    wrong = {"claim": "Refunds take 20 days.", "context": "Refunds take 10 days.", "supported": True}
    rows = [
        {"id": "tuned-1", **wrong, "kind": "numbers", "split": "tune"},
        {"id": "kept-1", **wrong, "kind": "numbers", "split": "holdout"},
    ]
    labels = tmp_path / "mine.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = tmp_path / "eval.toml"
    config.write_text('[judge]\nbackend = "lexical"\n', encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "tuned-1" in out and "kept-1" not in out and "disagreements at the configured threshold: 1" in out
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--json"]) == 0
    splits = json.loads(capsys.readouterr().out)["splits"]
    assert splits["holdout"]["disagreements"] == 1 and splits["tune"]["disagreements"][0]["id"] == "tuned-1"


def test_calibrate_with_broken_labels_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = (PROJECT_ROOT / "eval.toml").read_text(encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "c1"}) + "\n", encoding="utf-8")
    text = config.replace('labels = "evals/judge_labels.jsonl"', f'labels = "{labels}"')
    assert text != config
    (tmp_path / "eval.toml").write_text(text, encoding="utf-8")
    assert run_cli(["--config", str(tmp_path / "eval.toml"), "calibrate"]) == 2
    assert "labels.jsonl:1: missing key(s)" in capsys.readouterr().err


def _outside_rows() -> list[dict[str, object]]:
    """Claims of two domains, each with a tuning (dev) and a held-out (check) part."""
    facts = [
        ("manuals", "The kettle holds 1.7 litres.", "The kettle holds 1.7 litres.", True),
        ("manuals", "The kettle holds 2.7 litres.", "The kettle holds 1.7 litres.", False),
        ("manuals", "The filter is washable.", "The filter is washable.", True),
        ("manuals", "The filter is never washable.", "The filter is washable.", False),
        ("medicine", "Take 2 tablets daily.", "Take 2 tablets daily.", True),
        ("medicine", "Take 4 tablets daily.", "Take 2 tablets daily.", False),
        ("medicine", "Aspirin causes ulcers.", "Aspirin is associated with ulcers.", False),
        ("medicine", "Aspirin is associated with ulcers.", "Aspirin is associated with ulcers.", True),
    ]
    return [
        {
            "id": f"{domain}-{n}",
            "claim": claim,
            "context": context,
            "supported": supported,
            "domain": domain,
            "kind": "mixed",
            "split": "dev" if n % 4 < 2 else "check",
        }
        for n, (domain, claim, context, supported) in enumerate(facts)
    ]


def test_calibrate_reports_the_check_split_per_domain_with_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Labels split dev/check with a domain each: the headline is the check split, per domain,
    each kappa with its seeded bootstrap interval; the threshold is searched on dev only."""
    labels = write_jsonl(tmp_path / "outside.jsonl", _outside_rows())
    config = tmp_path / "eval.toml"
    config.write_text('[judge]\nbackend = "lexical"\n', encoding="utf-8")
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["split"] == "check" and result["examples"] == 4
    assert set(result["per_domain"]) == {"manuals", "medicine"}
    for entry in result["per_domain"].values():
        assert entry["n"] == 2 and entry["kappa"] == 1.0 and entry["false_alarms"] == 0.0
    assert "best_threshold" in result["splits"]["dev"] and "best_threshold" not in result["splits"]["check"]
    assert result["kappa_95"] == [1.0, 1.0]  # every resample of a perfect judge agrees
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == result  # seeded: the same figures every run
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "check: held-out labels (never tuned on)" in out and "medicine" in out and "95% interval" in out


def test_kappa_interval_brackets_kappa_and_is_seeded() -> None:
    from rag_regress.answers.calibration import kappa_interval

    truth = [True, False] * 20
    predicted = [t if n % 5 else not t for n, t in enumerate(truth)]  # wrong on 1 in 5
    kappa = agreement(truth, predicted)["kappa"]
    low, high = kappa_interval(truth, predicted) or [0.0, 0.0]
    assert kappa is not None and low < kappa < high
    assert kappa_interval(truth, predicted) == [low, high]
    assert kappa_interval([True] * 5, [True] * 5) is None  # one class: kappa undefined throughout


def test_compare_puts_backends_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`calibrate --compare lexical,identical`: the same labels through each backend, one table;
    an unknown backend is an input error naming it."""
    labels = write_jsonl(tmp_path / "outside.jsonl", _outside_rows())
    config = tmp_path / "eval.toml"
    config.write_text('[judge]\nbackend = "lexical"\n', encoding="utf-8")
    assert (
        run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--compare", "lexical"]) == 0
    )
    out = capsys.readouterr().out
    assert "Judges compared on outside.jsonl" in out and "check:" in out and "dev:" in out
    assert "manuals" in out and "1.000 (0%)" in out
    assert (
        run_cli(
            ["--config", str(config), "calibrate", "--labels", str(labels), "--compare", "lexical,nosuch"]
        )
        == 2
    )
    assert "nosuch" in capsys.readouterr().err


def test_eval_prints_the_measured_agreement_of_the_configured_judge(tmp_path: Path) -> None:
    """After `calibrate`, `measured()` names that judge's kappa on its held-out labels; a judge
    with other settings (another threshold) has not been measured."""
    import dataclasses

    from rag_regress.answers.calibration import calibrate, measured
    from rag_regress.answers.settings import JudgeSettings

    labels = write_jsonl(tmp_path / "outside.jsonl", _outside_rows())
    settings = dataclasses.replace(JudgeSettings(), cache=tmp_path / ".cache" / "verdicts.sqlite")
    assert "not measured" in measured(settings)
    calibrate(settings, tmp_path / "eval.toml", labels)
    line = measured(settings)
    assert line.startswith("Judge agreement: kappa 1.00") and "4 check labels of outside.jsonl" in line
    assert "not measured" in measured(dataclasses.replace(settings, threshold=0.7))


def test_eval_and_gate_say_whether_the_judge_earned_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The console says how far the configured judge agrees with people on the held-out labels
    of [judge] labels, and so whether its checks gate: not measured with too few labels, then
    its kappa, measured in the run itself (no `calibrate` needed first)."""
    config = write_project(tmp_path)
    assert run_cli(["--config", str(config), "eval"]) == 0
    out = capsys.readouterr().out
    assert (
        f"Judge lexical {JUDGE_VERSIONS['lexical']}: not measured: 0 held-out label(s) in "
        "evals/judge_labels.jsonl, 50 needed; "
        "its checks are advisory" in out
    )
    write_jsonl(tmp_path / "outside.jsonl", _outside_rows())
    config.write_text(config.read_text() + '\n[judge]\nlabels = "outside.jsonl"\nmin_labels = 4\n')
    earned = (
        f"Judge lexical {JUDGE_VERSIONS['lexical']}: kappa 1.00 (95% 1.00 to 1.00) on 4 held-out labels "
        "of outside.jsonl "
        "reaches min_kappa 0.4; its checks gate"
    )
    assert run_cli(["--config", str(config), "eval"]) == 0
    assert earned in capsys.readouterr().out
    assert run_cli(["--config", str(config), "baseline"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config), "gate"]) == 0
    assert earned in capsys.readouterr().out


def _team_rows() -> list[dict[str, object]]:
    """Claims of the team's own answers (domain "team", as add-labels writes them) among
    others: domains that sort before and after "team", and labels without a domain; each
    domain with a dev and a check part, both ways."""
    facts = [
        ("Refunds take 10 days.", "Refunds take 10 days.", True),
        ("Refunds take 20 days.", "Refunds take 10 days.", False),
        ("Exports are enabled.", "Exports are enabled.", True),
        ("Exports take 30 days.", "Exports take 3 days.", False),
    ]
    return [
        {
            "id": f"{domain or 'none'}-{n}",
            "claim": claim,
            "context": context,
            "supported": supported,
            "kind": "mixed",
            "split": "dev" if n < 2 else "check",
            **({"domain": domain} if domain else {}),
        }
        for domain in ("alpha", "", "zeta", "team")
        for n, (claim, context, supported) in enumerate(facts)
    ]


def _rows_of(out: str, names: list[str]) -> list[int]:
    """The line numbers of the table rows naming each of `names` (first match after the last)."""
    lines = out.splitlines()
    found, start = [], 0
    for name in names:
        start = next(n for n in range(start, len(lines)) if lines[n].split()[:1] == [name]) + 1
        found.append(start)
    return found


def test_team_domain_comes_first_in_json_tables_and_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The team's own answers first in every per-domain table, the other domains by name, the
    labels without one last; the "all" row of --compare after them; the header counts them."""
    from rag_regress.golden.labels import DOMAIN

    assert DOMAIN == "team"  # add-labels writes the domain calibrate puts first
    labels = write_jsonl(tmp_path / "mixed.jsonl", _team_rows())
    config = tmp_path / "eval.toml"
    config.write_text('[judge]\nbackend = "lexical"\n', encoding="utf-8")
    order = ["team", "alpha", "zeta", "(none)"]
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result["per_domain"]) == order and result["domains"] == dict.fromkeys(order, 4)
    for split in ("dev", "check"):
        assert list(result["splits"][split]["per_domain"]) == order, split
    assert run_cli(["--config", str(config), "calibrate", "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "on mixed.jsonl (the team's own answers: 4 labels, domain 'team')" in out.splitlines()[0]
    dev, check = out.index("dev: tuning labels"), out.index("check: held-out labels")
    for part in (out[dev:check], out[check:]):
        rows = _rows_of(part, order)
        assert rows == sorted(rows) and rows[-1] - rows[0] == 3  # adjacent, in this order
    compare_args = ["--config", str(config), "calibrate", "--labels", str(labels), "--compare", "lexical"]
    assert run_cli(compare_args) == 0
    out = capsys.readouterr().out
    assert "the team's own answers: 4 labels" in out.splitlines()[0]
    for split in ("dev:", "check:"):
        part = out[out.index(f"\n{split}") :]
        rows = _rows_of(part, [*order, "all"])
        assert rows == list(range(rows[0], rows[0] + 5)), split


def test_format_puts_the_team_first_whatever_order_the_result_holds() -> None:
    """A result read back from JSON in another order is still shown team first, "(none)" last."""
    from rag_regress.answers.calibration import domain_order

    assert domain_order(["(none)", "zeta", "team", "alpha", "team"]) == ["team", "alpha", "zeta", "(none)"]
    assert domain_order(["b", "a"]) == ["a", "b"]


def test_compare_runs_every_backend_on_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--compare lexical,nli`: each backend judges every row of the labels, read once, and only
    the configured judge's figures are kept (the NLI judge here is the lexical one, recorded:
    the test needs no model)."""
    import dataclasses

    from rag_regress.answers import calibration
    from rag_regress.answers.settings import JudgeSettings
    from rag_regress.render.calibration import format_comparison

    lexical = calibration.build_judge
    seen: dict[str, list[str]] = {}

    class Recorded:
        def __init__(self, settings: JudgeSettings, config_path: Path) -> None:
            self.name = settings.backend
            self.inner = lexical(dataclasses.replace(settings, backend="lexical"), config_path)
            self.identity = {**self.inner.identity, "name": self.name}

        def verdicts(self, items: list) -> list:
            seen[self.name] = [claim for claim, _ in items]
            return self.inner.verdicts(items)

    monkeypatch.setattr(calibration, "build_judge", Recorded)
    labels = write_jsonl(tmp_path / "mixed.jsonl", _team_rows())
    settings = dataclasses.replace(
        JudgeSettings(), cache=tmp_path / ".cache" / "verdicts.json", labels=labels
    )
    result = calibration.compare(settings, tmp_path / "eval.toml", ["lexical", "nli", "lexical"])
    assert list(result["backends"]) == ["lexical", "nli"]
    assert seen["lexical"] == seen["nli"] == [str(row["claim"]) for row in _team_rows()]
    for found in result["backends"].values():
        assert list(found["per_domain"]) == ["team", "alpha", "zeta", "(none)"]
        assert found["labels_sha256"] == result["labels_sha256"]
    out = format_comparison(result)
    assert "lexical" in out and "nli" in out and "the team's own answers: 4 labels" in out
    kept = json.loads((tmp_path / ".cache" / "calibration.json").read_text(encoding="utf-8"))
    assert [entry["judge"]["name"] for entry in kept] == ["lexical"]
    assert calibration.measured(settings).startswith("Judge agreement: kappa")


def test_measured_follows_the_labels_digest(tmp_path: Path) -> None:
    """The figures are kept by judge identity and the sha256 of the labels file's bytes: labels
    edited after `calibrate` say the figures are of an earlier version; the same bytes again
    show the figures; one entry per identity and digest; a missing labels file is not measured."""
    import dataclasses
    import hashlib

    from rag_regress.answers.calibration import calibrate, measured
    from rag_regress.answers.settings import JudgeSettings

    labels = write_jsonl(tmp_path / "judge_labels.jsonl", _team_rows())
    first = labels.read_bytes()
    settings = dataclasses.replace(
        JudgeSettings(), cache=tmp_path / ".cache" / "verdicts.json", labels=labels
    )
    stored = tmp_path / ".cache" / "calibration.json"
    assert "not measured" in measured(settings)
    result = calibrate(settings, tmp_path / "eval.toml")
    assert result["labels_sha256"] == hashlib.sha256(first).hexdigest()
    figures = measured(settings)
    assert figures.startswith("Judge agreement: kappa") and "8 check labels of judge_labels.jsonl" in figures
    calibrate(settings, tmp_path / "eval.toml")  # the same bytes: the same entry, replaced
    assert len(json.loads(stored.read_text(encoding="utf-8"))) == 1

    write_jsonl(labels, _team_rows()[:-1])  # a label removed after calibrate
    line = measured(settings)
    assert line.startswith("Judge agreement: measured on an earlier version of ")
    assert "judge_labels.jsonl; run `calibrate` again" in line and "kappa" not in line
    calibrate(settings, tmp_path / "eval.toml")
    kept = json.loads(stored.read_text(encoding="utf-8"))
    assert len(kept) == 2 and len({entry["labels_sha256"] for entry in kept}) == 2
    assert "7 check labels" in measured(settings)

    labels.write_bytes(first)  # back to the bytes first measured: those figures again
    assert measured(settings) == figures
    assert "not measured" in measured(dataclasses.replace(settings, threshold=0.7))  # another judge
    labels.unlink()
    assert "not measured" in measured(settings)


def test_figures_kept_for_another_labels_file_are_shown_while_it_is_unchanged(tmp_path: Path) -> None:
    """`calibrate --labels FILE`: the figures are shown for [judge] labels' judge while FILE is
    as it was measured (the configured file never measured), not once FILE is edited."""
    import dataclasses

    from rag_regress.answers.calibration import calibrate, measured
    from rag_regress.answers.settings import JudgeSettings

    configured = write_jsonl(tmp_path / "judge_labels.jsonl", _outside_rows())
    other = write_jsonl(tmp_path / "other.jsonl", _team_rows())
    settings = dataclasses.replace(
        JudgeSettings(), cache=tmp_path / ".cache" / "verdicts.json", labels=configured
    )
    calibrate(settings, tmp_path / "eval.toml", other)
    assert "labels of other.jsonl" in measured(settings)
    write_jsonl(other, _team_rows()[1:])
    assert "not measured" in measured(settings)
    calibrate(settings, tmp_path / "eval.toml")  # the configured file: its figures come first
    assert "4 check labels of judge_labels.jsonl" in measured(settings)

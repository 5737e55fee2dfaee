"""The command line end to end on a tiny project: exit codes 0 / 2 / 3, what is printed and
what is (and is not) written."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import rag_regress
from conftest import (
    SHIPPED,
    TINY_CONFIG,
    TINY_GOLDEN,
    as_report,
    evaluate_shipped,
    run_cli,
    set_min_length,
    write_jsonl,
    write_project,
)
from rag_regress import commands
from rag_regress.api import System
from rag_regress.errors import EvalInputError
from rag_regress.inputs import files as files_module
from rag_regress.inputs.reports import read_report, write_report
from rag_regress.settings.config import load_config


def run(config_path: Path, *args: str) -> int:
    return run_cli(["--config", str(config_path), *args])


def failure_lines(stdout: str) -> list[str]:
    """The `  [kind] message` lines the gate prints for each problem."""
    return [line for line in stdout.splitlines() if line.startswith("  [")]


def test_eval_writes_a_valid_report(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`eval` exits 0, prints the table and writes build/report.json as rag-eval-report JSON."""
    assert run(project, "eval") == 0
    out = capsys.readouterr().out
    assert "Aggregate over 4 of 5 questions (1 unanswerable left out" in out
    assert "wrote " in out
    path = project.parent / "build" / "report.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "rag-eval-report"
    assert [row["id"] for row in data["questions"]] == ["q1", "q2", "q3", "q4", "q5"]
    assert read_report(path, what="report").counts.evaluated == 4


def test_eval_report_option_and_quiet(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--report writes elsewhere; --quiet prints only the path."""
    target = tmp_path / "elsewhere" / "r.json"
    assert run(project, "eval", "--quiet", "--report", str(target)) == 0
    out = capsys.readouterr().out
    assert "Aggregate" not in out and "r.json" in out
    assert json.loads(target.read_text(encoding="utf-8"))["format"] == "rag-eval-report"
    assert not (project.parent / "build" / "report.json").exists()


def test_baseline_then_gate_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`baseline` writes the baseline; `gate` right after it passes (exit 0)."""
    assert run(project, "baseline") == 0
    baseline = project.parent / "baseline.json"
    assert read_report(baseline).counts.questions == 5
    assert "review its diff and commit it" in capsys.readouterr().out
    assert run(project, "gate") == 0
    out = capsys.readouterr().out
    assert "GATE PASSED" in out and failure_lines(out) == []
    assert (project.parent / "build" / "report.json").exists()


@pytest.mark.keyword
def test_broken_tokenizer_fails_the_gate_naming_the_questions(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """min_length = 4 drops SSO, 2FA and API: exit 3, GATE FAILED, q1-q3 named; q4 is fine."""
    assert run(project, "baseline") == 0
    set_min_length(project, 4)
    capsys.readouterr()
    assert run(project, "gate") == 3
    out = capsys.readouterr().out
    assert "GATE FAILED" in out
    failures = "\n".join(failure_lines(out))
    for qid in ["q1", "q2", "q3"]:
        assert f"] {qid} " in failures
    assert "] q4 " not in failures
    # q1 fails on retrieval (must-pass, hit@5) and on its answer: listed once, with both.
    (q1,) = [line for line in failures.splitlines() if "] q1 " in line]
    assert q1.startswith("  [must-pass, newly failing, newly failing answer] q1 ")
    assert "hit@5 1.000 -> 0.000" in q1 and "key_facts 1.000 -> 0.000" in q1


def test_gate_without_a_baseline_says_how_to_make_one(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No baseline yet: exit 2, the message says to run `nox -s baseline`, nothing written."""
    assert run(project, "gate") == 2
    err = capsys.readouterr().err
    assert "baseline.json" in err and "nox -s baseline" in err
    assert not (project.parent / "build").exists()


def test_gate_with_an_incomparable_baseline_is_invalid_input(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A baseline without a gated metric (made with other settings) exits 2, not 0 or 3."""
    assert run(project, "baseline") == 0
    baseline = project.parent / "baseline.json"
    data = json.loads(baseline.read_text(encoding="utf-8"))
    del data["aggregate"]["mrr"]
    baseline.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert run(project, "gate") == 2
    err = capsys.readouterr().err
    assert "baseline.json" in err and "no value for mrr" in err and "nox -s baseline" in err
    assert not (project.parent / "build").exists(), "a refused comparison writes no report"


@pytest.mark.parametrize("command", ["eval", "baseline", "gate"])
@pytest.mark.parametrize("existing", [False, True], ids=["fresh", "existing-files"])
def test_malformed_golden_line_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, existing: bool
) -> None:
    """Invalid input: exit 2, stderr names golden.jsonl:2; the baseline is neither created nor
    changed (byte for byte) and no report is created. `eval` and `gate` remove the report an
    earlier run left (it does not describe this run); `baseline` writes no report, so leaves
    it. (`gate` always gets a baseline, or it would stop at the missing baseline before
    reading the golden set.)"""
    config_path = write_project(tmp_path)
    report_path, baseline_path = tmp_path / "build" / "report.json", tmp_path / "baseline.json"
    if existing or command == "gate":
        assert run(config_path, "baseline") == 0
    if existing:
        assert run(config_path, "eval") == 0
    before = {p: p.read_bytes() if p.exists() else None for p in (report_path, baseline_path)}
    write_jsonl(tmp_path / "golden.jsonl", [TINY_GOLDEN[0], '{"id": "q2", "question": "2FA",'])
    capsys.readouterr()
    assert run(config_path, command) == 2
    captured = capsys.readouterr()
    assert "golden.jsonl:2:" in captured.err and "fix:" in captured.err
    after = {p: p.read_bytes() if p.exists() else None for p in (report_path, baseline_path)}
    if command != "baseline":
        before[report_path] = None
    assert after == before


def test_unknown_metric_in_config_is_invalid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in eval.toml: exit 2 with the file, the line and the known metrics."""
    text = TINY_CONFIG.replace('"map", "rprec"]', '"map", "rprec", "ndgc@5"]')
    config_path = write_project(tmp_path, config=text)
    assert run(config_path, "eval") == 2
    err = capsys.readouterr().err
    assert "eval.toml:" in err and "'ndgc@5'" in err and "known metrics" in err
    assert not (tmp_path / "build").exists()


def test_lone_surrogate_in_golden_is_invalid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text that cannot be written back as UTF-8 is refused at its line (exit 2)."""
    bad = '{"id": "q1", "question": "SSO \\ud800", "relevant": {"sso-setup": 3}}'
    config_path = write_project(tmp_path, golden=[bad])
    assert run(config_path, "eval", "--quiet") == 2
    assert "golden.jsonl:1:" in capsys.readouterr().err


# -- write_report: atomic -----------------------------------------------------------------


def test_write_report_leaves_no_temporary_files(project: Path, tmp_path: Path) -> None:
    """Writing (and overwriting) leaves exactly the report in its folder."""
    report = as_report(evaluate_shipped(load_config(project)))
    target = tmp_path / "out" / "report.json"
    write_report(target, report)
    write_report(target, report)
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]
    assert read_report(target, what="report") == report
    assert json.loads(target.read_text(encoding="utf-8")) == report.to_dict()


def test_failed_serialisation_keeps_the_previous_file(project: Path, tmp_path: Path) -> None:
    """A value JSON cannot encode in a late question row: the old report stays as it was."""
    report = as_report(evaluate_shipped(load_config(project)))
    target = tmp_path / "out" / "report.json"
    write_report(target, report)
    old = target.read_bytes()
    report.questions[-1].tags.append({"not", "json"})  # type: ignore[arg-type]  # a set: json.dumps raises TypeError
    with pytest.raises(TypeError):
        write_report(target, report)
    assert target.read_bytes() == old
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_crash_while_writing_keeps_the_previous_file(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after the new text is written but before it replaces the old file (e.g. the
    disk fills up at fsync) leaves the old report intact and no temporary file behind; the
    error names the file (exit 2 from the command line, no traceback)."""
    report = as_report(evaluate_shipped(load_config(project)))
    target = tmp_path / "out" / "report.json"
    write_report(target, report)
    old = target.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files_module.os, "fsync", disk_full)
    report.receipt["seed"] = 999
    with pytest.raises(EvalInputError, match="No space left") as caught:
        write_report(target, report)
    assert caught.value.path == str(target)
    assert target.read_bytes() == old
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_version_prints_the_package_and_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        run_cli(["--version"])
    assert done.value.code == 0
    name, version = capsys.readouterr().out.split()
    assert name == "rag-regress" and version == rag_regress.__version__


def test_eval_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    """`eval | head -n 1`: the table is far longer than a pipe holds, `head` stops reading,
    and the command ends without a BrokenPipeError traceback; `head` got the first line.
    The exit code is 141 (as if killed by SIGPIPE), never 0: a cut-off gate never passes."""
    golden = [{**TINY_GOLDEN[3], "id": f"q{i}"} for i in range(3000)]  # --all: ~10,000 lines
    config = write_project(tmp_path, golden=golden)
    program = "import sys; from conftest import run_cli; sys.exit(run_cli(sys.argv[1:]))"
    tests_dir = Path(__file__).resolve().parents[1]
    python = f"{sys.executable} -c {shlex.quote(program)} --config {shlex.quote(str(config))} eval --all"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {python} | head -n 1; echo status=$? >&2"],  # head exits 0
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tests_dir), *sys.path])},
        check=False,
    )
    assert done.stdout.startswith("Retriever ") and done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert "status=141" in done.stderr


@pytest.mark.keyword  # which questions miss is worked out for a keyword retriever
def test_eval_prints_the_summary_first_and_only_the_failing_questions(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The aggregates come before any question; by default only the questions that missed or
    failed a per-question check are listed (q4 misses export-data: recall@5 0.5 < 1), with a
    count of the others (the unanswerable q5 among them); `--all` lists every question."""
    assert run(project, "eval") == 0
    out = capsys.readouterr().out
    assert out.index("Aggregate over 4 of 5 questions") < out.index("Per question")
    rows = [line.split()[1] for line in out.splitlines() if line.startswith(("HIT ", "MISS ", "-- "))]
    assert rows == ["q4"]
    assert "(4 more question(s), none failing a retrieval check: `eval --all` prints them)" in out
    assert run(project, "eval", "--all") == 0
    out = capsys.readouterr().out
    rows = [line.split()[1] for line in out.splitlines() if line.startswith(("HIT ", "MISS ", "-- "))]
    assert rows == ["q1", "q2", "q3", "q4", "q5"]


def test_baseline_commits_only_what_the_gate_needs(project: Path, tmp_path: Path) -> None:
    """The baseline keeps the top k of each ranking, the ranks of the relevant documents and
    the answers' checks, not every retrieved score nor the answers' text; the gate compares a
    full run with it as before."""
    config = load_config(project)
    assert run(project, "baseline") == 0
    baseline = read_report(config.baseline)
    k = baseline.k
    for row in baseline.questions:
        assert len(row.retrieved) <= k and row.relevant_ranks is not None
        assert set(row.relevant_ranks) == set(row.relevant)
        assert row.answer is not None and row.answer.text == ""
    assert run(project, "eval", "--quiet") == 0
    full = read_report(config.report, what="report")
    q4 = next(row for row in full.questions if row.id == "q4")
    assert q4.answer is not None and q4.answer.text
    assert run(project, "gate") == 0


# -- outputs never replace inputs ------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` but the outputs' build/ and .cache/ folders, by path."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and not path.is_symlink()
        and path.relative_to(folder).parts[0] not in ("build", ".cache")
    }


def committed(project: Path) -> Path:
    """The tiny project with a baseline and a file under evals/ (inputs live there)."""
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 0
    (project.parent / "evals").mkdir()
    (project.parent / "evals" / "notes.md").write_text("the team's notes\n", encoding="utf-8")
    return project


def configure(project: Path, table: str, setting: str) -> None:
    """Set `setting` (`key = value` lines) in [table] of eval.toml, replacing the key's line."""
    keys = {line.split(" = ")[0] for line in setting.split("\n")}
    lines = project.read_text(encoding="utf-8").split("\n")
    text = "\n".join(line for line in lines if line.split(" = ")[0] not in keys)
    header = f"[{table}]\n"
    text = text.replace(header, header + setting + "\n") if header in text else f"{text}\n{header}{setting}\n"
    project.write_text(text, encoding="utf-8")


# (command line after --config, setting to add as (table, line) or None, what the message says)
ONTO_INPUTS = {
    "eval --report golden": (["eval", "--report", "golden.jsonl"], None, "would replace the golden set"),
    "eval --report evals/": (
        ["eval", "--report", "evals/notes.md"],
        None,
        "would replace a file under evals/",
    ),
    "export-qrels eval.toml": (["export-qrels", "eval.toml"], None, "would replace the settings file"),
    "export-run corpus": (["export-run", "corpus.jsonl"], None, "would replace the corpus"),
    "eval --report baseline": (["eval", "--report", "baseline.json"], None, "would replace the baseline"),
    "report = corpus": (["eval"], ("data", 'report = "corpus.jsonl"'), "would replace the corpus"),
    "report = baseline": (["gate"], ("data", 'report = "baseline.json"'), "would replace the baseline"),
    "summary = golden": (["gate"], ("data", 'summary = "golden.jsonl"'), "would replace the golden set"),
    "html = eval.toml": (["gate"], ("data", 'html = "eval.toml"'), "would replace the settings file"),
    "judge cache = golden": (["eval"], ("judge", 'cache = "golden.jsonl"'), "would replace the golden set"),
    "judge cache = labels": (
        ["eval"],
        ("judge", 'labels = "labels.jsonl"\ncache = "labels.jsonl"'),
        "judge labels",
    ),
    "report outside": (["eval"], ("data", 'report = "../outside.json"'), "must be inside the project folder"),
    "baseline outside": (["baseline"], ("data", 'baseline = "../outside.json"'), "must be inside"),
    "baseline = golden": (["baseline"], ("data", 'baseline = "golden.jsonl"'), "replace the golden set"),
}


@pytest.mark.parametrize("case", list(ONTO_INPUTS))
def test_an_output_onto_an_input_is_refused_before_anything_runs(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Each of these once replaced a committed input (or wrote outside the project) with exit
    0. Now: exit 2 naming the output and the input, every file as it was, nothing written."""
    folder = committed(project).parent
    argv, setting, said = ONTO_INPUTS[case]
    if setting is not None:
        configure(project, *setting)
    monkeypatch.chdir(folder)
    before = snapshot(folder)
    capsys.readouterr()
    assert run_cli(["--config", str(project), *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert snapshot(folder) == before
    assert not (folder / "build").exists() and not (folder.parent / "outside.json").exists()


def test_baseline_writes_the_baseline_it_is_for(project: Path) -> None:
    """The baseline is an input of every command but `baseline`, whose output it is."""
    folder = committed(project).parent
    (folder / "baseline.json").write_text("{}", encoding="utf-8")
    assert run_cli(["--config", str(project), "baseline", "--quiet"]) == 0
    assert read_report(folder / "baseline.json", what="baseline").counts.evaluated == 4


def test_a_path_given_on_the_command_line_may_point_outside_the_project(
    project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "report.json"
    assert run_cli(["--config", str(project), "eval", "--quiet", "--report", str(elsewhere)]) == 0
    assert read_report(elsewhere, what="report").counts.evaluated == 4


def test_a_command_line_symlink_onto_an_input_is_refused(project: Path, tmp_path: Path) -> None:
    """Where the path leads counts, not how it is spelt."""
    link = tmp_path / "innocent.json"
    link.symlink_to(project.parent / "golden.jsonl")
    before = snapshot(project.parent)
    assert run_cli(["--config", str(project), "eval", "--quiet", "--report", str(link)]) == 2
    assert snapshot(project.parent) == before


def test_a_configured_output_is_never_written_through_a_symlink(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build/report.json symlink once made `eval` replace the file it pointed to."""
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours\n", encoding="utf-8")
    (project.parent / "build").mkdir()
    (project.parent / "build" / "report.json").symlink_to(victim)
    assert run_cli(["--config", str(project), "eval", "--quiet"]) == 2
    assert "would be written through the symlink" in capsys.readouterr().err
    assert victim.read_text(encoding="utf-8") == "not yours\n"


def test_a_symlinked_output_folder_is_refused_too(project: Path, tmp_path: Path) -> None:
    (tmp_path / "real-build").mkdir()
    (project.parent / "build").symlink_to(tmp_path / "real-build")
    assert run_cli(["--config", str(project), "eval", "--quiet"]) == 2
    assert not list((tmp_path / "real-build").iterdir())


def loop(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(path.name)  # a link to itself


UNWRITABLE = {  # how the output path is broken -> what the message says
    "a folder": (lambda report: report.mkdir(parents=True), "is a folder, not a file"),
    "parent is a file": (lambda report: report.parent.write_text(""), "is a file, not a folder"),
    "symlink loop": (loop, "cannot be followed"),
}


@pytest.mark.parametrize("given", [False, True], ids=["configured", "--report"])
@pytest.mark.parametrize("broken", list(UNWRITABLE))
def test_an_output_that_cannot_be_a_file_is_exit_2_with_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str], broken: str, given: bool
) -> None:
    report = project.parent / "build" / "report.json"
    make, said = UNWRITABLE[broken]
    make(report)
    argv = ["--report", str(report)] if given else []
    assert run_cli(["--config", str(project), "eval", "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "fix:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("target", "said"),
    [(lambda folder: folder, "is a folder"), (lambda folder: folder / "golden.jsonl", "the golden set")],
    ids=["a folder", "the golden set"],
)
def test_github_step_summary_must_be_a_file_that_is_no_input(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    target: Callable[[Path], Path],
    said: str,
) -> None:
    folder = committed(project).parent
    before = snapshot(folder)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target(folder)))
    assert run_cli(["--config", str(project), "gate", "--quiet"]) == 2
    assert said in capsys.readouterr().err
    assert snapshot(folder) == before


def test_compare_output_onto_its_own_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    runs = tmp_path / "runs.txt"
    runs.write_text("q1 Q0 d1 1 2.0 base\nq1 Q0 d1 1 2.0 cand\n", encoding="utf-8")
    before = runs.read_bytes()
    argv = [
        "compare",
        "--qrels",
        str(qrels),
        "--runs",
        str(runs),
        "--baseline",
        "base",
        "--candidate",
        "cand",
    ]
    assert run_cli([*argv, "--k", "1", "--output", str(runs)]) == 2
    assert "would replace an input of compare" in capsys.readouterr().err
    assert runs.read_bytes() == before


class Killed(BaseException):
    """A run killed between two writes."""


def test_a_gate_killed_after_its_report_leaves_no_summary_of_the_last_run(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json, summary.md and report.html describe one run: the last run's summary and
    HTML report go before this run's report replaces the old one."""
    build = committed(project).parent / "build"
    assert run_cli(["--config", str(project), "gate", "--quiet"]) == 0
    assert sorted(p.name for p in build.iterdir()) == ["report.html", "report.json", "summary.md"]
    old_report = (build / "report.json").read_bytes()

    def killed(*args: object) -> None:
        raise Killed

    monkeypatch.setattr(commands, "write_summary", killed)
    set_min_length(project, 4)  # this run's report differs from the last one's
    with pytest.raises(Killed):
        run_cli(["--config", str(project), "gate", "--quiet"])
    assert sorted(p.name for p in build.iterdir()) == ["report.json"]
    assert (build / "report.json").read_bytes() != old_report


def test_model_loaders_draw_no_progress_bar_in_a_pipe() -> None:
    """transformers reads the hub's switch when first imported: after the command set it (here,
    with stdout and stderr pipes), any loader built on it, the NLI judge's too, draws no bar."""
    script = (
        "from rag_regress import cli; cli.quiet_model_loaders(); "
        "from transformers.utils import logging; print(logging.is_progress_bar_enabled())"
    )
    pytest.importorskip("transformers", reason="the dense extra installs transformers")
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip() == "False"


# -- a run that exits 2 leaves no report of an earlier run --------------------------------


def broken_generator(retriever: object, documents: object, options: object) -> object:
    raise RuntimeError("the model server refused the connection")  # BROKEN_LINE


BROKEN_LINE = 1 + next(
    number
    for number, line in enumerate(Path(__file__).read_text(encoding="utf-8").splitlines())
    if line.endswith("# BROKEN_LINE")
)
BROKEN = System(SHIPPED.build_retriever, broken_generator)  # type: ignore[arg-type]  # it never returns


def test_a_gate_that_exits_2_removes_the_last_runs_reports(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A passing gate's report.json, summary.md and report.html, then a gate whose generator
    factory raises: exit 2 at the factory's own line, and none of the three is left to stand
    for this run. The baseline (an input) and the caches stay."""
    build = committed(project).parent / "build"
    assert run(project, "gate", "--quiet") == 0
    assert sorted(path.name for path in build.iterdir()) == ["report.html", "report.json", "summary.md"]
    inputs = snapshot(project.parent)
    capsys.readouterr()
    assert run_cli(["--config", str(project), "gate", "--quiet"], BROKEN) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("error: ") and first.endswith(
        f"test_cli.py:{BROKEN_LINE}: build_generator raised RuntimeError: "
        "the model server refused the connection"
    )
    assert f"line {BROKEN_LINE}, in broken_generator" in err and "rag_regress/" not in err
    assert "removed " in err and "report.json" in err
    assert list(build.iterdir()) == []
    assert snapshot(project.parent) == inputs


def test_an_eval_that_exits_2_removes_the_report_it_would_have_written(project: Path, tmp_path: Path) -> None:
    """`eval --report PATH` that exits 2 removes the earlier report at PATH (its output), and
    leaves [data] report, which this command would not have written."""
    elsewhere = tmp_path / "elsewhere" / "report.json"
    assert run(project, "eval", "--quiet") == 0
    assert run(project, "eval", "--quiet", "--report", str(elsewhere)) == 0
    assert run_cli(["--config", str(project), "eval", "--quiet", "--report", str(elsewhere)], BROKEN) == 2
    assert not elsewhere.exists()
    assert (project.parent / "build" / "report.json").is_file()


def test_a_gate_refused_for_an_output_on_an_input_removes_nothing(project: Path) -> None:
    """Compared with last run's report (`--baseline build/report.json`), the gate would write
    its report onto the baseline it compares with: exit 2, and that file, an input of this
    run, is kept (only outputs check_outputs accepts are ever removed)."""
    assert run(project, "eval", "--quiet") == 0
    report = project.parent / "build" / "report.json"
    before = report.read_bytes()
    assert run(project, "gate", "--baseline", str(report)) == 2
    assert report.read_bytes() == before


def test_the_process_a_user_starts_imports_nothing_heavy() -> None:
    """`rag-regress gate` hands the work to a child it supervises; the process the user
    started only parses the arguments and watches, so it starts without numpy, scipy,
    pydantic, jinja2 or the engine's commands (each command would otherwise load them twice)."""
    probe = (
        "import sys, rag_regress.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'pydantic', 'jinja2'}), "
        "'rag_regress.dispatch' in sys.modules)"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[] False"


def test_every_command_parsed_says_what_it_needs_and_has_its_function() -> None:
    from rag_regress import cli, dispatch

    parsed = {action.dest: action for action in cli.build_parser()._actions}["command"]
    assert set(parsed.choices) == set(cli.NEEDS) == set(dispatch._COMMANDS)

"""Command line: `eval`, `baseline`, `gate` and `calibrate` (the judge against human labels).
The nox sessions are thin wrappers over it.

Also `sweep` (the [sweep] grid of settings against the current ones: sweep/), `compare`
(accept or reject a candidate run against a baseline run on given qrels, any system's TREC or
JSON files), `export-qrels` and `export-run` (for trec_eval, ranx & co.), and `import` (a BEIR
folder or TREC files as the corpus and golden set), and the golden set's lifecycle (golden/):
`golden generate` (candidates from [golden]'s model), `golden import-logs` (candidates from
real questions in a log export), `grade` (a page to grade them),
`add-judgments` (merge the grades) and `pool` (the unjudged documents of two runs' top k); and
the judge's labels: `grade --answers` (a page to label sentences of the report's answers) and
`add-labels` (merge them into [judge] labels).

This module parses the command line and starts the work: a command that runs the team's
system is handed to a supervised child process (execution/supervise.py), which imports the
engine's commands (dispatch.py, where the team's code is imported); the first process imports
nothing heavy, so it starts in a fraction of a second. Tests pass a `System` of their own to
`main`, which then runs the command in this process.

Exit codes: 0 success (gate passed: every configured check ran on evaluated data), 2 invalid
input, a baseline that cannot be compared, a check that could not run or team code that
crashed, exited or timed out, 3 quality regression (gate failed), 130 interrupted (Ctrl-C),
141 broken pipe. Results go to stdout; errors and warnings to stderr (docs/gate.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from . import __version__
from .errors import EvalInputError, ExitCode, shown_path
from .execution.supervise import deliver, run_supervised, supervised
from .golden import RESOLVE
from .render.inert import inert_console
from .settings import DEFAULT_PATH
from .terminal import interactive

if TYPE_CHECKING:
    from .api import System

ENGINE = "rag-regress"  # the distribution and its console script
PROG = ENGINE
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `yes | head`
INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command stopped by Ctrl-C
Needs = Literal["files", "settings", "system"]
# What each command needs before it runs (dispatch.py runs it): its arguments alone, eval.toml's
# settings, or the team's system too. The first process hands a "system" command to a child.
NEEDS: dict[str, Needs] = {
    "compare": "files",  # only the files it is given, no eval.toml
    "migrate": "files",  # before eval.toml is read: the file may be in an older format
    "import": "settings",  # [data]'s paths only, never the data already there
    "export-qrels": "settings",
    "calibrate": "settings",
    "golden": "settings",
    "add-judgments": "settings",
    "add-labels": "settings",
    "grade": "settings",
    "export-run": "system",
    "eval": "system",
    "sweep": "system",
    "baseline": "system",
    "gate": "system",
    "pool": "system",
}


def _version() -> str:
    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Evaluate retrieval and answers on the golden set; gate regressions against a baseline.",
        epilog="Exit codes: 0 ok, 2 invalid input or a check that could not run, 3 quality regression, "
        "130 interrupted, 141 broken pipe (docs/gate.md).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument(
        "--config", type=Path, default=DEFAULT_PATH, help="settings file (default: eval.toml)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser(
        "eval", help="evaluate, print the per-question table, write the JSON report"
    )
    evaluate.add_argument("--report", type=Path, help="where to write the report (default: [data] report)")
    evaluate.add_argument("--quiet", action="store_true", help="print only the report path; no progress bars")
    evaluate.add_argument(
        "--all", action="store_true", help="print every question, not only those that failed a check"
    )
    evaluate.add_argument(
        "--dry-run", action="store_true", help="print the estimated cost of the model calls; call nothing"
    )
    baseline = commands.add_parser("baseline", help="evaluate and overwrite the committed baseline report")
    baseline.add_argument("--quiet", action="store_true", help="no table and no progress bars")
    baseline.add_argument(
        "--dry-run", action="store_true", help="print the estimated cost of the model calls; call nothing"
    )
    baseline.add_argument(
        "--fit-floors",
        action="store_true",
        help="fix the gate settings the new baseline does not meet or the data cannot evaluate "
        "(floors, must-pass flags, [generation] min_score), printing each change; see README",
    )
    gate = commands.add_parser("gate", help="evaluate and compare with the baseline; exit 3 on regression")
    gate.add_argument("--baseline", type=Path, help="baseline report (default: [data] baseline)")
    gate.add_argument(
        "--accept-changed-data",
        action="store_true",
        help="compare even though the corpus or golden set differs from the baseline's (see its receipt)",
    )
    gate.add_argument("--quiet", action="store_true", help="no progress bars")
    gate.add_argument(
        "--dry-run", action="store_true", help="print the estimated cost of the model calls; call nothing"
    )
    calibrate_ = commands.add_parser(
        "calibrate", help="score the judge against the human labels ([judge] labels)"
    )
    calibrate_.add_argument("--labels", type=Path, help="a labels file to score instead of [judge] labels")
    calibrate_.add_argument("--json", action="store_true", help="print the figures as JSON")
    calibrate_.add_argument(
        "--compare",
        metavar="BACKENDS",
        help="judges to run side by side on the same labels, comma-separated (e.g. lexical,llm), "
        "each with [judge]'s other settings",
    )
    migrate = commands.add_parser(
        "migrate", help="upgrade this project's files to this release's formats, showing the diff"
    )
    migrate.add_argument("--dry-run", action="store_true", help="show the changes; write nothing")
    commands.add_parser(
        "sweep",
        help="try the [sweep] grid against the current settings; name a winner only when significant",
    )
    add_interop_commands(commands)
    add_golden_commands(commands)
    return parser


def add_golden_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`golden generate`, `golden import-logs`, `grade`, `add-judgments`, `pool`: the golden set's
    lifecycle (golden/)."""
    golden = commands.add_parser(
        "golden", help="grow the golden set: `golden generate` and `golden import-logs` write candidates"
    )
    steps = golden.add_subparsers(dest="step", required=True)
    generate = steps.add_parser(
        "generate",
        help="candidate questions from the corpus through [golden]'s OpenAI-compatible endpoint, "
        "to [golden] candidates (never golden.jsonl); resumes where an interrupted run stopped",
    )
    generate.add_argument("--count", type=_positive, help="candidates to plan (default: [golden] count)")
    generate.add_argument("--seed", type=int, help="sampling and request seed (default: [golden] seed)")
    generate.add_argument("--output", type=Path, help="candidates file (default: [golden] candidates)")
    generate.add_argument("--quiet", action="store_true", help="no progress bars")
    logs = steps.add_parser(
        "import-logs",
        help="candidate questions from real questions in a log export (JSONL, CSV or an OpenTelemetry "
        "span export; [logs] names the fields), redacted, deduplicated and sampled, to [golden] candidates",
    )
    logs.add_argument("file", type=Path, metavar="FILE", help="the exported log")
    logs.add_argument(
        "--format", choices=("jsonl", "csv", "otel"), help="the log's format (default: from the file)"
    )
    logs.add_argument("--count", type=_positive, help="candidates to sample at most (default: [logs] count)")
    logs.add_argument("--seed", type=int, help="the sampling seed (default: [logs] seed)")
    logs.add_argument("--output", type=Path, help="candidates file (default: [golden] candidates)")
    logs.add_argument("--dry-run", action="store_true", help="report what would be written; write nothing")
    grade = commands.add_parser(
        "grade", help="write a self-contained HTML page to grade candidates and pooled documents"
    )
    grade.add_argument("--candidates", type=Path, help="a candidates file (`golden generate`)")
    grade.add_argument("--pool", type=Path, help="a pool file (`pool`): unjudged documents to grade")
    grade.add_argument(
        "--all", action="store_true", help="also every golden question with its judged documents"
    )
    grade.add_argument(
        "--output", type=Path, default=Path("build/grade.html"), help="default: build/grade.html"
    )
    grade.add_argument(
        "--title", help="the page's title (work in progress is kept per title and per items graded)"
    )
    grade.add_argument(
        "--answers",
        nargs="?",
        const="",
        metavar="REPORT",
        help="instead: a sample of the sentences the judge judged in a report's answers (default: "
        "[data] report) to label supported, not supported or cannot tell",
    )
    grade.add_argument(
        "--count", type=_positive, default=60, help="with --answers: sentences to sample (default: 60)"
    )
    grade.add_argument("--seed", type=int, default=0, help="with --answers: the sampling seed (default: 0)")
    grade.add_argument(
        "--blind",
        action="store_true",
        help="with --answers: mark none of the judge's evidence (its reasons quote only sentences it "
        "found unsupported)",
    )
    merge = commands.add_parser(
        "add-judgments", help="merge judgments files from the grading page into the golden set"
    )
    merge.add_argument("files", type=Path, nargs="+", metavar="FILE")
    merge.add_argument(
        "--on-conflict",
        choices=RESOLVE,
        help="settle conflicts: keep the golden set's (or first file's) grade, decision or edit, "
        "replace with the last file's, or take the max or min grade (default: refuse, listing them)",
    )
    merge.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    labels = commands.add_parser(
        "add-labels", help="merge labels from a `grade --answers` page into the judge's labels"
    )
    labels.add_argument("files", type=Path, nargs="+", metavar="FILE")
    labels.add_argument("--labels", type=Path, help="the labels file to merge into (default: [judge] labels)")
    labels.add_argument(
        "--on-conflict",
        choices=("keep", "replace"),
        help="a sentence labelled both ways: keep the labels file's (or first file's) label, or replace "
        "it with the last file's (default: refuse, listing them)",
    )
    labels.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    pool = commands.add_parser(
        "pool", help="evaluate, then write the unjudged documents of the baseline's and this run's top k"
    )
    pool.add_argument("--baseline", type=Path, help="baseline report (default: [data] baseline)")
    pool.add_argument(
        "--output", type=Path, default=Path("build/pool.jsonl"), help="default: build/pool.jsonl"
    )


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return int(text)


def add_interop_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`compare`, `export-qrels`, `export-run`, `import`: other tools' files in and out (see interop/)."""
    cmp = commands.add_parser(
        "compare",
        help="accept (exit 0) or reject (exit 3) a candidate run against a baseline run; needs no eval.toml",
    )
    cmp.add_argument(
        "--qrels", type=Path, required=True, help="TREC qrels or JSON {qid: [ids] | {id: grade}}"
    )
    cmp.add_argument(
        "--runs", type=Path, nargs="+", required=True, help="TREC runs or JSON files holding both runs"
    )
    cmp.add_argument("--baseline", required=True, help="name of the baseline run (TREC tag or JSON key)")
    cmp.add_argument("--candidate", required=True, help="name of the candidate run")
    cmp.add_argument("--must-pass", nargs="+", default=[], metavar="QID", help="queries that must hit")
    cmp.add_argument("--k", type=_positive, required=True, help="cutoff: how many results count")
    cmp.add_argument("--output", type=Path, help="also write the verdict as JSON here")
    cmp.add_argument(
        "--all",
        action="store_true",
        help="print every query and every id (default: queries that differ or fail a check, few ids each)",
    )
    qrels = commands.add_parser("export-qrels", help="write the golden set as TREC qrels (.json: JSON)")
    qrels.add_argument("output", type=Path)
    export = commands.add_parser("export-run", help="evaluate and write the retriever's output as a TREC run")
    export.add_argument("output", type=Path, help="TREC run file (.json: JSON {qid: {docid: score}})")
    export.add_argument("--tag", default=PROG, help="run name (last TREC column)")
    bring = commands.add_parser(
        "import", help="write a BEIR or TREC test collection as the [data] corpus and golden set"
    )
    formats = bring.add_subparsers(dest="format", required=True)
    beir = formats.add_parser(
        "beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (or qrels.tsv)"
    )
    beir.add_argument("folder", type=Path, metavar="DIR")
    beir.add_argument(
        "--split", help="the qrels/<split>.tsv to read (default: test; without qrels/, DIR/qrels.tsv)"
    )
    beir.add_argument("--qrels", type=Path, metavar="FILE", help="read these qrels (3 or 4 columns) instead")
    trec = formats.add_parser("trec", help="TREC files: qrels, topics and a corpus")
    trec.add_argument(
        "--qrels", type=Path, required=True, help="`qid 0 docid grade` or `qid docid grade` per line"
    )
    trec.add_argument(
        "--topics", type=Path, required=True, help="TREC SGML topics, `qid<TAB>text` lines or JSON Lines"
    )
    trec.add_argument("--corpus", type=Path, required=True, help="JSON Lines or id<TAB>[title<TAB>]text")
    for source in (beir, trec):
        source.add_argument("--sample", type=_positive, metavar="N", help="keep N questions (see --seed)")
        source.add_argument("--seed", type=int, default=0, help="same N and seed: same questions")
        source.add_argument("--force", action="store_true", help="replace an existing corpus and golden set")


# The commands, by what each needs: the files it is given ("files"), eval.toml ("settings"), or
# eval.toml and the team's system ("system": always in a supervised child process, `main`).


@inert_console()  # data in any message cannot act as a CI command (render/inert.py)
def main(argv: list[str] | None = None, system: System | None = None) -> int:
    """The command line. `system` defaults to the team's (retriever.py and generator.py),
    which then runs in a child process this one supervises (execution/supervise.py)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(arguments)
    quiet_model_loaders()
    if system is not None:  # a caller's own system (a test): in this process
        return _run(args, system)
    channel = supervised()
    if channel is None and NEEDS[args.command] == "system":  # it imports and runs the team's code
        # A child that could not finish may have died before it could clean up: so do we.
        return run_supervised(arguments, args.command, lambda: discard_reports(args))
    code = _run(args, None)
    if channel is not None:
        deliver(channel, code)
    return code


def quiet_model_loaders() -> None:
    """No model loader's progress bar ("Loading weights", downloads) in CI logs and pipes: the
    hub's switch, which transformers reads when it is first imported, is set unless a person
    watches (stdout and stderr both terminals); a team's own setting of it wins."""
    if not interactive():
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _run(args: argparse.Namespace, system: System | None) -> int:
    """Dispatch one command, its errors turned into exit codes."""
    try:
        from .dispatch import dispatch  # the engine's commands: imported by the process that runs one

        return dispatch(args, NEEDS[args.command], system)
    except EvalInputError as error:
        print(f"error: {error}", file=sys.stderr)
        discard_reports(args)
        return ExitCode.INVALID_INPUT
    except KeyboardInterrupt:  # Ctrl-C: stop at once, no traceback, the shell's code for SIGINT
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # `eval | head` closed the pipe: stop quietly, as command-line tools do, with the
        # status of a process ended by SIGPIPE (never 0: a cut-off gate must not pass). Point
        # stdout at devnull so the interpreter's final flush cannot raise again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def discard_reports(args: argparse.Namespace) -> None:
    """After `eval` or `gate` could not complete: remove the reports an earlier run left where
    this one would have written its own (run_files.discard_reports, which removes only outputs
    check_outputs accepts, never an input), and say so on stderr, so that no report, summary
    or HTML page of an earlier run stands for a run that exited 2. Settings that cannot be read
    remove nothing: the error already printed says why."""
    if args.command not in ("eval", "gate"):  # `baseline` writes only the baseline: an input
        return
    if getattr(args, "dry_run", False):  # a dry run writes no report: the last one stands as it was
        return
    from . import run_files
    from .settings.config import load_config

    try:
        config = load_config(args.config)
        removed = run_files.discard_reports(
            config, args.command, getattr(args, "report", None), getattr(args, "baseline", None)
        )
    except (EvalInputError, OSError):
        return
    if removed:
        shown = ", ".join(shown_path(path) for path in removed)
        print(f"removed {shown}: written by an earlier run, not this one", file=sys.stderr)

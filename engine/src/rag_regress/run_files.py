"""The files a run reads and writes: an output never replaces an input, and no report of an
earlier run stands for one that could not complete.

Every command that writes checks its outputs first (check_outputs, with inputs/files.py's
check_output): outputs set in eval.toml stay in the project folder and off symlinks, no two of
them are one file, and none is a file the run reads. After a run that could not complete,
discard_reports removes the reports it would have replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import EvalInputError
from .inputs.files import check_output
from .settings.config import Config


def named_inputs(config: Config, *extra: tuple[Path, str], baseline: bool = True) -> dict[Path, str]:
    """Every file a run reads, resolved, with its name for the error message: an output on
    one of them is refused. `baseline` False: the `baseline` command, which replaces it."""
    named = [
        (config.corpus, "the corpus ([data] corpus)"),
        (config.golden, "the golden set ([data] golden)"),
        (config.path, "the settings file"),
        (config.judge.labels, "the judge labels ([judge] labels)"),
        *([(config.holdout, "the holdout ([data] holdout)")] if config.holdout else []),
        *([(config.baseline, "the baseline ([data] baseline)")] if baseline else []),
        *extra,
    ]
    inputs = {}
    for path, name in named:
        try:
            inputs[path.resolve()] = name
        except (RuntimeError, OSError):  # a symlink loop: reading it fails later, with its own error
            inputs[path] = name
    return inputs


# Every file a run may write, by its setting: no two may be one file (the baseline is an input
# of every command but `baseline`, where check_output refuses an output on it).
OUTPUTS = (
    ("data", "report"),
    ("data", "summary"),
    ("data", "html"),
    ("judge", "cache"),
    ("run", "output_cache_file"),
)


def _require_distinct_outputs(config: Config) -> None:
    """Two output settings naming one file would let one overwrite the other: exit 2."""
    seen: dict[Path, str] = {}
    for table, key in OUTPUTS:
        path = config.as_written(table, key)
        try:
            resolved = (config.path.parent / path).resolve()
        except (RuntimeError, OSError):  # a symlink loop: check_output names it
            continue
        setting = f"[{table}] {key}"
        if resolved in seen:
            raise EvalInputError(
                config.path,
                f"{seen[resolved]} and {setting} are the same file ({path}): one would overwrite the other",
                f"give {setting} a path of its own",
                config.line_of(table, key),
            )
        seen[resolved] = setting


def check_outputs(
    config: Config,
    command: str,
    explicit: Path | None = None,
    *,
    extra_inputs: tuple[tuple[Path, str], ...] = (),
) -> None:
    """Before `command` runs: every file it will write is safe to write (check_output). Outputs
    set in eval.toml stay in the project folder and off symlinks; `explicit` (a path given on
    the command line) and $GITHUB_STEP_SUMMARY may point elsewhere, never onto an input."""
    inputs = named_inputs(config, *extra_inputs, baseline=command != "baseline")
    project, evals = config.path.parent, config.path.parent / "evals"

    def configured(table: str, key: str, what: str) -> None:
        written = config.as_written(table, key)
        check_output(written, f"{what} ([{table}] {key})", inputs, project=project, protected=evals)

    if command in ("eval", "baseline", "gate", "export-run", "pool"):
        configured("judge", "cache", "verdict cache")
        if config.run.output_cache != "off":
            configured("run", "output_cache_file", "output cache")
    if explicit is not None:
        check_output(explicit, "output", inputs, protected=evals)
    if command == "eval" and explicit is None:
        configured("data", "report", "report")
    if command == "baseline":  # the one output allowed under evals/: it is the file being made
        written = config.as_written("data", "baseline")
        check_output(written, "baseline ([data] baseline)", inputs, project=project)
    if command == "gate":
        configured("data", "report", "report")
        configured("data", "summary", "summary")
        configured("data", "html", "HTML report")
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if step_summary:
            check_output(Path(step_summary), "step summary ($GITHUB_STEP_SUMMARY)", inputs, protected=evals)
    _require_distinct_outputs(config)


def report_files(config: Config, command: str, explicit: Path | None = None) -> list[Path]:
    """The reports `command` writes, each a verdict a reader (or CI's artifact upload) takes
    for this run's: `eval`'s report (`explicit`, its --report, else [data] report); `gate`'s
    report, summary and HTML report. None for `baseline`: the file it writes is the baseline,
    an input of every gate, never a stale output. The caches are not reports: what a failed
    run asked is kept for the next."""
    if command == "eval":
        return [explicit or config.report]
    if command == "gate":
        return [config.report, config.summary, config.html]
    return []


def discard_reports(
    config: Config, command: str, explicit: Path | None = None, baseline: Path | None = None
) -> list[Path]:
    """After `command` could not complete (exit 2, or a process that ended before the command
    returned): remove the reports an earlier run left where this one writes its own, so none
    of them stands for this run. Returns those removed.

    Only what check_outputs accepts now, as this command's outputs, is removed: an output on
    an input (the baseline given by `baseline` for `gate` included), outside the project or
    through a symlink raises EvalInputError and nothing is removed. `$GITHUB_STEP_SUMMARY`
    is left alone: steps append to it, so it holds other steps' output too."""
    compared = ((baseline or config.baseline, "the baseline compared with"),) if command == "gate" else ()
    check_outputs(config, command, explicit, extra_inputs=compared)
    removed = []
    for path in report_files(config, command, explicit):
        if path.is_symlink() or path.is_file():  # a folder is no report of ours: left alone
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed

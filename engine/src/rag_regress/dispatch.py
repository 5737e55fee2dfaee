"""The engine's commands, each one function registered by name with what it needs (its
arguments alone, eval.toml's settings, or the team's system too), and `dispatch`, which runs
one. The command line (cli.py) parses the arguments and calls `dispatch` in the process that
does the work.

This is the one module that imports the team's code: the two factories eval.toml's [system]
table names (`team_system`), or the parts registered under the names it gives, handed to the
commands (commands.py) as a `System`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import commands, run, run_files
from .answers.calibration import calibrate, compare
from .api import System
from .calling.outputs import code_digest
from .errors import EvalInputError, ExitCode
from .execution.team_trace import raised, team_code_error
from .golden.merge import run_add_judgments
from .golden.pool import report_pool, unjudged_pool
from .inputs.data import load_corpus
from .inputs.files import check_output
from .inputs.reports import read_report
from .interop.collections import read_beir, read_trec, run_import
from .interop.compare import run_compare
from .interop.export import export_qrels, export_run
from .registry import Kind, UnknownPart, load, module_of
from .render.calibration import format_calibration, format_comparison
from .render.progress import Progress
from .settings.config import Config, load_config
from .settings.migrate import run_migrate
from .sweep.command import run_sweep
from .terminal import interactive

ENGINE = "rag-regress"  # the distribution, named in messages


def _factory(config: Config, part: str) -> tuple[Callable[..., Any], Path]:
    """The team's factory named by [system] `part` ("module:function") and the folder of its
    package (hashed for the output cache). Imported here and nowhere else in the engine; a
    module that fails while imported is EvalInputError at the team's own line (_import_error)."""
    spec = getattr(config.system, part)
    line = config.line_of("system", part) or config.line_of("system")
    if spec is None:
        raise EvalInputError(
            config.path,
            f"[system] names no {part}: the engine does not know which {part} to evaluate",
            f'add `{part} = "your_package.{part}:build_{part}"` under [system] '
            f"(`{ENGINE} migrate` writes it for a project made by an older template)",
            line,
        )
    if ":" not in spec:
        return _registered(config, part, spec, line)
    module_name, _, name = spec.partition(":")
    try:
        module = _import(module_name, config.path.parent)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # anything the team's module does while imported: exit 2
        if isinstance(error, ModuleNotFoundError) and _names_the_module(error, module_name):
            raise EvalInputError(
                config.path,
                f"[system] {part} = {spec!r}: no module named {error.name!r}",
                "install your project (`pip install -e .`; the nox sessions do) or fix the module path",
                line,
            ) from None
        raise _import_error(error, config, part, spec, line) from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise EvalInputError(
            config.path,
            f"[system] {part} = {spec!r}: {module_name} has no function {name!r}",
            "name the function that builds it, e.g. build_" + part,
            line,
        )
    package = sys.modules[module_name.partition(".")[0]]
    source = Path(getattr(package, "__file__", None) or getattr(module, "__file__", "") or ".")
    return factory, source.parent


def _registered(config: Config, part: str, name: str, line: int | None) -> tuple[Callable[..., Any], Path]:
    """The `build` of the part registered as `name` ([system] `part` = "NAME": parts.py) and
    the folder of its package. A library its module needs that is not installed is exit 2
    naming it; any other failure while imported, exit 2 at the module's own line."""
    kind: Kind = "retriever" if part == "retriever" else "generator"
    try:
        module = load(kind, name)
    except UnknownPart as error:  # eval.toml was checked: the package was removed meanwhile
        raise EvalInputError(
            config.path, f"[system] {part}: {error}", "name a registered one", line
        ) from None
    except KeyboardInterrupt:
        raise
    except ImportError as error:
        missing = error.name.partition(".")[0] if error.name else str(error)
        own = module_of(kind, name).startswith(f"{__package__}.")
        raise EvalInputError(
            config.path,
            f"[system] {part} = {name!r} needs {missing!r}, which is not installed",
            f"install the engine's extra: pip install 'rag-regress[{name}]' torch==2.13.0"
            if own
            else f"install the package that provides {missing!r}, or choose another {part}",
            line,
        ) from None
    except BaseException as error:
        raise _import_error(error, config, part, name, line) from None
    factory = getattr(module, "build", None)
    if not callable(factory):
        raise EvalInputError(
            config.path,
            f"[system] {part} = {name!r}: its module {module.__name__} has no function 'build'",
            f"declare build(...) in that module, or choose another {part}",
            line,
        )
    package = sys.modules[module.__name__.partition(".")[0]]
    return factory, Path(getattr(package, "__file__", None) or module.__file__ or ".").parent


def _names_the_module(error: ModuleNotFoundError, module_name: str) -> bool:
    """The missing module is the one [system] names (or a package it is in): the setting is
    wrong or the project is not installed. Any other is missing for the team's own import."""
    missing = error.name
    return missing is not None and (missing == module_name or module_name.startswith(missing + "."))


def _import_error(
    error: BaseException, config: Config, part: str, spec: str, line: int | None
) -> EvalInputError:
    """The team's module failed while imported (a syntax error, a NameError, a library it
    imports that is not installed, any exception, sys.exit): exit 2 at the team's own file and
    line with their frames only, never a traceback through the engine."""
    problem = f"importing [system] {part} {spec!r} {raised(error)}"
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.partition(".")[0]
        fix = (
            f"install the package that provides {top!r} in this environment and list it in your "
            "project's dependencies (pyproject.toml), or remove the import"
        )
    else:
        fix = "correct your code at the line named above (the frames listed are yours, innermost last)"
    return team_code_error(error, problem, fix, config.path, line)


def _import(module_name: str, folder: Path) -> Any:
    """Import the team's module; from `src/` beside eval.toml (or its folder) when it is not
    installed, as pytest's `pythonpath` would. Whatever the module raises is raised here."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        top = module_name.partition(".")[0]
        if error.name is None or not (error.name == top or module_name.startswith(error.name + ".")):
            raise  # the team's module itself imports something missing: its own error
        for root in (folder / "src", folder):
            if (root / top).is_dir() or (root / f"{top}.py").is_file():
                sys.path.insert(0, str(root))
                return importlib.import_module(module_name)
        raise


def team_system(config: Config) -> System:
    """The system under test: the factories [system] names, and the hash of their packages'
    source that identifies it to the output cache."""
    build_retriever, retriever_source = _factory(config, "retriever")
    build_generator, generator_source = _factory(config, "generator")
    digests = sorted({code_digest(retriever_source), code_digest(generator_source)})
    return System(build_retriever, build_generator, ":".join(digests))


_COMMANDS: dict[str, Callable[..., int]] = {}


def command(*names: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Register the function that runs the command(s) `names`: called with the parsed
    arguments, then eval.toml's Config (cli.NEEDS "settings" or "system"), then the System."""

    def register(function: Callable[..., int]) -> Callable[..., int]:
        for name in names:
            _COMMANDS[name] = function
        return function

    return register


def dispatch(args: argparse.Namespace, needs: str, system: System | None) -> int:
    """Run one command, given what it `needs` (cli.NEEDS); `system` is the team's unless a
    caller (a test) passes its own."""
    function = _COMMANDS[args.command]
    if needs == "files":
        return function(args)
    config = load_config(args.config)
    if needs == "settings":
        return function(args, config)
    system = system or team_system(config)
    if getattr(args, "dry_run", False):  # eval, baseline, gate: the estimate, no call (estimate.py)
        return commands.run_dry(config, system, args.command)
    return function(args, config, system)


@command("compare")
def _compare(args: argparse.Namespace) -> int:
    if args.output is not None:
        inputs = {path.resolve(): "an input of compare" for path in [args.qrels, *args.runs, args.config]}
        check_output(args.output, "output (--output)", inputs)
    return run_compare(
        args.qrels,
        args.runs,
        args.baseline,
        args.candidate,
        args.k,
        args.must_pass,
        args.output,
        show_all=args.all,
    )


@command("migrate")
def _migrate(args: argparse.Namespace) -> int:
    return run_migrate(args.config, args.dry_run)


@command("import")
def _import_collection(args: argparse.Namespace, config: Config) -> int:
    read = (
        (lambda: read_beir(args.folder, args.split, args.qrels))
        if args.format == "beir"
        else (lambda: read_trec(args.qrels, args.topics, args.corpus))
    )
    return run_import(read, config, args.sample, args.seed, args.force)


@command("export-qrels")
def _export_qrels(args: argparse.Namespace, config: Config) -> int:
    run_files.check_outputs(config, args.command, args.output)
    print(f"wrote {export_qrels(config, args.output)} queries to {args.output}")
    return ExitCode.OK


@command("calibrate")
def _calibrate(args: argparse.Namespace, config: Config) -> int:
    if args.compare:
        names = [name.strip() for name in args.compare.split(",") if name.strip()]
        compared = compare(config.judge, config.path, names, args.labels)
        print(json.dumps(compared, indent=1) if args.json else format_comparison(compared))
        return ExitCode.OK
    result = calibrate(config.judge, config.path, args.labels)
    print(json.dumps(result, indent=1) if args.json else format_calibration(result))
    return ExitCode.OK


@command("golden")
def _golden(args: argparse.Namespace, config: Config) -> int:
    """The golden-set steps, which never run the team's system (each module imported only
    by the step that needs it)."""
    if args.step == "import-logs":
        from .golden.logs import run_import_logs

        return run_import_logs(
            config,
            args.file,
            form=args.format,
            count=args.count,
            seed=args.seed,
            output=args.output,
            dry_run=args.dry_run,
        )
    from .golden.generate import run_generate

    return run_generate(
        config, count=args.count, seed=args.seed, output=args.output, show_progress=not args.quiet
    )


@command("add-judgments")
def _add_judgments(args: argparse.Namespace, config: Config) -> int:
    return run_add_judgments(config, args.files, args.on_conflict, args.dry_run)


@command("add-labels")
def _add_labels(args: argparse.Namespace, config: Config) -> int:
    from .golden.labels import run_add_labels  # imported here: only `add-labels` needs it

    return run_add_labels(config, args.files, args.labels, args.on_conflict, args.dry_run)


@command("grade")
def _grade(args: argparse.Namespace, config: Config) -> int:
    from .golden.page import run_grade  # imported here: only `grade` needs it

    run_files.check_outputs(config, "grade", args.output)
    if args.answers is None:
        return run_grade(config, args.output, args.candidates, args.pool, args.all, args.title)
    from .golden.answers import run_grade_answers

    if args.candidates is not None or args.pool is not None or args.all:
        raise EvalInputError(
            config.path,
            "grade --answers makes a page of answer sentences only",
            "make the documents' page on its own: drop --candidates, --pool or --all",
        )
    report = Path(args.answers) if args.answers else config.report
    return run_grade_answers(
        config, report, args.output, args.count, args.seed, args.title, evidence=not args.blind
    )


def _progress(args: argparse.Namespace) -> bool:
    return not getattr(args, "quiet", False)


@command("export-run")
def _export_run(args: argparse.Namespace, config: Config, system: System) -> int:
    run_files.check_outputs(config, args.command, args.output)
    scores = export_run(config, args.output, args.tag, lambda c: run.evaluate(c, system))
    print(f"wrote run {args.tag!r} to {args.output} ({scores})")
    return ExitCode.OK


@command("eval")
def _eval(args: argparse.Namespace, config: Config, system: System) -> int:
    return commands.run_eval(config, system, args.report, args.quiet, _progress(args), args.all)


@command("sweep")
def _sweep(args: argparse.Namespace, config: Config, system: System) -> int:
    return run_sweep(config, system)


@command("baseline")
def _baseline(args: argparse.Namespace, config: Config, system: System) -> int:
    return commands.run_baseline(config, system, args.quiet, _progress(args), args.fit_floors)


@command("gate")
def _gate(args: argparse.Namespace, config: Config, system: System) -> int:
    return commands.run_gate(config, system, args.baseline, args.accept_changed_data, _progress(args))


@command("pool")
def _pool(args: argparse.Namespace, config: Config, system: System) -> int:
    return run_pool(config, system, args.baseline, args.output, _progress(args))


def run_pool(config: Config, system: System, baseline: Path | None, output: Path, progress: bool) -> int:
    """`pool`: evaluate this system, then write what neither it nor the baseline has judged."""
    baseline_path = baseline or config.baseline
    run_files.check_outputs(config, "pool", output, extra_inputs=((baseline_path, "the baseline"),))
    before = read_report(baseline_path)
    report = run.evaluate(config, system, progress=Progress(progress and interactive()))
    lines, gone = unjudged_pool(report, before, load_corpus(config.corpus))
    return report_pool(output, lines, gone, report.k)

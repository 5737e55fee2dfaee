"""The command line against careless and hostile inputs: whatever eval.toml, the corpus, the
golden set, the baseline and the verdict cache hold, `eval`, `baseline` and `gate`

- exit 0, 2 or 3 (2: the input is refused with its file, line or key, and the fix);
- never end in a traceback (an exception escaping `main`);
- never change an input (the files under evals/ and eval.toml; `baseline` rewrites only the
  baseline, on purpose);
- never write outside the project's folder.

Each example copies the tiny project (tests/conftest.py, laid out as a real project: data in
evals/, the verdict cache in .cache/) into a fresh folder, applies one to three mutations and
runs one command in process. The default profile fits the team's CI (well under a minute on
two cores); RAG_EVAL_FUZZ=long runs many more examples, for a nightly run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TINY_CONFIG, TINY_CORPUS, TINY_GOLDEN, run_cli, write_project

LONG = os.environ.get("RAG_EVAL_FUZZ") == "long"
PROFILE = settings(
    max_examples=1000 if LONG else 400,
    deadline=None,  # one example runs a whole command: its time varies with the machine
    derandomize=True,  # the same examples on every run: a failure in CI is a failure at home
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# The tiny project as a real one lays it out: data and baseline in evals/, reports in build/.
CONFIG = (
    TINY_CONFIG.replace('"corpus.jsonl"', '"evals/corpus.jsonl"')
    .replace('"golden.jsonl"', '"evals/golden.jsonl"')
    .replace('"baseline.json"', '"evals/baseline.json"')
    .replace('report = "build/report.json"', 'report = "build/report.json"\nsummary = "build/summary.md"')
    + '\n[judge]\ncache = ".cache/verdicts.json"\n'
)
INPUTS = ("eval.toml", "evals")  # what no command may change (baseline: its own file aside)
COMMANDS = ("eval", "gate", "baseline")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny project after one `baseline` (so the gate has a baseline and the verdict
    cache is filled), its build/ folder removed; each example copies it."""
    root = tmp_path_factory.mktemp("pristine") / "project"
    config = write_project(root / "evals", CONFIG)
    config.rename(root / "eval.toml")
    with contextlib.chdir(root), contextlib.redirect_stdout(io.StringIO()):  # a failure's output stays short
        assert run_cli(["--config", "eval.toml", "baseline"]) == 0
    assert (root / ".cache" / "verdicts.json").is_file()
    shutil.rmtree(root / "build", ignore_errors=True)
    return root


# --- mutations -----------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    st.sampled_from(
        [
            math.nan,
            math.inf,
            -math.inf,
            -1,
            0,
            -0.5,
            1.5,
            10**30,
            2**63,
            -(2**63),
            "",
            "x",
            "recall@5",
            "v1.2",
            True,
            False,
            [],
            {},
            [["recall@5"]],
            {"nested": {"deeper": [1, "two"]}},
            "../escape.json",  # a path out of the project
            "evals/golden.jsonl",  # an output path onto an input
            "evals",  # a folder
        ]
    ),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    # any text, but never a path that leaves the example's folder (see PATHS)
    st.text(max_size=12).filter(lambda text: not text.startswith(("/", "~")) and ".." not in text),
)


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into `value` (dict keys and list indexes), containers and leaves alike."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))


def mutate_tree(tree: Any, path: tuple[Any, ...], action: str, value: Any) -> None:
    """Replace, delete or add next to the node at `path` (a dict key or a list index)."""
    *parents, last = path
    node = tree
    for key in parents:
        node = node[key]
    if action == "replace":
        node[last] = value
    elif action == "delete":
        del node[last]
    elif isinstance(node, dict):  # "unknown": a key nobody reads, next to a real one
        node["unknown_key"] = value
    elif isinstance(node, list):
        node.append(value)
    else:
        raise TypeError("an earlier mutation replaced this node's parent")


# Settings a project may set, present in the tiny eval.toml or not, with the values most
# likely to be accepted and then break something: numbers out of range, output paths onto
# inputs or out of the project, a tag with a dot.
NUMBERS = st.sampled_from(
    [math.nan, math.inf, -math.inf, -5, -1, 0, 1, 2, 0.5, 1e-300, 1e300, 10**9, 2**63 - 1, 10**30]
)
PATHS = st.sampled_from(
    [
        "../escape.json",  # lands in the example's own temporary folder, where it is noticed
        "evals/golden.jsonl",
        "evals/corpus.jsonl",
        "evals/baseline.json",
        "eval.toml",
        "evals",  # a folder
        "build/report.json/below-a-file",  # below a file
        # Never an absolute path or one further up: a command that wrongly writes there
        # (as root, `os.replace` onto /dev/null makes it a plain file) would harm the machine.
    ]
)
# Where a command writes (and the holdout and labels, which it must only read).
PATH_SETTINGS = [
    ("data", "report"),
    ("data", "summary"),
    ("data", "html"),
    ("data", "baseline"),
    ("judge", "cache"),
    ("data", "holdout"),
    ("judge", "labels"),
]
SETTINGS: list[tuple[tuple[str, ...], st.SearchStrategy[Any]]] = [
    *(
        (path, NUMBERS)
        for path in [
            ("stats", "resamples"),
            ("stats", "exact_limit"),
            ("stats", "alpha"),
            ("stats", "confidence"),
            ("stats", "min_slice_size"),
            ("stats", "seed"),
            ("retriever", "k1"),
            ("retriever", "b"),
            ("generation", "contexts"),
            ("generation", "min_score"),
            ("gate", "tolerance"),
            ("gate", "repeats"),
            ("gate", "determinism_check"),
            ("gate", "power"),
            ("gate", "floors", "mrr"),
            ("gate", "slices", "v1.2", "hit@5"),
            ("gate", "slices", "acronym", "mrr"),
            ("gate", "allowed_flips", "hit@5"),
            ("judge", "threshold"),
            ("judge", "batch_size"),
            ("run", "timeout"),
            ("display", "max_listed"),
            ("retrieval", "k"),
            ("retrieval", "depth"),
            ("tokenizer", "min_length"),
        ]
    ),
    (("retrieval", "metrics"), st.just(["ndcg_exp@5", "recall@5", "hit@5", "mrr"])),
    (("gate", "metrics"), st.sampled_from([[["recall@5"]], ["ndcg_exp@5"], [], ["recall@5", "recall@5"]])),
    (("gate", "stochastic"), st.sampled_from([["generator"], ["retriever", "judge"], ["nothing"]])),
]


def set_setting(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set a dotted setting, making the tables on its way (a table already replaced by a
    value stays replaced: the setting is then skipped)."""
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return
    node[path[-1]] = value


@st.composite
def config_mutation(draw: st.DrawFn, config: dict[str, Any], kind: str) -> tuple[str, tuple[Any, ...], Any]:
    """kind "path": a path setting set to a path onto an input, out of the project, a folder;
    "setting": a setting of SETTINGS set to a likely-trouble value; "config": any node of
    the file replaced (by a value of any type), deleted, or given an unknown sibling."""
    if kind == "path":
        return "set", draw(st.sampled_from(PATH_SETTINGS)), draw(PATHS)
    if kind == "setting":
        path, values = draw(st.sampled_from(SETTINGS))
        return "set", path, draw(values)
    path, action, value = draw(tree_mutation(config))
    return action, path, value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # NaN and Infinity written as Python does


@st.composite
def tree_mutation(draw: st.DrawFn, tree: Any) -> tuple[tuple[Any, ...], str, Any]:
    paths = list(leaves(tree))
    path = draw(st.sampled_from(paths))
    return path, draw(st.sampled_from(["replace", "delete", "unknown"])), draw(ODD_VALUES)


@st.composite
def line_mutation(draw: st.DrawFn, rows: list[dict[str, Any]]) -> tuple[int, str, Any]:
    """(line index, action, argument) for one JSON line of the corpus or golden set."""
    index = draw(st.integers(0, len(rows) - 1))
    actions = ["truncate", "field", "extra", "duplicate", "nest", "replace", "delete"]
    action = draw(st.sampled_from([*actions, "grade"] if "relevant" in rows[index] else actions))
    if action == "truncate":
        return index, action, draw(st.integers(0, 200))
    if action == "field":
        return index, action, (draw(st.sampled_from(sorted(rows[index]))), draw(ODD_VALUES))
    if action == "nest":
        return index, action, draw(st.sampled_from([30, 1_000, 100_000]))
    if action == "grade":  # a relevance grade: huge (2**63, 1024 for exponential gain), odd
        grades = [2**63, 10**400, 1024, 1001, -1, 0, 1.5, True, "3", None, math.nan, []]
        return index, action, draw(st.sampled_from(grades))
    if action == "replace":
        return (
            index,
            action,
            draw(st.sampled_from(["", "null", "[]", "1", '"text"', "{", "\x00", "\ufeff{}"])),
        )
    return index, action, draw(ODD_VALUES)


def mutate_lines(rows: list[dict[str, Any]], index: int, action: str, argument: Any) -> list[str]:
    lines = [_json(row) for row in rows]
    row = dict(rows[index])
    if action == "truncate":
        lines[index] = lines[index][:argument]
    elif action == "field":
        key, value = argument
        row[key] = value
        lines[index] = _json(row)
    elif action == "grade":
        relevant = dict(row["relevant"]) or {"sso-setup": 1}
        relevant[next(iter(relevant))] = argument
        row["relevant"] = relevant
        lines[index] = _json(row)
    elif action == "extra":
        row["unexpected"] = argument
        lines[index] = _json(row)
    elif action == "duplicate":  # the same key twice in one object: JSON keeps the last
        lines[index] = '{"id": ' + _json(argument) + ", " + lines[index][1:]
    elif action == "nest":
        row["text" if "text" in row else "question"] = json.loads("[" * 30 + "]" * 30)
        lines[index] = _json(row).replace("[" * 30 + "]" * 30, "[" * argument + "]" * argument)
    elif action == "replace":
        lines[index] = argument
    else:
        del lines[index]
    return lines


CACHE_GARBAGE = st.one_of(
    st.sampled_from(
        [
            b"",
            b"garbage",
            b"{",
            b"[]",
            b"null",
            b'{"verdicts": [1]}',
            b'{"verdicts": {"x": "y"}}',
            b"\xff\xfe",
        ]
    ),
    st.binary(max_size=40),
)


# $GITHUB_STEP_SUMMARY (the gate appends to it): a folder, an input, below a file.
STEP_SUMMARIES = st.sampled_from(["evals", "evals/golden.jsonl", "eval.toml", "evals/golden.jsonl/below"])

# Outputs replaced by symlinks: to a file outside the project, or onto an input.
OUTPUTS = ["build/report.json", "build/summary.md", "build/report.html", ".cache/verdicts.json", "build"]
SYMLINKS = st.tuples(st.sampled_from(OUTPUTS), st.sampled_from(["outside", "evals/golden.jsonl"]))


@st.composite
def mutations(draw: st.DrawFn, pristine: Path) -> list[tuple[str, Any]]:
    """One to three (file, mutation) pairs."""
    config = tomllib.loads((pristine / "eval.toml").read_text(encoding="utf-8"))
    baseline = json.loads((pristine / "evals/baseline.json").read_text(encoding="utf-8"))
    chosen = draw(
        st.lists(
            st.sampled_from(
                ["config", "path", "setting", "golden", "corpus", "baseline", "cache", "symlink", "summary"]
            ),
            min_size=1,
            max_size=3,
        )
    )
    made: list[tuple[str, Any]] = []
    for target in chosen:
        if target in ("config", "path", "setting"):
            made.append(("config", draw(config_mutation(config, target))))
        elif target == "symlink":
            made.append((target, draw(SYMLINKS)))
        elif target == "baseline":
            made.append((target, draw(tree_mutation(baseline))))
        elif target == "cache":  # the verdicts, or any file beside them
            files = sorted(str(path.relative_to(pristine)) for path in (pristine / ".cache").iterdir())
            made.append((target, (draw(st.sampled_from(files)), draw(CACHE_GARBAGE))))
        elif target == "summary":
            made.append((target, draw(STEP_SUMMARIES)))
        else:
            made.append((target, draw(line_mutation(TINY_GOLDEN if target == "golden" else TINY_CORPUS))))
    return made


def apply(root: Path, pristine: Path, made: list[tuple[str, Any]]) -> None:
    """Copy the pristine project to `root`, then make each mutation in turn."""
    shutil.copytree(pristine, root)
    for target, mutation in made:
        if target == "config":
            tree = tomllib.loads((root / "eval.toml").read_text(encoding="utf-8"))
            action, path, value = mutation
            with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier mutation moved it
                set_setting(tree, path, value) if action == "set" else mutate_tree(tree, path, action, value)
            (root / "eval.toml").write_text(tomlkit.dumps(tree), encoding="utf-8")
        elif target == "baseline":
            tree = json.loads((root / "evals/baseline.json").read_text(encoding="utf-8"))
            with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier mutation moved it
                mutate_tree(tree, *mutation)
            (root / "evals/baseline.json").write_text(_json(tree), encoding="utf-8")
        elif target == "cache":
            name, content = mutation
            (root / name).write_bytes(content)
        elif target == "summary":
            (root / ".step-summary").write_text(mutation, encoding="utf-8")  # read by run_command
        elif target == "symlink":
            output, points_to = mutation
            victim = root.parent / "victim.txt" if points_to == "outside" else root / points_to
            if points_to == "outside":
                victim.write_text("a file of someone else's\n", encoding="utf-8")
            link = root / output
            if link.parent.is_symlink() or link.parent.is_file():
                continue  # an earlier mutation replaced its folder
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.is_file():
                link.unlink()
            elif link.is_dir():
                shutil.rmtree(link)
            link.symlink_to(victim)
        else:
            rows = TINY_GOLDEN if target == "golden" else TINY_CORPUS
            lines = mutate_lines(rows, *mutation)
            (root / f"evals/{target}.jsonl").write_text(
                "".join(f"{line}\n" for line in lines), encoding="utf-8"
            )


# --- what must hold ------------------------------------------------------------------------


def digests(root: Path, names: tuple[str, ...]) -> dict[str, str]:
    """sha256 of every file under `names` (files or folders) of `root`, by relative path."""
    found: dict[str, str] = {}
    for name in names:
        top = root / name
        for path in [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []:
            if path.is_file() and not path.is_symlink():
                found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def everything_but(parent: Path, project: Path) -> dict[str, str]:
    """Every path under `parent` outside `project`, with its content's sha256 (files)."""
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"
        for path in parent.rglob("*")
        if project not in (path, *path.parents)
    }


@contextlib.contextmanager
def memory_cap(extra_bytes: int = 3 * 2**30) -> Iterator[None]:
    """A mutated setting (resamples = 10**9) must be refused, not tried: cap the address
    space so such an attempt fails fast (MemoryError, a failure of this test) instead of
    swapping the CI machine. Linux only; elsewhere no cap."""
    try:
        import resource

        size = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = size + extra_bytes if hard == resource.RLIM_INFINITY else min(size + extra_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def patched_environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_command(root: Path, command: str) -> tuple[int, str]:
    """The command as `main` runs it, from the project's folder: its exit code (SystemExit's
    too) and what it printed on stderr. Any other exception escapes: the test fails with it."""
    err = io.StringIO()
    step_summary = root / ".step-summary"
    environment = (
        {"GITHUB_STEP_SUMMARY": str(root / step_summary.read_text())} if step_summary.exists() else {}
    )
    with (
        patched_environment(environment),
        contextlib.chdir(root),
        memory_cap(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = run_cli(["--config", "eval.toml", command])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    return code, err.getvalue()


@PROFILE
@given(data=st.data(), command=st.sampled_from(COMMANDS))
def test_mutated_inputs_never_crash_change_inputs_or_write_outside(
    pristine: Path, data: st.DataObject, command: str
) -> None:
    made = data.draw(mutations(pristine), label="mutations")
    with tempfile.TemporaryDirectory() as folder:
        parent = Path(folder)
        root = parent / "project"
        apply(root, pristine, made)
        inputs_before = digests(root, INPUTS)
        outside_before = everything_but(parent, root)
        code, err = run_command(root, command)
        assert code in (0, 2, 3), f"exit {code}: {err[-2000:]}"
        assert "Traceback (most recent call last)" not in err
        inputs_after = digests(root, INPUTS)
        if command == "baseline" and code == 0:  # its one job: rewrite the baseline
            inputs_before.pop("evals/baseline.json", None)
            inputs_after.pop("evals/baseline.json", None)
        assert inputs_after == inputs_before, "an input file changed"
        assert everything_but(parent, root) == outside_before, "a file was written outside the project"

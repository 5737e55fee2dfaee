"""Shared helpers for the template's own tests: bake the template, run commands in a bake.

A baked project holds only the team's side (data, eval.toml, its retriever and generator, its
tests, the sessions); the engine is the `rag-regress` package in engine/, which the project
pins. Here every baked project installs the engine from this clone instead of its pin
(RAG_REGRESS_ENGINE, read by the generated noxfile and tox.ini): offline, and the engine
under test rather than a published release.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "{{cookiecutter.project_slug}}"
ENGINE = ROOT / "engine"
ANSWERS = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
RETRIEVERS: list[str] = ANSWERS["retriever"]
# What each retriever choice's part file (templates/retrievers/NAME.jinja) declares.
sys.path.insert(0, str(ROOT))
from local_extensions import choice_parts  # noqa: E402  (the template's root, just put on the path)

RETRIEVER_PARTS = choice_parts("retrievers")
# Choices that need torch and a sentence-transformers model: slow to install, so their
# end-to-end checks live together in test_baked_dense.py.
EMBEDDING_RETRIEVERS = [r for r in RETRIEVERS if RETRIEVER_PARTS[r].torch]
# Choices that call the team's own service: no baseline ships; test_baked_services.py runs one.
SERVICE_RETRIEVERS = [r for r in RETRIEVERS if RETRIEVER_PARTS[r].service]
KEYWORD_RETRIEVERS = [r for r in RETRIEVERS if r not in EMBEDDING_RETRIEVERS + SERVICE_RETRIEVERS]
# Choices that ship a baseline (made by the template's `nox -s baselines`).
SHIPPED_RETRIEVERS = [r for r in RETRIEVERS if r not in SERVICE_RETRIEVERS]
# The engine's extra each retriever choice needs (bm25 and http need none).
RETRIEVER_EXTRAS = {r: {RETRIEVER_PARTS[r].extra} - {""} for r in RETRIEVERS}
# The engine's version, read from its source (never imported: the tests' own interpreter
# need not have the engine installed).
_VERSION = re.search(
    r'^__version__ = "([^"]+)"', (ENGINE / "src" / "rag_regress" / "__init__.py").read_text("utf-8"), re.M
)
assert _VERSION, "engine/src/rag_regress/__init__.py sets no __version__"
ENGINE_VERSION = _VERSION.group(1)

# Runs that must never reach a model hub and leave no bytecode in this clone (cookiecutter
# imports local_extensions.py from it).
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
# Bakes install the engine from this clone, not from their pin (the root noxfile sets it too).
ENV.setdefault("RAG_REGRESS_ENGINE", str(ENGINE))
# Commands inside a bake write bytecode, as on a team's machine: uv installs none, and without
# it every command compiles scipy again (seconds each time).
BAKE_ENV = {key: value for key, value in ENV.items() if key != "PYTHONDONTWRITEBYTECODE"}
# A real test collection beside the template (BEIR SciFact, read-only), when it is there.
SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"
GIT_ENV = {
    **ENV,
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,  # no user setting (a default branch, a URL rewrite) applies
}


def bake_cli(output: Path, *answers: str, template: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run the cookiecutter command line as a user would, with `key=value` answers."""
    command = [sys.executable, "-m", "cookiecutter", "--no-input", str(template), "-o", str(output), *answers]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, check=False)


def bake(output: Path, *answers: str, template: Path = ROOT) -> Path:
    """Bake into `output`; return the generated project folder. Fails the test on error."""
    result = bake_cli(output, *answers, template=template)
    assert result.returncode == 0, f"bake failed:\n{result.stdout}\n{result.stderr}"
    (project,) = [p for p in output.iterdir() if p.is_dir()]
    return project


def run(project: Path, *command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command in a baked project, capturing its output."""
    return subprocess.run(
        list(command), cwd=project, capture_output=True, text=True, env=env or BAKE_ENV, check=False
    )


def nox(project: Path, *sessions: str) -> subprocess.CompletedProcess[str]:
    """Run the baked project's own nox sessions (real virtualenvs, real installs)."""
    return run(project, sys.executable, "-m", "nox", "--non-interactive", "-s", *sessions)


def output(result: subprocess.CompletedProcess[str]) -> str:
    """The end of what a command printed, for an assertion message."""
    return f"--- stdout\n{result.stdout[-6000:]}\n--- stderr\n{result.stderr[-6000:]}"


def venv_bin(project: Path, session: str) -> Path:
    """The bin folder of one of the baked project's nox sessions (after it ran)."""
    found = sorted((project / ".nox").glob(f"{session}*/bin"))
    assert found, f"no .nox/{session} environment in {project}"
    return found[0]


def sh(cwd: Path, *command: str) -> str:
    """Run a command that must succeed (git, mostly); return what it printed."""
    result = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, env=GIT_ENV, check=False)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def commit_all(repo: Path, message: str) -> str:
    """Commit everything in `repo`; return the new commit's id."""
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", message)
    return sh(repo, "git", "rev-parse", "HEAD").strip()


def copy_template(target: Path) -> Path:
    """This template's files as in the working copy (committed, plus new files not ignored;
    files deleted in the working copy left out), without version control."""
    listed = sh(ROOT, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def template_repository(target: Path) -> tuple[Path, str]:
    """The template's files committed to a fresh git repository with no remote; returns the
    repository and its commit."""
    copy_template(target)
    sh(target, "git", "init", "-q", "-b", "main")
    return target, commit_all(target, "template")


def render_hook(name: str, answers: dict) -> str:
    """Render a hook as cookiecutter does. Its only Jinja is the answers-as-JSON literal."""
    source = (ROOT / "hooks" / name).read_text(encoding="utf-8")
    placeholder = "{{ cookiecutter | tojson }}"
    assert source.count("{{") == source.count(placeholder) == 1, "hooks read answers in one place only"
    return source.replace(placeholder, json.dumps(answers))


def package_of(project: Path) -> str:
    (package,) = [p.name for p in (project / "src").iterdir() if p.is_dir()]
    return package


def engine_pin(project: Path) -> str:
    """The project's one dependency: the engine requirement the post-generation hook wrote."""
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [dep for dep in pyproject["project"]["dependencies"] if dep.startswith("rag-regress")]
    return pin


def pin_extras(pin: str) -> set[str]:
    found = re.match(r"rag-regress(?:\[([a-z0-9,]*)\])?", pin)
    assert found, pin
    return set(filter(None, (found.group(1) or "").split(",")))


def project_files(project: Path) -> list[Path]:
    """Every file a bake wrote (no environment, cache or report a run left), sorted."""
    left_by_runs = {".nox", ".tox", "build", ".cache", "__pycache__", ".git"}
    left_by_runs |= {".pytest_cache", ".hypothesis", ".ruff_cache", ".mypy_cache"}
    return sorted(
        path
        for path in project.rglob("*")
        if path.is_file() and not left_by_runs & set(path.relative_to(project).parts)
    )


@pytest.fixture(scope="session")
def default_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bake with every default answer, shared by read-only tests."""
    return bake(tmp_path_factory.mktemp("default"))


def baseline_form(run: dict) -> dict:
    """A run report's JSON in the form `baseline` commits: the top k of each ranking, the ranks
    of the judged documents, the answers without their text and a later turn without the
    conversation it was asked after, and none of the run's own counts (the `run` section:
    calls made, outputs cached); the engine's inputs/reports.py (`Report.for_baseline`)
    defines it."""
    k = run["settings"]["k"]
    for row in run["questions"]:
        ranked = [doc_id for doc_id, _ in row["retrieved"]]
        judged = [*row.get("not_relevant", []), *row["relevant"]]  # every judged document
        row["relevant_ranks"] = {d: ranked.index(d) + 1 if d in ranked else None for d in judged}
        row["retrieved"] = row["retrieved"][:k]
        if row.get("answer"):
            row["answer"]["text"] = ""
        row.pop("history", None)
    run.pop("holdout", None)
    run.pop("run", None)
    return run


def assert_ships_its_true_baseline(project: Path) -> None:
    """The report the gate just wrote, in the baseline's form, equals the shipped baseline,
    except for the gate's own verdict and where and with which library versions each ran."""
    fresh = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    shipped = json.loads((project / "evals" / "baseline.json").read_text(encoding="utf-8"))
    assert fresh.pop("comparison")["passed"] is True  # the gate's verdict: only in its report
    fresh = baseline_form(fresh)
    for report in (fresh, shipped):
        del report["receipt"]["git_commit"], report["receipt"]["versions"]
    # An embedding model's float32 scores move in the 6th decimal between builds of torch and
    # its libraries; the ranking (ids, in order) and every metric must not move at all.
    for now, then in zip(fresh["questions"], shipped["questions"], strict=True):
        assert [h[0] for h in now["retrieved"]] == [h[0] for h in then["retrieved"]], now["id"]
        pairs = zip(now["retrieved"], then["retrieved"], strict=True)
        drift = max((abs(a[1] - b[1]) for a, b in pairs), default=0.0)
        assert drift <= 5e-6, f"{now['id']}: scores moved by {drift}"
        now["retrieved"] = then["retrieved"]
    assert fresh == shipped, "stale shipped baseline: run `nox -s baselines` at the template root"


class JsonHandler(BaseHTTPRequestHandler):
    """The handler of a server a test starts: quiet, and replying JSON with `send_json`."""

    def log_message(self, *args: object) -> None:
        pass

    def send_json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    """`handler` served on 127.0.0.1 (a free port) from a thread, until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def chat_completion(content: str) -> dict[str, Any]:
    """An OpenAI chat-completions reply carrying `content`, as the test servers send it."""
    return {
        "id": "c",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


# ---- a real browser, for the grading pages ----

CHROMIUM = shutil.which("chromium")
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # requirements-dev.txt installs it; without it the browser steps cannot run
    sync_playwright = None  # type: ignore[assignment]
NEEDS_A_BROWSER = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: `apt-get install chromium`"),
    pytest.mark.skipif(sync_playwright is None, reason="playwright not installed: requirements-dev.txt"),
]


def _screenshot_flags() -> list[str]:
    """Chromium's flags as the engine's screenshot tool launches it."""
    spec = importlib.util.spec_from_file_location("screenshot_tool", ENGINE / "tools" / "screenshot.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return list(tool.FLAGS)


@pytest.fixture
def page() -> Iterator[Page]:
    """A tab of headless Chromium (Debian's), as the engine's own page tests drive it."""
    assert sync_playwright is not None and CHROMIUM is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=_screenshot_flags())
        context = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 900})
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        yield tab
        browser.close()
        assert errors == []


def gate_the_judge(project: Path) -> None:
    """Gate the judge's checks in `project` though its agreement with people is below [judge]
    min_kappa (the shipped lexical judge's on the demo's labels): `gate_unmeasured = true`, for
    tests of what the gate does with the judge's verdicts."""
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert "\n[judge]\n" in text
    if "\ngate_unmeasured = true\n" in text:
        return
    config.write_text(text.replace("\n[judge]\n", "\n[judge]\ngate_unmeasured = true\n", 1), encoding="utf-8")

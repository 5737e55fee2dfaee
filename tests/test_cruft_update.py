"""A team's own copy stays current: `cruft update` brings a later template change into a
project the team has edited, moves the engine pin to the new template commit, and leaves the
team's data, settings, system and tests alone.

The template is committed twice into a temporary git repository (its current files, then a
typical template-side change), and the project made from it with `cruft create file://...`,
so the test is offline and independent of this repo's history. `cruft update` runs as the
generated README says, interactively: in a pseudo-terminal, where it asks "Apply diff and
update?" and the test answers `y` (a typer release broke that prompt once, while
`cruft update -y` kept working; requirements-dev.txt pins what works).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import yaml
from conftest import GIT_ENV, ROOT, commit_all, engine_pin, package_of, sh, template_repository

SLUG = "{{cookiecutter.project_slug}}"

# The team's own paths: never touched by an update (pyproject.toml's [tool.cruft] skip), with
# PACKAGE for the package's name. "tests/" is a folder: the team's tests, ours to start with.
TEAM_OWNED = [
    "evals/corpus.jsonl",
    "evals/golden.jsonl",
    "evals/baseline.json",
    "evals/judge_labels.jsonl",
    "eval.toml",
    "src/PACKAGE/retriever.py",
    "src/PACKAGE/generator.py",
    "tests/",
]
# What the template change below touches that a team's copy has: these, and only these, change.
TEMPLATE_MANAGED_CHANGES = {"README.md", "noxfile.py", "pyproject.toml", ".cruft.json"}
NOXFILE_NOTE = "Template v2: `nox -l` lists the sessions."


def team_owned(package: str) -> list[str]:
    return [path.replace("PACKAGE", package) for path in TEAM_OWNED]


def cruft(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cruft", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=GIT_ENV, check=False)


UPDATE_PROMPT = b"Apply diff and update?"


def answer_in_terminal(cwd: Path, command: list[str], prompt: bytes, answer: bytes) -> tuple[int, str]:
    """Run `command` attached to a pseudo-terminal, as a person at a shell would; type `answer`
    once `prompt` appears. Returns the exit code and everything the terminal showed."""
    main, child_end = pty.openpty()
    process = subprocess.Popen(
        command, cwd=cwd, env=GIT_ENV, stdin=child_end, stdout=child_end, stderr=child_end, close_fds=True
    )
    os.close(child_end)  # only the child holds it now: reading then ends when the child exits
    shown, answered, deadline = b"", False, time.monotonic() + 120
    try:
        while True:
            ready, _, _ = select.select([main], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"{command} hung; the terminal showed:\n{shown.decode(errors='replace')}"
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: every process holding the terminal has exited
                break
            if not chunk:
                break
            shown += chunk
            if not answered and prompt in shown:
                os.write(main, answer)
                answered = True
        return process.wait(timeout=60), shown.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} should occur once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(text)


NEW_DOCUMENT = {"id": "team-refund-policy", "title": "Refunds", "text": "Refunds are issued within 14 days."}
NEW_QUESTION = {
    "id": "team-q1",
    "question": "How long does a refund take?",
    "relevant": {"team-refund-policy": 3},
    "tags": ["billing"],
}
TEMPLATE_README_NOTE = "Template v2: this paragraph came with `cruft update`."
TEAM_README_NOTE = "## Our team's notes\n\nThe on-call rota owns this gate.\n"
TEAM_TEST = '''"""Ours: the refund question stays in the golden set."""

import json
from pathlib import Path


def test_the_refund_question_is_asked() -> None:
    golden = Path(__file__).parents[1] / "evals" / "golden.jsonl"
    assert "team-q1" in {json.loads(line)["id"] for line in golden.read_text().splitlines()}
'''


def make_team_edits(project: Path, package: str) -> None:
    """What a team does in its first weeks: its own data, a tuned retriever setting, its
    own retriever and generator code, a test of its own, a README section."""
    append(project / "evals" / "corpus.jsonl", json.dumps(NEW_DOCUMENT) + "\n")
    append(project / "evals" / "golden.jsonl", json.dumps(NEW_QUESTION) + "\n")
    edit(project / "eval.toml", "\n[retriever]\n", "\n[retriever]\nk1 = 1.2\n")
    edit(
        project / "src" / package / "retriever.py",
        '    return retriever("bm25").build(',
        '    # Team: tuned on our corpus, see eval.toml.\n    return retriever("bm25").build(',
    )
    edit(
        project / "src" / package / "generator.py",
        "    return stand_in.build(",
        "    # Team: our LLM client goes here next sprint.\n    return stand_in.build(",
    )
    (project / "tests" / "test_mine.py").write_text(TEAM_TEST, encoding="utf-8")
    append(project / "README.md", f"\n{TEAM_README_NOTE}")


def make_template_change(template: Path) -> None:
    """A typical template release: a line of the noxfile's docstring and a README paragraph,
    the engine itself unchanged; and changes to team-owned files (a settings comment, demo
    data, the shipped baseline, the retriever's and generator's docstrings, a test), which
    must not reach the project."""
    project = template / SLUG
    edit(project / "noxfile.py", '"""Sessions:', f'"""{NOXFILE_NOTE}\n\nSessions:')
    description = "{{ cookiecutter.description }}\n"
    edit(project / "README.md", description, f"{description}\n{TEMPLATE_README_NOTE}\n")
    edit(project / "eval.toml", "[tokenizer]\n", "[tokenizer]  # template v2 comment\n")
    append(project / "evals" / "golden.jsonl", json.dumps({**NEW_QUESTION, "id": "template-q"}) + "\n")
    shipped = project / "evals" / "baselines" / "bm25.json"
    remade = json.loads(shipped.read_text(encoding="utf-8"))
    remade["aggregate"]["mrr"] -= 0.01
    shipped.write_text(json.dumps(remade, indent=2) + "\n", encoding="utf-8")
    package_dir = project / "src" / "{{cookiecutter.package_name}}"
    edit(package_dir / "retriever.py", '"""YOUR FILE', '"""(template v2) YOUR FILE')
    edit(package_dir / "generator.py", '"""YOUR FILE', '"""(template v2) YOUR FILE')
    edit(project / "tests" / "test_judge.py", '"""YOUR TESTS', '"""(template v2) YOUR TESTS')


def snapshot(project: Path, paths: list[str]) -> dict[str, bytes]:
    """The bytes of every file under `paths` (files, or folders ending in /)."""
    files = [
        p
        for path in paths
        for p in ([project / path] if not path.endswith("/") else (project / path).rglob("*"))
    ]
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in files
        if p.is_file() and "__pycache__" not in p.parts
    }


def pin_at(url: str, commit: str) -> str:
    return f"rag-regress @ git+{url}@{commit}#subdirectory=engine"


def test_cruft_update_brings_template_changes_moves_the_pin_and_keeps_team_edits(tmp_path: Path) -> None:
    template, first = template_repository(tmp_path / "template")
    url = f"file://{template}"
    created = cruft(tmp_path, "create", "--no-input", url, "--output-dir", str(tmp_path / "out"))
    assert created.returncode == 0, created.stdout + created.stderr
    (project,) = (tmp_path / "out").iterdir()
    package = package_of(project)
    assert json.loads((project / ".cruft.json").read_text(encoding="utf-8"))["commit"] == first
    assert engine_pin(project) == pin_at(url, first)
    sh(project, "git", "init", "-q", "-b", "main")
    commit_all(project, "generated")
    make_team_edits(project, package)
    commit_all(project, "team edits")
    team_files = snapshot(project, team_owned(package))
    assert "tests/test_mine.py" in team_files and f"src/{package}/generator.py" in team_files

    make_template_change(template)
    second = commit_all(template, "template v2")
    assert cruft(project, "check").returncode != 0, "`cruft check` must notice the newer template"

    # As the README says: `cruft update`, which shows the diff's summary, asks, and applies.
    command = [sys.executable, "-m", "cruft", "update"]
    code, shown = answer_in_terminal(project, command, UPDATE_PROMPT, b"y\n")
    assert UPDATE_PROMPT.decode() in shown, f"cruft update did not ask:\n{shown}"
    assert code == 0 and "Traceback" not in shown, f"cruft update failed at its prompt:\n{shown}"
    assert "Good work" in shown, shown
    applied = sh(project, "git", "diff", "HEAD", "--", ".", ":!.cruft.json")
    print(f"--- the diff cruft update applied\n{applied}")  # pytest -s shows it

    # Applied cleanly: no conflict, no rejected hunk.
    status = sh(project, "git", "status", "--porcelain", "--untracked-files=all")
    assert not [line for line in status.splitlines() if line[:2] in {"UU", "AA", "DU", "UD"}], status
    assert not list(project.rglob("*.rej")) and "<<<<<<<" not in applied
    # Only template-managed files changed: the noxfile and README (merged with the team's own
    # README section), pyproject.toml's engine pin, and cruft's record of the commit.
    assert {line[3:] for line in status.splitlines()} == TEMPLATE_MANAGED_CHANGES, status
    readme = (project / "README.md").read_text(encoding="utf-8")
    assert TEMPLATE_README_NOTE in readme and readme.endswith(TEAM_README_NOTE)
    assert NOXFILE_NOTE in (project / "noxfile.py").read_text(encoding="utf-8")
    assert engine_pin(project) == pin_at(url, second), "the engine pin names the new template commit"
    # The team's data, settings, system and tests are exactly as the team left them.
    assert snapshot(project, team_owned(package)) == team_files
    assert json.loads((project / ".cruft.json").read_text(encoding="utf-8"))["commit"] == second
    commit_all(project, "template update")
    assert cruft(project, "check").returncode == 0


def test_skip_list_names_existing_team_owned_paths(default_project: Path) -> None:
    """Every path in [tool.cruft] skip exists in a fresh project (a typo would silently stop
    protecting a file), and the README names each one (by its path or its file name)."""
    pyproject = tomllib.loads((default_project / "pyproject.toml").read_text(encoding="utf-8"))
    skip = pyproject["tool"]["cruft"]["skip"]
    assert skip == team_owned(package_of(default_project))
    for path in skip:
        assert (default_project / path).is_dir() if path.endswith("/") else (default_project / path).is_file()
    readme = (default_project / "README.md").read_text(encoding="utf-8")
    assert "cruft update" in readme
    unnamed = [p for p in skip if f"`{p}`" not in readme and f"`{Path(p).name}`" not in readme]
    assert not unnamed, f"the README does not name {unnamed}"


def test_scheduled_workflow_runs_cruft_check(default_project: Path) -> None:
    """A separate, scheduled workflow runs `cruft check`, so pull-request CI stays fast."""
    path = default_project / ".github" / "workflows" / "template-update.yml"
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert triggers["schedule"][0]["cron"] and "pull_request" not in triggers
    steps = workflow["jobs"]["cruft-check"]["steps"]
    assert any("cruft check" in step.get("run", "") for step in steps)


def test_readme_installs_the_cruft_and_typer_this_test_runs(default_project: Path) -> None:
    """Where a team is told to install cruft (the README, the weekly workflow) it gets the pins of
    requirements-dev.txt, the ones the interactive update above runs with."""
    lines = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("#")[0].strip() for line in lines if line.startswith(("cruft", "typer"))]
    assert len(pins) == 2 and pins[0].startswith("cruft==")
    install = "pip install " + " ".join(f'"{pin}"' for pin in pins)
    readme = (default_project / "README.md").read_text(encoding="utf-8")
    workflow = (default_project / ".github" / "workflows" / "template-update.yml").read_text(encoding="utf-8")
    assert install in readme and install in workflow and install in (ROOT / "README.md").read_text("utf-8")

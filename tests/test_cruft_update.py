"""A team's own copy stays current: `cruft update` brings a later template change into a
project the team has edited, and leaves the team's data, settings and retriever alone.

The template is committed twice into a temporary git repository (its current files, then a
typical template-side change), so the test is offline and independent of this repo's history.
`cruft update` runs as the generated README says, interactively: in a pseudo-terminal, where it
asks "Apply diff and update?" and the test answers `y` (a typer release broke that prompt once,
while `cruft update -y` kept working; requirements-dev.txt pins what works).
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import yaml
from conftest import ENV, ROOT, package_of

GIT_ENV = {
    **ENV,
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}
SLUG = "{{cookiecutter.project_slug}}"

# The team's own paths: never touched by an update (pyproject.toml's [tool.cruft] skip).
TEAM_OWNED = ["evals/corpus.jsonl", "evals/golden.jsonl", "evals/baseline.json", "eval.toml"]


def sh(cwd: Path, *command: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, env=GIT_ENV, check=False)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result


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


def commit_all(repo: Path, message: str) -> str:
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", message)
    return sh(repo, "git", "rev-parse", "HEAD").stdout.strip()


def copy_template(target: Path) -> None:
    """The template's files as committed (plus new, not-ignored files in a working copy)."""
    listed = sh(ROOT, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # skip files deleted in the working copy
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


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


def make_team_edits(project: Path, package: str) -> None:
    """What a team does in its first weeks: its own data, a tuned retriever setting, a
    tweak in retriever.py, a README section."""
    append(project / "evals" / "corpus.jsonl", json.dumps(NEW_DOCUMENT) + "\n")
    append(project / "evals" / "golden.jsonl", json.dumps(NEW_QUESTION) + "\n")
    edit(project / "eval.toml", "\n[retriever]\n", "\n[retriever]\nk1 = 1.2\n")
    retriever = project / "src" / package / "retriever.py"
    edit(
        retriever,
        "    return bm25.build(",
        "    # Team: tuned on our corpus, see eval.toml.\n    return bm25.build(",
    )
    append(project / "README.md", f"\n{TEAM_README_NOTE}")


def make_template_change(template: Path) -> None:
    """A typical template release: a README paragraph, a new nox session, a new docs page;
    and changes to team-owned files (settings comment, demo data, the shipped baseline, the
    retriever's docstring), which must not reach the project."""
    project = template / SLUG
    description = "{{ cookiecutter.description }}\n"
    edit(project / "README.md", description, f"{description}\n{TEMPLATE_README_NOTE}\n")
    append(
        project / "noxfile.py",
        '\n\n@nox.session\ndef lint(session: nox.Session) -> None:\n    """Ruff, as CI runs it."""\n'
        '    session.install("ruff")\n    session.run("ruff", "check", ".")\n',
    )
    (project / "docs" / "glossary.md").write_text(
        "# Glossary\n\n- **qrels**: relevance judgements.\n", "utf-8"
    )
    edit(project / "eval.toml", "[tokenizer]\n", "[tokenizer]  # template v2 comment\n")
    append(project / "evals" / "golden.jsonl", json.dumps({**NEW_QUESTION, "id": "template-q"}) + "\n")
    shipped = project / "evals" / "baselines" / "bm25.json"
    remade = json.loads(shipped.read_text(encoding="utf-8"))
    remade["aggregate"]["mrr"] -= 0.01
    shipped.write_text(json.dumps(remade, indent=2) + "\n", encoding="utf-8")
    package_dir = project / "src" / "{{cookiecutter.package_name}}"
    edit(package_dir / "retriever.py", '"""YOUR FILE', '"""(template v2) YOUR FILE')
    edit(package_dir / "generator.py", '"""YOUR FILE', '"""(template v2) YOUR FILE')


def test_cruft_update_brings_template_changes_and_keeps_team_edits(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    copy_template(template)
    sh(template, "git", "init", "-q", "-b", "main")
    first = commit_all(template, "template v1")

    created = cruft(tmp_path, "create", "--no-input", str(template), "--output-dir", str(tmp_path / "out"))
    assert created.returncode == 0, created.stdout + created.stderr
    (project,) = (tmp_path / "out").iterdir()
    package = package_of(project)
    assert json.loads((project / ".cruft.json").read_text(encoding="utf-8"))["commit"] == first
    sh(project, "git", "init", "-q", "-b", "main")
    commit_all(project, "generated")
    make_team_edits(project, package)
    commit_all(project, "team edits")
    team_files = {
        name: (project / name).read_bytes()
        for name in [*TEAM_OWNED, f"src/{package}/retriever.py", f"src/{package}/generator.py"]
    }

    make_template_change(template)
    second = commit_all(template, "template v2")
    assert cruft(project, "check").returncode != 0, "`cruft check` must notice the newer template"

    # As the README says: `cruft update`, which shows the diff's summary, asks, and applies.
    command = [sys.executable, "-m", "cruft", "update"]
    code, shown = answer_in_terminal(project, command, UPDATE_PROMPT, b"y\n")
    assert UPDATE_PROMPT.decode() in shown, f"cruft update did not ask:\n{shown}"
    assert code == 0 and "Traceback" not in shown, f"cruft update failed at its prompt:\n{shown}"
    assert "Good work" in shown, shown
    applied = sh(project, "git", "diff", "--cached", "--", ".", ":!.cruft.json").stdout
    print(f"--- the diff cruft update applied\n{applied}")  # pytest -s shows it

    # Applied cleanly: no conflict, no rejected hunk.
    status = sh(project, "git", "status", "--porcelain").stdout
    assert not [line for line in status.splitlines() if line[:2] in {"UU", "AA", "DU", "UD"}], status
    assert not list(project.rglob("*.rej")) and "<<<<<<<" not in applied
    # The template change arrived, merged with the team's own README section.
    readme = (project / "README.md").read_text(encoding="utf-8")
    assert TEMPLATE_README_NOTE in readme and readme.endswith(TEAM_README_NOTE)
    assert "def lint(session" in (project / "noxfile.py").read_text(encoding="utf-8")
    assert (project / "docs" / "glossary.md").is_file()
    # The team's data, settings and retriever are exactly as the team left them.
    for name, content in team_files.items():
        assert (project / name).read_bytes() == content, f"{name} was changed by the update"
    assert json.loads((project / ".cruft.json").read_text(encoding="utf-8"))["commit"] == second
    commit_all(project, "template update")
    assert cruft(project, "check").returncode == 0


def test_skip_list_names_existing_team_owned_paths(default_project: Path) -> None:
    """Every path in [tool.cruft] skip exists in a fresh project (a typo would silently stop
    protecting a file), and the README's update section names each one."""
    pyproject = tomllib.loads((default_project / "pyproject.toml").read_text(encoding="utf-8"))
    skip = pyproject["tool"]["cruft"]["skip"]
    package = package_of(default_project)
    assert set(skip) == {*TEAM_OWNED, f"src/{package}/retriever.py", f"src/{package}/generator.py"}
    assert all((default_project / path).is_file() for path in skip)
    readme = (default_project / "README.md").read_text(encoding="utf-8")
    assert "cruft update" in readme and all(f"`{path}`" in readme for path in skip)


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

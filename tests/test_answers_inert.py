"""Answers are text: `{{ 7*7 }}` in a free-text answer bakes as `{{ 7*7 }}`, and an answer built
to run code runs nothing, whether it comes from a prompt, `key=value`, the API or `.cruft.json`.

Cookiecutter renders every context value as a Jinja template; local_extensions.py compiles
answers as string constants and sandboxes the environment (see its docstring).
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

import pytest
from conftest import ENV, GIT_ENV, ROOT, bake, bake_cli, commit_all, template_repository
from cookiecutter.main import cookiecutter
from cookiecutter.prompt import render_variable
from cookiecutter.utils import create_env_with_context
from jinja2 import Environment
from jinja2.exceptions import SecurityError, UndefinedError
from slugify import slugify

FREE_TEXT = ["project_name", "author", "description"]
JINJA = "Eval {{ 7*7 }} {% if true %}yes{% endif %} {# note #}"


def payloads(marker: Path) -> list[str]:
    """Template-injection answers that create `marker` if Jinja ever evaluates them (each
    pipe it opens closed, so a run leaves no process behind)."""
    shell = f"touch {marker}"
    return [
        f"{{{{ cycler.__init__.__globals__.os.popen('{shell}').close() }}}}",
        f"{{{{ lipsum.__globals__['os'].popen('{shell}').close() }}}}",
        f"{{{{ self.__init__.__globals__.__builtins__.__import__('os').system('{shell}') }}}}",
        f"{{% set x = joiner.__init__.__globals__.os.system('{shell}') %}}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}{{ namespace.__init__.__globals__ }}",
    ]


def free_text_in(project: Path) -> dict[str, str]:
    """Where each free-text answer lands: the README's title and first paragraph, pyproject.toml."""
    readme = (project / "README.md").read_text(encoding="utf-8")
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        "project_name": readme.splitlines()[0].removeprefix("# "),
        "author": pyproject["authors"][0]["name"],
        "description": pyproject["description"],
        "readme": readme,
    }


def environment() -> Environment:
    """The Jinja environment cookiecutter builds for this template (extensions loaded)."""
    context = {"cookiecutter": json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))}
    sys.path.insert(0, str(ROOT))  # where cookiecutter finds local_extensions.py
    try:
        return create_env_with_context(context)
    finally:
        sys.path.remove(str(ROOT))


def test_jinja_in_free_text_answers_bakes_as_typed(tmp_path: Path) -> None:
    project = bake(tmp_path, *(f"{key}={JINJA} ({key})" for key in FREE_TEXT))
    baked = free_text_in(project)
    for key in FREE_TEXT:
        assert baked[key] == f"{JINJA} ({key})"
    assert f"{JINJA} (description)" in baked["readme"]
    # The folder name is derived from the name as typed.
    assert project.name == slugify(f"{JINJA} (project_name)")


def test_a_payload_answer_runs_nothing_on_the_command_line(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    attack, *_ = payloads(marker)
    project = bake(tmp_path / "out", f"author={attack}", f"description={attack}")
    assert not marker.exists(), "an answer ran a shell command"
    baked = free_text_in(project)
    assert baked["author"] == baked["description"] == attack


def test_payload_answers_run_nothing_through_the_api(tmp_path: Path) -> None:
    """Every payload in every free-text answer, in one bake per payload (in this process, as
    a program calling cookiecutter would)."""
    marker = tmp_path / "PWNED"
    for number, attack in enumerate(payloads(marker)):
        output = tmp_path / f"out{number}"
        answers = {"author": attack, "description": attack, "project_name": f"Eval {attack}"}
        made = cookiecutter(str(ROOT), no_input=True, extra_context=answers, output_dir=str(output))
        project = Path(made)
        assert not marker.exists(), f"payload {number} ran"
        baked = free_text_in(project)
        assert baked["author"] == baked["description"] == attack
        assert baked["project_name"] == f"Eval {attack}"


# Text that must come back unchanged: Jinja delimiters, quotes, escapes, line endings Jinja
# would normalise, control and non-ASCII characters, and text that closes a raw block.
TRICKY = [
    "",
    "{{",
    "}}",
    "{% raw %}{{ 1 }}{% endraw %}",
    "{% endraw %}",
    "{{ '\\\"' }}",
    "quotes ' \" and \\ backslash \\n not a newline",
    "line one\nline two\r\nwindows\rold mac\n",
    "tab\tnul\x00del\x7fbell\x07",
    "Zoë, 東京, emoji 😀, right-to-left \u202e, line separator \u2028",
    "{{ cookiecutter.project_slug }}",
    "trailing newline\n\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_an_answer_renders_to_exactly_itself(text: str) -> None:
    """The prompt step (render_variable, as cookiecutter and cruft call it) returns any answer
    byte for byte, with the environment cookiecutter builds for this template."""
    env = environment()
    assert render_variable(env, text, {"project_name": "Demo"}) == text


def test_the_templates_own_defaults_are_still_rendered() -> None:
    env = environment()
    answers = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))
    slug = render_variable(env, answers["project_slug"], {"project_name": "Eval {{ 7*7 }}"})
    assert slug == "eval-7-7"
    assert render_variable(env, answers["package_name"], {"project_slug": slug}) == "eval_7_7"


def test_the_payloads_are_real(tmp_path: Path) -> None:
    """Rendered by a plain Jinja environment, each payload with a shell command runs it: the
    tests here would notice the guard going away."""
    marker = tmp_path / "PWNED"
    for attack in payloads(marker):
        Environment().from_string(attack).render()
        assert marker.exists() == ("touch" in attack), attack
        marker.unlink(missing_ok=True)


def test_template_text_is_sandboxed_too(tmp_path: Path) -> None:
    """Defence in depth: should an answer ever be compiled as template text (a cookiecutter
    release that renders answers elsewhere), the environment refuses the escape instead of
    running it."""
    marker = tmp_path / "PWNED"
    env = environment()
    for attack in payloads(marker):
        with pytest.raises((SecurityError, UndefinedError)):
            env.from_string(attack).render(cookiecutter={})
    assert not marker.exists()
    # What the template's own files use keeps working.
    own = "{{ c.x | replace('-', '_') }} {{ c | tojson }} {{ 'y' if 'b' in c.x }} {{ c.x | toml_string }}"
    assert env.from_string(own).render(c={"x": "b-c"}) == 'b_c {"x": "b-c"} y "b-c"'


def test_a_payload_typed_at_the_prompt_runs_nothing(tmp_path: Path) -> None:
    """Interactive cookiecutter in a pseudo-terminal: every answer typed ahead, one a line,
    in the order the questions come (the rest take their defaults)."""
    marker = tmp_path / "PWNED"
    attack, *_ = payloads(marker)
    typed = ["Eval {{ 7*7 }}", "", "", attack, attack, "", "", "", ""]
    command = [sys.executable, "-m", "cookiecutter", str(ROOT), "-o", str(tmp_path / "out")]
    code, shown = run_in_terminal(command, "".join(f"{line}\n" for line in typed))
    assert code == 0, shown
    assert not marker.exists(), "an answer typed at the prompt ran a shell command"
    (project,) = (tmp_path / "out").iterdir()
    baked = free_text_in(project)
    assert [baked[key] for key in FREE_TEXT] == ["Eval {{ 7*7 }}", attack, attack]


def run_in_terminal(command: list[str], typed: str) -> tuple[int, str]:
    """Run `command` attached to a pseudo-terminal with `typed` already typed; return the exit
    code and what the terminal showed."""
    main, child_end = pty.openpty()
    process = subprocess.Popen(
        command, env=ENV, stdin=child_end, stdout=child_end, stderr=child_end, close_fds=True
    )
    os.close(child_end)
    os.write(main, typed.encode())
    shown, deadline = b"", time.monotonic() + 120
    try:
        while True:
            ready, _, _ = select.select([main], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"{command} hung; the terminal showed:\n{shown.decode(errors='replace')}"
            try:
                chunk = os.read(main, 4096)
            except OSError:  # every process holding the terminal has exited
                break
            if not chunk:
                break
            shown += chunk
        return process.wait(timeout=60), shown.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main)


def sh(cwd: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a command in `cwd`, capturing its output (the caller judges the exit code)."""
    return subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, env=GIT_ENV, check=False)


def ok(cwd: Path, *command: str) -> str:
    """Run a command that must succeed; return what it printed."""
    result = sh(cwd, *command)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def stored_answers(project: Path, keys: dict[str, str]) -> dict[str, str]:
    context = json.loads((project / ".cruft.json").read_text(encoding="utf-8"))["context"]["cookiecutter"]
    return {key: context[key] for key in keys}


def test_cruft_create_diff_and_update_run_no_payload_from_cruft_json(tmp_path: Path) -> None:
    """`cruft create` stores the answers in .cruft.json as typed; `cruft diff` and
    `cruft update` render them again, at the recorded and at the newer template commit."""
    marker = tmp_path / "PWNED"
    attack, *_ = payloads(marker)
    template, _ = template_repository(tmp_path / "template")
    answers = {"project_name": "Eval {{ 7*7 }}", "author": attack, "description": attack}
    cruft = [sys.executable, "-m", "cruft"]
    out = tmp_path / "out"
    create = [
        "create",
        "--no-input",
        "--output-dir",
        str(out),
        "--extra-context",
        json.dumps(answers),
        str(template),
    ]
    ok(tmp_path, *cruft, *create)
    assert not marker.exists(), "cruft create ran an answer"
    (project,) = out.iterdir()
    assert stored_answers(project, answers) == answers
    ok(project, "git", "init", "-q", "-b", "main")
    commit_all(project, "generated")

    # The recorded commit, rendered again from .cruft.json, reproduces the project exactly.
    diff = sh(project, *cruft, "diff", "--exit-code")
    assert not marker.exists(), "cruft diff ran an answer"
    assert diff.returncode == 0 and "diff --git" not in diff.stdout, diff.stdout + diff.stderr

    docs = template / "{{cookiecutter.project_slug}}" / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "answers-note.md").write_text("# Note\n", "utf-8")
    commit_all(template, "template v2")
    ok(project, *cruft, "update", "-y")
    assert not marker.exists(), "cruft update ran an answer"
    assert (project / "docs" / "answers-note.md").is_file(), "the update did not apply"
    baked = free_text_in(project)
    assert [baked[key] for key in FREE_TEXT] == ["Eval {{ 7*7 }}", attack, attack]
    assert stored_answers(project, answers) == answers


PLAIN_EXTENSIONS = '''"""This template's filter alone: no sandbox, answers rendered (plain cookiecutter)."""
import importlib.util

from jinja2.ext import Extension

_spec = importlib.util.spec_from_file_location("hardened_extensions", {path!r})
_real = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_real)


class TomlExtension(Extension):
    def __init__(self, environment):
        super().__init__(environment)
        environment.filters["toml_string"] = _real.toml_string
'''
# Not part of the template: version control, environments and tool caches at its root.
NOT_TEMPLATE = shutil.ignore_patterns(
    ".git", ".venv", ".nox", "build", ".*_cache", "__pycache__", ".hypothesis"
)


def bake_with(template: Path, output: Path, *answers: str) -> Path:
    command = ["cookiecutter", "--no-input", str(template), "-o", str(output), *answers]
    ok(output.parent, sys.executable, "-m", *command)
    (project,) = output.iterdir()
    return project


def tree(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder`: its mode and bytes."""
    return {
        str(path.relative_to(folder)): (path.stat().st_mode, path.read_bytes())
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize(
    "answers",
    [
        [],
        ["retriever=hybrid", "judge=nli", "k=3"],
        ["retriever=tfidf", 'author=O\'Brien "QA" \\ Zoë', "description=Two\nlines, 東京"],
    ],
)
def test_ordinary_answers_bake_exactly_as_without_the_hardening(tmp_path: Path, answers: list[str]) -> None:
    """Same answers, same bytes and file modes: the sandbox and the literal answers change
    nothing for a template's own Jinja or for answers without Jinja in them."""
    # Both from copies without version control, so both pin the engine the same way.
    template = tmp_path / "template"
    shutil.copytree(ROOT, template, ignore=NOT_TEMPLATE)
    plain = tmp_path / "plain-template"
    shutil.copytree(ROOT, plain, ignore=NOT_TEMPLATE)
    source = PLAIN_EXTENSIONS.format(path=str(ROOT / "local_extensions.py"))
    (plain / "local_extensions.py").write_text(source, encoding="utf-8")
    hardened = bake_with(template, tmp_path / "hardened", *answers)
    unhardened = bake_with(plain, tmp_path / "plain", *answers)
    assert hardened.name == unhardened.name
    assert tree(hardened) == tree(unhardened)


def test_extensions_keep_the_name_every_template_commit_lists() -> None:
    """`cruft update` renders the newer commit with this module as imported from the project's
    recorded commit: an extension class older commits lack would fail to import there."""
    listed = json.loads((ROOT / "cookiecutter.json").read_text(encoding="utf-8"))["_extensions"]
    ours = [name for name in listed if name.startswith("local_extensions.")]
    assert ours == ["local_extensions.TomlExtension"]


def test_an_invalid_derived_name_is_still_refused_before_anything_is_written(tmp_path: Path) -> None:
    """A literal answer can still make a bad folder name: the pre-generation hook refuses it."""
    result = bake_cli(tmp_path, "project_slug={{ 7*7 }}")
    assert result.returncode != 0
    assert "project_slug '{{ 7*7 }}' is not a valid folder" in result.stderr
    assert not any(tmp_path.iterdir())

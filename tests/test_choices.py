"""A choice is its part file and one line of cookiecutter.json: every text a bake says about
the chosen retriever (its [retriever] options, the stand-in's floor in its units, its sweep,
its README paragraph, its engine extra, torch, its service's key), generator ([generation],
its README paragraph, generator.py's build, its key, whether it rewords) and judge ([judge]'s
backend lines, its own [judge.NAME] table, its README paragraph, its extra, torch, its key)
comes from templates/KIND/NAME.jinja, which the template's files import. No template file or
hook tests a choice's name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from conftest import (
    ANSWERS,
    ROOT,
    bake_cli,
    copy_template,
    engine_pin,
    package_of,
    pin_extras,
)

from local_extensions import choice_parts

# What each kind's part file declares: its values, then its macros.
DECLARED = {
    "retriever": {"extra", "torch", "secret_env", "service"}
    | {"options", "min_score", "sweep", "about", "docstring"},
    "generator": {"service", "rewords", "prompts", "secret_env", "options", "about", "imports", "build"},
    "judge": {"extra", "torch", "secret_env", "options", "table", "about"},
}
CHOICE = re.compile(r"cookiecutter\.(retriever|generator|judge)\s*(==|!=|\bin\b)")


@pytest.mark.parametrize("kind", sorted(DECLARED))
def test_every_choice_has_its_part_file_and_every_part_file_is_a_choice(kind: str) -> None:
    parts = choice_parts(f"{kind}s")
    assert sorted(parts) == sorted(ANSWERS[kind])
    for name, part in parts.items():
        assert set(dir(part)) >= DECLARED[kind], f"templates/{kind}s/{name}.jinja"


def test_no_template_file_or_hook_tests_a_choice_by_name() -> None:
    files = [path for path in (ROOT / "{{cookiecutter.project_slug}}").rglob("*") if path.is_file()]
    files += sorted((ROOT / "hooks").glob("*.py"))
    named = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        if path.suffix not in (".jsonl", ".json")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if CHOICE.search(line)
    ]
    assert named == []


def bake_a_new_choice(
    tmp_path: Path, kind: str, like: str, name: str, replacements: dict[str, str]
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Add choice `name` of `kind` as a team would: a copy of `like`'s part file with
    `replacements`, and one line at the end of cookiecutter.json's list; bake it."""
    template = copy_template(tmp_path / "template")
    part = (ROOT / "templates" / f"{kind}s" / f"{like}.jinja").read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in part, old
        part = part.replace(old, new)
    (template / "templates" / f"{kind}s" / f"{name}.jinja").write_text(part, encoding="utf-8")
    context_file = template / "cookiecutter.json"
    lines = context_file.read_text(encoding="utf-8").splitlines(keepends=True)
    last = f'    "{ANSWERS[kind][-1]}"\n'
    at = lines.index(last)
    lines[at : at + 1] = [last.replace('"\n', '",\n'), f'    "{name}"\n']  # the one line (and a comma)
    context_file.write_text("".join(lines), encoding="utf-8")
    assert json.loads(context_file.read_text(encoding="utf-8"))[kind][-1] == name
    result = bake_cli(tmp_path / "out", f"{kind}={name}", template=template)
    assert result.returncode == 0, result.stderr
    (project,) = (tmp_path / "out").iterdir()
    return project, result


def test_a_new_retriever_choice_is_one_part_file_and_one_line(tmp_path: Path) -> None:
    replacements = {
        '{%- set extra = "" %}': '{%- set extra = "tfidf" %}',
        "{%- set torch = false %}": "{%- set torch = true %}",
        '{%- set secret_env = "" %}': '{%- set secret_env = "KEYWORD_API_KEY" %}',
        "# The shipped bm25 retriever checks its own options (settings.md lists them).": 'field = "body"',
        "min_score = 3.35 ": "min_score = 7.5  ",
        "k1 = [0.6, 0.9, 1.2]\nb = [0.3, 0.4, 0.75]": 'field = ["body", "title"]',
        "The shipped retriever is `bm25`, configured by `[retriever]`.": "Keyword search over the body.",
    }
    project, result = bake_a_new_choice(tmp_path, "retriever", "bm25", "keyword", replacements)
    settings = (project / "eval.toml").read_text(encoding="utf-8")
    assert re.search(r'^\[retriever\]\n#.*\nfield = "body"\n\n\[generation\]', settings, re.M), settings
    assert re.search(r"^min_score = 7\.5 ", settings, re.M)
    assert re.search(r'^\[sweep\.retriever\] .*\nfield = \["body", "title"\]$', settings, re.M)
    assert "Keyword search over the body." in (project / "README.md").read_text(encoding="utf-8")
    assert "### Installing torch" in (project / "README.md").read_text(encoding="utf-8")
    tox = (project / "tox.ini").read_text(encoding="utf-8")
    assert "    torch==2.13.0\n" in tox and "    KEYWORD_API_KEY\n" in tox
    assert pin_extras(engine_pin(project)) == {"tfidf"}
    source = (project / "src" / package_of(project) / "retriever.py").read_text(encoding="utf-8")
    assert 'retriever("keyword").build(documents, tokenize, options)' in source
    # No baseline was made for it yet (the template's `nox -s baselines` makes one): the bake says so.
    assert not (project / "evals" / "baseline.json").exists()
    assert "no baseline can ship for the retriever keyword" in result.stdout


def test_a_new_generator_choice_is_one_part_file_and_one_line(tmp_path: Path) -> None:
    """A second endpoint-backed generator (the shipped openai adapter at another server, with
    its own key): its [generation] lines, README paragraph, key and prompt folder come from its
    part file; the hook keeps prompts/ and ships no baseline, as for any generator with a
    base_url, without a name of its own anywhere else."""
    replacements = {
        '{%- set secret_env = "OPENAI_API_KEY" %}': '{%- set secret_env = "VLLM_API_KEY" %}',
        'model = "gpt-4o-mini"            # the model the endpoint serves': 'model = "served-model"',
        'api_key_env = "OPENAI_API_KEY"': 'api_key_env = "VLLM_API_KEY"',
        "The shipped generator asks your LLM": "The shipped generator asks your vLLM server",
    }
    project, result = bake_a_new_choice(tmp_path, "generator", "openai", "vllm", replacements)
    settings = (project / "eval.toml").read_text(encoding="utf-8")
    assert re.search(r'^model = "served-model"\napi_key_env = "VLLM_API_KEY"', settings, re.M), settings
    assert re.search(r'^flip_rule = "net" ', settings, re.M), "a model that rewords is gated by net flips"
    readme = (project / "README.md").read_text(encoding="utf-8")
    assert "The shipped generator asks your vLLM server" in readme
    assert "    VLLM_API_KEY\n" in (project / "tox.ini").read_text(encoding="utf-8")
    assert (project / "prompts" / "answer.txt").is_file()
    source = (project / "src" / package_of(project) / "generator.py").read_text(encoding="utf-8")
    assert "return openai.build(retriever, documents, options)" in source
    assert not (project / "evals" / "baseline.json").exists()
    assert "no baseline can ship for the generator vllm" in result.stdout

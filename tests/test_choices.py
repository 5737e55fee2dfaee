"""A retriever choice is its part file and one line of cookiecutter.json: every text a bake
says about the chosen retriever (its [retriever] options, the stand-in's floor in its units,
its sweep, its README paragraph, its engine extra, torch, its service's key) comes from
templates/retrievers/NAME.jinja, which the template's files import."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import (
    RETRIEVER_PARTS,
    RETRIEVERS,
    ROOT,
    bake_cli,
    copy_template,
    engine_pin,
    package_of,
    pin_extras,
)

PART_NAMES = {"extra", "torch", "secret_env", "service"}
MACROS = {"options", "min_score", "sweep", "about", "docstring"}


def test_every_retriever_choice_has_its_part_file_and_every_part_file_is_a_choice() -> None:
    assert sorted(RETRIEVER_PARTS) == sorted(RETRIEVERS)
    for name, part in RETRIEVER_PARTS.items():
        assert set(dir(part)) >= PART_NAMES | MACROS, f"templates/retrievers/{name}.jinja"
        assert isinstance(part.torch, bool) and isinstance(part.service, bool), name


def test_a_new_retriever_choice_is_one_part_file_and_one_line(tmp_path: Path) -> None:
    template = copy_template(tmp_path / "template")
    part = (ROOT / "templates" / "retrievers" / "bm25.jinja").read_text(encoding="utf-8")
    replacements = {
        '{%- set extra = "" %}': '{%- set extra = "tfidf" %}',
        "{%- set torch = false %}": "{%- set torch = true %}",
        '{%- set secret_env = "" %}': '{%- set secret_env = "KEYWORD_API_KEY" %}',
        "# The shipped bm25 retriever checks its own options (settings.md lists them).": 'field = "body"',
        "min_score = 3.35 ": "min_score = 7.5  ",
        "k1 = [0.6, 0.9, 1.2]\nb = [0.3, 0.4, 0.75]": 'field = ["body", "title"]',
        "The shipped retriever is `bm25`, configured by `[retriever]`.": "Keyword search over the body.",
    }
    for old, new in replacements.items():
        assert old in part, old
        part = part.replace(old, new)
    (template / "templates" / "retrievers" / "keyword.jinja").write_text(part, encoding="utf-8")
    context_file = template / "cookiecutter.json"
    lines = context_file.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index('    "http"\n')
    lines[at : at + 1] = ['    "http",\n', '    "keyword"\n']  # the one line (and http's comma)
    context_file.write_text("".join(lines), encoding="utf-8")
    assert json.loads(context_file.read_text(encoding="utf-8"))["retriever"][-1] == "keyword"

    result = bake_cli(tmp_path / "out", "retriever=keyword", template=template)
    assert result.returncode == 0, result.stderr
    (project,) = (tmp_path / "out").iterdir()
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

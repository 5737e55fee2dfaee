"""Finish the generated project: pin the engine, put the chosen baseline in place.

Runs inside the freshly generated project with the interpreter that runs cookiecutter:
standard library only. Idempotent; never runs git, prompts or touches the network, because
`cruft update` runs it again on a fresh render.

- The engine pin in pyproject.toml: `rag-regress[extras] @ git+URL@COMMIT#subdirectory=engine`
  when the template came from a git URL and its commit is known (cruft records both; for a
  local clone, its `origin` remote and checked-out commit, read from its .git folder), else
  `rag-regress[extras]==VERSION`, the release of the engine this template carries. Never a
  path of the machine that bakes, except the `file:` URL a user hands cruft as the template
  (cruft records it in .cruft.json too): the team commits this file.
- Baseline: `evals/baselines/<retriever>.json` (made by the template's `nox -s baselines`)
  becomes `evals/baseline.json` when it was made with the chosen k and judge; otherwise, or
  when the system or its judge is the team's own service or LLM (http, openai, the llm
  judge), the project starts without a baseline and says how to make one.
- prompts/ (the LLM generator's prompt) only when the rendered [generation] names a prompt in it.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

ANSWERS: dict = json.loads(r"""{{ cookiecutter | tojson }}""")

# What the chosen generator needs is what its part file (templates/generators/NAME.jinja) rendered
# into eval.toml's [generation]: a `base_url` is a server the template cannot run for a team (no
# baseline can ship), a `prompt` under prompts/ keeps that folder. A retriever that calls the
# team's own service is one without a shipped baseline (evals/baselines/).
GENERATION = re.compile(r"(?ms)^\[generation\]$(.*?)(?=^\[)")
# A judge's own table ([judge.NAME], from templates/judges/NAME.jinja) that names a `base_url`:
# a judge model behind a server, whose verdicts no shipped baseline holds.
JUDGE_TABLE = re.compile(r"(?ms)^\[judge\.[\w-]+\][^\n]*$(.*?)(?=^\[|\Z)")
COMMIT = re.compile(r"[0-9a-f]{40}")
# Git URLs a team's CI can reach; a bare path (or a file: URL not given by the user) is not one.
REMOTE = re.compile(r"^(?:(?:https?|ssh|git|file)://|git\+|[\w.-]+@[\w.-]+:)")
ABBREVIATIONS = {"gh:": "https://github.com/", "gl:": "https://gitlab.com/", "bb:": "https://bitbucket.org/"}


# The engine requirement as rendered: its extras come from the choices' part files
# (templates/retrievers/NAME.jinja: `extra`; the nli judge: "nli").
REQUIREMENT = re.compile(r'(?m)^  "rag-regress(\[[a-z0-9,-]*\])?[^"]*",')


def _git_dir_facts(folder: Path) -> tuple[str | None, str | None]:
    """(origin URL, checked-out commit) of a local clone, read from its files (no git run)."""
    git = folder / ".git"
    if not git.is_dir():
        return None, None
    url = None
    config = (
        (git / "config").read_text(encoding="utf-8", errors="replace") if (git / "config").is_file() else ""
    )
    section = re.search(r'\[remote "origin"\]([^\[]*)', config)
    if section:
        found = re.search(r"^\s*url\s*=\s*(\S+)\s*$", section.group(1), re.M)
        url = found.group(1) if found else None
    head = (git / "HEAD").read_text(encoding="utf-8").strip() if (git / "HEAD").is_file() else ""
    commit = head if COMMIT.fullmatch(head) else None
    if head.startswith("ref: "):
        ref = head[5:]
        loose = git / ref
        if loose.is_file():
            commit = loose.read_text(encoding="utf-8").strip()
        elif (git / "packed-refs").is_file():
            for line in (git / "packed-refs").read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    commit = parts[0]
    return url, commit if commit and COMMIT.fullmatch(commit) else None


def template_source(answers: dict) -> tuple[str | None, str | None]:
    """The template's git URL and commit, when both are known and the URL is not a local path.

    cruft gives both (`_template`, `_commit`); cookiecutter gives the URL or folder it was
    handed (`_template`) and the folder it rendered (`_repo_dir`: its clone of a URL, or the
    local folder), whose checked-out commit is read from its .git folder."""
    url = str(answers.get("_template") or "")
    for short, long in ABBREVIATIONS.items():
        if url.startswith(short):
            url = long + url[len(short) :]
    commit = answers.get("_commit")
    repo_dir = Path(str(answers.get("_repo_dir") or url or ".")).expanduser()
    origin, head = _git_dir_facts(repo_dir) if repo_dir.is_dir() else (None, None)
    from_cruft = isinstance(commit, str) and COMMIT.fullmatch(commit) is not None  # only cruft sets it
    local = Path(url).expanduser() if url else None
    if not REMOTE.match(url):  # a local folder: its origin, if that is a URL of another machine
        if origin and REMOTE.match(origin) and not origin.startswith("file:"):
            url = origin
        elif from_cruft and local is not None and local.is_absolute() and (local / ".git").exists():
            # cruft turns the file: URL it is given into its path (and records that path in
            # .cruft.json, where `cruft update` reads it): the project's template, at that commit.
            url = local.as_uri()
        else:
            url = ""
    commit = commit if from_cruft else head
    if not url or not commit:
        return None, None
    return url.removeprefix("git+"), commit


def engine_requirement(answers: dict, extras: str) -> str:
    name = f"rag-regress{extras}"
    url, commit = template_source(answers)
    if url and commit:
        return f"{name} @ git+{url}@{commit}#subdirectory=engine"
    return f"{name}=={answers['_engine_version']}"


def pin_engine(project: Path, answers: dict) -> str:
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    rendered = REQUIREMENT.search(text)
    if not rendered:
        raise SystemExit("post-generation hook: pyproject.toml holds no rag-regress requirement to pin")
    requirement = engine_requirement(answers, rendered.group(1) or "")
    pinned = text[: rendered.start()] + f"  {json.dumps(requirement)}," + text[rendered.end() :]
    pyproject.write_text(pinned, encoding="utf-8")
    return requirement


def place_baseline(project: Path, retriever: str, k: int, judge: str = "lexical") -> str | None:
    """Move the shipped baseline into place; return a note for the user, if any."""
    shipped = project / "evals" / "baselines"
    target = project / "evals" / "baseline.json"
    candidate = shipped / f"{retriever}.json"
    note = None
    if candidate.is_file():
        settings = json.loads(candidate.read_text(encoding="utf-8"))["settings"]
        made_with_k = settings["k"]
        made_with_judge = settings.get("judge", {}).get("name")
        if made_with_k == k and made_with_judge == judge:
            candidate.replace(target)
        elif made_with_k == k:
            note = (
                f"The shipped baseline was judged by the {made_with_judge} judge; you chose {judge}. "
                "Make yours with `nox -s baseline` (once the judge's model is available) and commit "
                "evals/baseline.json."
            )
        else:
            note = (
                f"The shipped baseline was made with k={made_with_k}; you chose k={k}. "
                "Make yours with `nox -s baseline` and commit evals/baseline.json."
            )
    if shipped.is_dir():
        shutil.rmtree(shipped)
    return note


def main() -> int:
    project = Path.cwd()
    requirement = pin_engine(project, ANSWERS)
    if "@" not in requirement:
        print(
            f"NOTE: the engine is pinned as {requirement} (no git URL and commit of the template known). "
            "Generate from the template's git URL, or with cruft, to pin its commit (README, 'The engine')."
        )
    settings = (project / "eval.toml").read_text(encoding="utf-8")
    found = GENERATION.search(settings)
    generation = found.group(1) if found else ""
    services = [f"the generator {ANSWERS['generator']}"] if re.search(r"(?m)^base_url = ", generation) else []
    if any(re.search(r"(?m)^base_url = ", table) for table in JUDGE_TABLE.findall(settings)):
        services.append(f"the judge {ANSWERS['judge']}")
    shipped, placed = (
        project / "evals" / "baselines" / f"{ANSWERS['retriever']}.json",
        project / "evals" / "baseline.json",
    )
    if not shipped.is_file() and not placed.is_file():
        services.insert(0, f"the retriever {ANSWERS['retriever']}")
    if services:
        shutil.rmtree(project / "evals" / "baselines", ignore_errors=True)
        own = "your own service). Start it" if len(services) == 1 else "your own services). Start them"
        note = (
            f"no baseline can ship for {' and '.join(services)} ({own}, then run "
            "`nox -s baseline -- --fit-floors` and commit evals/baseline.json."
        )
    else:
        note = place_baseline(
            project, ANSWERS["retriever"], int(ANSWERS["k"]), ANSWERS.get("judge", "lexical")
        )
    if note:
        print(f"NOTE: {note}")
    if not re.search(r'(?m)^prompt = "prompts/', generation):
        shutil.rmtree(project / "prompts", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

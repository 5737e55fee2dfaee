"""Keep only the files of the options that were chosen.

Runs inside the freshly generated project with the interpreter that runs cookiecutter:
standard library only. Idempotent; never runs git, prompts or touches the network, because
`cruft update` runs it again on a fresh render.

- Retrievers: every module in `src/<package>/retrieval/retrievers/` other than the chosen
  one, the ones it is built from (`BUILT_FROM`) and `__init__.py` is removed, with its
  `tests/engine/retrieval/retrievers/test_<module>.py` if any, so adding a retriever choice
  is one module plus one line in `cookiecutter.json`.
- Judges: `src/<package>/answers/judges/nli.py` and its tests are removed unless the NLI
  judge was chosen, so a lexical project carries no model code and needs no torch.
- Baseline: `evals/baselines/<retriever>.json` (made by the template's `nox -s baselines`)
  becomes `evals/baseline.json` when it was made with the chosen k and judge; otherwise the
  project starts without a baseline and says how to make one.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ANSWERS: dict = json.loads(r"""{{ cookiecutter | tojson }}""")


# Retrievers that combine others keep those modules too.
BUILT_FROM = {"hybrid": {"bm25", "dense"}}


def keep_chosen_retriever(project: Path, package: str, retriever: str) -> None:
    folder = project / "src" / package / "retrieval" / "retrievers"
    tests = project / "tests" / "engine" / "retrieval" / "retrievers"
    keep = {"__init__", retriever, *BUILT_FROM.get(retriever, ())}
    for module in folder.glob("*.py"):
        if module.stem not in keep:
            module.unlink()
            (tests / f"test_{module.stem}.py").unlink(missing_ok=True)


def keep_chosen_judge(project: Path, package: str, judge: str) -> None:
    if judge != "nli":
        (project / "src" / package / "answers" / "judges" / "nli.py").unlink(missing_ok=True)
        (project / "tests" / "engine" / "answers" / "test_judge_nli.py").unlink(missing_ok=True)


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
    package = ANSWERS["package_name"]
    retriever = ANSWERS["retriever"]
    keep_chosen_retriever(project, package, retriever)
    judge = ANSWERS.get("judge", "lexical")
    keep_chosen_judge(project, package, judge)
    note = place_baseline(project, retriever, int(ANSWERS["k"]), judge)
    if note:
        print(f"NOTE: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

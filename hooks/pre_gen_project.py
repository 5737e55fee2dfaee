"""Validate the answers before anything is generated.

Cookiecutter renders this file with Jinja, then runs it with the interpreter that runs
cookiecutter, so it uses the standard library only. The answers arrive as one JSON object
inside a raw string, so no answer (quotes, backslashes, newlines) can ever become code.

This hook is idempotent and has no side effects: `cruft update` runs it again.
"""

from __future__ import annotations

import json
import keyword
import re
import sys

ANSWERS: dict = json.loads(r"""{{ cookiecutter | tojson }}""")

# Names a package must not take: importing them would shadow the real thing.
DEPENDENCIES = {
    "hypothesis",
    "nox",
    "numpy",
    "pytest",
    "scipy",
    "sklearn",
    "tomli",
    "tomllib",
    "cookiecutter",
    "cruft",
}
SLUG = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
PACKAGE = re.compile(r"^[a-z][a-z0-9_]*$")


def problems(answers: dict) -> list[str]:
    """Return one readable message per invalid answer (empty when all are valid)."""
    found = []
    slug = str(answers.get("project_slug", ""))
    package = str(answers.get("package_name", ""))
    if not SLUG.match(slug):
        found.append(
            f"project_slug {slug!r} is not a valid folder and distribution name. "
            "Use lowercase letters, digits and single hyphens, starting with a letter "
            "(e.g. 'help-centre-rag-eval')."
        )
    if not PACKAGE.match(package) or not package.isidentifier():
        found.append(
            f"package_name {package!r} is not a valid Python package name. "
            "Use lowercase letters, digits and underscores, starting with a letter "
            "(e.g. 'help_centre_rag_eval')."
        )
    elif keyword.iskeyword(package) or keyword.issoftkeyword(package):
        found.append(f"package_name {package!r} is a Python keyword; choose another name.")
    elif package in sys.stdlib_module_names or package in DEPENDENCIES:
        found.append(
            f"package_name {package!r} would shadow the module of the same name "
            "(standard library or a dependency); choose another name."
        )
    k = str(answers.get("k", "")).strip()
    if not re.fullmatch(r"[0-9]+", k) or int(k) < 1:
        found.append(f"k {k!r} must be a whole number of at least 1 (e.g. 5).")
    return found


def main() -> int:
    found = problems(ANSWERS)
    if found:
        print("ERROR: cannot generate the project:", file=sys.stderr)
        for message in found:
            print(f"  - {message}", file=sys.stderr)
        print("Run cookiecutter again with corrected answers.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

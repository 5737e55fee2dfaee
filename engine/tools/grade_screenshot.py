"""Draw the grading page in a real browser (headless Chromium, offline) and save two PNGs.

A developer tool, not part of the package: `python tools/grade_screenshot.py [FOLDER]`
builds a grading page from the demo data (tests/demo/evals: its corpus, its golden set shown
with include_golden, and two made-up candidates written to a temporary file in the candidates
format), grades a little with the keys, and saves what a grader sees to FOLDER (default: the
repository's docs/images/):

  grade-page.png      a candidate with its documents graded and the focused one outlined
  grade-page-add.png  the "Add question" form, filled in

It needs Chromium (`apt-get install chromium`; Playwright's own browser download is never
used) and the playwright package (`pip install playwright`). Chromium runs with the same
flags as tools/screenshot.py: no network of its own, a throwaway profile.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from screenshot import FLAGS, find_chromium

from rag_regress.golden.page import page_items, write_page
from rag_regress.inputs.data import find_quote, load_corpus, load_golden

ENGINE = Path(__file__).resolve().parents[1]
DEMO = ENGINE / "tests" / "demo" / "evals"
IMAGES = ENGINE.parent / "docs" / "images"
SIZE = (1200, 900)  # width, height: under 300 KB a picture


def passage(text: str, doc: str, quote: str) -> dict[str, object]:
    """A passage of the candidates format: `quote`'s offsets in `text`."""
    [(start, end)] = find_quote(text, quote)
    return {"doc": doc, "start": start, "end": end, "grade": 3}


def candidates(path: Path, texts: dict[str, str]) -> Path:
    """Two candidates as `rag-regress golden generate` writes them (one per line)."""
    sso, scim, refund = "single-sign-on-saml", "scim-user-provisioning", "refund-policy"
    provenance = {
        "generator": "rag-regress golden generate",
        "model": "demo",
        "prompt_version": "1",
        "seed": 0,
    }
    lines = [
        {
            "id": "cand-0001",
            "slot": 1,
            "status": "candidate",
            "why": None,
            "kind": "two-passage",
            "question": "Can people who leave our identity provider still sign in with a password?",
            "answerable": True,
            "reference": "No: with SCIM they are deactivated within 40 minutes, and Enforce SSO blocks "
            "password sign-in for members.",
            "nuggets": [{"text": "deactivates them within 40 minutes", "vital": True}],
            "relevant": {sso: 3, scim: 3},
            "passages": [
                passage(
                    texts[sso], sso, "switch on Enforce SSO so members can no longer sign in with a password"
                ),
                passage(texts[scim], scim, "Tidemark deactivates them within 40 minutes"),
            ],
            "provenance": provenance | {"slot": 1},
        },
        {
            "id": "cand-0002",
            "slot": 2,
            "status": "candidate",
            "why": None,
            "kind": "terse",
            "question": "refund annual",
            "answerable": True,
            "reference": None,
            "nuggets": [],
            "relevant": {refund: 3},
            "passages": [],
            "provenance": provenance | {"slot": 2},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else IMAGES
    chromium = find_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("error: playwright is not installed: `pip install playwright`", file=sys.stderr)
        return 2
    if chromium is None:
        print("error: no Chromium to draw the page: `apt-get install chromium`", file=sys.stderr)
        return 2
    corpus = load_corpus(DEMO / "corpus.jsonl")
    golden = load_golden(DEMO / "golden.jsonl", corpus)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grade-page-") as temporary:
        made = candidates(Path(temporary) / "candidates.jsonl", {i: d.text for i, d in corpus.items()})
        page_file = Path(temporary) / "grade.html"
        write_page(
            page_file,
            page_items(corpus, golden, candidates=made, include_golden=True),
            corpus,
            "Tidemark help centre",
        )
        with sync_playwright() as playwright:
            # Playwright adds --headless itself.
            flags = [flag for flag in FLAGS if flag != "--headless"]
            browser = playwright.chromium.launch(executable_path=chromium, args=flags, headless=True)
            page = browser.new_page(viewport={"width": SIZE[0], "height": SIZE[1]})
            page.goto(page_file.as_uri())
            page.fill("#name", "Ana")
            page.keyboard.press("Escape")
            for key in ["3", "1", "a", "k"]:  # grade both documents, accept, focus back on the first
                page.keyboard.press(key)
            page.screenshot(path=str(folder / "grade-page.png"))
            page.click("#add-open")
            page.fill("#add-question", "Can an owner require 2FA for every member?")
            page.fill("#add-reference", "Yes: on the Business plan and above, under Settings > Security.")
            page.locator("#add-docs .pick input").first.fill("set-up-two-factor-authentication")
            page.click("#add-doc")
            page.locator("#add-docs .pick input").nth(1).fill("recover-account-lost-2fa-device")
            page.locator("#add-docs .pick select").nth(1).select_option("0")
            page.screenshot(path=str(folder / "grade-page-add.png"))
            browser.close()
    for name in ("grade-page.png", "grade-page-add.png"):
        print(f"wrote {folder / name}: open it and look")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

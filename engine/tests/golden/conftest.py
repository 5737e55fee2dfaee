"""The grading page's browser fixtures, for tests/golden/test_page.py and test_answer_grading.py:
a real headless Chromium and a fresh tab in it. They need Chromium (`apt-get install chromium`;
Playwright's own download is never used) and the playwright package; without either a test
that asks for them is skipped, saying which."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from conftest import ENGINE_ROOT

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page

_spec = importlib.util.spec_from_file_location("screenshot_tool", ENGINE_ROOT / "tools" / "screenshot.py")
assert _spec is not None and _spec.loader is not None
screenshot_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshot_tool)
# Chromium kept off the network and out of the user's profile, as tools/screenshot.py runs it
# (Playwright adds its own headless switch).
FLAGS = [flag for flag in screenshot_tool.FLAGS if flag != "--headless"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on PATH: `apt-get install chromium`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed: `pip install playwright` (no `playwright install` needed)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def accepted_dialogs() -> tuple[str, ...]:
    """How the dialogs a page may open begin (each is accepted): none here; a test module whose
    page asks something overrides this fixture."""
    return ()


@pytest.fixture
def page(browser: Browser, accepted_dialogs: tuple[str, ...]) -> Iterator[Page]:
    """A fresh tab in a fresh profile (its own localStorage). A script error, or any dialog but
    those `accepted_dialogs` begins (accepted), fails the test: alert(1) would show here."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))

    def answer(dialog: Dialog) -> None:
        if dialog.message.startswith(accepted_dialogs):
            dialog.accept()
        else:
            errors.append(f"unexpected dialog: {dialog.message}")
            dialog.dismiss()

    tab.on("dialog", answer)
    yield tab
    context.close()
    assert errors == []

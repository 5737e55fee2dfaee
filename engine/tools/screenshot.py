"""Render the HTML report in a real browser (headless Chromium), offline, to a PNG.

A developer tool, not part of the package: after `rag-regress gate`, run
`python tools/screenshot.py [PAGE]` (default: [data] html of eval.toml in this folder):
it checks that the page a reviewer opens from disk really draws. Chromium is not a Python
package: on Debian/Ubuntu `apt-get install chromium`. The flags keep it from reaching the
network (no updates, sync or background fetches) and from touching your own profile.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path


class ScreenshotError(Exception):
    """Why no picture was made, and the fix."""


FLAGS = (
    "--headless",
    "--no-sandbox",  # root in containers and CI runners
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def screenshot(page: Path, png: Path, size: tuple[int, int] = (1200, 1600)) -> Path:
    """Open `page` from disk in headless Chromium and save what it draws to `png`."""
    chromium = find_chromium()
    if chromium is None:
        raise ScreenshotError(f"{page}: no Chromium to render it; install it (`apt-get install chromium`)")
    if not page.exists():
        raise ScreenshotError(f"{page}: the HTML report does not exist; run `nox -s gate` first")
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        done = subprocess.run(
            [
                chromium,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={png.resolve()}",
                f"--window-size={size[0]},{size[1]}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if not png.exists():
        drew = f"Chromium drew nothing (exit {done.returncode})"
        raise ScreenshotError(f"{page}: {drew}: {done.stderr[-500:]}")
    return png


# Appended to a copy of the page (never to the page itself, which runs no script): writes
# the page's widths into its title, which --dump-dom then prints.
MEASURE = (
    "<script>document.title = 'width ' + document.documentElement.scrollWidth + ' of ' + "
    "window.innerWidth;</script>"
)


def page_width(page: Path, window: tuple[int, int] = (1000, 800)) -> tuple[int, int]:
    """(scrollWidth, window width) of `page` opened in headless Chromium at `window` size: a
    page that never scrolls sideways has the first no larger than the second."""
    chromium = find_chromium()
    if chromium is None:
        raise ScreenshotError(f"{page}: no Chromium to measure it; install it (`apt-get install chromium`)")
    with tempfile.TemporaryDirectory(prefix="chromium-measure-") as folder:
        copy = Path(folder) / page.name
        copy.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), "utf-8")
        done = subprocess.run(
            [
                chromium,
                *FLAGS,
                f"--user-data-dir={folder}/profile",
                f"--window-size={window[0]},{window[1]}",
                "--dump-dom",
                copy.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    found = re.search(r"<title>width (\d+) of (\d+)</title>", done.stdout)
    if found is None:
        why = f"Chromium did not measure it (exit {done.returncode})"
        raise ScreenshotError(f"{page}: {why}: {done.stderr[-500:]}")
    return int(found.group(1)), int(found.group(2))


def report_page(config: Path = Path("eval.toml")) -> Path:
    """Where the gate writes its HTML report: [data] html of eval.toml, as the package reads it."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8")).get("data", {})
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    return config.parent / str(data.get("html", "build/report.html"))


def main(argv: list[str]) -> int:
    page = Path(argv[0]) if argv else report_page()
    try:
        png = screenshot(page, page.with_suffix(".png"))
    except ScreenshotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {png}: open it and look")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Render the HTML report in a real browser (headless Chromium), offline, to a PNG.

`nox -s screenshot` runs this module (`python -m <package>.browser`) after `nox -s gate`:
it checks that the page a reviewer opens from disk really draws. Chromium is not a Python
package: on Debian/Ubuntu `apt-get install chromium`. The flags keep it from reaching the
network (no updates, sync or background fetches) and from touching your own profile.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .config import DEFAULT_PATH, load_config
from .errors import EvalInputError

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
        raise EvalInputError(page, "no Chromium to render it", "install it, e.g. `apt-get install chromium`")
    if not page.exists():
        raise EvalInputError(page, "the HTML report does not exist", "run `nox -s gate` first")
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
        problem = f"Chromium drew nothing (exit {done.returncode}): {done.stderr[-500:]}"
        raise EvalInputError(page, problem, "run the command by hand to see why")
    return png


def main() -> int:
    try:
        config = load_config(DEFAULT_PATH)
        png = screenshot(config.html, config.html.with_suffix(".png"))
    except EvalInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {png}: open it and look")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""settings/edit.py: `baseline --fit-floors` changes a few settings of a file people wrote,
and leaves every other line of it as it was."""

from __future__ import annotations

import tomllib
from pathlib import Path

from rag_regress.settings.edit import REMOVE, edit_toml

WRITTEN = """# the team's own header comment
[gate]
tolerance = 0.02   # kept

[gate.floors]                 # a table comment
"R@5" = 0.80                  # written as an alias
mrr = 0.7

[gate.slices."v1.2"]          # a tag holding a dot
"hit@5" = 0.9

[gate.slices.old]
"hit@5" = 0.5

[stats]
seed = 7   # kept
"""


def test_a_change_touches_only_its_lines_and_keeps_comments_aliases_and_quoted_tags(tmp_path: Path) -> None:
    path = tmp_path / "eval.toml"
    path.write_text(WRITTEN, encoding="utf-8")
    edit_toml(
        path,
        {
            ("gate", "floors", "recall@5"): 0.6,  # the engine's name for "R@5"
            ("gate", "slices", "v1.2", "hit@5"): 0.75,
            ("gate", "slices", "old"): REMOVE,
            ("gate", "floors", "mrr"): REMOVE,
        },
    )
    assert path.read_text(encoding="utf-8") == (
        WRITTEN.replace('"R@5" = 0.80                  #', '"R@5" = 0.6                   #')
        .replace('"hit@5" = 0.9', '"hit@5" = 0.75')
        .replace('[gate.slices.old]\n"hit@5" = 0.5\n\n', "")
        .replace("mrr = 0.7\n", "")
    )


def test_a_setting_not_written_yet_is_added_after_its_table_s_last_key(tmp_path: Path) -> None:
    """A floor eval.toml leaves to its default (`judged`'s, from [judge] min_judged) is added
    below the table's last key, above the comments that introduce the next table; a missing
    table is made."""
    path = tmp_path / "eval.toml"
    path.write_text(WRITTEN, encoding="utf-8")
    edit_toml(path, {("gate", "floors", "judged"): 0.58})
    assert path.read_text(encoding="utf-8") == WRITTEN.replace("mrr = 0.7\n", "mrr = 0.7\njudged = 0.58\n")
    bare = "[gate]\ntolerance = 0.02\n\n[stats]\nseed = 7   # kept\n"
    path.write_text(bare, encoding="utf-8")
    edit_toml(path, {("gate", "floors", "judged"): 0.5})
    written = path.read_text(encoding="utf-8")
    expected = {"gate": {"tolerance": 0.02, "floors": {"judged": 0.5}}, "stats": {"seed": 7}}
    assert tomllib.loads(written) == expected
    assert written.startswith("[gate]\ntolerance = 0.02\n") and "seed = 7   # kept\n" in written

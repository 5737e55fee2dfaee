"""The executors (execution/): the local one, and Dask on a cluster of separate processes
(not threads) that this module starts, whose results must equal the local ones."""

from __future__ import annotations

import json
import os
import pickle
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SHIPPED, run_cli
from rag_regress import execution
from rag_regress.api import System
from rag_regress.errors import EvalInputError
from rag_regress.execution import LOCAL, ExecutorError, fixed, spread

distributed = pytest.importorskip("distributed", reason="the test group installs dask[distributed]")
from rag_regress.execution.cluster import DaskExecutor  # noqa: E402


@pytest.fixture
def dask(dask_cluster: str) -> Iterator[DaskExecutor]:
    with DaskExecutor(dask_cluster) as executor:
        yield executor


def square_all(offset: int, piece: list[int]) -> list[int]:
    return [offset + n * n for n in piece]


def where(piece: list[int]) -> list[int]:
    return [os.getpid() for _ in piece]


def fail_on_odd(piece: list[int]) -> list[int]:
    odd = [n for n in piece if n % 2]
    if odd:
        raise ValueError(f"odd {odd[0]}")
    return piece


def refuse(piece: list[int]) -> list[int]:
    raise EvalInputError(Path("evals/golden.jsonl"), f"question {piece[0]} is bad", "fix it", 7)


def test_local_runs_every_piece_in_order_here() -> None:
    assert LOCAL.map(square_all, [[1, 2], [3]], 10) == [[11, 14], [19]]
    assert LOCAL.share(obj := object()) is obj
    assert LOCAL.map(where, [[1]]) == [[os.getpid()]]


def test_pieces_cover_the_items_in_order() -> None:
    items = list(range(23))
    for executor_workers in (1, 2, 7):
        fake = type("Fake", (), {"workers": executor_workers})()
        cut = spread(items, fake)
        assert [n for piece in cut for n in piece] == items
        assert len(cut) == (1 if executor_workers == 1 else min(23, len(cut)))
    assert [list(p) for p in fixed(items, 10)] == [items[:10], items[10:20], items[20:]]
    assert spread([], LOCAL) == [] and fixed([], 4) == []


def test_dask_gives_the_local_results_in_order_from_other_processes(dask: DaskExecutor) -> None:
    pieces = [list(range(start, start + 5)) for start in range(0, 40, 5)]
    assert dask.map(square_all, pieces, dask.share(10)) == LOCAL.map(square_all, pieces, 10)
    pids = {pid for piece in dask.map(where, pieces) for pid in piece}
    assert os.getpid() not in pids  # the pieces ran in the workers' own processes


def test_the_first_failing_piece_in_order_is_raised(dask: DaskExecutor) -> None:
    with pytest.raises(ValueError, match="odd 3"):
        dask.map(fail_on_odd, [[0, 2], [4, 3], [5], [7]])


def test_an_input_error_on_a_worker_comes_back_whole(dask: DaskExecutor) -> None:
    with pytest.raises(EvalInputError) as raised:
        dask.map(refuse, [[5]])
    assert (raised.value.problem, raised.value.fix, raised.value.line) == ("question 5 is bad", "fix it", 7)
    error = pickle.loads(pickle.dumps(ExecutorError("lost", "retry", "address")))
    assert (error.message, error.fix, error.key) == ("lost", "retry", "address")


def test_a_value_that_cannot_be_sent_is_an_executor_error(dask: DaskExecutor) -> None:
    with pytest.raises(ExecutorError, match="cannot send"):
        dask.share(threading.Lock())


def test_an_unreachable_scheduler_names_the_address_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from rag_regress.execution import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(ExecutorError) as raised:
        DaskExecutor("tcp://127.0.0.1:1")
    assert raised.value.key == "address" and "tcp://127.0.0.1:1" in raised.value.message


def test_using_sets_the_current_executor_for_the_block(dask: DaskExecutor) -> None:
    assert execution.current() is LOCAL
    with execution.using(dask):
        assert execution.current() is dask
    assert execution.current() is LOCAL


def test_remembered_makes_once_per_process() -> None:
    made: list[int] = []

    def make() -> Any:
        made.append(1)
        return object()

    first = execution.remembered("test\0once", make)
    assert execution.remembered("test\0once", make) is first and made == [1]


# -- whole runs: the team's calls on the cluster --------------------------------------------


class Refusing:
    """The shipped retriever, except that one question raises or exits, on whichever worker."""

    def __init__(self, inner: Any, question: str, exits: bool):
        self.inner, self.question, self.exits = inner, question, exits

    def search(self, question: str, depth: int) -> Any:
        if question == self.question:
            if self.exits:
                raise SystemExit(0)
            raise ValueError("index offline")
        return self.inner.search(question, depth)


class Locked:
    """A retriever holding a lock: it cannot be sent to the workers."""

    def __init__(self, inner: Any):
        self.inner, self.lock = inner, threading.Lock()

    def search(self, question: str, depth: int) -> Any:
        return self.inner.search(question, depth)


def refusing(exits: bool, question: str = "API") -> System:
    def build(documents: Any, tokenize: Any, options: dict[str, Any]) -> Refusing:
        return Refusing(SHIPPED.build_retriever(documents, tokenize, options), question, exits)

    return System(build, SHIPPED.build_generator)


def on_cluster(config: Path, address: str) -> Path:
    text = config.read_text(encoding="utf-8")
    config.write_text(text + f'\n[executor]\nbackend = "dask"\naddress = "{address}"\n', encoding="utf-8")
    return config


def report_of(config: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((config.parent / "build" / "report.json").read_text(encoding="utf-8"))
    data["receipt"]["sha256"].pop("config")  # eval.toml gained an [executor] table
    return data


@pytest.mark.parametrize("search_only", [False, True], ids=["shipped", "search-only"])
def test_a_run_on_the_cluster_gives_the_local_report(
    project: Path, dask_cluster: str, search_only: bool
) -> None:
    """The shipped system, and one whose retriever has only `search` (no `search_many`, so the
    searches too run on the workers)."""
    system = refusing(exits=False, question="no such question") if search_only else SHIPPED
    assert run_cli(["--config", str(project), "eval", "--quiet"], system) == 0
    here = report_of(project)
    assert run_cli(["--config", str(on_cluster(project, dask_cluster)), "eval", "--quiet"], system) == 0
    there = report_of(project)
    assert there == here  # every number, ranking, answer, and the calls counted on the workers


@pytest.mark.parametrize("exits", [False, True], ids=["raise", "exit"])
def test_the_team_code_failing_on_a_worker_is_exit_2_naming_the_question(
    project: Path, dask_cluster: str, exits: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    config = on_cluster(project, dask_cluster)
    assert run_cli(["--config", str(config), "eval", "--quiet"], refusing(exits)) == 2
    message = capsys.readouterr().err
    assert "question 'q3'" in message and "golden.jsonl:3" in message
    assert ("sys.exit(0)" if exits else "raised ValueError: index offline") in message
    assert not (project.parent / "build" / "report.json").exists()


def test_a_system_that_cannot_be_sent_is_exit_2_naming_the_executor(
    project: Path, dask_cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def build(documents: Any, tokenize: Any, options: dict[str, Any]) -> Locked:
        return Locked(SHIPPED.build_retriever(documents, tokenize, options))

    system = System(build, SHIPPED.build_generator)
    assert run_cli(["--config", str(on_cluster(project, dask_cluster)), "eval", "--quiet"], system) == 2
    message = capsys.readouterr().err
    assert "cannot send Locked to the Dask workers" in message and "eval.toml" in message

"""Where the expensive steps run: in this process, or on a Dask cluster.

Three steps can take longer than one machine allows: encoding documents with an embedding
model (retrieval/retrievers/dense.py), scoring claim-window pairs with the NLI judge
(answers/judges/nli.py) and calling the team's system (run.py). Each of them hands its work
to the current executor as a list of independent pieces, `executor.map(function, pieces)`,
and gets the results back in the same order.

- `LocalExecutor` (the default, `[executor] backend = "local"`) runs the pieces one after the
  other in this process.
- `DaskExecutor` (`backend = "dask"`, the `dask` extra) sends them to the worker processes of
  a Dask cluster: one it starts on this machine (`workers` processes), or one already running
  at `address`. See docs/scaling.md.

Both run the same pieces through the same functions, so a report is the same whichever
executor made it (the engine's tests compare them on a local cluster of separate processes).
A piece's function must be importable by name on the workers (a module-level function of this
package) and its arguments picklable; a value every piece needs (a model name, a retriever)
is sent once with `share` and given to each piece as its handle.

The orchestrator chooses the executor for a run with `using(...)`; the steps ask `current()`.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class ExecutorError(Exception):
    """The executor could not run the work (a cluster that cannot be reached, a worker that
    died, a value that cannot be sent). The run stops with exit 2 naming `[executor] key`."""

    def __init__(self, message: str, fix: str, key: str = "backend"):
        super().__init__(message)
        self.message, self.fix, self.key = message, fix, key

    def __reduce__(self) -> tuple[Any, ...]:  # it may be raised on a worker and travel back
        return (ExecutorError, (self.message, self.fix, self.key))


class Raised:
    """An exception raised on a worker, carried back as a value, so that the caller can
    raise the first one in order (and the others' results still arrive). One that cannot be
    pickled travels as a RuntimeError with its type's name and message."""

    def __init__(self, error: BaseException):
        try:
            pickle.dumps(error)
            self.error: BaseException = error
        except Exception:
            self.error = RuntimeError(f"{type(error).__name__}: {error}")


class Executor(Protocol):
    """Runs independent pieces of work and returns their results in order."""

    name: str  # "local" or "dask": shown in progress lines and docs, never in a report
    workers: int  # how many pieces can run at once

    def map(self, function: Callable[..., R], pieces: Sequence[Any], *shared: Any) -> list[R]:
        """`[function(*shared, piece) for piece in pieces]`, possibly on other processes. An
        exception in a piece is raised here, the first in piece order."""
        ...

    def share(self, value: Any) -> Any:
        """A handle for `value` to pass to `map` as a shared argument: sent to the workers
        once, not with every piece."""
        ...


class LocalExecutor:
    """Every piece in this process, in order: exactly what the code did before executors."""

    name = "local"
    workers = 1

    def map(self, function: Callable[..., R], pieces: Sequence[Any], *shared: Any) -> list[R]:
        return [function(*shared, piece) for piece in pieces]

    def share(self, value: Any) -> Any:
        return value


LOCAL = LocalExecutor()
_current: ContextVar[Executor] = ContextVar("executor", default=LOCAL)


def current() -> Executor:
    """The executor of the run in progress (the local one outside a run)."""
    return _current.get()


@contextmanager
def using(executor: Executor) -> Iterator[Executor]:
    """Run the block's expensive steps on `executor`."""
    token = _current.set(executor)
    try:
        yield executor
    finally:
        _current.reset(token)


def spread(items: Sequence[T], executor: Executor) -> list[Sequence[T]]:
    """`items` cut into consecutive pieces for `executor`, for work whose result for an item
    does not depend on its neighbours (a team's search or answer): one piece in this process,
    else about four per worker, so that a slow piece does not hold the others up."""
    if not items:
        return []
    per_piece = -(-len(items) // (executor.workers * 4)) if executor.workers > 1 else len(items)
    return [items[start : start + per_piece] for start in range(0, len(items), per_piece)]


def fixed(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """`items` cut into pieces of `size` whatever the executor, for work whose results depend
    on how items are grouped (a model pads a batch to its longest text): the same pieces
    locally and on a cluster give the same numbers."""
    return [items[start : start + size] for start in range(0, len(items), size)]


@contextmanager
def started(backend: str, address: str = "", workers: int = 2) -> Iterator[Executor]:
    """The executor `[executor]` names, open for the block: the local one, or a Dask
    executor connected to `address` (or to `workers` local processes it starts and stops)."""
    if backend == "local":
        yield LOCAL
        return
    from .cluster import DaskExecutor  # dask is an extra: imported only when asked for

    with DaskExecutor(address, workers) as executor:
        yield executor


def model_handle(executor: Executor, model: Any, source: str, revision: str | None) -> Any:
    """What the pieces of a model's work are given: the loaded model itself in this process;
    for a cluster, (source, revision, torch threads), sent once, from which `model_for` loads
    the same model on each worker and runs it with this process's thread count (another
    count sums in another order and changes the last float digits)."""
    if executor.name == "local":
        return model
    import torch  # the model is loaded, so torch is already imported

    return executor.share((source, revision, torch.get_num_threads()))


def model_for(handle: Any, kind: str, load: Callable[[str, str | None], Any], fix: str) -> Any:
    """The model a piece runs, from `model_handle`'s handle: on a worker, `load(source,
    revision)` once per process, the torch threads set as the handle says; a model the
    worker cannot load is ExecutorError with `fix`."""
    if not isinstance(handle, tuple):
        return handle
    source, revision, threads = handle
    import torch

    torch.set_num_threads(threads)

    def make() -> Any:
        try:
            return load(source, revision)
        except Exception as error:
            problem = f"a worker cannot load the {kind} model {source!r}: {type(error).__name__}: {error}"
            raise ExecutorError(problem, fix) from None

    return remembered(f"{kind}\0{source}\0{revision}", make)


_memo: dict[str, Any] = {}
_memo_lock = threading.Lock()


def remembered(key: str, make: Callable[[], T]) -> T:
    """`make()`, once per process and key: how a worker keeps a loaded model between pieces.
    The key must name everything `make` depends on (model id, revision, folder hash)."""
    with _memo_lock:
        if key not in _memo:
            _memo[key] = make()
        value: T = _memo[key]
        return value

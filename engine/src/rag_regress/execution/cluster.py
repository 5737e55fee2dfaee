"""The Dask executor: pieces of work on the worker processes of a Dask cluster.

Why Dask and not Ray (docs/scaling.md has the measurements): the work here is coarse pieces
of small text (questions, claims, documents) plus one model or index per worker, which both
engines do well; Dask is pure Python (dask + distributed, about 25 MB installed, against
Ray's 240 MB platform wheels), starts a local cluster in about 2 s (Ray about 7 s), and joins
the clusters teams already run (Kubernetes, YARN, SLURM through dask-jobqueue) by a scheduler
address. Ray's shared-memory object store moves large arrays faster, which this workload
does not need.

A piece's exception comes back as the exception itself (the first in piece order, so the
error a run reports does not depend on which worker finished first). Anything the cluster
itself does wrong (a worker that died, a scheduler that went away, a value that cannot be
pickled) is `ExecutorError`: the run stops with exit 2, never a partial report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from . import ExecutorError, Raised

R = TypeVar("R")

CONNECT_TIMEOUT = "20s"  # joining a running scheduler; a cluster on a busy network may be slow

INSTALL_HINT = 'install the dask extra: pip install -e ".[dask]" (or set backend = "local" in [executor])'


def _apply(function: Callable[..., Any], *arguments: Any) -> Any:
    """Run one piece on a worker; its exception is returned, not raised (see Raised)."""
    try:
        return function(*arguments)
    except Exception as error:
        return Raised(error)


class DaskExecutor:
    """Pieces on a Dask cluster: the one at `address`, or `workers` local processes.

    Use as a context manager: the cluster it started (and its client) close on exit."""

    name = "dask"

    def __init__(self, address: str = "", workers: int = 2):
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            message = 'backend = "dask" needs the dask and distributed packages'
            raise ExecutorError(message, INSTALL_HINT) from None
        # The workers' sampling profiler takes the GIL every 10 ms to walk stacks; it slowed CPU
        # pieces by tens of percent here. Nothing reads its profiles.
        dask.config.set({"distributed.worker.profile.enabled": False})
        self._cluster: Any = None
        try:
            if address:
                self._client: Any = Client(address, timeout=CONNECT_TIMEOUT)
            else:
                self._cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,  # one piece per process: models use their own threads
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                )
                self._client = Client(self._cluster)
        except (OSError, TimeoutError, ValueError) as error:
            self.close()
            raise ExecutorError(
                f"cannot reach a Dask scheduler at {address or 'a local cluster'}: {error}",
                "start the scheduler, or set [executor] address to its tcp://host:port",
                "address",
            ) from None
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})) or workers)

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        client, cluster = getattr(self, "_client", None), self._cluster
        self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    def share(self, value: Any) -> Any:
        try:
            return self._client.scatter(value, broadcast=True, hash=False)
        except Exception as error:  # pickling or sending failed
            raise ExecutorError(
                f"cannot send {type(value).__name__} to the Dask workers: {type(error).__name__}: {error}",
                "make the object picklable (no open locks, files or sockets held at build time), "
                'or set [executor] backend = "local"',
            ) from None

    def map(self, function: Callable[..., R], pieces: Sequence[Any], *shared: Any) -> list[R]:
        futures = [self._client.submit(_apply, function, *shared, piece, pure=False) for piece in pieces]
        try:
            results = self._client.gather(futures)
        except Exception as error:  # the cluster failed (a worker died, the scheduler left)
            raise ExecutorError(
                f"the Dask cluster failed while running {getattr(function, '__qualname__', function)}: "
                f"{type(error).__name__}: {error}",
                "check the workers' logs; a worker that died may have run out of memory "
                "(fewer workers, or more memory per worker)",
            ) from None
        finally:
            self._client.cancel(futures)
        for result in results:
            if isinstance(result, Raised):
                raise result.error
        return list(results)

"""Calling the team's code again after an error it declared transient ([run] retry_on).

Only the exception classes the team names are retried (a service's "busy", a dropped
connection); any other error ends the run at once, as before. The wait before retry n
(1, 2, ...) is `backoff * 2 ** (n - 1)` seconds, without jitter, so a run is reproducible;
the sleep is injectable so that tests need no real waiting. The [run] timeout is never
retried: the timed-out call is still running (Python cannot stop a thread), and calling
again would pile up calls on a service that is already stuck. A team whose client can hang
gives it its own timeout, raising an error it lists in retry_on.

Names in retry_on: a builtin exception by its name ("ConnectionError", "TimeoutError",
"OSError"), anything else by its full dotted path ("urllib.error.URLError",
"mypkg.errors.Busy"), imported when eval.toml is read.
"""

from __future__ import annotations

import builtins
import pkgutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field


def exception_type(name: str) -> type[Exception]:
    """The exception class `name` names (module doc); ValueError saying why when none."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{name!r} is not an exception name")
    module_name = name.rpartition(".")[0]
    found: object = None
    if not module_name:
        found = getattr(builtins, name, None)
        where = "a builtin exception"
    else:
        where = f"a class in {module_name}"
        try:
            found = pkgutil.resolve_name(name)
        except ImportError as error:  # the module is missing, or failed to import
            problem = f"{type(error).__name__}: {error}"
            raise ValueError(f"{name!r}: cannot import {error.name or module_name} ({problem})") from None
        except (AttributeError, ValueError):
            found = None
        except Exception as error:  # the module itself raised while importing
            raise ValueError(f"{name!r}: importing it raised {type(error).__name__}: {error}") from None
    if not isinstance(found, type) or not issubclass(found, BaseException):
        raise ValueError(f"{name!r} is not {where} deriving from Exception")
    if not issubclass(found, Exception):
        raise ValueError(f"{name!r} is a {found.__mro__[1].__name__}, not an Exception: it is never retried")
    return found


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` more attempts after a `transient` error, waiting `backoff * 2**(n-1)` s."""

    retries: int = 0
    backoff: float = 0.0
    transient: tuple[type[Exception], ...] = ()
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    @classmethod
    def named(cls, retries: int, backoff: float, names: list[str]) -> RetryPolicy:
        """The policy of [run]: `names` resolved by exception_type (checked when eval.toml was read)."""
        return cls(retries, backoff, tuple(exception_type(name) for name in names))

    def wait(self, retry: int) -> float:
        """Seconds before retry number `retry` (1 for the first)."""
        return float(self.backoff * 2 ** (retry - 1))

    def retried(self, error: BaseException, attempt: int) -> bool:
        """Whether attempt `attempt` (0: the first call) that raised `error` is made again."""
        return attempt < self.retries and isinstance(error, self.transient)

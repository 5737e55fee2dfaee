"""A verdict the system under test cannot fake: its code runs in a child process this one watches.

Every command that runs the team's code (`eval`, `baseline`, `gate`, `sweep`, `export-run`)
is started twice. The process the user started (the supervisor) never imports the team's
code: it runs the same command line in a child (`python -m rag_regress ...`) and hands it a
private pipe and a random token. The child does the work; when its command has returned, and
only then, it writes one record on that pipe: the token and the command's exit code. The
supervisor's exit code is that record's code, and without a record it is never 0:

  record 0, child exit 0            0: the command finished and passed
  record N (not 0)                  N, whatever the child's exit status says after it: an
                                    `atexit` handler's `os._exit(0)` cannot turn a failed gate
                                    into a pass
  record 0, child exit M (not 0)    M: something failed after the command returned
  no record                         the child's status when it is not 0 (1: a traceback), else
                                    exit 2 with a message: the process was ended before the
                                    command returned (`os._exit`, `sys.exit` or a signal
                                    handler in the team's code, a closed pipe)
  child killed by signal S          128 + S, as a shell reports it

A command that could not complete (a record of exit 2, or no record) leaves no report of an
earlier run behind: the child removes them itself when it can, and the supervisor, which
outlives a child that died, calls its `unfinished` clean-up too (cli.discard_reports).

The record goes through its own file descriptor, not stdout, so a team's code that closes or
redirects stdout changes nothing. SIGINT and SIGTERM sent to the supervisor are passed on to
the child, which stops as it would alone (Ctrl-C: 130).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from types import FrameType

from ..errors import ExitCode

CHANNEL = "RAG_REGRESS_VERDICT"  # "<fd>:<token>" in the child's environment
RECORD_LIMIT = 4096  # bytes read from the pipe at most: a record is one short line


def supervised() -> tuple[int, str] | None:
    """In the child: the pipe and token the supervisor gave it (taken out of the environment,
    so processes the team's code starts never see them); None when not supervised."""
    given = os.environ.pop(CHANNEL, "")
    fd, _, token = given.partition(":")
    if not fd.isdigit() or not token:
        return None
    with contextlib.suppress(OSError):
        os.set_inheritable(int(fd), False)  # not handed on to programs the child starts
    return int(fd), token


def deliver(channel: tuple[int, str], code: int) -> None:
    """In the child, after its command returned `code`: the one record, then close the pipe."""
    fd, token = channel
    with contextlib.suppress(OSError):  # a pipe the team's code closed: no record, never a pass
        os.write(fd, (json.dumps({"token": token, "code": int(code)}) + "\n").encode())
        os.close(fd)


def _record(data: bytes, token: str) -> int | None:
    """The exit code in the first well-formed record carrying `token`, else None."""
    for line in data.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            record = json.loads(line)
            if record.get("token") == token and isinstance(record.get("code"), int):
                return int(record["code"])
    return None


def _read_available(fd: int) -> bytes:
    """What the pipe holds now, without waiting: a process the team's code started may still
    hold its write end open, so end-of-file may never come."""
    os.set_blocking(fd, False)
    chunks: list[bytes] = []
    with contextlib.suppress(BlockingIOError, OSError):
        while sum(len(chunk) for chunk in chunks) < RECORD_LIMIT:
            chunk = os.read(fd, RECORD_LIMIT)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def verdict(record: int | None, status: int, command: str) -> int:
    """The supervisor's exit code from the child's record and exit status (module doc)."""
    if status < 0:
        return 128 - status  # killed by a signal
    if record is not None:
        return record if record != ExitCode.OK else status
    if status != ExitCode.OK:
        return status
    print(
        f"error: `{command}` did not finish: its process ended with exit status 0 before the "
        "command returned, so nothing was evaluated to the end and this is not a pass\n"
        "  fix: the system under test ended the process (os._exit, sys.exit, a signal handler "
        "that exits): return from build_retriever, build_generator, search and answer, or raise "
        "an exception, which names the question",
        file=sys.stderr,
    )
    return ExitCode.INVALID_INPUT


def run_supervised(argv: Sequence[str], command: str, unfinished: Callable[[], None] | None = None) -> int:
    """In the supervisor: run `argv` (this command line's arguments) in a child and return the
    exit code its record earns (module doc). `unfinished`, when given, is called when the
    command could not complete: a record of exit 2, or none at all (the child ended before its
    command returned, whatever its status), so that it can remove what an earlier run left
    in its place; the verdict stands whatever it does."""
    read_end, write_end = os.pipe()
    token = secrets.token_hex(16)
    env = {**os.environ, CHANNEL: f"{write_end}:{token}"}
    child = subprocess.Popen([sys.executable, "-m", "rag_regress", *argv], env=env, pass_fds=(write_end,))
    os.close(write_end)

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    previous = {}
    with contextlib.suppress(ValueError):  # only the main thread may set handlers: else none
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, forward)
    try:
        while True:
            try:
                status = child.wait()
                break
            except KeyboardInterrupt:  # a handler installed before ours: keep waiting for the child
                continue
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    data = _read_available(read_end)
    os.close(read_end)
    record = _record(data, token)
    code = verdict(record, status, command)
    if unfinished is not None and record in (None, ExitCode.INVALID_INPUT):
        with contextlib.suppress(Exception):  # a clean-up that fails never changes the exit code
            unfinished()
    return code

"""Offline guarantee: a baked project's `eval` and `gate` pass with every network call refused.

The sessions' virtualenvs are installed first (that needs a package index); then the sessions
run again, without installing, with a `sitecustomize.py` on PYTHONPATH that replaces the
socket functions with ones that raise and log the attempt. Every Python process started in
that environment (nox, and the project's command inside each session) loads it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ENV, bake, nox, package_of

BLOCKER = '''
"""Test helper: refuse all network access in this interpreter, and log each attempt."""
import os
import socket
import sys

LOG = os.environ["NETWORK_BLOCK_LOG"]


def _log(line):
    with open(LOG, "a", encoding="utf-8") as out:
        out.write(line + "\\n")


def _refuse(*args, **kwargs):
    _log(f"refused {sys.orig_argv!r} {args!r}")
    raise ConnectionRefusedError("network access is blocked (offline test)")


for _name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, _name, _refuse)
for _name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
    setattr(socket, _name, _refuse)
_log(f"loaded {sys.orig_argv!r}")
'''

# One entry per configuration that must run offline: (bake answers, extra environment).
# The judge issue adds its `nli` choice here, with the local model path it needs.
VARIANTS = [pytest.param((), {}, id="default")]


def listening_server() -> tuple[socket.socket, int]:
    """A real local server, so a refused connection proves the blocker, not a closed port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    return server, server.getsockname()[1]


CONNECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()"


@pytest.mark.parametrize(("answers", "extra_env"), VARIANTS)
def test_eval_and_gate_pass_with_the_network_blocked(
    tmp_path: Path, answers: tuple[str, ...], extra_env: dict[str, str]
) -> None:
    project = bake(tmp_path / "bake", *answers)
    installed = nox(project, "eval", "gate", "--install-only")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    log = tmp_path / "network.log"
    offline = {**ENV, **extra_env, "PYTHONPATH": str(blocker), "NETWORK_BLOCK_LOG": str(log)}

    # The blocker blocks: the session's Python reaches a local server normally, not with it.
    python = str(next((project / ".nox").glob("eval*/bin/python")))
    server, port = listening_server()
    with server:
        online = subprocess.run([python, "-c", CONNECT, str(port)], capture_output=True, text=True, env=ENV)
        assert online.returncode == 0, online.stderr
        blocked = subprocess.run(
            [python, "-c", CONNECT, str(port)], capture_output=True, text=True, env=offline
        )
    assert blocked.returncode != 0 and "network access is blocked" in blocked.stderr
    log.unlink()

    # Offline, without reinstalling (-R): both sessions pass, and nothing even tried the network.
    command = [sys.executable, "-m", "nox", "--non-interactive", "-R", "-s", "eval", "gate"]
    result = subprocess.run(command, cwd=project, capture_output=True, text=True, env=offline, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "GATE PASSED" in result.stdout
    lines = log.read_text(encoding="utf-8").splitlines()
    package = package_of(project)
    commands = [line for line in lines if line.startswith("loaded") and f"/{package}'" in line]
    assert len(commands) == 2, (
        f"the blocker must be loaded by `{package} eval` and `{package} gate`:\n{lines}"
    )
    assert not [line for line in lines if line.startswith("refused")], lines

"""Offline guarantee: a baked project's `eval` and `gate` pass with every network call refused.

The sessions' virtualenvs are installed first (that needs a package index); then the sessions
run again, without installing, with a `sitecustomize.py` on PYTHONPATH that replaces the
socket functions with ones that raise and log the attempt. Every Python process started in
that environment (nox, and the project's command inside each session) loads it. The nli
choice's offline run, with the tiny local NLI model made here, is in test_baked_dense.py,
where it shares the torch install of the embedding bakes.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

from conftest import BAKE_ENV, bake, nox, output, venv_bin

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

# A tiny NLI cross-encoder saved to a local folder: no NLI weights can be downloaded here,
# and the point is that a local model path needs no network. Run by the session's own Python.
TINY_NLI_MODEL = """
import sys, torch, transformers
folder = sys.argv[1]
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "refund", "days", "plan"]
open(folder + "/vocab.txt", "w").write("\\n".join(vocab) + "\\n")
labels = {0: "contradiction", 1: "entailment", 2: "neutral"}
config = transformers.BertConfig(
    vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
    intermediate_size=8, num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()},
)
model = transformers.BertForSequenceClassification(config)
with torch.no_grad():  # say "entailment" for every pair, so the demo's verbatim answers pass
    model.classifier.weight.zero_()
    model.classifier.bias.copy_(torch.tensor([0.0, 6.0, 0.0]))
model.save_pretrained(folder)
transformers.BertTokenizerFast(vocab_file=folder + "/vocab.txt").save_pretrained(folder)
"""


def use_local_nli_model(project: Path, tmp_path: Path) -> None:
    """Save the tiny model with the session's Python and point [judge] model at it. The tiny
    model entails everything, so the project's known hallucinations are left to the findings:
    fail_on adds polarity (a real NLI model reads a negation itself)."""
    folder = tmp_path / "nli-model"
    folder.mkdir()
    python = str(venv_bin(project, "tests") / "python")
    made = subprocess.run(
        [python, "-c", TINY_NLI_MODEL, str(folder)], capture_output=True, text=True, env=BAKE_ENV
    )
    assert made.returncode == 0, made.stderr
    config = project / "eval.toml"
    text = config.read_text(encoding="utf-8")
    assert 'model = "cross-encoder/nli-deberta-v3-small"' in text
    config.write_text(
        text.replace(
            'model = "cross-encoder/nli-deberta-v3-small"',
            f'model = {json.dumps(str(folder))}\nfail_on = ["number", "name", "polarity"]',
        ),
        encoding="utf-8",
    )


def listening_server() -> tuple[socket.socket, int]:
    """A real local server, so a refused connection proves the blocker, not a closed port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    return server, server.getsockname()[1]


CONNECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()"


def blocked_environment(tmp_path: Path, python: str) -> tuple[dict[str, str], Path]:
    """The environment that refuses the network, and its log; proven to block with `python`
    (which reaches a local server normally, and not with the blocker)."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    log = tmp_path / "network.log"
    offline = {**BAKE_ENV, "PYTHONPATH": str(blocker), "NETWORK_BLOCK_LOG": str(log)}
    server, port = listening_server()
    with server:
        online = subprocess.run(
            [python, "-c", CONNECT, str(port)], capture_output=True, text=True, env=BAKE_ENV
        )
        assert online.returncode == 0, online.stderr
        blocked = subprocess.run(
            [python, "-c", CONNECT, str(port)], capture_output=True, text=True, env=offline
        )
    assert blocked.returncode != 0 and "network access is blocked" in blocked.stderr
    log.unlink()
    return offline, log


def assert_nothing_tried_the_network(log: Path, commands: int) -> None:
    lines = log.read_text(encoding="utf-8").splitlines()
    loaded = [line for line in lines if line.startswith("loaded") and "/rag-regress'" in line]
    assert len(loaded) == commands, f"the blocker must be loaded by each `rag-regress` command:\n{lines}"
    assert not [line for line in lines if line.startswith("refused")], lines


def test_eval_and_gate_pass_with_the_network_blocked(tmp_path: Path) -> None:
    project = bake(tmp_path / "bake")
    installed = nox(project, "eval", "gate", "--install-only")
    assert installed.returncode == 0, output(installed)
    offline, log = blocked_environment(tmp_path, str(venv_bin(project, "eval") / "python"))

    # Offline, without reinstalling (-R): both sessions pass, and nothing even tried the network.
    command = [sys.executable, "-m", "nox", "--non-interactive", "-R", "-s", "eval", "gate"]
    result = subprocess.run(command, cwd=project, capture_output=True, text=True, env=offline, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "GATE PASSED" in result.stdout
    assert_nothing_tried_the_network(log, 2)

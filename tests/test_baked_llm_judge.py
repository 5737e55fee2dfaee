"""The llm judge choice on day one: a bake with `judge=llm` asks a chat model behind an
OpenAI-compatible server for every verdict. This test starts such a server on 127.0.0.1, a
scripted one: a sentence is supported when one context holds each of its words, and the
evidence is that context's sentence sharing most of them. The bake then makes its baseline,
passes its tests and its gate against it, and stops with exit 2, never a pass, when the
server is gone and no verdict is cached.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import BAKE_ENV, JsonHandler, bake_cli, chat_completion, output, run, serving, venv_bin

KEY = "judge-key-for-tests"
WORD = re.compile(r"\w+")
SECTIONS = re.compile(r"CONTEXTS\n\n(.*)\n\nSENTENCES\n\n(.*)", re.S)


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def verdicts(message: str) -> dict[str, list[dict[str, object]]]:
    """The scripted judge's verdicts on one request's user message (the engine's format:
    numbered contexts, then numbered sentences)."""
    found = SECTIONS.search(message)
    assert found, f"not a judge request: {message[:200]!r}"
    contexts = re.split(r"(?m)^Context \d+:\n", found.group(1))[1:]
    said = []
    for line in found.group(2).strip().splitlines():
        number, _, sentence = line.partition(". ")
        holding = [c for c in contexts if words(sentence) <= words(c)]
        evidence = ""
        if holding:
            parts = re.split(r"(?<=[.!?])\s+", holding[0].strip())
            evidence = max(parts, key=lambda part: len(words(part) & words(sentence)))
        said.append({"id": int(number), "supported": bool(holding), "evidence": evidence})
    return {"verdicts": said}


class Judge(JsonHandler):
    seen: ClassVar[list[str]] = []  # the Authorization headers received

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Judge.seen.append(self.headers.get("Authorization", ""))
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": "no such path"})
        return self.send_json(200, chat_completion(json.dumps(verdicts(body["messages"][-1]["content"]))))


@pytest.fixture
def judged(tmp_path: Path) -> Iterator[tuple[Path, ThreadingHTTPServer, str]]:
    """The bake, pointed at the running judge server; the bake's printed note."""
    baked = bake_cli(tmp_path, "judge=llm")
    assert baked.returncode == 0, baked.stdout + baked.stderr
    (project,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    with serving(Judge) as server:
        settings = project / "eval.toml"
        text = settings.read_text(encoding="utf-8")
        address = 'base_url = "http://127.0.0.1:8000/v1"'
        assert text.count(address) == 1, "[judge.llm] names the server once"
        served = f'base_url = "http://127.0.0.1:{server.server_address[1]}/v1"'
        settings.write_text(text.replace(address, served), encoding="utf-8")
        yield project, server, baked.stdout


def test_the_llm_judge_bake_judges_through_its_server_and_gates(
    judged: tuple[Path, ThreadingHTTPServer, str],
) -> None:
    project, server, note = judged
    assert not (project / "evals" / "baseline.json").exists(), "no shipped baseline holds its verdicts"
    assert "no baseline can ship for the judge llm" in note
    env = {**BAKE_ENV, "OPENAI_API_KEY": KEY}
    Judge.seen.clear()
    made = run(project, sys.executable, "-m", "nox", "-s", "baseline", "--", "--fit-floors", env=env)
    assert made.returncode == 0, output(made)
    assert Judge.seen and set(Judge.seen) == {f"Bearer {KEY}"}, "every verdict asked, with the key"
    green = run(project, sys.executable, "-m", "nox", "-s", "tests", "gate", env=env)
    assert green.returncode == 0, output(green)

    report = json.loads((project / "build" / "report.json").read_text(encoding="utf-8"))
    judge = report["settings"]["judge"]
    assert (judge["name"], judge["model"]) == ("llm", "gpt-4o-mini")
    assert report["aggregate"]["judged"] == 1.0, "the server gave every sentence a verdict"
    assert 0 < report["aggregate"]["faithfulness"] <= 1

    # No server and no verdict cached: nothing was judged, so the gate cannot pass.
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    for cached in (project / ".cache").rglob("*"):
        if cached.is_file():
            cached.unlink()
    stopped = run(project, str(venv_bin(project, "gate") / "rag-regress"), "gate", env=env)
    assert stopped.returncode == 2, output(stopped)
    assert f"127.0.0.1:{port}" in stopped.stderr, output(stopped)

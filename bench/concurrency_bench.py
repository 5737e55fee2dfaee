"""[run] concurrency and the output cache against a system that is a service.

A local HTTP retriever and generator on 127.0.0.1 (a ThreadingHTTPServer the benchmark starts
on a free port, in a process of its own, and stops), each /search and /answer taking LATENCY
seconds, as a hosted vector store or LLM would. A generated project of QUESTIONS questions (one relevant
document each) is evaluated three times through the package's own `run.evaluate`:

  sequential  [run] concurrency = 1                        (output cache off)
  concurrent  [run] concurrency = 32                       (output cache on, filled)
  cached      the same system again, unchanged             (every output from the cache)

Each timed run has a fresh verdict cache, so judging costs the same in each. Printed: the
wall time of each run, the calls the server received, and the ratios; the JSON keys
`concurrency.speedup_32` (sequential seconds / concurrent seconds) and
`cache.calls_on_rerun` (requests the server received during the cached rerun). The one
assertion: the three reports hold the same numbers for every question.

Alone: `python bench/concurrency_bench.py --package help_centre_rag_eval` (in a bake's venv).
"""

from __future__ import annotations

import argparse
import http.client
import importlib
import json
import multiprocessing
import re
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

QUESTIONS = 1_000
LATENCY = 0.05  # seconds per request, on the server side
CONCURRENCY = 32
WORDS = ["billing", "invoice", "password", "export", "webhook", "session", "backup", "archive"]


def _corpus(size: int) -> list[dict[str, str]]:
    """Documents each with a marker word of their own (`topic<i>`) and some shared words."""
    return [
        {
            "id": f"doc-{i}",
            "title": f"Topic {i}",
            "text": f"To manage topic{i} open the {WORDS[i % len(WORDS)]} page. "
            f"The {WORDS[(i * 3) % len(WORDS)]} settings of topic{i} are listed there.",
        }
        for i in range(size)
    ]


def _golden(size: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "question": f"how do I manage topic{i} on the {WORDS[i % len(WORDS)]} page",
            "relevant": {f"doc-{i}": 3},
            "must_include": [f"topic{i}"],
        }
        for i in range(size)
    ]


class Service:
    """The system behind HTTP: a word-overlap ranking over the corpus (words in more than a
    tenth of the documents ignored, so that the service's own work stays well below its
    latency), `latency` seconds per request, at most `limit` requests (then 503), counted."""

    def __init__(self, documents: list[dict[str, str]], limit: int, latency: float = LATENCY):
        self.latency = latency
        self.documents = {d["id"]: d for d in documents}
        self.index: dict[str, set[str]] = {}
        for d in documents:
            for word in set(re.findall(r"\w+", d["text"].lower())):
                self.index.setdefault(word, set()).add(d["id"])
        self.requests = 0
        self.limit = limit
        self.lock = threading.Lock()

    def search(self, question: str, depth: int) -> list[list[Any]]:
        counts: dict[str, int] = {}
        common = max(10, len(self.documents) // 10)  # words in more documents are stop words here:
        for word in set(re.findall(r"\w+", question.lower())):  # the service's own work stays small
            found = self.index.get(word, ())
            if len(found) > common:
                continue
            for doc_id in found:
                counts[doc_id] = counts.get(doc_id, 0) + 1
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:depth]
        # scores strictly decrease down the ranking: no ties for the engine to reorder
        return [[doc_id, score - position / 1000] for position, (doc_id, score) in enumerate(ranked)]

    def answer(self, question: str) -> dict[str, Any]:
        hits = self.search(question, 1)
        if not hits:
            return {"abstained": True}
        document = self.documents[hits[0][0]]
        sentence = document["text"].split(". ")[0] + "."
        return {"doc_id": document["id"], "context": document["text"], "text": sentence}

    def handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            protocol_version = "HTTP/1.1"  # keep-alive: one connection (and thread) per client thread
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

            def do_GET(self) -> None:  # /count: the requests served so far (not itself counted)
                data = json.dumps(service.requests).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                with service.lock:
                    service.requests += 1
                    refused = service.requests > service.limit
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(service.latency)
                if refused or self.path not in ("/search", "/answer"):
                    self.send_response(503 if refused else 404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/search":
                    result: Any = service.search(body["question"], body["depth"])
                else:
                    result = service.answer(body["question"])
                data = json.dumps(result).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a request still sleeping never holds the benchmark up at exit
    request_queue_size = 4 * CONCURRENCY  # the listen backlog: 32 clients connect at once


def _serve(questions: int, limit: int, latency: float, ready: Any) -> None:
    """The service's process: serve until terminated, after sending the port to `ready`."""
    server = _Server(("127.0.0.1", 0), Service(_corpus(questions), limit, latency).handler())
    ready.send(server.server_address[1])
    server.serve_forever()


class _Client:
    """One keep-alive connection per calling thread (threading.local): what a thread-safe
    client of a service looks like (api.py); a dropped connection is made again once."""

    def __init__(self, port: int):
        self.port = port
        self.local = threading.local()

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        body = json.dumps(payload).encode() if payload is not None else None
        for attempt in (1, 2):
            connection = getattr(self.local, "connection", None)
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.local.connection = connection
            try:
                connection.request(method, path, body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
            except (ConnectionError, http.client.HTTPException):
                connection.close()
                self.local.connection = None
                if attempt == 2:
                    raise
                continue
            if response.status != 200:
                raise RuntimeError(f"{path}: HTTP {response.status}")
            return json.loads(data)
        raise AssertionError("unreachable")


def _system(package: str, client: _Client) -> Any:
    """A team system that is an HTTP client (thread-safe: a connection per thread, no other state)."""
    api = importlib.import_module(f"{package}.api")

    class HttpRetriever:
        def search(self, question: str, depth: int) -> list[Any]:
            found = client.request("POST", "/search", {"question": question, "depth": depth})
            return [api.Hit(doc_id, score) for doc_id, score in found]

    class HttpGenerator:
        def answer(self, question: str) -> Any:
            found = client.request("POST", "/answer", {"question": question})
            if found.get("abstained"):
                return api.Answer(api.ABSTENTION, abstained=True)
            return api.Answer(found["text"], [api.Context(found["doc_id"], found["context"])])

    return api.System(
        lambda documents, tokenize, options: HttpRetriever(),
        lambda retriever, documents, options: HttpGenerator(),
        code="bench-http-client-v1",
    )


def _config(root: Path, name: str, concurrency: int, cache: str) -> Path:
    path = root / f"{name}.toml"
    path.write_text(
        '[data]\ncorpus = "corpus.jsonl"\ngolden = "golden.jsonl"\nbaseline = "baseline.json"\n'
        f'report = "{name}-report.json"\n'
        '[retrieval]\nk = 5\ndepth = 10\nmetrics = ["recall@5", "mrr", "ndcg@5"]\n'
        '[retriever]\n[generation]\n[gate]\nmetrics = ["recall@5"]\n'
        f'[judge]\ncache = "{name}-verdicts.json"\n'
        f'[run]\nconcurrency = {concurrency}\ntimeout = 30\noutput_cache = "{cache}"\n'
        'output_cache_file = "outputs.json"\n',
        encoding="utf-8",
    )
    return path


def section(
    package: str, questions: int = QUESTIONS, latency: float = LATENCY
) -> tuple[list[str], dict[str, float]]:
    """Time the three runs (module docstring); the printable lines and the JSON numbers."""
    run = importlib.import_module(f"{package}.run")
    load_config = importlib.import_module(f"{package}.settings.config").load_config
    documents = _corpus(questions)
    # The service runs in a process of its own, as a real one would: its work never competes
    # with the evaluator's threads for this interpreter's lock.
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    limit = 3 * 2 * questions + 100  # 3 runs of 2 calls a question, and a little spare
    server = context.Process(
        target=_serve, args=(questions, limit, latency, send), name="bench-service", daemon=True
    )
    server.start()
    times: dict[str, float] = {}
    requests: dict[str, int] = {}
    reports: dict[str, Any] = {}
    try:
        if not receive.poll(60):
            raise RuntimeError("the benchmark's service did not start")
        client = _Client(receive.recv())
        with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as folder:
            root = Path(folder)
            (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents), "utf-8")
            (root / "golden.jsonl").write_text(
                "".join(json.dumps(q) + "\n" for q in _golden(questions)), "utf-8"
            )
            plan = [
                ("sequential", _config(root, "sequential", 1, "off")),
                ("concurrent", _config(root, "concurrent", CONCURRENCY, "code")),
                ("cached", _config(root, "cached", CONCURRENCY, "code")),
            ]
            for name, path in plan:
                config = load_config(path)
                before = client.request("GET", "/count")
                start = time.perf_counter()
                reports[name] = run.evaluate(config, _system(package, client))
                times[name] = time.perf_counter() - start
                requests[name] = client.request("GET", "/count") - before
    finally:
        server.terminate()
        server.join(timeout=10)
    first = reports["sequential"]
    for name in ("concurrent", "cached"):  # the same numbers, question by question
        other = reports[name]
        pairs = zip(first.questions, other.questions, strict=True)
        same = [a.metrics == b.metrics and a.answer == b.answer for a, b in pairs]
        assert all(same) and first.aggregate == other.aggregate, f"{name} run differs from the sequential one"
    speedup = times["sequential"] / times["concurrent"]
    lines = [
        f"Concurrency and the output cache: {questions:,} questions, a service on 127.0.0.1 taking "
        f"{latency * 1000:.0f} ms per /search and /answer",
        f"  {'run':<34} {'seconds':>8} {'server calls':>13}",
        f"  {'concurrency 1':<34} {times['sequential']:8.2f} {requests['sequential']:13,}",
        f"  {f'concurrency {CONCURRENCY}':<34} {times['concurrent']:8.2f} {requests['concurrent']:13,}",
        f"  {'cached rerun (unchanged system)':<34} {times['cached']:8.2f} {requests['cached']:13,}",
        f"  speedup at {CONCURRENCY} in flight: {speedup:.1f}x (goal >= 20x); "
        f"calls on the cached rerun: {requests['cached']} (goal 0)",
    ]
    numbers = {
        "concurrency.sequential_seconds": times["sequential"],
        f"concurrency.concurrent_{CONCURRENCY}_seconds": times["concurrent"],
        "concurrency.speedup_32": speedup,
        "cache.rerun_seconds": times["cached"],
        "cache.calls_on_rerun": float(requests["cached"]),
    }
    return lines, numbers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="help_centre_rag_eval", help="the baked package to import")
    parser.add_argument("--questions", type=int, default=QUESTIONS, help="questions (and documents)")
    parser.add_argument("--latency", type=float, default=LATENCY, help="seconds per request")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    args = parser.parse_args()
    lines, numbers = section(args.package, args.questions, args.latency)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

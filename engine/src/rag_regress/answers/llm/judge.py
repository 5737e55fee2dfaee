"""The LLM judge: a chat model behind any OpenAI-compatible chat-completions endpoint.

[judge] backend = "llm" (registered as an entry point in pyproject.toml, like any backend a
package adds). One request per answer (per vote): the answer's sentences are grouped by the
contexts they were written from and sent numbered, with the numbered contexts, as one
POST {base_url}/chat/completions with `model`, `temperature`, `seed` and
`max_tokens` and the reply's JSON schema as `response_format` (json_schema; a server that
refuses it, with a 400 or an error naming response_format, is asked with json_object, then
with none, for the rest of the run);
the system message is the prompt (prompt.py). The reply's message content is read as

    {"verdicts": [{"id": <sentence number>, "supported": <bool>, "evidence": "<quote>"}]}

one verdict per sentence asked. What a model writes is measured, never refused: an entry
that is malformed, names a sentence not asked, or contradicts another is left out, and the
sentences a reply gave no valid verdict (a reply that is not JSON, cut at max_tokens, or
skipped some) are asked once more, on their own; those still without one are not judged
(verdicts.NotJudged: never supported, counted per check, never cached). Then, per sentence:

  evidence  a "supported" whose quote is not in one of the contexts (read as the other judges
            read text: Unicode forms, quote characters, dashes, contractions, case and runs of
            whitespace do not matter; anything else does) counts as "not supported"; so does
            a quote of fewer than three words that is not a whole sentence
  votes     with `votes` > 1, one request per vote (vote i with seed + i); the score is the
            share of votes that found support, and the sentence is supported when the score
            reaches `threshold` (0.5 by default: a majority, with an odd number of votes)
  findings  the narrow checks (judges/findings.py) read the sentence against the window of
            the contexts (one or two sentences) holding the quote and report what they find
            beside the verdict; those [judge] fail_on names (none by default) fail it. A
            supported verdict always rests on a window of the contexts, which the verdict
            cache re-checks before it reuses one (answers/cache.py)

Never a silent pass: a request that still fails after its retries, a refusal (401, 404 ...)
or a reply that is no chat completion stop the run with EvalInputError (exit 2) naming the
answer (its first sentence) and what went wrong; a sentence not judged is no pass. Requests go through the
engine's caller (calling/caller.py): `concurrency` at once, at most `rate_limit` a second,
429, 5xx and connection errors retried `retries` times after `backoff` seconds, doubled each
time, all within `timeout` (connect to last byte, retries included); any other HTTP error
is not retried.

`LLMJudge.stats` counts the requests (retries included), the retries, the failed requests and
the tokens the server reported (`usage`); each run prints them on stderr.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...calling.caller import Caller
from ...calling.calls import time_limit
from ...calling.executor import executor_for
from ...calling.ratelimit import RateLimit
from ...calling.retries import RetryPolicy
from ...errors import EvalInputError
from ...net.http import Deadline, OutOfTime
from ...net.parse import loads
from ...net.redact import shortened
from ..judges import Item, Verdict, judged_names, rules_digest
from ..judges.claims import windows
from ..judges.findings import findings
from ..judges.reading import plain
from ..settings import JudgeSettings
from ..verdicts import NO_CONTEXT, not_judged
from .client import Client, Completion, Refused, Transient, json_content
from .prompt import prompt_digest, read_prompt
from .settings import Settings

VERSION = "2.1"  # bump whenever a verdict may change: the prompt, the request, the checks below
PER_REQUEST = 32  # sentences in one request at most (an answer's, or several answers' of the same contexts)
MIN_QUOTE_WORDS = 3  # a shorter quote is evidence only when it is a whole sentence of a context
SEED_RANGE = 2**31  # vote i sends (seed + i) modulo this: every server takes a 32-bit seed
SCHEMA = '{"verdicts": [{"id": <sentence number>, "supported": true or false, "evidence": "<quote>"}]}'
# The reply's JSON schema, for servers that constrain their output to one (OpenAI, vLLM,
# llama.cpp's server): a small model then cannot write anything else.
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "supported": {"type": "boolean"},
                    "evidence": {"type": "string"},
                },
                "required": ["id", "supported", "evidence"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["verdicts"],
    "additionalProperties": False,
}
# The reply formats asked for, in order: a server that refuses one (HTTP 400) is asked with
# the next for the rest of the run; with none, the prompt still asks for the JSON.
FORMATS: dict[str, dict[str, Any]] = {
    "json_schema": {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "verdicts", "strict": True, "schema": REPLY_SCHEMA},
        }
    },
    "json_object": {"response_format": {"type": "json_object"}},
    "none": {},
}

Ballot = tuple[bool, str]  # one vote on one sentence: supported, and its evidence


def identity(settings: JudgeSettings) -> dict[str, Any]:
    """What makes the LLM judge's verdicts: the built judge's identity, its own settings
    ([judge.llm]) and [judge]'s.
    The rules are the narrow checks' and the text reading's (judges/ and text/, less the
    other backends' modules): their findings are reported here too. Never the API key."""
    own: Settings = settings.options
    return {
        "name": "llm",
        "version": VERSION,
        "rules": rules_digest("llm"),
        "model": own.model,
        "revision": None,
        "threshold": settings.threshold,
        "base_url": own.base_url,
        "prompt": prompt_digest(read_prompt(own.prompt)),
        "votes": own.votes,
        "temperature": own.temperature,
        "seed": own.seed,
        "max_tokens": own.max_tokens,
        "fail_on": list(settings.failing()),
    } | judged_names(settings.names)


@dataclass(frozen=True)
class _Ask:
    """One request's worth: sentences sharing their contexts."""

    contexts: tuple[str, ...]
    claims: tuple[str, ...]


@functools.lru_cache(maxsize=1 << 14)
def _reading(text: str) -> str:
    """`text` as quotes are compared: the judges' plain-text reading, case folded, each run
    of whitespace one space."""
    return " ".join(plain(text).casefold().split())


def _quote(evidence: str) -> str:
    return _reading(evidence).strip(" .!?\"'")


def _quote_problem(evidence: str, contexts: tuple[str, ...]) -> str | None:
    """Why `evidence` does not show support in `contexts`; None when it does."""
    quote = _quote(evidence)
    shown = repr(shortened(evidence, 120))
    if not quote:
        return "the judge found support but gave no quote from the contexts"
    if not any(quote in _reading(context) for context in contexts):
        return f"the judge's quote is not in the contexts: {shown}"
    if len(quote.split()) < MIN_QUOTE_WORDS and not any(quote == _quote(w) for w in windows(contexts)):
        return f"the judge's quote is too short to show support: {shown}"
    return None


def _quoted_windows(evidence: str, contexts: tuple[str, ...]) -> list[str]:
    """The windows of the contexts (claims.windows: one or two sentences) holding the quote,
    shortest first; for a quote longer than two sentences, the windows inside it."""
    quote = _quote(evidence)
    found = windows(contexts)
    holding = [window for window in found if quote in _reading(window)]
    return holding or [window for window in found if _quote(window) and _quote(window) in quote]


def ballots(content: str, claims: Sequence[str]) -> tuple[dict[int, Ballot], list[str]]:
    """The verdicts of one reply by sentence number (1 to len(claims)), and what in it does
    not match the schema. A reply that is not JSON, or not an object holding "verdicts", gives
    none; an entry that is malformed, names a sentence not asked, or contradicts another entry
    of the same sentence is left out; a sentence without a verdict is simply absent."""
    try:
        data = loads(json_content(content))
    except ValueError as error:
        return {}, [f"it is not JSON: {shortened(content)!r} ({error})"]
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        return {}, [f'it must be an object whose key "verdicts" holds a list, got {_shown(data)}']
    given: dict[int, Ballot] = {}
    problems: list[str] = []
    contradicted: set[int] = set()
    for position, entry in enumerate(data["verdicts"], start=1):
        ballot = _ballot(entry, position, len(claims))
        if isinstance(ballot, str):
            problems.append(ballot)
            continue
        number, said = ballot
        if number in given and given[number][0] != said[0]:
            contradicted.add(number)
            problems.append(f"it gives sentence {number} two verdicts")
        given.setdefault(number, said)
    missing = [number for number in range(1, len(claims) + 1) if number not in given]
    if missing:
        first = shortened(claims[missing[0] - 1], 80)
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        problems.append(f"it has no verdict for sentence {missing[0]} ({first!r}){more}")
    return {n: b for n, b in given.items() if n not in contradicted}, problems


def _ballot(entry: object, position: int, asked: int) -> tuple[int, Ballot] | str:
    """One entry of "verdicts" as (sentence number, ballot), or what is wrong with it."""
    if not isinstance(entry, dict) or not {"id", "supported", "evidence"} <= set(entry):
        return f"verdict {position} must hold id, supported and evidence, got {_shown(entry)}"
    number, supported, evidence = entry["id"], entry["supported"], entry["evidence"]
    if isinstance(number, bool) or not isinstance(number, int):
        return f"verdict {position}: id must be a sentence number, got {_shown(number)}"
    if not 1 <= number <= asked:
        return f"it judges sentence {number}, which was not asked (1 to {asked})"
    if not isinstance(supported, bool):
        return f"verdict {position}: supported must be true or false, got {_shown(supported)}"
    if not isinstance(evidence, str):
        return f"verdict {position}: evidence must be text, got {_shown(evidence)}"
    return number, (supported, evidence)


def _refuses_format(said: str) -> bool:
    """Whether a server's error is about the reply format asked for (a 400, or the 500 with a
    validation error that llama-cpp-python's server sends for a response_format it lacks)."""
    return "response_format" in said or "json_schema" in said


def _shown(value: object) -> str:
    return shortened(json.dumps(value, ensure_ascii=False), 120)


def user_message(ask: _Ask) -> str:
    """The contexts and the sentences to judge, numbered, as the request's user message."""
    contexts = "\n\n".join(f"Context {n}:\n{text.strip()}" for n, text in enumerate(ask.contexts, start=1))
    claims = "\n".join(f"{n}. {' '.join(claim.split())}" for n, claim in enumerate(ask.claims, start=1))
    return f"CONTEXTS\n\n{contexts}\n\nSENTENCES\n\n{claims}\n"


class LLMJudge:
    """The judge [judge] backend = "llm" builds (module doc)."""

    def __init__(
        self,
        settings: JudgeSettings,
        config_path: Path | str,
        api_key: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.settings = settings
        self.options: Settings = settings.options  # [judge.llm]
        options = self.options
        self.config_path = config_path
        self.prompt = read_prompt(options.prompt)
        self.identity: dict[str, Any] = identity(settings)
        self.failing = settings.failing()  # read once: it looks the judge's module up
        self.client = Client(options.base_url, api_key, options.timeout)
        self.has_key = bool(api_key)
        retry = RetryPolicy(options.retries, options.backoff, (Transient,), sleep)
        self.caller = Caller(executor_for(options.concurrency), retry, RateLimit(options.rate_limit))
        self._tokens = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "reasked": 0}
        self._tokens["not_judged"] = 0
        self._tokens["formats_refused"] = 0
        self.format = next(iter(FORMATS))  # the reply format asked for: json_schema, until refused
        self._lock = threading.Lock()

    @property
    def stats(self) -> dict[str, int]:
        """What this judge asked of the server so far: requests (retries included), retries,
        failed requests, and the tokens the server reported."""
        counts = self.caller.counts
        with self._lock:
            tokens = dict(self._tokens)
        failed = counts.errors - tokens["formats_refused"]  # a refused format is asked again, not failed
        return {"requests": counts.calls, "retries": counts.retries, "failed": failed, **tokens}

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        """One verdict per item, in order; one request per group of sentences sharing their
        contexts (and per vote). An item asked twice is asked of the server once."""
        judged: dict[Item, Verdict] = {}
        groups: dict[tuple[str, ...], list[str]] = {}
        for claim, contexts in dict.fromkeys(items):
            if windows(contexts):
                groups.setdefault(contexts, []).append(claim)
            else:  # nothing to quote: as every judge says it
                judged[(claim, contexts)] = Verdict(False, 0.0, "", NO_CONTEXT)
        asks = [
            _Ask(contexts, tuple(claims[start : start + PER_REQUEST]))
            for contexts, claims in groups.items()
            for start in range(0, len(claims), PER_REQUEST)
        ]
        votes = self.options.votes
        before = self.stats
        with time_limit(0):  # each request is bounded by [judge.llm] timeout, not by [run] timeout
            tasks = [(ask, vote) for ask in asks for vote in range(votes)]
            replies = self.caller.map(self._vote, tasks, "judging")
        for number, ask in enumerate(asks):
            given = replies[number * votes : (number + 1) * votes]
            why = "; ".join(dict.fromkeys(problems for _, problems in given if problems))
            for position, claim in enumerate(ask.claims):
                cast = [ballots[position] for ballots, _ in given]
                judged[(claim, ask.contexts)] = self.decide(claim, ask.contexts, cast, why)
        self._say(before)
        return [judged[item] for item in items]

    def body(self, ask: _Ask, vote: int) -> dict[str, Any]:
        """The chat-completions request of one vote on `ask`."""
        options = self.options
        return {
            "model": options.model,
            "messages": [
                {"role": "system", "content": self.prompt},
                {"role": "user", "content": user_message(ask)},
            ],
            "temperature": options.temperature,
            "seed": (options.seed + vote) % SEED_RANGE,
            "max_tokens": options.max_tokens,
            **FORMATS[self.format],
        }

    def _vote(self, task: tuple[_Ask, int]) -> tuple[list[Ballot | None], str]:
        """One vote on each sentence of `ask` (None: the reply had none), and what the replies
        got wrong. The sentences a reply left without a valid verdict are asked once more, on
        their own; those still without one are not judged."""
        ask, vote = task
        given, problems = self._ask(ask, vote)
        missing = [number for number in range(1, len(ask.claims) + 1) if number not in given]
        if missing:
            again = _Ask(ask.contexts, tuple(ask.claims[number - 1] for number in missing))
            more, problems = self._ask(again, vote)
            given |= {number: more[n] for n, number in enumerate(missing, start=1) if n in more}
            self._count("reasked", len(missing))
        votes = [given.get(number) for number in range(1, len(ask.claims) + 1)]
        return votes, "; ".join(problems)

    def _ask(self, ask: _Ask, vote: int) -> tuple[dict[int, Ballot], list[str]]:
        """One request: the verdicts of its reply by sentence number, and what in the reply does
        not match the schema. A server that refuses the reply format (HTTP 400) is asked again
        with the next one (json_schema, json_object, none: FORMATS)."""
        while True:
            asked_as = self.format
            try:
                deadline = Deadline(self.options.timeout)  # the call's attempts share it
                reply: Completion = self.caller.call(self._complete, self.body(ask, vote), deadline)
                break
            except OutOfTime as error:
                raise self._error(ask, str(error), self._busy()) from None
            except Transient as error:
                attempts = self.options.retries + 1
                tried = f"{attempts} attempt{'s' if attempts > 1 else ''}"
                raise self._error(ask, f"{error} ({tried})", self._busy()) from None
            except Refused as error:
                refused = error.status == 400 or _refuses_format(str(error))
                if not refused or not self._fall_back(asked_as, str(error)):
                    raise self._error(ask, str(error), self._refused(error.status)) from None
                with self._lock:  # asked again in the next format: not a failed request
                    self._tokens["formats_refused"] += 1
        self._count_usage(reply)
        given, problems = ballots(reply.content, ask.claims)
        if problems and reply.finish_reason == "length":
            problems.append(f"the reply was cut at max_tokens ({self.options.max_tokens})")
        return given, problems

    def _complete(self, body: dict[str, Any], deadline: Deadline) -> Completion:
        """One attempt. A 5xx about the reply format (llama-cpp-python's server answers a
        response_format it lacks with a 500) is a refusal, never retried: the same request
        would get the same reply."""
        try:
            return self.client.complete(body, deadline)
        except Transient as error:
            if _refuses_format(str(error)):
                raise Refused(500, str(error)) from None
            raise

    def _fall_back(self, asked_as: str, said: str) -> bool:
        """After a 400 to a request sent with reply format `asked_as`: use the next format for
        the rest of the run, saying so once; False when there is none left to try."""
        with self._lock:
            if self.format != asked_as:  # another thread fell back already
                return True
            following = list(FORMATS)[list(FORMATS).index(asked_as) + 1 :]
            if not following:
                return False
            self.format = following[0]
        print(
            f"LLM judge: the server refused response_format {asked_as} ({shortened(said, 120)}); "
            f"asking with {self.format} from now on",
            file=sys.stderr,
        )
        return True

    def _count_usage(self, reply: Completion) -> None:
        with self._lock:
            for name, value in reply.usage.items():
                self._tokens[name] += value

    def _count(self, name: str, more: int) -> None:
        with self._lock:
            self._tokens[name] += more

    def decide(
        self, claim: str, contexts: tuple[str, ...], votes: list[Ballot | None], why: str = ""
    ) -> Verdict:
        """The verdict of one sentence from its votes (module doc: evidence, votes, findings);
        the votes whose replies had none for it do not count, and with none left the sentence
        is not judged (`why`: what the replies got wrong)."""
        cast = [ballot for ballot in votes if ballot is not None]
        if not cast:
            self._count("not_judged", 1)
            return not_judged(f"the judge's reply had no valid verdict for it, asked twice ({why})")
        found: list[str] = []  # the quotes of the votes that found support
        problems: list[str] = []  # why the other "supported" votes do not count
        for supported, evidence in cast:
            if supported:
                problem = _quote_problem(evidence, contexts)
                (problems if problem else found).append(problem or evidence)
        score = len(found) / len(cast)
        tally = f" ({len(found)} of {len(cast)} votes found support)" if len(cast) > 1 else ""
        if not (score > 0 and score >= self.settings.threshold):
            reason = problems[0] if problems else "the judge found no support in the contexts"
            return Verdict(False, score, "", reason + tally)
        context = "\n".join(contexts)
        failing = self.failing
        rejected: Verdict | None = None
        for evidence in found:
            for window in _quoted_windows(evidence, contexts):
                noted = findings(claim, window, context, self.settings.names)
                shown = tuple(f"{f.name}: {f.message}" for f in noted)
                vetoed = [f for f in noted if f.name in failing]
                if not vetoed:
                    return Verdict(True, score, window, "", shown)
                rejected = rejected or Verdict(False, score, window, vetoed[0].message, shown)
        quote = repr(shortened(found[0], 120))
        return rejected or Verdict(
            False, 0.0, "", f"the judge's quote is not within two consecutive sentences of a context: {quote}"
        )

    def _error(self, ask: _Ask, problem: str, fix: str) -> EvalInputError:
        first = shortened(ask.claims[0], 80)
        more = len(ask.claims) - 1
        others = f" (and {more} more sentence{'s' if more > 1 else ''})" if more else ""
        return EvalInputError(
            self.config_path,
            f"[judge] llm: judging the answer {first!r}{others} at {self.client.url}: {problem}",
            fix,
            self.settings.line,
        )

    def _busy(self) -> str:
        options = self.options
        return (
            f"check that the server at {options.base_url} is up and serves {options.model!r}; when it is "
            "slow or busy, raise [judge.llm] timeout or retries, or lower concurrency and set rate_limit"
        )

    def _refused(self, status: int) -> str:
        options = self.options
        if status in (401, 403):
            now = "is set" if self.has_key else "is not set"
            variable = options.api_key_env
            return f"set the environment variable {variable} (now it {now}) to a key the server accepts"
        if status == 404:
            return (
                "check [judge.llm] base_url (most servers want the address up to /v1, e.g. "
                f"http://127.0.0.1:8000/v1) and that the server serves model {options.model!r}"
            )
        if 300 <= status < 400:
            return (
                "set [judge.llm] base_url to the address the server redirects to (redirects are not followed)"
            )
        if status == 0:
            return "check that [judge.llm] base_url points at an OpenAI-compatible chat-completions API"
        return f"check [judge.llm] model ({options.model!r}) and the server's log: it refused the request"

    def _say(self, before: dict[str, int]) -> None:
        """This call's requests and tokens, on stderr (the verdict cache line counts one judge call)."""
        now = self.stats
        made = {name: now[name] - before[name] for name in now}
        if not made["requests"]:
            return
        total = made["total_tokens"] or made["prompt_tokens"] + made["completion_tokens"]
        tokens = (
            f"{total:,} tokens ({made['prompt_tokens']:,} prompt, {made['completion_tokens']:,} completion)"
            if total
            else "no token usage reported"
        )
        requests = f"{made['requests']} requests ({made['retries']} retries)"
        odd = ""
        if made["reasked"]:
            odd = f"; {made['reasked']} sentence(s) asked again, {made['not_judged']} of them not judged"
        print(f"LLM judge: {requests}, {tokens}{odd}", file=sys.stderr)


def build(settings: JudgeSettings, config_path: Path | str) -> LLMJudge:
    """The judge of [judge] backend = "llm"; the API key from the environment variable
    `api_key_env` names (none sent when it is unset or empty)."""
    options = settings.options
    if not isinstance(options, Settings):  # load_config always reads it: a caller built [judge] itself
        raise EvalInputError(
            config_path,
            '[judge] backend = "llm" needs [judge.llm], the server to ask: base_url and model',
            '[judge.llm] base_url = "http://127.0.0.1:8000/v1", model = "..."',
            settings.line,
        )
    try:
        return LLMJudge(settings, config_path, os.environ.get(options.api_key_env) or None)
    except ValueError as error:  # the prompt file went missing since eval.toml was read
        raise EvalInputError(
            config_path,
            f"[judge.llm] prompt: {error}",
            "name a UTF-8 text file in [judge.llm] prompt",
            settings.line,
        ) from None

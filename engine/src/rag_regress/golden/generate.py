"""`golden generate`: candidate golden questions written from the corpus by a chat model behind
any OpenAI-compatible chat-completions endpoint ([golden] in eval.toml).

The plan. `count` slots ([golden] count, or --count), slot i of kind `kinds[i % len(kinds)]`
([golden] kinds, cycled in their order), each with its source documents. Documents are
grouped into strata: by the first path segment of their id when most ids look like
"folder/name" (and there are two folders or more; an id without a folder joins the stratum
""), else by the tercile of their text's length ("short", "medium", "long"). Documents with
no text are never drawn. A draw walks the strata round-robin, each stratum shuffled by
random.Random(seed) (its ids sorted first, so the file's order does not matter), without
replacement until every document was drawn, then in a new round. A "two-passage" slot takes
its second document as the next draw from another stratum (with one stratum: another
document). The same corpus, seed and kinds give the same plan, and the plan of `count` slots
is the start of the plan of any larger count, so a rerun with a larger --count extends it.
A document longer than PASSAGE_CHARS is sent as a window of that many characters, placed
by a generator seeded with the seed, the slot and the document id.

The kinds. single: passage 1 answers it. two-passage: it needs both passages. unanswerable:
a question in the corpus's domain it does not answer (the passage is an example of the
domain; no reference, no relevant documents, answerable false). terse: 2 to 4 words, as
typed in a search box. acronym: it uses an acronym or abbreviation the passage spells out or
implies. users-words: the user's vocabulary, not the document's.

One request per slot: POST {base_url}/chat/completions with `model`, `temperature`, `seed`
(seed + slot, modulo 2**31), `response_format = {"type": "json_object"}` (unless [golden]
json_mode is false), the system message
generate_prompt_v1.txt (PROMPT_VERSION "1": a new wording is a new file and a new version)
and a user message `user_message` builds: "KIND: <kind>", "TASK: <instruction>", then each
passage as "PASSAGE <n>", "Title: <title>", its text and a blank line, then "END OF
PASSAGES". The reply's content must be exactly

    {"question": str, "reference": str | null, "nuggets": [{"text": str, "vital": bool}],
     "quotes": [{"doc": <passage number>, "quote": "<exact words from that passage>"}]}

or that inside one Markdown code fence (```json ... ```), as models write it without JSON mode,
and after a leading <think>...</think> block, as reasoning models write it.

Requests go through the engine's caller as the LLM judge's do (answers/llm/judge.py):
`concurrency` at once, at most `rate_limit` a second, 429, 5xx, timeouts and connection
errors retried `retries` times after `backoff` seconds, doubled each time. A request that
still fails (Transient), or that the server refuses (Refused: 401, 404 ...), stops the run
with EvalInputError at [golden]'s line with a fix; every line already written stays.

What drops a slot. Nothing about one reply stops the run: the slot is written with status
"dropped" and `why`, "<reason>: <detail>", the reasons being, checked in this order:
  malformed       not that JSON, a key missing or unknown, a value of the wrong type; an
                  answerable kind without a reference or quotes, an unanswerable one with any
  shape           a terse question of fewer than 2 or more than 4 words
  quote           a quote not in its passage (rag_regress.inputs.data.find_quote: runs of
                  whitespace aside, exactly); a two-passage reply not quoting both passages
  copied          the question repeats COPY_RUN (6) content words in a row of a passage
                  (USERS_WORDS_RUN, 3, for users-words): SQuAD-normalised tokens
                  (answers/reference.squad_tokens) less the English stop words
  unsupported     a sentence of the reference ([judge]'s sentence splitter) that the
                  configured judge ([judge], as `eval` judges answers) finds unsupported by
                  the passages sent
  near-duplicate  the question's token set (squad_tokens) has a Jaccard similarity of at
                  least [golden] near_duplicate (0.8) with a golden question's ([data]
                  golden and holdout) or an earlier slot's candidate (in the file, or of
                  this run)
  plan            a two-passage slot of a corpus with one document (no request is made)
A quote found several times is placed at its first occurrence inside the window sent.

The candidates file ([golden] candidates, or --output; never [data] golden, the corpus or any
other input: refused) gets one JSON line per slot as the contract of the golden lifecycle
says: id, slot, status, why, kind, question, answerable, reference, nuggets, relevant (the
source documents, grade 3), passages (character offsets of each quote into its document's
text, grade 3) and provenance (generator, model, prompt_version, seed, slot, at: the time
the slot finished, validated_by: the judge's identity). Ids are "cand-<slot:04d>", or
"cand-<seed>-<slot:04d>" when the golden set already holds that id (a merged candidate).
Lines are appended in slot order (a slot that finished early waits for the ones before it,
so near-duplicates are judged the same way at any concurrency), each flushed and fsynced
once written: Ctrl-C or a crash leaves whole lines.

Resume: the file is read first. A last line cut short (no newline, not JSON: an interrupted
write) is removed with a warning on stderr, once the file is known to be this plan's, and only
when it starts as a line of ours does (`{"id": "cand-`): a last line of anything else is
EvalInputError naming it, the file left byte for byte, as is any other bad line. Its slots
are skipped; a line of another seed is an error (use the same --seed, or another
--output), and so is a slot whose kind or sources differ from this plan's (the corpus or
[golden] kinds changed). At the end a summary goes to stderr: the lines written, the
dropped ones by reason, the requests, retries, tokens and their cost ([prices]). The API key is read from the
variable [golden] api_key_env names and never printed.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from difflib import SequenceMatcher
from pathlib import Path
from typing import IO, Any

from .. import cost
from ..answers.judges import Judge, build_judge
from ..answers.judges.claims import split_sentences
from ..answers.llm.client import Client, Completion, Refused, Transient, json_content
from ..answers.llm.prompt import read_prompt
from ..answers.reference import squad_tokens
from ..answers.verdicts import asked_of
from ..api import Document
from ..calling.caller import Caller
from ..calling.calls import time_limit
from ..calling.executor import executor_for
from ..calling.ratelimit import RateLimit
from ..calling.retries import RetryPolicy
from ..errors import EvalInputError, ExitCode
from ..inputs.data import find_quote, load_corpus, load_golden, parse_json_lines
from ..inputs.files import check_output
from ..inputs.lines import checked
from ..inputs.reading import QUESTIONS_LIMIT, read_data
from ..net.http import Deadline, OutOfTime
from ..net.parse import loads
from ..net.redact import redact, shortened
from ..render.progress import Progress
from ..run_files import named_inputs
from ..settings.config import Config
from ..settings.schema import GOLDEN_KINDS, GoldenSettings
from ..terminal import interactive
from ..text.words import ENGLISH_STOPWORDS
from .candidates import CandidateLine

PROMPT_VERSION = "1"
PROMPT = Path(__file__).with_name(f"generate_prompt_v{PROMPT_VERSION}.txt")
GENERATOR = "rag-regress golden generate"
SEED_RANGE = 2**31  # slot i sends (seed + i) modulo this: every server takes a 32-bit seed
PASSAGE_CHARS = 4_000  # characters of a document sent at most: a longer one is sent as a window
COPY_RUN = 6  # content words in a row shared with a passage that make a question a copy
USERS_WORDS_RUN = 3  # the same for users-words, which promises none of the passage's phrases
TERSE_WORDS = (2, 4)  # a terse question's words, at least and at most
SOURCE_GRADE = 3  # the grade of a source document and of its quoted passages: "answers it"
TERCILES = ("short", "medium", "long")
REPLY_KEYS = ("question", "reference", "nuggets", "quotes")
SCHEMA = (
    '{"question": "...", "reference": "..." or null, "nuggets": [{"text": "...", "vital": true}], '
    '"quotes": [{"doc": <passage number>, "quote": "<exact words from that passage>"}]}'
)
INSTRUCTIONS = {
    "single": "Write a question that passage 1 answers, with its reference answer, nuggets and quotes.",
    "two-passage": "Write a question that needs both passages to answer: the reference uses facts from "
    "each, and the quotes include at least one from passage 1 and one from passage 2.",
    "unanswerable": "The passage shows what the collection is about. Write a question a user of this "
    "collection could ask that it does not answer. Reply with reference null, nuggets [] and quotes [].",
    "terse": "Write a question of two to four words, as people type into a search box, that passage 1 "
    "answers, with its reference answer, nuggets and quotes.",
    "acronym": "Write a question that uses an acronym or abbreviation which passage 1 spells out or "
    "implies, and that passage 1 answers, with its reference answer, nuggets and quotes.",
    "users-words": "Write a question that passage 1 answers, in the words a user would choose, not the "
    "passage's: no phrase copied from it. Give its reference answer, nuggets and quotes.",
}
LINE_KEYS = ("id", "slot", "status", "kind", "provenance")  # what resuming reads of each line


# -- the plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One request of the plan: its position, kind, and source documents (passage 1 first)
    with the window of each document's text that is sent, as (start, end) offsets."""

    number: int
    kind: str
    sources: tuple[str, ...]
    windows: tuple[tuple[int, int], ...]

    @property
    def answerable(self) -> bool:
        return self.kind != "unanswerable"


def strata(documents: Sequence[Document]) -> dict[str, list[str]]:
    """The documents' ids by stratum (module doc: folders, else length terciles), each sorted,
    strata in order (folders by name; terciles short to long); empty strata left out."""
    folders = [doc.id.partition("/") for doc in documents]
    pathlike = [head for head, slash, tail in folders if slash and head and tail]
    if 2 * len(pathlike) > len(documents) and len(set(pathlike)) > 1:
        groups: dict[str, list[str]] = {}
        for doc, (head, slash, tail) in zip(documents, folders, strict=True):
            groups.setdefault(head if slash and head and tail else "", []).append(doc.id)
        return {name: sorted(groups[name]) for name in sorted(groups)}
    ordered = sorted(documents, key=lambda doc: (len(doc.text), doc.id))
    size = len(ordered)
    found = {}
    for index, name in enumerate(TERCILES):
        part = ordered[index * size // 3 : (index + 1) * size // 3]
        if part:
            found[name] = sorted(doc.id for doc in part)
    return found


Draw = tuple[str, str]  # (stratum, document id)


class _Draws:
    """The seeded sequence of draws (module doc): rounds over the strata, each a round-robin
    of the strata shuffled anew; `take` may pick ahead in it, never a document twice a round."""

    def __init__(self, groups: dict[str, list[str]], rng: random.Random):
        self.groups = groups
        self.rng = rng
        self.queue: list[Draw] = []

    def _round(self) -> None:
        shuffled = [(name, self.rng.sample(ids, len(ids))) for name, ids in self.groups.items()]
        for depth in range(max(len(ids) for _, ids in shuffled)):
            self.queue += [(name, ids[depth]) for name, ids in shuffled if depth < len(ids)]

    def take(self, accept: Callable[[Draw], bool] = lambda draw: True) -> Draw | None:
        """The first draw still to come that `accept`s, from this round or the next; None when
        neither holds one."""
        for _ in range(2):
            for index, draw in enumerate(self.queue):
                if accept(draw):
                    return self.queue.pop(index)
            self._round()
        return None


def _window(text: str, seed: int, number: int, doc_id: str) -> tuple[int, int]:
    """The part of `text` sent (module doc): all of it, or PASSAGE_CHARS characters from a
    seeded start, cut at whitespace so no word is split."""
    if len(text) <= PASSAGE_CHARS:
        return 0, len(text)
    start = random.Random(f"{seed}:{number}:{doc_id}").randrange(len(text) - PASSAGE_CHARS + 1)
    end = start + PASSAGE_CHARS
    if start > 0:
        space = text.find(" ", start, end)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return start, end


def _other(first: Draw, across: bool) -> Callable[[Draw], bool]:
    """Which draws may join `first` in a two-passage slot: another stratum's (`across`), else
    any other document."""
    if across:
        return lambda draw: draw[0] != first[0]
    return lambda draw: draw[1] != first[1]


def plan(corpus: Mapping[str, Document], kinds: Sequence[str], seed: int, count: int) -> list[Slot]:
    """The first `count` slots of the plan of `seed` (module doc). ValueError when no document
    has text to draw."""
    usable = [doc for doc in corpus.values() if doc.text.strip()]
    if not usable:
        raise ValueError("no document of the corpus has any text")
    groups = strata(usable)
    draws = _Draws(groups, random.Random(seed))
    slots = []
    for number in range(count):
        kind = kinds[number % len(kinds)]
        first = draws.take()
        assert first is not None  # every round holds every usable document
        sources = [first[1]]
        if kind == "two-passage":
            second = draws.take(_other(first, across=len(groups) > 1))
            sources += [second[1]] if second else []
        windows = tuple(_window(corpus[doc].text, seed, number, doc) for doc in sources)
        slots.append(Slot(number, kind, tuple(sources), windows))
    return slots


# -- the request ------------------------------------------------------------------------------


def passage_texts(slot: Slot, corpus: Mapping[str, Document]) -> tuple[str, ...]:
    """The text sent of each source document: its window."""
    return tuple(
        corpus[doc].text[start:end] for doc, (start, end) in zip(slot.sources, slot.windows, strict=True)
    )


def user_message(slot: Slot, corpus: Mapping[str, Document]) -> str:
    """The request's user message (module doc): the kind, its instruction, the numbered passages."""
    lines = [f"KIND: {slot.kind}", f"TASK: {INSTRUCTIONS[slot.kind]}", ""]
    for number, (doc, text) in enumerate(
        zip(slot.sources, passage_texts(slot, corpus), strict=True), start=1
    ):
        title = " ".join(corpus[doc].title.split()) or "(none)"
        lines += [f"PASSAGE {number}", f"Title: {title}", text.strip(), ""]
    lines += ["END OF PASSAGES", "", f"Reply with one JSON object only: {SCHEMA}"]
    return "\n".join(lines) + "\n"


class Dropped(Exception):
    """Why one slot is written as "dropped": `reason` (module doc) and what was seen."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class Draft:
    """A reply that matches the schema."""

    question: str
    reference: str | None
    nuggets: list[dict[str, Any]]
    quotes: list[tuple[int, str]]  # (passage number, quote)


def _shown(value: object) -> str:
    return shortened(json.dumps(value, ensure_ascii=False), 120)


def _nuggets(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise Dropped("malformed", f"nuggets must be a list, got {_shown(value)}")
    found = []
    for position, nugget in enumerate(value, start=1):
        vital = nugget.get("vital", True) if isinstance(nugget, dict) else None
        if (
            not isinstance(nugget, dict)
            or not set(nugget) <= {"text", "vital"}
            or not isinstance(nugget.get("text"), str)
            or not nugget["text"].strip()
            or not isinstance(vital, bool)
        ):
            raise Dropped(
                "malformed",
                f'nugget {position} must be {{"text": "...", "vital": true}}, got {_shown(nugget)}',
            )
        found.append({"text": " ".join(nugget["text"].split()), "vital": vital})
    return found


def _quotes(value: object, passages: int) -> list[tuple[int, str]]:
    if not isinstance(value, list):
        raise Dropped("malformed", f"quotes must be a list, got {_shown(value)}")
    found = []
    for position, quote in enumerate(value, start=1):
        number = quote.get("doc") if isinstance(quote, dict) else None
        if (
            not isinstance(quote, dict)
            or set(quote) != {"doc", "quote"}
            or isinstance(number, bool)
            or not isinstance(number, int)
            or not 1 <= number <= passages
            or not isinstance(quote["quote"], str)
            or not quote["quote"].strip()
        ):
            last = f"1 to {passages}" if passages > 1 else "1"
            raise Dropped(
                "malformed",
                f'quote {position} must be {{"doc": <passage number, {last}>, "quote": "<words>"}}, got '
                f"{_shown(quote)}",
            )
        found.append((number, quote["quote"]))
    return found


def parse_reply(content: str, slot: Slot) -> Draft:
    """The reply of `slot`'s request, checked against the schema and its kind (module doc:
    malformed); Dropped saying what does not match."""
    try:
        data = loads(json_content(content))
    except ValueError as error:
        raise Dropped("malformed", f"the reply is not JSON: {shortened(content, 120)!r} ({error})") from None
    if not isinstance(data, dict):
        raise Dropped("malformed", f"the reply must be a JSON object, got {_shown(data)}")
    missing = [key for key in REPLY_KEYS if key not in data]
    unknown = sorted(set(data) - set(REPLY_KEYS))
    if missing or unknown:
        said = "; ".join(
            [
                *([f"it lacks {', '.join(missing)}"] if missing else []),
                *([f"it has unknown key(s) {', '.join(unknown)}"] if unknown else []),
            ]
        )
        raise Dropped(
            "malformed", f"{said} (it wrote {shortened(content, 120)!r}); the reply must be {SCHEMA}"
        )
    question, reference = data["question"], data["reference"]
    if not isinstance(question, str) or not question.strip():
        raise Dropped("malformed", f"question must be a non-empty string, got {_shown(question)}")
    nuggets, quotes = _nuggets(data["nuggets"]), _quotes(data["quotes"], len(slot.sources))
    if slot.answerable:
        if not isinstance(reference, str) or not reference.strip():
            raise Dropped("malformed", f"reference must be a non-empty string, got {_shown(reference)}")
        if not quotes:
            raise Dropped("malformed", "it quotes no passage: the answer's source cannot be shown")
    elif reference is not None or nuggets or quotes:
        raise Dropped("malformed", "an unanswerable question has reference null, nuggets [] and quotes []")
    question = " ".join(question.split())
    return Draft(question, " ".join(reference.split()) if reference else None, nuggets, quotes)


# -- the checks -------------------------------------------------------------------------------


def _shape(draft: Draft, slot: Slot) -> None:
    """The checks of a kind that can be counted: a terse question's words."""
    words = len(draft.question.split())
    low, high = TERSE_WORDS
    if slot.kind == "terse" and not low <= words <= high:
        raise Dropped("shape", f"a terse question has {low} to {high} words, this one {words}")


def locate(draft: Draft, slot: Slot, corpus: Mapping[str, Document]) -> list[dict[str, Any]]:
    """The passages of the draft's quotes: {doc, start, end, grade}, offsets into the document's
    text (module doc: a quote found twice is placed in the window sent); Dropped when a quote
    is not in its passage, or a two-passage reply does not quote both."""
    passages: list[dict[str, Any]] = []
    for number, quote in draft.quotes:
        doc = slot.sources[number - 1]
        low, high = slot.windows[number - 1]
        found = find_quote(corpus[doc].text, quote)
        inside = [place for place in found if low <= place[0] and place[1] <= high]
        if not found:
            shown = shortened(quote, 100)
            raise Dropped("quote", f"the quote {shown!r} is not in passage {number} ({doc})")
        start, end = (inside or found)[0]
        passage = {"doc": doc, "start": start, "end": end, "grade": SOURCE_GRADE}
        if passage not in passages:
            passages.append(passage)
    if slot.kind == "two-passage" and len({number for number, _ in draft.quotes}) < len(slot.sources):
        raise Dropped("quote", "a two-passage question quotes both passages; this reply quotes one")
    return passages


def _content(text: str) -> list[str]:
    return [token for token in squad_tokens(text) if token not in ENGLISH_STOPWORDS]


def shared_run(first: Sequence[str], second: Sequence[str]) -> list[str]:
    """The longest run of tokens found in a row in both (the first such run of `first`)."""
    # autojunk off: with it, tokens frequent in a long passage would never start a match.
    match = SequenceMatcher(None, first, second, autojunk=False).find_longest_match()
    return list(first[match.a : match.a + match.size])


def _not_copied(draft: Draft, slot: Slot, texts: Sequence[str]) -> None:
    limit = USERS_WORDS_RUN if slot.kind == "users-words" else COPY_RUN
    asked = _content(draft.question)
    for number, text in enumerate(texts, start=1):
        run = shared_run(asked, _content(text))
        if len(run) >= limit:
            raise Dropped(
                "copied",
                f"the question repeats {len(run)} words of passage {number} in a row ({' '.join(run)!r}; "
                f"fewer than {limit} allowed)",
            )


def token_set(text: str) -> frozenset[str]:
    """A question's words as near-duplicates compare them: SQuAD-normalised tokens, as a set."""
    return frozenset(squad_tokens(text))


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    """|A & B| / |A | B|; 1.0 for two empty sets (nothing tells them apart)."""
    union = first | second
    return len(first & second) / len(union) if union else 1.0


# -- the candidates file ----------------------------------------------------------------------


REWRITE_FIX = "`golden generate` writes every line; delete this line to generate its slot again"


def _bad_line(path: Path, number: int, problem: str) -> EvalInputError:
    return EvalInputError(path, problem, REWRITE_FIX, number)


def _check_line(path: Path, number: int, line: dict[str, Any]) -> None:
    """A line to resume from: a candidates line (golden/candidates.py) of one of the plan's
    slots, of a kind `golden generate` writes, recording the seed it was generated with."""
    missing = [key for key in LINE_KEYS if key not in line]
    if missing:
        raise _bad_line(path, number, f"missing key(s): {', '.join(missing)}")
    checked(CandidateLine, line, path, number, REWRITE_FIX)
    if line["kind"] not in GOLDEN_KINDS:
        raise _bad_line(path, number, f"kind {line['kind']!r:.40} is none of: {', '.join(GOLDEN_KINDS)}")
    seed = line["provenance"].get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _bad_line(path, number, f"provenance must hold the seed, got {line['provenance']!r:.60}")


# A line `golden generate` writes starts so (json.dumps of a record: "id" first, "cand-..."):
# only a cut-short last line that starts so, or is cut inside this, is one of ours to remove.
OURS = '{"id": "cand-'


def _cut_tail(raw: bytes) -> int | None:
    """Where a last line that is not whole JSON starts (an interrupted write, or a line that is
    not ours), or None when the last line is whole (with or without its newline)."""
    if not raw or raw.endswith(b"\n"):
        return None
    cut = raw.rfind(b"\n") + 1
    try:
        json.loads(raw[cut:].decode("utf-8"))
    except ValueError:  # UnicodeDecodeError too: a write cut inside a character
        return cut
    return None


def read_candidates(path: Path) -> tuple[dict[int, tuple[int, dict[str, Any]]], bytes]:
    """The lines of an existing candidates file by slot, each with its line number (module doc:
    resume), and the file's bytes as read. Nothing is changed here (`mend_candidates` does,
    once the file is known to be this plan's): a bad line, a slot written twice, or a last line
    cut short that is not one `golden generate` writes is EvalInputError naming the line."""
    if not path.exists():
        return {}, b""
    raw = read_data(path, "candidates", limit=QUESTIONS_LIMIT)
    cut = _cut_tail(raw)
    if cut is not None:
        tail = raw[cut:].decode("utf-8", errors="ignore")
        if not (tail.startswith(OURS) or OURS.startswith(tail)):
            raise EvalInputError(
                path,
                f"the last line is not a candidate line of `golden generate` ({tail[:60]!r}), and not "
                "valid JSON: it is not cut short by an interrupted run, so it is not removed; the "
                "file was left as it is",
                "pass --output another file, or fix or remove that line yourself",
                raw.count(b"\n") + 1,
            )
    found: dict[int, tuple[int, dict[str, Any]]] = {}
    for number, value in parse_json_lines(raw if cut is None else raw[:cut], path, REWRITE_FIX):
        _check_line(path, number, value)
        if value["slot"] in found:
            first = found[value["slot"]][0]
            raise _bad_line(path, number, f"slot {value['slot']} was already written on line {first}")
        found[value["slot"]] = (number, value)
    return found, raw


def mend_candidates(path: Path, raw: bytes) -> None:
    """Before appending to the file read as `raw` (read_candidates), checked to be this plan's:
    a cut-short last line of ours is removed, with a warning on stderr, and a whole last line
    missing only its newline gets one. A file that changed since it was read is left alone
    (EvalInputError): only the bytes read are ever cut."""
    if not raw or raw.endswith(b"\n"):
        return
    try:
        now = read_data(path, "candidates", limit=QUESTIONS_LIMIT)
    except EvalInputError:
        now = b""
    if now != raw:
        raise EvalInputError(
            path,
            "the file changed while `golden generate` was reading it; it was left as it is",
            "run one `golden generate` at a time on a file, then run it again",
        )
    cut = _cut_tail(raw)
    if cut is None:
        with path.open("ab") as out:  # a whole last line missing only its newline
            out.write(b"\n")
        return
    number = raw.count(b"\n") + 1
    print(
        f"warning: {path}:{number}: the last line is cut short (an interrupted run); it is removed "
        "and its slot generated again",
        file=sys.stderr,
    )
    os.truncate(path, cut)


def _resumable(
    path: Path, existing: dict[int, tuple[int, dict[str, Any]]], seed: int, slots: Sequence[Slot]
) -> None:
    """Every line of the file was made by this plan: same seed, and for the slots of the plan
    the same kind and sources. EvalInputError naming the first line that was not."""
    by_number = {slot.number: slot for slot in slots}
    for number, line in sorted(existing.values(), key=lambda pair: pair[0]):
        written = line["provenance"]["seed"]
        if written != seed:
            raise EvalInputError(
                path,
                f"its candidates were generated with seed {written}, not {seed}: resuming would mix "
                "two plans",
                f"pass --seed {written} to resume this file, or --output another file for seed {seed}",
                number,
            )
        slot = by_number.get(line["slot"])
        if slot is None:
            continue  # beyond this run's count: kept as it is
        sources = set(slot.sources) if slot.answerable else set()
        relevant = line.get("relevant", {})
        if line["kind"] != slot.kind or (slot.answerable and set(relevant) != sources):
            raise EvalInputError(
                path,
                f"slot {slot.number} holds a {line['kind']!r} question on {sorted(relevant)}, but this "
                f"plan has a {slot.kind!r} one on {sorted(sources)}: the corpus or [golden] kinds "
                "changed since it was written",
                "pass --output another file (or restore the corpus and [golden] kinds to resume this one)",
                number,
            )


Known = tuple[str, frozenset[str]]  # what a question is shown as ("golden question q07 '...'"), its tokens


class _Writer:
    """Appends the records of the pending slots to the file in slot order (module doc), after
    the near-duplicate check, each line flushed and fsynced. Thread-safe; once `close`d,
    records still arriving (from requests in flight when the run stopped) are not written."""

    def __init__(self, handle: IO[str], order: Sequence[int], known: list[Known], threshold: float):
        self.handle = handle
        self.order = list(order)
        self.known = known
        self.threshold = threshold
        self.waiting: dict[int, dict[str, Any]] = {}
        self.next = 0
        self.written: Counter[str] = Counter()  # "candidate", "dropped"
        self.reasons: Counter[str] = Counter()
        self.closed = False
        self.lock = threading.Lock()

    def put(self, number: int, record: dict[str, Any]) -> None:
        with self.lock:
            if self.closed:
                return
            self.waiting[number] = record
            while self.next < len(self.order) and self.order[self.next] in self.waiting:
                self._write(self.waiting.pop(self.order[self.next]))
                self.next += 1

    def _write(self, record: dict[str, Any]) -> None:
        if record["status"] == "candidate":
            self._dedupe(record)
        self.handle.write(redact(json.dumps(record, ensure_ascii=False)) + "\n")  # as write_atomic does
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.written[record["status"]] += 1
        if record["status"] == "dropped":
            self.reasons[str(record["why"]).split(":", 1)[0]] += 1

    def _dedupe(self, record: dict[str, Any]) -> None:
        tokens = token_set(record["question"])
        for shown, other in self.known:
            similarity = jaccard(tokens, other)
            if similarity >= self.threshold:
                record["status"] = "dropped"
                record["why"] = f"near-duplicate: Jaccard {similarity:.2f} with {shown}"
                return
        self.known.append((f"candidate {record['id']} {shortened(record['question'], 60)!r}", tokens))

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.handle.close()


# -- the run ----------------------------------------------------------------------------------


class _Generation:
    """One run of `golden generate` over the pending slots (module doc)."""

    def __init__(
        self,
        config: Config,
        settings: GoldenSettings,
        corpus: Mapping[str, Document],
        seed: int,
        ids: Callable[[int], str],
        progress: Progress,
        sleep: Callable[[float], None] = time.sleep,
    ):
        assert settings.base_url is not None and settings.model is not None  # checked by run_generate
        self.config, self.settings, self.corpus, self.seed, self.ids = config, settings, corpus, seed, ids
        self.model = settings.model
        self.prompt = read_prompt(PROMPT)
        self.has_key = bool(os.environ.get(settings.api_key_env))
        self.client = Client(
            settings.base_url, os.environ.get(settings.api_key_env) or None, settings.timeout
        )
        retry = RetryPolicy(settings.retries, settings.backoff, (Transient,), sleep)
        limit = RateLimit(settings.rate_limit)
        self.caller = Caller(executor_for(settings.concurrency), retry, limit, None, progress)
        self.judge: Judge = build_judge(config.judge, config.path)
        self.judge_lock = threading.Lock()  # one judge call at a time: a judge need not be thread-safe
        self.tokens: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.writer: _Writer | None = None

    def body(self, slot: Slot) -> dict[str, Any]:
        """The chat-completions request of `slot`."""
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.prompt},
                {"role": "user", "content": user_message(slot, self.corpus)},
            ],
            "temperature": self.settings.temperature,
            "seed": (self.seed + slot.number) % SEED_RANGE,
            "max_tokens": self.settings.max_tokens,
        } | ({"response_format": {"type": "json_object"}} if self.settings.json_mode else {})

    def work(self, slot: Slot) -> None:
        """Generate, check and hand over one slot; EvalInputError when its request fails."""
        if self.stopped.is_set():
            return
        assert self.writer is not None
        if slot.kind == "two-passage" and len(slot.sources) < 2:
            alone = Dropped("plan", "a two-passage question needs two documents; the corpus has one")
            self.writer.put(slot.number, self.record(slot, None, [], alone))
            return
        try:
            deadline = Deadline(self.settings.timeout)  # the call's attempts share it
            reply: Completion = self.caller.call(self.client.complete, self.body(slot), deadline)
        except (Transient, Refused, OutOfTime) as error:
            self.stopped.set()  # no request starts after this one: the run is stopping
            raise self.failure(slot, error) from None
        with self.lock:
            self.tokens.update(reply.usage)
        self.writer.put(slot.number, self.checked(slot, reply))

    def checked(self, slot: Slot, reply: Completion) -> dict[str, Any]:
        """The record of `slot` from its reply, after the checks (module doc: what drops a slot)."""
        draft: Draft | None = None
        passages: list[dict[str, Any]] = []
        try:
            draft = self.parse(reply, slot)
            _shape(draft, slot)
            if slot.answerable:
                passages = locate(draft, slot, self.corpus)
                texts = passage_texts(slot, self.corpus)
                _not_copied(draft, slot, texts)
                self.supported(draft, texts)
        except Dropped as problem:
            return self.record(slot, draft, passages, problem)
        return self.record(slot, draft, passages, None)

    @staticmethod
    def parse(reply: Completion, slot: Slot) -> Draft:
        """parse_reply, saying when the reply was cut short (the likely cause of bad JSON)."""
        try:
            return parse_reply(reply.content, slot)
        except Dropped as dropped:
            if reply.finish_reason != "length":
                raise
            detail = str(dropped).split(": ", 1)[1]
            raise Dropped(dropped.reason, f"{detail} (cut short: finish_reason 'length')") from None

    def supported(self, draft: Draft, texts: tuple[str, ...]) -> None:
        """Every sentence of the reference is supported by the passages, per [judge]."""
        reference = draft.reference or ""
        sentences = split_sentences(reference) or [reference]
        with self.judge_lock:
            items = [(sentence, texts) for sentence in sentences]
            verdicts = asked_of(self.judge, items, self.config.judge, self.config.path)
        for number, (sentence, verdict) in enumerate(zip(sentences, verdicts, strict=True), start=1):
            if not verdict.supported:
                shown = shortened(sentence, 100)
                raise Dropped(
                    "unsupported",
                    f"reference sentence {number} ({shown!r}) is not supported by its passages: "
                    f"{verdict.reason}",
                )

    def record(
        self, slot: Slot, draft: Draft | None, passages: list[dict[str, Any]], problem: Dropped | None
    ) -> dict[str, Any]:
        """The line of `slot` (the contract's keys, in its order)."""
        return {
            "id": self.ids(slot.number),
            "slot": slot.number,
            "status": "dropped" if problem else "candidate",
            "why": str(problem) if problem else None,
            "kind": slot.kind,
            "question": draft.question if draft else "",
            "answerable": slot.answerable,
            "reference": draft.reference if draft else None,
            "nuggets": draft.nuggets if draft else [],
            "relevant": dict.fromkeys(slot.sources, SOURCE_GRADE) if slot.answerable else {},
            "passages": passages,
            "provenance": {
                "generator": GENERATOR,
                "model": self.model,
                "prompt_version": PROMPT_VERSION,
                "seed": self.seed,
                "slot": slot.number,
                "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "validated_by": self.judge.identity,
            },
        }

    def failure(self, slot: Slot, error: Transient | Refused | OutOfTime) -> EvalInputError:
        """The error that stops the run when `slot`'s request fails (module doc)."""
        settings = self.settings
        if isinstance(error, Transient | OutOfTime):
            attempts = settings.retries + 1
            plural = "s" if attempts > 1 else ""
            tried = f" ({attempts} attempt{plural})" if isinstance(error, Transient) else ""
            problem = f"{error}{tried}"
            fix = (
                f"check that the server at {settings.base_url} is up and serves {settings.model!r}; when "
                "it is slow or busy, raise [golden] timeout or retries, or lower concurrency and set "
                "rate_limit"
            )
        else:
            problem, fix = str(error), self._refused(error.status)
        line = self.config.line_of("golden", "base_url") or self.config.line_of("golden")
        return EvalInputError(
            self.config.path,
            f"[golden] generating slot {slot.number} ({slot.kind}) at {self.client.url}: {problem}; "
            "the candidates written so far are kept (rerun to resume)",
            fix,
            line,
        )

    def _refused(self, status: int) -> str:
        settings = self.settings
        if status in (401, 403):
            now = "is set" if self.has_key else "is not set"
            return (
                f"set the environment variable {settings.api_key_env} (now it {now}) to a key the server "
                "accepts ([golden] api_key_env names the variable)"
            )
        if status == 404:
            return (
                "check [golden] base_url (most servers want the address up to /v1, e.g. "
                f"http://127.0.0.1:8000/v1) and that the server serves model {settings.model!r}"
            )
        if 300 <= status < 400:
            return "set [golden] base_url to the address the server redirects to (redirects are not followed)"
        if status == 0:
            return (
                "check that [golden] base_url points at an OpenAI-compatible chat-completions API whose "
                "model supports JSON mode (response_format json_object)"
            )
        if status == 400 and settings.json_mode:
            return (
                f"check [golden] model ({settings.model!r}) and the server's log; a server that refuses "
                "JSON mode (response_format) takes the request with json_mode = false under [golden]"
            )
        return f"check [golden] model ({settings.model!r}) and the server's log: it refused the request"

    def summary(self, output: Path, skipped: int) -> str:
        """What the run did, for stderr (module doc)."""
        writer = self.writer
        written = writer.written if writer else Counter[str]()
        reasons = writer.reasons if writer else Counter[str]()
        counts = self.caller.counts
        with self.lock:
            tokens = dict(self.tokens)
        total = tokens.get("total_tokens") or tokens.get("prompt_tokens", 0) + tokens.get(
            "completion_tokens", 0
        )
        used = (
            f"{total:,} tokens ({tokens.get('prompt_tokens', 0):,} prompt, "
            f"{tokens.get('completion_tokens', 0):,} completion)"
            if total
            else "no token usage reported"
        )
        already = f" ({skipped} slot{'s' if skipped != 1 else ''} already there)" if skipped else ""
        made = written["candidate"]
        lines = [
            f"golden generate: wrote {made} candidate{'s' if made != 1 else ''} and "
            f"{written['dropped']} dropped to {output}{already}"
        ]
        if reasons:
            lines.append("  dropped: " + ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())))
        prompt, completion = tokens.get("prompt_tokens", 0), tokens.get("completion_tokens", 0)
        spent = cost.usd(self.config.prices, self.model, prompt, completion)
        priced = f", cost {cost.dollars(spent, self.model)} (model {self.model!r})" if total else ""
        lines.append(f"  {counts.calls} requests ({counts.retries} retries), {used}{priced}")
        return "\n".join(lines)


def _required(config: Config, settings: GoldenSettings) -> None:
    """[golden] names a server and a model: there is no default for either."""
    line = config.line_of("golden")
    if settings.base_url is None:
        raise EvalInputError(
            config.path,
            "[golden] base_url is not set: `golden generate` needs an OpenAI-compatible API",
            'add base_url = "http://127.0.0.1:8000/v1" (your server\'s address, up to /v1) under [golden]',
            line,
        )
    if settings.model is None:
        raise EvalInputError(
            config.path,
            "[golden] model is not set: `golden generate` needs the name of the model the server serves",
            'add model = "..." under [golden] (e.g. "llama3.1:8b" for Ollama, the served name for vLLM)',
            line,
        )


def candidates_output(config: Config, output: Path | None, *extra: tuple[Path, str]) -> Path:
    """Where candidates go (`output`, else [golden] candidates), checked: never onto an input
    (the golden set, the corpus ..., and the `extra` files a command reads)."""
    inputs = named_inputs(config, *extra)
    if output is not None:
        check_output(output, "candidates file (--output)", inputs)
        return output
    written = config.written.get(("golden", "candidates"), config.golden_settings.candidates)
    check_output(written, "candidates file ([golden] candidates)", inputs, project=config.path.parent)
    return written


def check_count_and_seed(config: Config, table: str, count: int, seed: int) -> None:
    """A candidate command's --count (at least 1) and --seed (a 32-bit seed), else exit 2 at
    `table`'s line of eval.toml."""
    line = config.line_of(table)
    if count < 1:
        raise EvalInputError(config.path, f"--count must be 1 or more, got {count}", "e.g. --count 50", line)
    if not 0 <= seed < SEED_RANGE:
        raise EvalInputError(
            config.path, f"--seed must be from 0 to {SEED_RANGE - 1}, got {seed}", "e.g. --seed 0", line
        )


def golden_questions(config: Config, corpus: dict[str, Document]) -> list[tuple[str, str]]:
    """(id, question) of the golden set and the holdout, those that exist: what candidates
    must not duplicate."""
    found = []
    for path, what in [(config.golden, "golden set"), (config.holdout, "holdout")]:
        if path is not None and path.exists():
            found += [(question.id, question.question) for question in load_golden(path, corpus, what)]
    return found


def _id_maker(golden: Path, seed: int, golden_ids: set[str]) -> Callable[[int], str]:
    """Each slot's candidate id (module doc), never one of the golden set's."""

    def ident(number: int) -> str:
        for candidate in (f"cand-{number:04d}", f"cand-{seed}-{number:04d}"):
            if candidate not in golden_ids:
                return candidate
        raise EvalInputError(
            golden,
            f"the golden set holds both candidate ids of slot {number}",
            "rename those golden questions, or pass another --seed",
        )

    return ident


def _known(golden: list[tuple[str, str]], existing: dict[int, tuple[int, dict[str, Any]]]) -> list[Known]:
    found = [(f"golden question {qid} {shortened(text, 60)!r}", token_set(text)) for qid, text in golden]
    for _, line in sorted(existing.values(), key=lambda pair: pair[1]["slot"]):
        if line["status"] == "candidate":
            shown = f"candidate {line['id']} {shortened(str(line.get('question', '')), 60)!r}"
            found.append((shown, token_set(str(line.get("question", "")))))
    return found


def run_generate(
    config: Config,
    *,
    count: int | None = None,
    seed: int | None = None,
    output: Path | None = None,
    show_progress: bool = True,
) -> int:
    """`rag-regress golden generate`: append the candidates of the slots of the plan that the
    output file does not hold yet (module doc). `count`, `seed` and `output` override [golden]
    count, seed and candidates. Returns the exit code (0); raises EvalInputError (exit 2) when
    the settings, the inputs or the output file are wrong, a request fails for good, or no slot
    asked gave a candidate (a run that produced nothing must not pass in CI), after keeping
    every line written."""
    settings = config.golden_settings
    _required(config, settings)
    count = settings.count if count is None else count
    seed = settings.seed if seed is None else seed
    check_count_and_seed(config, "golden", count, seed)
    path = candidates_output(config, output)
    corpus = load_corpus(config.corpus)
    golden = golden_questions(config, corpus)
    try:
        slots = plan(corpus, settings.kinds, seed, count)
    except ValueError as error:
        raise EvalInputError(config.corpus, str(error), "add documents with text to the corpus") from None
    existing, raw = read_candidates(path)
    _resumable(path, existing, seed, slots)
    mend_candidates(path, raw)  # only now: a file that is not this plan's stays byte for byte
    pending = [slot for slot in slots if slot.number not in existing]
    ids = _id_maker(config.golden, seed, {qid for qid, _ in golden})
    generation = _Generation(config, settings, corpus, seed, ids, Progress(show_progress and interactive()))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a", encoding="utf-8", newline="\n")
    except OSError as error:
        raise EvalInputError(
            path, f"cannot write this file: {error.strerror or error}", "write elsewhere"
        ) from None
    generation.writer = _Writer(
        handle, [slot.number for slot in pending], _known(golden, existing), settings.near_duplicate
    )
    try:
        with time_limit(0):  # each request is bounded by [golden] timeout, not by [run] timeout
            generation.caller.map(generation.work, pending, "generating")
    finally:
        generation.stopped.set()
        generation.writer.close()
        print(generation.summary(path, len(slots) - len(pending)), file=sys.stderr)
    if pending and not generation.writer.written["candidate"]:
        raise EvalInputError(
            config.path,
            f"golden generate wrote no candidate: all {len(pending)} slot(s) asked were dropped (the "
            f"reasons are above and in {path})",
            f"read the dropped lines' `why`; for malformed replies use a model that follows the prompt "
            f"(an instruction-tuned one), set [golden] json_mode or max_tokens ({settings.max_tokens}), "
            "then rerun: the dropped slots are kept, so raise --count for new ones",
            config.line_of("golden"),
        )
    return int(ExitCode.OK)

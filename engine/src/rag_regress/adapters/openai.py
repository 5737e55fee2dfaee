"""A generator over any OpenAI-compatible chat-completions endpoint (OpenAI, Azure's
compatible API, vLLM, llama.cpp's server, Ollama, LiteLLM ...): the retriever's passages and
the question go into one prompt, the model's reply is the answer.

generator.py:

    from rag_regress.adapters import openai

    build_generator = openai.build

eval.toml, every option (`base_url` and `model` are required):

    [generation]
    base_url = "https://api.openai.com/v1"  # the API's address, up to /v1 (POST {base_url}/chat/completions)
    model = "gpt-4o-mini"       # the model the server serves
    api_key_env = "OPENAI_API_KEY"  # environment variable holding the key, the default; an unset
                                # or empty variable sends no key (fine for a local server)
    temperature = 0             # sampling temperature, 0 to 2 (0: the most repeatable answers)
    seed = 7                    # sent when given (servers that honour it repeat their answers)
    max_tokens = 512            # the longest answer, in tokens
    contexts = 3                # passages retrieved and put in the prompt (1 to 100)
    prompt = "prompts/answer.txt"  # a prompt template file, relative to the current directory;
                                # default: the built-in PROMPT (below)
    citations = false           # true: ask for [n] markers naming the passages an answer uses
    abstain = "I don't know."   # the exact reply meaning "the passages do not answer this"
    timeout = 60                # seconds one request may take in all, connect to last byte (0: no limit)

The prompt template: the text sent as the last user message, where `{question}` is replaced by
the question and `{contexts}` by the passages, numbered, each "[n] title" and its text on the
next line (a chunk hit gives its chunk). Nothing else in it is read: other braces (JSON
examples, passages holding braces) stay as written. A template file must hold both names.
The built-in template (`default_prompt`) asks for an answer from the passages only, for [n]
markers when `citations` is true, and for the `abstain` reply when they do not answer.

Conversations: a question with `history` (earlier turns, api.py) is searched with that
history (the retriever's `search` gets `history=` when it declares it, else the question
alone) and sent as the history's messages in order, role and content as given, followed by
the rendered prompt as the last user message. Without history the request holds the one
user message. The template is unchanged: it holds the last question and its passages.

How a reply becomes an Answer:

  abstained  when the reply starts with the `abstain` phrase (case, curly apostrophes and a
             final full stop aside), is empty, or reads as a refusal (api.looks_like_abstention:
             "I do not know", "cannot answer" ...); a question with no passage retrieved is
             abstained on without asking the model
  citations  with `citations = true`, markers such as [1], [2][3] or [1, 2] stay in the
             answer's text: the engine reads them (citation precision and recall,
             docs/metrics.md) and the judge reads the sentences without them. A marker
             naming no passage the prompt held is a miscitation the engine counts and names
             (the model's output, measured, never refused). With `citations = false` the
             answer says so (Answer.citations): a "[2]" in it is the model's text
  contexts   the passages the prompt held, in its order (marker [n] names the n-th)
  usage      the tokens the server's reply reports (`usage`), under [generation] model, and
             the characters of all the messages sent (history and prompt): the run's cost
             ([prices], docs/adapters.md)
  notes      what the adapter sees go wrong with a reply, counted as output defects
             (answers/defects.py): an empty reply, a reply cut at max_tokens
             (finish_reason "length"), a reply that echoes the prompt's own instructions

What can go wrong, and what the run does:

  ChatUnavailable  HTTP 429 or 5xx, the timeout, a refused or dropped connection: a
                   ConnectionError, so [run] retries it when told to: `retries = 3`,
                   `retry_on = ["ConnectionError"]` (and `rate_limit`, `concurrency`)
  ChatError        any other HTTP error (401: the key; 404: base_url or model), or a reply that
                   is no chat completion (not JSON, no message): never retried

The key is read from the environment when the generator is built and never appears in an
error message, a report or any file (net/redact.py), in any form a server may echo it. The
generator keeps no state between questions and may be called from several threads at once
([run] concurrency).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator

from ..answers.citations import strip_markers
from ..answers.llm.client import Client, Completion, Refused, Transient
from ..api import Answer, Context, Document, History, Hit, Retriever, looks_like_abstention
from ..calling.asking import with_history
from ..inputs.conversation import Turn
from ..net.http import OutOfTime
from ..options import OptionsError, PartSettings, RequestSeconds, validated
from . import refused, without_credentials

VERSION = "1.0"  # bumped whenever what is sent or read may change for the same settings
PART = "the openai generator"  # who refuses a bad option
ABSTAIN = "I don't know."

PROMPT = """Answer the question using only the numbered passages below. Keep the answer short, and \
stay close to the passages' own words.{citing}
If the passages do not answer the question, reply with exactly: {abstain}

Passages:

{contexts}

Question: {question}
Answer:"""
CITING = (
    " After each sentence, cite the passages it comes from by their numbers in square brackets, "
    "like [1] or [2][3]."
)

_PLACEHOLDER = re.compile(r"\{(question|contexts)\}")
ECHO_MIN = 24  # characters of an instruction line repeated in a reply that make it an echo


class ChatUnavailable(ConnectionError):
    """The chat server could not answer now (429, 5xx, a timeout, no connection): a
    ConnectionError, so that `[run] retry_on = ["ConnectionError"]` retries it."""

    def __str__(self) -> str:
        return str(self.args[0])


class ChatError(Exception):
    """The chat server refused the request, or its reply is no chat completion."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


def default_prompt(citations: bool, abstain: str) -> str:
    """The built-in template: PROMPT with the citation request (when `citations`) and the
    abstain phrase written in; {question} and {contexts} are left for each question."""
    return PROMPT.replace("{citing}", CITING if citations else "").replace("{abstain}", abstain)


def render(template: str, question: str, contexts: str) -> str:
    """`template` with {question} and {contexts} replaced in one pass over the template only:
    braces elsewhere, and in the question or the passages, are never read."""
    return _PLACEHOLDER.sub(lambda found: question if found[1] == "question" else contexts, template)


def numbered(passages: list[tuple[str, str]]) -> str:
    """(title, text) passages as the prompt shows them: "[n] title", then the text."""
    return "\n\n".join(
        f"[{number}] {title}\n{text}" if title else f"[{number}]\n{text}"
        for number, (title, text) in enumerate(passages, start=1)
    )


def _plain(text: str) -> str:
    flat = " ".join(text.replace("\u2019", "'").replace("\u2018", "'").split()).casefold()
    return flat.rstrip(" .!")


def abstains(reply: str, phrase: str) -> bool:
    """Whether `reply` declines to answer (module doc: abstained)."""
    said = _plain(reply)
    return not said or said.startswith(_plain(phrase)) or looks_like_abstention(reply)


def echoed(reply: str, template: str) -> str | None:
    """A sentence of the prompt's own instructions (not its question or passages) that `reply`
    repeats, or None: a model that echoes its prompt (a base model without a chat template
    does) has not answered."""
    for line in template.splitlines():
        for sentence in re.split(r"(?<=[.:!?])\s+", line.strip()):
            if len(sentence) >= ECHO_MIN and "{" not in sentence and sentence in reply:
                return sentence
    return None


def notes(reply: str, finish: str | None, max_tokens: int, template: str) -> tuple[str, ...]:
    """The defects the adapter sees in a reply (module doc: notes)."""
    found = []
    if not reply.strip():
        found.append("empty reply")
    if finish == "length":
        found.append(f"cut at max_tokens ({max_tokens}): finish_reason 'length'")
    line = echoed(reply, template)
    if line is not None:
        found.append(f"echoes the prompt: {line[:60]!r}")
    return tuple(found)


class ChatGenerator:
    """Answers from the retriever's passages with one chat completion (module doc)."""

    def __init__(
        self,
        retriever: Retriever,
        documents: list[Document],
        client: Client,
        model: str,
        template: str,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int = 512,
        contexts: int = 3,
        citations: bool = False,
        abstain: str = ABSTAIN,
    ):
        self.retriever = retriever
        self.documents = {d.id: d for d in documents}
        self.client = client
        self.model = model
        self.template = template
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.contexts = contexts
        self.citations = citations
        self.abstain = abstain

    def passage(self, hit: Hit) -> tuple[str, str]:
        """The (title, text) a hit stands for: its chunk, or the document's text (its title
        when the text is empty)."""
        document = self.documents[hit.doc_id]
        text = document.text[hit.start : hit.end] if hit.chunk is not None else document.text
        return document.title, text if text.strip() else document.title

    def body(self, question: str, passages: list[tuple[str, str]], history: History = ()) -> dict[str, Any]:
        """The chat-completions request for `question` answered from `passages`, after the
        conversation's earlier turns (module doc: Conversations)."""
        prompt = render(self.template, question, numbered(passages))
        messages = [{"role": message.role, "content": message.content} for message in history]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [*messages, {"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def answer(self, question: str, history: History = ()) -> Answer:
        # A team may hand this generator a retriever whose search takes no history: asked blind.
        hits = with_history(self.retriever.search, Turn(question, history))(question, self.contexts)
        passages = [self.passage(hit) for hit in hits]
        contexts = [Context(hit.doc_id, text) for hit, (_, text) in zip(hits, passages, strict=True)]
        if not hits:
            return Answer(self.abstain, [], abstained=True)
        body = self.body(question, passages, history)
        completion = self._complete(question, body)
        used = self.usage(completion, body)
        reply = completion.content.strip()
        seen = notes(reply, completion.finish_reason, self.max_tokens, self.template)
        cites = self.citations
        if abstains(reply, self.abstain) or (cites and not strip_markers(reply).strip()):
            said = strip_markers(reply).strip() if cites else reply  # nothing but markers: no answer
            return Answer(
                said or self.abstain, contexts, abstained=True, citations=cites, notes=seen, usage=used
            )
        return Answer(
            reply, contexts, citations=cites, notes=seen, usage=used
        )  # the engine checks each citation

    def usage(self, completion: Completion, body: dict[str, Any]) -> dict[str, Any] | None:
        """Answer.usage from the reply's `usage` (None when the server reported none), under
        the model named in [generation] model: the name [prices] knows it by."""
        if not {"prompt_tokens", "completion_tokens"} & set(completion.usage):
            return None
        return {
            "model": self.model,
            "prompt_tokens": completion.usage.get("prompt_tokens", 0),
            "completion_tokens": completion.usage.get("completion_tokens", 0),
            # every message is prompt to the model: the history's turns are billed as well
            "prompt_characters": sum(len(message["content"]) for message in body["messages"]),
        }

    def _complete(self, question: str, body: dict[str, Any]) -> Completion:
        asked = f"{self.client.url} (model {self.model!r}), answering {question!r}"
        try:
            return self.client.complete(body)
        except OutOfTime as error:  # a local server answers one request at a time: the rest wait
            hint = " (raise [generation] timeout, or lower [run] concurrency: requests may queue)"
            raise ChatUnavailable(f"{asked}: {error}{hint}") from None
        except Transient as error:
            raise ChatUnavailable(f"{asked}: {error}") from None
        except Refused as error:
            raise ChatError(f"{asked}: {error}{_hint(error.status)}", error.status) from None


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the key in the variable [generation] api_key_env names)"
    if status == 404:
        return " (check [generation] base_url, usually up to /v1, and model)"
    if 300 <= status < 400:
        return " (redirects are not followed: set [generation] base_url to the address it names)"
    if status == 0:
        return " (check that [generation] base_url points at an OpenAI-compatible chat-completions API)"
    return " (check [generation] model and max_tokens, and the server's log)"


class Settings(PartSettings):
    """[generation] of the openai generator (module doc)."""

    base_url: Annotated[
        StrictStr,
        Field(examples=["http://127.0.0.1:8000/v1"], description="the API's address, up to /v1"),
    ]
    model: Annotated[StrictStr, Field(examples=["gpt-4o-mini"], description="the model the server serves")]
    api_key_env: Annotated[
        StrictStr, Field(description="environment variable holding the key (unset or empty: no key)")
    ] = "OPENAI_API_KEY"
    temperature: Annotated[
        StrictFloat, Field(ge=0, le=2, allow_inf_nan=False, description="sampling temperature")
    ] = 0.0
    seed: Annotated[
        StrictInt | None,
        Field(
            ge=0, le=2**63 - 1, description="sent when given (servers that honour it repeat their answers)"
        ),
    ] = None
    max_tokens: Annotated[
        StrictInt, Field(ge=1, le=1_000_000, description="the longest answer, in tokens")
    ] = 512
    contexts: Annotated[
        StrictInt, Field(ge=1, le=100, description="passages retrieved and put in the prompt")
    ] = 3
    prompt: Annotated[
        StrictStr | None,
        Field(description="a prompt template file, relative to the current directory (default: PROMPT)"),
    ] = None
    citations: Annotated[
        StrictBool, Field(description="true: ask for [n] markers naming the passages an answer uses")
    ] = False
    abstain: Annotated[
        StrictStr, Field(description='the exact reply meaning "the passages do not answer this"')
    ] = ABSTAIN
    timeout: RequestSeconds = 60.0

    @field_validator("base_url")
    @classmethod
    def _an_address(cls, url: str) -> str:
        without_credentials(url, "base_url", "api_key_env")  # before any message shows it
        if not url.startswith(("http://", "https://")):
            raise OptionsError(
                f"option 'base_url' must be an http:// or https:// address, got {url!r}",
                "base_url",
                'e.g. base_url = "http://127.0.0.1:8000/v1"',
            )
        return url

    @field_validator("abstain")
    @classmethod
    def _not_empty(cls, abstain: str) -> str:
        if not abstain.strip():
            raise OptionsError("option 'abstain' must not be empty", "abstain", f'e.g. abstain = "{ABSTAIN}"')
        return abstain


def build(retriever: Retriever, documents: list[Document], options: dict[str, Any]) -> ChatGenerator:
    """The generator of the [generation] table (module doc)."""
    settings = validated(Settings, options, PART)
    template = (
        default_prompt(settings.citations, settings.abstain)
        if settings.prompt is None
        else _template(settings.prompt)
    )
    client = Client(
        settings.base_url, os.environ.get(settings.api_key_env, "").strip() or None, settings.timeout
    )
    return ChatGenerator(
        retriever,
        documents,
        client,
        settings.model,
        template,
        temperature=settings.temperature,
        seed=settings.seed,
        max_tokens=settings.max_tokens,
        contexts=settings.contexts,
        citations=settings.citations,
        abstain=settings.abstain,
    )


def _template(prompt: str) -> str:
    path = Path(prompt)
    try:
        template = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        raise refused(
            "generation",
            "prompt",
            f"names {str(path)!r}, which cannot be read ({reason}; relative to {Path.cwd()})",
            "name a UTF-8 text file (relative to where the command runs), or remove it for the built-in one",
        ) from None
    missing = [name for name in ("{question}", "{contexts}") if name not in template]
    if missing:
        raise refused(
            "generation",
            "prompt",
            f"names {str(path)!r}, a template without {' and '.join(missing)}",
            "write {question} where the question goes and {contexts} where the numbered passages go",
        )
    return template

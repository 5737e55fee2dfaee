"""The NLI judge: a sentence-transformers CrossEncoder trained for entailment.

Each claim is paired with every one- and two-sentence window of its contexts (premise =
window, hypothesis = claim); all pairs of a run go to the model in one batched `predict`
on the CPU, in pieces of PIECE_BATCHES batches handed to the run's executor (execution/:
in this process, or on a Dask cluster's workers, each loading the model once). A claim's
score is the best entailment probability over its windows; the shared guard then checks
numbers, dates and negation, where NLI models are weakest.

The position of "entailment" among the outputs is read from the model's own config
(`id2label`), never assumed: models order their labels differently.

Settings ([judge] in eval.toml): `model` (a Hugging Face model id, or a local folder),
`revision` (pin one for reproducible scores), `threshold` and `batch_size`. When the model
cannot be loaded (for example offline, with no copy in the cache) the run stops with an
error naming the `model` setting: it never falls back to another judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import execution
from ...errors import EvalInputError
from . import Item, Verdict, decide, judged_names, versioned
from .claims import windows

INSTALL_HINT = (
    'install the nli extra with a CPU build of torch: pip install -e ".[nli]" torch '
    "(see README: 'The NLI judge'), or set backend = \"lexical\" in [judge]"
)


def entailment_index(id2label: dict[Any, str]) -> int:
    """The output index whose label is entailment, from the model config's id2label."""
    matches = [int(i) for i, label in id2label.items() if str(label).lower().startswith("entail")]
    if len(matches) != 1:
        raise ValueError(f"no single entailment label in id2label {dict(id2label)!r}")
    return matches[0]


# Pairs go to the executor in pieces of this many batches, the same pieces whichever executor
# runs them: the model sorts a call's pairs by length before batching, so the pieces, not
# the executor, decide which pairs share a batch, and the scores are equal either way.
PIECE_BATCHES = 16
WORKER_FIX = (
    "install the project with its nli extra on every worker, with the model at the same path "
    "(or in each worker's Hugging Face cache)"
)


def _probabilities(model: Any, batch_size: int, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
    """Label probabilities of one piece of (window, claim) pairs; `model` is the handle of
    execution.model_handle (the CrossEncoder itself in this process)."""
    model = execution.model_for(model, "NLI", load_cross_encoder, WORKER_FIX)
    rows = model.predict(list(pairs), batch_size=batch_size, apply_softmax=True, show_progress_bar=False)
    return [[float(p) for p in row] for row in rows]


class NLIJudge:
    def __init__(
        self,
        model: Any,
        model_name: str,
        revision: str | None,
        threshold: float,
        batch_size: int,
        source: str | None = None,
        names: tuple[str, ...] = (),
        tiers: tuple[str, ...] = (),
    ):
        self.model = model
        self.source = source or model_name  # where a cluster's worker loads the same model from
        self.revision = revision
        self.threshold = threshold
        self.batch_size = batch_size
        self.entailment = entailment_index(model.config.id2label)
        self.names = names  # [judge] names: any context may use them
        self.tiers = tiers  # [judge] tiers, lowest first: what "the Team plan and above" reaches
        self.identity: dict[str, Any] = versioned("nli") | {"model": model_name, "revision": revision}
        self.identity |= {"threshold": threshold} | judged_names(names, tiers)

    def verdicts(self, items: Sequence[Item]) -> list[Verdict]:
        per_item = [windows(contexts) for _, contexts in items]
        claims = [claim for claim, _ in items]
        pairs = [(window, claim) for claim, found in zip(claims, per_item, strict=True) for window in found]
        executor = execution.current()
        model = execution.model_handle(executor, self.model, self.source, self.revision)
        pieces = execution.fixed(pairs, self.batch_size * PIECE_BATCHES)
        answered = executor.map(_probabilities, pieces, model, self.batch_size)
        probabilities = [row for piece in answered for row in piece]
        results, position = [], 0
        for (claim, contexts), found in zip(items, per_item, strict=True):
            rows = probabilities[position : position + len(found)]
            position += len(found)
            scored = [(float(row[self.entailment]), window) for row, window in zip(rows, found, strict=True)]
            context = "\n".join(contexts)
            results.append(
                decide(claim, scored, self.threshold, context=context, names=self.names, tiers=self.tiers)
            )
        return results


def load_cross_encoder(model_name: str, revision: str | None) -> Any:
    """Load the CrossEncoder on the CPU. Raises ImportError or OSError as the libraries do."""
    import torch
    from sentence_transformers import CrossEncoder

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))  # small CI machines run faster
    return CrossEncoder(model_name, revision=revision, device="cpu")


def build(settings: Any, config_path: Any) -> NLIJudge:
    try:
        model = load_cross_encoder(settings.load_from, settings.revision)
    except ImportError as error:
        raise EvalInputError(
            config_path,
            f'[judge] backend = "nli" needs {error.name or "sentence-transformers"}',
            INSTALL_HINT,
            settings.line,
        ) from None
    except (OSError, ValueError) as error:
        raise EvalInputError(
            config_path,
            f"cannot load the NLI model {settings.model!r} (revision {settings.revision or 'default'}): "
            f"{str(error).splitlines()[0] if str(error) else type(error).__name__}",
            "set [judge] model to a local folder holding the model, or download it once while online "
            "(it is then read from the Hugging Face cache; HF_HUB_OFFLINE=1 reads only the cache)",
            settings.model_line,
        ) from None
    try:
        identity = (settings.model, settings.revision, settings.threshold, settings.batch_size)
        names, tiers = tuple(settings.names), tuple(settings.tiers)
        return NLIJudge(model, *identity, source=settings.load_from, names=names, tiers=tiers)
    except ValueError as error:
        raise EvalInputError(
            config_path,
            f"the model {settings.model!r} is not an NLI model: {error}",
            "set [judge] model to an NLI cross-encoder (labels entailment/neutral/contradiction)",
            settings.model_line,
        ) from None

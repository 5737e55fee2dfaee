"""The NLI judge: a local sequence-classification model that scores entailment.

Any checkpoint sentence-transformers' CrossEncoder loads: a three-way NLI model (entailment,
neutral, contradiction) or a checker made for grounding with one output or two (HHEM-,
MiniCheck- or AlignScore-style). Each claim is paired with every one- and two-sentence window
of its contexts (premise = window, hypothesis = claim); all pairs of a run go to the model in
one batched `predict` on the CPU, in pieces of PIECE_BATCHES batches handed to the run's
executor (execution/: in this process, or on a Dask cluster's workers, each loading the model
once). A claim's score is the best probability of support over its windows; the narrow checks
(findings.py) then report what they find, and those in [judge] fail_on (by default number and
name, where NLI models are weakest) fail it.

Which output means "supported" is [judge] entailment (a label of the model's id2label, or an
index); by default the one label starting with "entail", or the only output of a one-output
model. It is read from the model's own config, never assumed: models order their labels
differently.

Settings ([judge] in eval.toml): `model` (a local folder, or a Hugging Face model id read from
the local cache), `revision` (pin one for reproducible scores), `threshold`, `batch_size` and
`entailment`. When the model cannot be loaded (for example offline, with no copy in the cache)
the run stops with an error naming the `model` setting: it never falls back to another judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import execution
from ...errors import EvalInputError
from . import Item, Verdict, judged_names, settle, versioned
from .claims import windows

# The findings that fail a claim unless [judge] fail_on says otherwise: where NLI models are
# weakest (docs/judges.md).
FAIL_ON = ("number", "name")
INSTALL_HINT = (
    'install the nli extra with a CPU build of torch: pip install -e ".[nli]" torch '
    "(see README: 'The NLI judge'), or set backend = \"lexical\" in [judge]"
)


def entailment_index(id2label: dict[Any, str], chosen: str | int | None = None) -> int:
    """The output index that means supported: `chosen` ([judge] entailment) as a label of the
    model config's id2label or as an index; by default the one label starting with "entail",
    or output 0 of a model with one output."""
    labels = {int(i): str(label) for i, label in id2label.items()}
    if isinstance(chosen, int):
        if chosen not in labels:
            raise ValueError(
                f"entailment = {chosen} is no output of the model: it has {len(labels)} ({labels!r})"
            )
        return chosen
    if chosen is not None:
        matches = [i for i, label in labels.items() if label.casefold() == chosen.casefold()]
        if len(matches) != 1:
            raise ValueError(f"entailment = {chosen!r} is no label of the model: its labels are {labels!r}")
        return matches[0]
    if len(labels) == 1:
        return next(iter(labels))
    matches = [i for i, label in labels.items() if label.lower().startswith("entail")]
    if len(matches) != 1:
        raise ValueError(f"no single entailment label in id2label {labels!r}: set [judge] entailment")
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
    # a one-output model gives one number a pair (its activation's: a probability)
    return [[float(p) for p in row] if hasattr(row, "__len__") else [float(row)] for row in rows]


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
        fail_on: tuple[str, ...] = FAIL_ON,
        entailment: str | int | None = None,
    ):
        self.model = model
        self.source = source or model_name  # where a cluster's worker loads the same model from
        self.revision = revision
        self.threshold = threshold
        self.batch_size = batch_size
        self.entailment = entailment_index(model.config.id2label, entailment)
        self.names = names  # [judge] names: any context may use them
        self.fail_on = fail_on
        self.identity: dict[str, Any] = versioned("nli") | {"model": model_name, "revision": revision}
        self.identity |= {"threshold": threshold, "fail_on": list(fail_on)} | judged_names(names)
        if entailment is not None:
            self.identity["entailment"] = entailment

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
            results.append(settle(claim, scored, self.threshold, context, self.fail_on, self.names))
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
        return NLIJudge(
            model,
            *identity,
            source=settings.load_from,
            names=tuple(settings.names),
            fail_on=settings.failing(),
            entailment=settings.entailment,
        )
    except ValueError as error:
        raise EvalInputError(
            config_path,
            f"the model {settings.model!r}: {error}",
            "set [judge] entailment to the label (or index) of the output that means supported, or "
            "[judge] model to an NLI model (labels entailment/neutral/contradiction)",
            settings.model_line,
        ) from None

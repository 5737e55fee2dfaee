"""Scores of an answer against the golden question's reference answer and nuggets.

Token F1 and exact match follow the SQuAD evaluation script: both texts are lower-cased,
punctuation is removed, the articles "a", "an" and "the" are dropped and whitespace is
collapsed; F1 is over the multiset of the remaining tokens. Our own code, not a library's:
these are the few lines every QA benchmark copies, and they must stay exactly these.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def squad_tokens(text: str) -> list[str]:
    """SQuAD's normalisation (module doc), as tokens. Unicode text is first put in its
    compatibility form, so "ﬁle" and "file" are one token."""
    return list(_tokens(text))


# F1 and exact match both read the answer and its reference, and a reference comes back in
# every run of its question: each text is tokenized once.
@functools.lru_cache(maxsize=1 << 12)
def _tokens(text: str) -> tuple[str, ...]:
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION)
    return tuple(_ARTICLES.sub(" ", text).split())


def exact_match(answer: str, reference: str) -> float:
    """1.0 when the normalised answer equals the normalised reference, else 0.0. Two texts
    with no tokens left (only punctuation and articles) are equal."""
    return float(_tokens(answer) == _tokens(reference))


def token_f1(answer: str, reference: str) -> float:
    """Harmonic mean of token precision (shared tokens / answer tokens) and recall (shared
    tokens / reference tokens), counting repeated tokens as often as both texts hold them.
    Symmetric, in [0, 1]; 1.0 exactly when the token multisets are equal; when either side
    has no tokens it is 1.0 if both have none, else 0.0 (SQuAD's rule)."""
    said, wanted = _tokens(answer), _tokens(reference)
    if not said or not wanted:
        return float(said == wanted)
    shared = sum((Counter(said) & Counter(wanted)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(said), shared / len(wanted)
    return 2 * precision * recall / (precision + recall)


def share(verdicts: list[bool]) -> float | None:
    """The share of True in `verdicts`, None when there are none: the reference sentences an
    answer states (correctness), the nuggets it holds (nugget recall: one more found never
    lowers it), the cited passages that support their sentence (citation precision)."""
    return sum(verdicts) / len(verdicts) if verdicts else None

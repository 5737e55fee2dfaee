"""JSON from another machine, read with a limit on how deep it nests.

Python's parser recurses once per level: a reply of "[" * 1,000,000 raises RecursionError
(or, with a raised recursion limit, overflows the C stack). `loads` measures the depth first,
outside strings, and refuses anything deeper than MAX_DEPTH as it refuses malformed JSON:
with ValueError, which every caller already turns into a message naming the setting to fix.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

MAX_DEPTH = 100  # levels of nesting: a chat completion has 4, a search service's reply rarely 10
_STRINGS = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)  # brackets inside strings do not nest
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEPS = str.maketrans({"[": "\x01", "{": "\x01", "]": "\xff", "}": "\xff"})  # +1, -1 as int8


def depth(text: str) -> int:
    """How deep the arrays and objects of JSON `text` nest (0: none); brackets inside strings
    do not count. An unbalanced text is measured as far as it goes."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return text.count("[") + text.count("{")  # an upper bound, and small: no need to scan
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    steps = np.frombuffer(brackets.translate(_STEPS).encode("latin-1"), dtype=np.int8)
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0))


def loads(data: str | bytes) -> Any:
    """`json.loads(data)`, refusing (ValueError) JSON nested deeper than MAX_DEPTH."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if depth(text) > MAX_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:  # only reachable under a recursion limit below MAX_DEPTH
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None

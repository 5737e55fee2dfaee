"""Output defects: what a model writes when something went wrong around the answer, counted
and named, never refused (an empty answer, a reasoning block, a chat template's tokens).

`defects(answer)` lists each one found, a short name with what was seen:

  empty answer         no text, and not an abstention the generator declared
  reasoning block      a reasoning model's <think> ... </think> left in the answer
  template token       a chat template's control token in the text: <|im_end|>, [/INST],
                       <end_of_turn>, </s> ... (a model served without its chat template, or
                       one that ran past its end of turn)
  the generator's own  each of Answer.notes: what the generator saw (the openai adapter: an
                       echoed prompt, a reply cut at max_tokens, an empty reply)

An answer with none is well formed (the `well_formed` check: 1, else 0). The other checks
read the text as it is: a defect is reported beside them, it changes none of them.
"""

from __future__ import annotations

import re

from ..api import Answer

REASONING = re.compile(r"</?think(?:ing)?>", re.I)
# Control tokens of the common chat templates (ChatML, Llama 2 and 3, Gemma, Mistral, Phi),
# and the sentence-piece markers a raw completion leaks. Plain words are never matched.
TEMPLATE_TOKEN = re.compile(
    r"<\|[a-z_]{2,30}\|>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>|</?s>|<(?:bos|eos|pad|unk)>",
    re.I,
)
SHOWN = 3  # distinct template tokens named at most


def defects(answer: Answer) -> list[str]:
    """The defects of `answer`'s output (module doc), in a stable order; [] when well formed."""
    found: list[str] = []
    if not answer.text.strip() and not answer.abstained:
        found.append("empty answer")
    if REASONING.search(answer.text):
        found.append("reasoning block (<think>) in the answer")
    tokens = list(dict.fromkeys(match.group() for match in TEMPLATE_TOKEN.finditer(answer.text)))
    if tokens:
        more = f" and {len(tokens) - SHOWN} more" if len(tokens) > SHOWN else ""
        found.append(f"template token{'s' if len(tokens) > 1 else ''} {' '.join(tokens[:SHOWN])}{more}")
    found += [note for note in answer.notes if note not in found]
    return found

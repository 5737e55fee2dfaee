"""The lexical judge's shortcuts never change a verdict.

At scale the judge remembers what it has read (each context's windows, each text's terms and
numbers) and answers an item asked twice from its first verdict. Each verdict must be the one
the plain reading of the rules gives: the judge written out below without any of that, item by item, on every
sentence of the first SAMPLE documents of this project's corpus (the whole demo corpus; a
bounded sample of yours, so that the plain judge stays quick on a large collection) and on
answers made at random from them."""

from __future__ import annotations

import json
import random
from pathlib import Path

from judge_cases import FAITHFUL, HALLUCINATIONS, KINDS

from rag_regress.answers.cache import verdict_key
from rag_regress.answers.facts import find
from rag_regress.answers.judges import Item, Verdict, settle
from rag_regress.answers.judges.claims import clauses, split_sentences
from rag_regress.answers.judges.lexical import FAIL_ON, LexicalJudge, Windows, _read, _readings, coverage

THRESHOLD = 0.5
CORPUS = Path(__file__).parents[1] / "demo" / "evals" / "corpus.jsonl"
SAMPLE = 40  # documents read: the demo's 40, or the first 40 of a team's own corpus


def plain_verdict(claim: str, contexts: tuple[str, ...]) -> Verdict:
    """One item judged on its own: its windows found afresh, every candidate scored, settle(),
    then each clause on its best window."""
    found = Windows(contexts)
    if not found.split:
        return settle(claim, [], THRESHOLD, "", FAIL_ON)
    context = "\n".join(contexts)
    scored = [(coverage(claim, w, context), w) for w in found.candidates(claim)]
    verdict = settle(claim, scored, THRESHOLD, context, FAIL_ON)
    parts = clauses(claim)
    if not verdict.supported or len(parts) == 1 or any(_copied(claim, w) for _, w in scored):
        return verdict
    for part in parts:
        score, window = max(
            ((coverage(part, w, context), w) for w in found.candidates(part)),
            key=lambda pair: (pair[0], -len(pair[1])),
        )
        if score < THRESHOLD:
            why = f"the clause '{part}' is not in the context (best support {score:.2f})"
            return Verdict(False, score, window, why, verdict.findings)
    return verdict


def _copied(claim: str, window: str) -> bool:
    from rag_regress.answers.judges.claims import copied

    return copied(claim, window)


def _documents() -> list[str]:
    lines = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line)["text"] for line in lines[:SAMPLE]]


WORDS = "not never all some only must can more fewer before after within 30 days 12 hours Okta admins".split()


def _changed(sentence: str, rng: random.Random) -> str:
    """The sentence with one thing changed: a word dropped, two swapped, one added or replaced,
    or its second half turned around (most of these are no longer the context's)."""
    words = sentence.split()
    if len(words) < 3:
        return sentence
    i, j, change = rng.randrange(len(words)), rng.randrange(len(words)), rng.randrange(5)
    if change == 0:
        del words[i]
    elif change == 1:
        words[i], words[j] = words[j], words[i]
    elif change == 2:
        words.insert(i, rng.choice(WORDS))
    elif change == 3:
        words[i] = rng.choice(WORDS)
    else:
        half = len(words) // 2
        words = [*words[:half], rng.choice(WORDS), *words[half:][::-1]]
    return " ".join(words)


def _random_answers(seed: int, answers: int) -> list[Item]:
    """Answers as a generator would give them: one to three demo documents as contexts (now
    and then all of them run together, a context of many windows), and claims copied from
    them, changed, or taken from another document; answers and contexts come back again."""
    rng = random.Random(seed)
    documents = _documents()
    items: list[Item] = []
    for _ in range(answers):
        if rng.random() < 0.1:
            contexts = (" ".join(rng.sample(documents, len(documents))),)
        else:
            contexts = tuple(rng.sample(documents, rng.randint(1, 3)))
        sentences = [s for context in contexts for s in split_sentences(context)]
        elsewhere = split_sentences(rng.choice(documents))
        for _ in range(rng.randint(1, 5)):
            pick = rng.random()
            if pick < 0.4:
                claim = rng.choice(sentences)
            elif pick < 0.8:
                claim = _changed(rng.choice(sentences), rng)
            elif pick < 0.9:
                claim = f"{rng.choice(sentences).rstrip('.')}, and {rng.choice(elsewhere)}"
            else:
                claim = rng.choice(elsewhere)
            items.append((claim, contexts))
    items += items[: len(items) // 4]  # the same answers again, as repeated questions give them
    return items


def _assert_same(items: list[Item]) -> None:
    fast = LexicalJudge(THRESHOLD).verdicts(items)
    plain = [plain_verdict(claim, contexts) for claim, contexts in items]
    wrong = [(item, a, b) for item, a, b in zip(items, fast, plain, strict=True) if a != b]
    assert not wrong, f"{len(wrong)} of {len(items)} verdicts differ, e.g. {wrong[0]}"


def test_every_demo_sentence_gets_the_plain_verdict_against_its_own_and_other_documents() -> None:
    documents = _documents()
    items: list[Item] = []
    for i, text in enumerate(documents):
        contexts = (text, documents[(i + 1) % len(documents)])
        items += [(sentence, contexts) for sentence in split_sentences(text)]
        items += [(sentence, (documents[(i + 2) % len(documents)],)) for sentence in split_sentences(text)]
    _assert_same(items)


def test_random_answers_get_the_plain_verdicts() -> None:
    for seed in range(3):
        _assert_same(_random_answers(seed, 60))


def test_the_known_cases_get_the_plain_verdicts() -> None:
    items = [(claim, (context,)) for _, claim, context in HALLUCINATIONS + FAITHFUL]
    items += [(claim, (context,)) for _, wrong, right, context in KINDS for claim in (wrong, right)]
    _assert_same(items + items[::-1])


def test_a_window_read_from_its_sentences_reads_as_the_window_itself() -> None:
    """The judge reads each sentence once and a two-sentence window as its two sentences: the
    same terms and words as reading the window's own text, on the demo corpus and on texts
    whose reading changes words near a sentence's end (times, contractions, quotes, units)."""
    tricky = (
        "It opens at 5 p.m. 3 rooms are free. The desk can't help after 9:30 p.m. 'Late' means after "
        'midnight. Refunds take 14-day periods. "Pro" plans cost $20/month. 500MB is the limit. '
        "Use e.g. the app. No. It is the users' choice. (See the FAQ.) [Note] 2FA is on."
    )
    for text in [*_documents(), tricky]:
        for window, reading in _readings((text,)).items():
            assert reading == _read.__wrapped__(window), window


def test_the_verdict_key_is_the_hash_of_the_four_parts_as_json() -> None:
    """The cache key is built faster but is the same text's hash: old caches stay valid."""
    import hashlib

    from rag_regress.answers.cache import rules_version

    identity = {"name": "lexical", "threshold": 0.5, "model": None, "revision": None}
    for item in [
        ('A claim \u00e9 "quoted".', ("One context.", "Another, with \u2019 and \\ in it.")),
        ("x", ()),
    ]:
        claim, contexts = item
        text = json.dumps(
            [identity, rules_version(), claim, list(contexts)], sort_keys=True, ensure_ascii=False
        )
        assert verdict_key(identity, item) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_finding_a_fact_reads_the_same_when_asked_again() -> None:
    answer = "Open  Profile > Security\nand click Enable."
    for _ in range(2):  # the normalised texts are cached
        assert [f for f in ["profile > security", "Disable"] if find(f, answer, "normalised") is None] == [
            "Disable"
        ]

"""The guard every judge shares: does the window say what the claim says, part for part?

Word overlap and entailment models both miss the hallucinations that keep most of the
context's words: a changed number or unit, a dropped "not", "all" for "some", "must" for
"can", "disable" for "enable", the two sides of a relation swapped, a name the context never
uses. So after a judge has picked the window that best supports a claim, the guard aligns the
claim with it, clause with clause (each clause of the claim with the clause of the window that
shares most of its terms), and compares their structure:

  quantities   each number in the claim is in the window, with the same value in the same
               unit after conversion ("90 minutes" = "an hour and a half") and no opposite
               bound ("within 30 days" vs "after 30 days")
  dates        each month or weekday the claim names is in the window
  names        each name the claim uses (a capitalised word after its first, an acronym, a
               word with digits) is in the window
  polarity     each term the claim states or denies has the same polarity in the aligned
               window clause, counting negations and antonyms ("not enabled" = "disabled";
               "un-", "dis-" and "non-" make antonyms too: "disappear" against "appear"; the
               values of one slot exclude each other: "accepted" against "blocked"). A
               negation denies the word it reaches ("nothing from X is tracked" denies
               "tracked"); the words after that one in its statement count neither way, and
               none past punctuation. A negation that reaches a comparison bounds it instead
               ("can't run more than one timer" is at most one); "not just" denies nothing,
               nor does a denial with an exception, which says "only" ("can't see any
               entries except their own"); "unable to" and "fails to" deny.
               "Choose a plan; if you don't, ..." states both cases, and "only asks for read
               access" denies "write access". A term is compared only where the window
               speaks of what the claim's clause does: not in a sentence sharing far less
               with the clause than the closest
  quantifier   "all", "some", "none" and "only" agree where both clauses say one
  modality     "must", "can", "should" agree where both clauses say one, and where the window
               puts one on the verb the claim's governs ("has to be discarded" against "you can
               discard it"); "can require 2FA" is "can" with the verb "require"; "can never
               ... without" and "can only ... once" are "must"; a condition of the window
               ("works once you allow it") agrees with "you need to allow it"; "must" (or
               "only") of one of the window's examples ("such as A, B or C") is not its
  roles        two parties (names, or role nouns such as "owner") on either side of a word
               that relates them stay on their sides ("owners invite admins" is not "admins
               invite owners"), unless one clause is passive ("admins are invited by owners");
               a comparison may turn around only with its converse ("A is larger than B" =
               "B is smaller than A"); the party before a verb stays the window's ("managers
               submit timesheets" for "members submit"), and so does the person who opens
               the clause ("Members who lose their phone must contact support" where owners
               must), and the party after "from",
               "to" or "into" ("from Team to Business" for "from Business to Team"); where
               both clauses end with one verb, what does it is the window's ("the web version
               wins" for "the most recent change wins")
  numbers      a number stays with the party the window gives it to ("Enterprise is $20"
               where "Business is $20" and Enterprise is priced on request); a comparison
               or superlative the window does not state agrees with the numbers
               it gives each party ("Team allows more than Enterprise" where Team has 100
               and Enterprise 300 is not the window's), or the words beside each number
               ("more days of upcoming events than of past ones" for "the past 30 days and
               the next 7 days"); two numbers are not traded between the words beside them
               ("8 hours per week or 40 per day" for "40 per week or 8 per day"); "$8 more
               than Team" may be the gap between two of its numbers, the right way round; a
               number the window lacks may come from another sentence of the contexts that
               gives it the same thing ("the 30-day read-only period")
  conditions   "unless X" is "if not X": "if" for "unless" with no negation moved is caught;
               "without you having to allow it" where it works "once you allow it" too, and
               "always" (or "by default") where the window's sentence says "if";
               an exception ("unless X", "except when X") the window does not make, where it
               states X plainly; "only when X" where the window's condition says more than X;
               a time condition ("as soon as the timer stops") the window's conditions of the
               same event ("once the timesheet is approved") do not share a word with
  concessions  "at any time" where the window sets a time limit, "unlimited" or "however
               many" where it bounds the number of those things, "several times" (or
               "again") where it says "only once", "immediately" where it gives a later time
               ("within a further 30
               days", "at the start of the next billing period"); "even after X" where the
               window makes no concession ("even", "regardless"); a claim without a condition
               that denies X states the case "unless X" leaves out
  steps        "B before A" (or "after", "then", "after that") where the window says "A,
               then B" (numbers order nothing); "A instead of B" where it says "B instead of A"
  lists        also: an item given the modal of another list of the window's sentence
               ("the client column is required" where "client, task ... are optional");
               "nobody" or "everyone" where the window names who ("members")
  quantities   also: "more than 20" is not the window's plain 20, nor "exactly one Owner"
               its "at least one Owner"; "between 15 and 24" (or
               "5 to 10 days") bounds both numbers ("between 5 and 60 minutes": 5 minutes
               too), and a bound the
               window sets at another value ("no lower than 10 minutes" for "between 5 and 60")
               is not its; what a bracket says belongs to the word before it ("decimal
               hours (1.75)"); a bare number beside a unit shares it ("between 5 and 60
               minutes, 10 by default"), and "a day" of "a day in the last 60 days" is none
  cause        a cause ("when ...", a gerund opening the clause) and its effect do not trade
               places
  timing       "B happens sooner than A" where the window says A happens immediately and B
               at the start of the next period (each side found in the sentence that alone
               holds its words)
  tiers        with [judge] tiers (plans, lowest first), "the Team plan and above" reaches
               Business and Enterprise: a claim may name or list them; a tier it leaves out,
               named in the bound's place ("on the Solo plan"), or "only" some of them, is
               caught
  phrases      words do not trade places between two phrases of one statement ("to existing
               sessions immediately and to new sessions later" for the other way round; the
               items of one list may come in any order: "Outlook or Google Calendar"), and
               a party does not cross the verb that relates it ("the project rate overrides
               a member's rate" for "a member's rate overrides the project rate")
  lists        a party the window does not list is not added to its list ("the web app, the
               extension and the mobile apps"), and "any plan" is not what the window says of
               "the Business and Enterprise plans", or of names it puts in the claim's place
               ("available on Business and Enterprise"); an email address, URL or command
               ("/acme") is a name, whole

A claim copied from the window (after the judges' reading) always passes. The word lists are
in lexicon.toml. Whatever a judge's score, a claim the guard rejects is unsupported.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Sequence

from .claims import clauses, split_sentences
from .lexicon import lexicon, opposites, word_key
from .words import (
    Quantity,
    Token,
    content_terms,
    phrase_end,
    plain,
    quantities,
    quantities_of,
    read,
    stem,
    term_set,
)

DATE_WORDS = frozenset(
    """january february march april june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)  # "may" is far more often a verb
# Breaks between the clauses of a window the claim's clauses are aligned with.
_WINDOW_BREAK = re.compile(r":(?!\d)|[()]")  # a colon, but not the one in "17:00"
_NAME = re.compile(
    r"(?<![^\W_])(?:[A-Z][^\W_]*|[a-z]+[A-Z][^\W_]*|[^\W\d_]+\d[^\W_]*|\d+[^\W\d_][^\W_]*)(?![^\W_])"
)  # "Okta", "SCIM", "iOS", "macOS", "2FA", "53BP1"
# Words between a negation and what it negates: "not be", "no longer", "can not be".
_SKIPPED_AFTER_NEGATION = frozenset("longer able yet ever even currently always".split())
ABSENT = "which the context does not"  # in the reasons that say something is missing, not contradicted
OPPOSITE = "says the opposite of the context"  # the polarity check's reasons
# The reasons that a word of one clause is said otherwise: "says 'can' where the context says
# 'must'" (a modal, quantifier, condition or comparison) or the polarity check's.
_SAID_OTHERWISE = re.compile(r"says '[^']*' where the context says '[^']*'|" + OPPOSITE)


def said_otherwise(reason: str) -> bool:
    """Whether `reason` is a word of one clause said otherwise, not a relation between clauses
    (terms swapped, steps in the other order) nor something missing."""
    return bool(_SAID_OTHERWISE.match(reason))


_PASSIVE_AGENT = "by"
# Emails, URLs and commands ("/acme"): names, whole.
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://\S+|\bwww\.\S+|(?<!\S)/[a-z][\w-]*")
_CAPITALISED = re.compile(r"(?<![^\W_])[A-Z][^\W_]*")
_COPULAS = frozenset("is are was were be been being equals means".split())


@functools.lru_cache(maxsize=1 << 14)
def names(text: str) -> frozenset[str]:
    """Keys of the names in `text`: capitalised words other than a sentence's first, acronyms,
    words with a capital inside ("iOS") and words with digits ("Okta", "SCIM", "2FA", "53BP1")."""
    text = plain(text)
    found = set()
    starts = {0} | {m.end() for m in re.finditer(r"[.!?:]\s+|\n", text)}
    for match in _NAME.finditer(text):
        word = match.group()
        opening = match.start() in starts or match.start() == len(text) - len(text.lstrip())
        if opening and not (word.isupper() and len(word) > 1) and not any(c.isdigit() for c in word):
            continue  # a sentence's first word is capitalised anyway
        found.add(stem(word.lower()))
    return frozenset(found)


@functools.lru_cache(maxsize=64)
def _given_names(names: tuple[str, ...]) -> frozenset[str]:
    """The keys of [judge] names, read as a claim's names are ("Acme" -> "acme")."""
    return frozenset(stem(word.lower()) for name in names for word in _NAME.findall(plain(name)))


def _show(quantity: Quantity) -> str:
    return quantity.text


def _same_value(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


_STRICT = frozenset("over above under below exceeding beyond".split())


def _strict(text: str, quantity: Quantity) -> str:
    """The words that put `quantity` (of `text`) strictly above or below its value ("more than
    20", "over 20", "fewer than 20"), or ""; a window that gives the value itself says otherwise."""
    tokens = read(text)
    before = tokens[max(0, quantity.start - 2) : quantity.start]
    compared = len(before) == 2 and before[1].word == "than" and before[0].key in lexicon().comparative
    if compared and before[0].joined and before[1].joined and tokens[quantity.start].joined:
        return f"{before[0].word} than"
    if before and before[-1].word in _STRICT and tokens[quantity.start].joined:
        return before[-1].word
    return ""


_PEOPLE = frozenset({"people", "person", "peopl"})


def _same_count(mine: str, theirs: str) -> bool:
    """Whether two count nouns count the same things: the same noun, or "people" (any person)
    for a role such as "recipients" or "members"."""
    roles = lexicon().roles
    return mine == theirs or (mine in _PEOPLE and any(stem(role) == theirs for role in roles))


def _implied(
    quantity: Quantity, mine: tuple[Quantity, ...], claim: tuple[Token, ...], have: tuple[Quantity, ...]
) -> bool:
    """Whether a quantity the window does not state is one it implies: "a day" of "a day in
    the last 60 days" is no duration (the claim gives one of the same kind); "10 minutes"
    where the window says "between 5 and 60 minutes, 10 by default" (a bare 10 beside a
    number of minutes)."""
    words = quantity.text.split()
    if words[0] in ("a", "an") and any(q is not quantity and q.dimension == quantity.dimension for q in mine):
        return True
    written = claim[quantity.start].number
    if written is None or not any(q.dimension == quantity.dimension for q in have):
        return False
    return any(not q.dimension and _same_value(q.value, written) for q in have)


def _difference(
    quantity: Quantity, claim: tuple[Token, ...], have: tuple[Quantity, ...], window: tuple[Token, ...]
) -> bool:
    """Whether the claim gives the gap between two of the window's quantities, the right way
    round: "Business costs $8 more than Team" where the window says "Team is $12 ..., Business
    is $20". After the quantity come a comparative and "than"; the first word after "than"
    names the smaller of the two for "more" ("less": the larger), as a word within three
    before it in the window."""
    lex = lexicon()
    after = claim[quantity.end : quantity.end + 4]
    compared = next((lex.comparative[t.key] for t in after if t.key in lex.comparative), None)
    than = next((i for i in range(quantity.end, len(claim)) if claim[i].word == "than"), None)
    if compared is None or than is None:
        return False
    other = next((t.key for t in claim[than + 1 :] if not t.stop), None)
    for high, low in itertools.permutations(have, 2):
        if high.dimension != quantity.dimension or not _same_value(high.value - low.value, quantity.value):
            continue
        named = low if compared == "more" else high  # the one after "than"
        if other in {t.key for t in window[max(0, named.start - 3) : named.start] if not t.stop}:
            return True
    return False


def _denied_next(quantity: Quantity, claim: tuple[Token, ...], window: tuple[Token, ...]) -> bool:
    """Whether a denied count ("can't have two timers", "never two at once") is the one after
    what the window allows alone: it says "only one" (N - 1, made "only"). Not a bound ("can't
    run more than two" is at most two)."""
    if quantity.bound:
        return False
    first = quantity.start
    while first > 0 and claim[first].joined:
        first -= 1
    if not any(t.negation for t in claim[first : quantity.start]):
        return False
    only = lexicon().quantifier
    return any(
        a.key in only and only[a.key] == "only" and b.number == quantity.value - 1
        for a, b in itertools.pairwise(window)
    )


def implied_terms(text: str, context: str) -> set[str]:
    """The quantity terms of `text` that `context` implies without stating them (`_implied`)."""
    mine = quantities_of(text)
    said = quantities_of(context)
    return {q.term for q in mine if _implied(q, mine, read(text), said)}


def _unit_named(quantity: Quantity, window: str) -> bool:
    """Whether an implied one ("a week", "an hour") meets a window that names the unit with no
    number ("for that week"): one of it is what the window speaks of."""
    words = quantity.text.split()
    if len(words) != 2 or words[0] not in ("a", "an"):
        return False
    return stem(words[1]) in {t.stem for t in read(window) if t.number is None}


def _near(tokens: tuple[Token, ...], quantity: Quantity) -> set[str]:
    """The content words within three words of a quantity, in its stretch of text and its item
    of a list: what it is the quantity of ("the 30-day read-only period", "read-only for 30
    days", "8 hours per day")."""
    lo, hi = quantity.start, quantity.end
    while lo > max(0, quantity.start - 3) and tokens[lo].joined and tokens[lo - 1].word not in _COORDINATORS:
        lo -= 1  # not past punctuation, nor past "and" or "or": another item's words
    end = min(phrase_end(tokens, quantity.end - 1), quantity.end + 3)
    hi = next((j for j in range(quantity.end, end) if tokens[j].word in _COORDINATORS), end)
    return {  # "per week" says what it is per: the unit, not "per"
        t.key
        for j, t in enumerate(tokens[lo:hi], start=lo)
        if not (quantity.start <= j < quantity.end or t.stop or t.negation or t.number is not None)
        and t.word != "per"
    }


def _stated_elsewhere(quantity: Quantity, claim: tuple[Token, ...], context: str) -> bool:
    """Whether the answer's contexts, beyond the window, state the claim's quantity of the same
    thing: "during the 30-day read-only period" where the window says "during the read-only
    period" and another sentence "it is read-only for 30 days". A word beside the quantity
    must be beside it there too, so a number from elsewhere is not given to another thing."""
    tokens = read(context)
    near = _near(claim, quantity)
    return any(
        q.dimension == quantity.dimension and _same_value(q.value, quantity.value) and near & _near(tokens, q)
        for q in _quantities_of_tokens(tokens)
    )


def _quantity_problem(claim: str, window: str, context: str = "") -> str | None:
    have = quantities_of(window)
    mine = quantities_of(claim)
    claim_tokens, window_tokens = read(claim), read(window)
    for quantity in mine:
        if quantity.measured:
            same = [
                q for q in have if q.dimension == quantity.dimension and _same_value(q.value, quantity.value)
            ]
            implied = not same and _implied(quantity, mine, claim_tokens, have)
            if (same or implied) and quantity.bound in ("at_least", "at_most"):
                rival = [  # the window's value, bounded the claim's way, is another one
                    q for q in have if q.dimension == quantity.dimension and q.bound == quantity.bound
                ]
                if rival and not any(q.bound == quantity.bound for q in same):
                    # "can't be set lower than 10 minutes" of "between 5 and 60 minutes, 10 by default"
                    return f"bounds {_show(quantity)} where the context's bound is {rival[0].text}"
            if implied:
                continue
            if not same and _difference(quantity, claim_tokens, have, window_tokens):
                continue
            if not same:
                said = [q.text for q in have if q.dimension == quantity.dimension]
                if said:
                    return f"states {_show(quantity)}, the context says {' or '.join(sorted(set(said)))}"
                if _unit_named(quantity, window):
                    continue  # "the hours for a week" where the window says "for that week"
                if context and _stated_elsewhere(quantity, claim_tokens, context):
                    continue
                return f"states {_show(quantity)}, which the context does not"
        else:
            same = [q for q in have if not q.measured and _same_value(q.value, quantity.value)]
            if not same and not quantity.dimension:  # a bare "5" of "5 to 60 minutes": the window's
                same = [q for q in have if window_tokens[q.start].number == quantity.value]
            if quantity.dimension:
                counted = [q for q in same if _same_count(quantity.dimension, q.dimension)]
                if same and not counted and all(q.dimension for q in same):
                    other = " or ".join(sorted({q.text for q in same}))
                    return f"states {_show(quantity)}, the context says {other}"
            if not same and _denied_next(quantity, claim_tokens, window_tokens):
                continue  # "you can't have two timers running" where "only one timer can run"
            if not same:
                return f"states {_show(quantity)}, which the context does not"
        if same and all(not q.bound and not _strict(window, q) for q in same) and _strict(claim, quantity):
            return f"says '{_strict(claim, quantity)} {_show(quantity)}', the context says {same[0].text}"
        bounds = {q.bound for q in same}
        if quantity.bound in {"at_most", "at_least"} and bounds and quantity.bound not in bounds:
            other = "at_least" if quantity.bound == "at_most" else "at_most"
            if other in bounds:
                return f"bounds {_show(quantity)} the other way from the context"
        if quantity.bound == "exactly" and bounds and bounds <= {"at_most", "at_least"}:
            return f"says exactly {_show(quantity)}, where the context only bounds it"  # "at least 3"
    return _exactly_one_problem(claim_tokens, window_tokens)


def _exactly_one_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Exactly one Owner" where the window bounds that count ("at least one Owner", "at most
    one"): "one" is read as a number only before a unit, so the bound is compared here."""
    bound = lexicon().bound
    for i in range(1, len(claim) - 1):
        if bound.get(claim[i - 1].key) != "exactly" or claim[i].word != "one":
            continue
        noun = claim[i + 1]
        for j in range(1, len(window) - 1):
            if window[j].word != "one" or window[j + 1].stem != noun.stem:
                continue
            if bound.get(window[j - 1].key) in _STRICT_BOUNDS:
                return f"says exactly one {noun.word}, where the context says {window[j - 1].word} one"
    return None


_STRICT_BOUNDS = frozenset({"at_least", "at_most"})


# Negations that open a noun phrase and deny its verb: "Nothing from your calendar is tracked"
# denies "tracked", not "calendar"; "Neither your data nor your login is deleted" denies "deleted".
_PRONOUN_NEGATIONS = frozenset("nothing nobody none neither nor".split())
_SCOPE_ENDS = frozenset(
    "and but or so which that who whose while whereas because unless until if when once".split()
)
_VERB_OPENERS = (
    _COPULAS
    | frozenset("can could will would may might must should do does did has have had need needs".split())
    | {"has to", "have to", "needs to", "need to"}
)


def _terms(tokens: tuple[Token, ...]) -> list[tuple[str, int]]:
    """(key, polarity) of each content word: polarity -1 when a negation before it (within
    four words, skipping function words) denies it; 0 for the words after a denied one up to
    the end of its statement (punctuation, "and", "which", "unless"...): "does not require a
    credit card" denies one word, and does not affirm the rest; else +1. A negation that opens
    a noun phrase ("nothing", "neither", "nobody"; "no" opening a statement: "No time is
    tracked", "no credit card is needed") denies the first word after the phrase's verb, not
    the phrase; a "no" phrase's own words count neither way. ("no more than" and "no
    longer than" are bounds, read as one word: they deny nothing.) "Without" makes the words
    it reaches count neither way: "without a valid VAT number" says what "unless you provide
    one" and "if you lose signal" say, in words no list could pair. So does a "not" that
    narrows the noun before it ("addresses not on the allowlist", "entries not in the range"):
    it says which ones, and the statement about them goes on ("... are blocked")."""
    found: list[tuple[str, int]] = []
    pending = 0
    denied = -1  # the polarity a pending negation gives: 0 after "without"
    scope = False  # after a denied word, up to the end of its statement
    held = False  # a pronoun negation waiting for its verb
    narrowing = False  # a "not" after a noun, before a preposition: "addresses not on it"
    noun_held = False  # "no" opening a noun phrase before its verb: "No time is tracked"
    for i, token in enumerate(tokens):
        if _prevented(tokens, i):  # "stops them from being charged" denies "charged"
            pending, denied = 4, -1
            continue
        if token.stem == "avoid" and i + 1 < len(tokens) and tokens[i + 1].word.endswith("ing"):
            pending, denied = 4, -1  # "to avoid locking yourself out" denies "locking"
            continue
        if token.stem in ("fail", "fails", "failed") and i + 1 < len(tokens) and tokens[i + 1].word == "to":
            pending, denied = 4, -1  # "fails to answer" is "doesn't answer"
            continue
        if token.negation and _denies_a_bound(tokens, i):
            continue  # "can't have more than one timer" says "at most one", and denies no word
        if token.word == "not" and i + 1 < len(tokens) and tokens[i + 1].word in ("just", "only", "merely"):
            continue  # "admins, not just owners, can view it" adds admins and denies nobody
        if token.negation:
            rest = tokens[i + 1 :]
            held = token.word in _PRONOUN_NEGATIONS and any(t.word in _VERB_OPENERS for t in rest)
            # "No time is tracked ..." opening a statement denies "tracked", as "nothing is tracked"
            # does, and says nothing either way of "time"
            opening = token.word == "no" and (i == 0 or not token.joined)
            noun_held = opening and any(
                t.word in _COPULAS for t in itertools.takewhile(lambda t: t.joined, rest[:5])
            )
            held = held or noun_held
            narrowing = bool(rest) and rest[0].word in _NARROWING and _after_noun(tokens, i)
            pending = 0 if held else 4
            denied = 0 if token.word == "without" or narrowing or _excepting(rest) else -1
            continue
        if held:
            if token.word in _VERB_OPENERS:
                held, pending = False, 4
            elif not token.stop:
                found.append((token.key, 0 if noun_held else 1))
            continue
        if not token.joined or token.word in _SCOPE_ENDS:
            scope = False  # a negation's scope ends at punctuation or where a new statement starts
        if not token.joined and not held:
            pending = 0  # "if you don't, the workspace ..." denies nothing after the comma
        if token.stop or token.word in _SKIPPED_AFTER_NEGATION:
            pending = 0 if narrowing and token.word in _OBJECTS else max(0, pending - 1)  # "not on it"
            continue
        if pending:
            found.append((token.key, denied))
            scope = not narrowing  # "addresses not on the allowlist are blocked" says "blocked"
            narrowing = False
        else:
            found.append((token.key, 0 if scope else 1))
        pending = 0
    return found


_NARROWING = frozenset("on in from within among part included".split())
_EXCEPTING = frozenset({("except",), ("besides",), ("other", "than"), ("apart", "from"), ("aside", "from")})


def _excepting(rest: tuple[Token, ...]) -> bool:
    """Whether the statement a negation opens makes an exception ("can't see any entries except
    their own", "no entries other than their own"): then it says "only", and denies nothing."""
    words = [t.word for t in itertools.takewhile(lambda t: t.joined and t.word not in _SCOPE_ENDS, rest)]
    return any(tuple(words[i : i + len(e)]) == e for i in range(len(words)) for e in _EXCEPTING)


_OBJECTS = frozenset("it them this that these those".split())


def _after_noun(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the negation at tokens[i] follows the noun it narrows: "addresses not on it",
    "addresses that aren't on it", "entries which are not in the range"."""
    j = i - 1
    if j >= 0 and tokens[i].word != "not" and tokens[j].word in _RELATIVES:
        return True  # "that aren't", "which isn't"
    if j >= 1 and tokens[j].word in _COPULAS and tokens[j - 1].word in _RELATIVES:
        return True  # "that are not"
    return tokens[i].word == "not" and j >= 0 and not tokens[j].stop


def _denies_a_bound(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the negation at tokens[i] denies a comparison it reaches ("can't run more than
    one timer", "none of the codes can be used more than once"): a comparative and "than"
    within the next eight words, no punctuation between."""
    comparative = lexicon().comparative
    ahead = list(itertools.takewhile(lambda t: t.joined, tokens[i + 1 : i + 10]))
    return any(t.key in comparative and u.word == "than" for t, u in itertools.pairwise(ahead))


_PREVENTING = frozenset("stop prevent block keep bar forbid avoid".split())


def _prevented(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether tokens[i] is the "from" of "stops X from being Y" ("prevents them from
    syncing"): a verb of preventing within three words before it, itself not denied, and a
    verb in -ing after it."""
    if tokens[i].word != "from" or i + 1 >= len(tokens):
        return False
    after = tokens[i + 1].word.split()[0]  # "from signing in" is read as one word, "signing in"
    gerund = after == "being" or (after.endswith("ing") and len(after) > 5)
    verb = next((j for j in range(i - 1, max(-1, i - 4), -1) if tokens[j].stem in _PREVENTING), None)
    if not gerund or verb is None:
        return False
    return not any(t.negation for t in tokens[max(0, verb - 3) : verb])  # "does not stop X from": X goes on


def _polarity(key: str, other: dict[str, set[int]]) -> set[int] | None:
    """The polarities `other` gives the key (or an opposite of it, with the sign turned), or
    None when it mentions neither."""
    if key in other:
        return other[key]
    turned = {-sign for opposite in opposites(key) for sign in other.get(opposite, ())}
    return turned or None


_IF_OPENERS = frozenset("provided providing assuming supposing".split())  # "provided" alone reads "give"


def _condition(tokens: tuple[Token, ...]) -> str:
    """The clause's first "if" or "unless" (lexicon.toml [conditions], phrases such as "as long
    as" included, and "provided" opening the clause), or "". "even if" is neither."""
    table = lexicon().condition
    keys = [t.key for t in tokens]
    if tokens and tokens[0].word in _IF_OPENERS:
        return "if"  # "Provided the weeks are not locked, ..."
    for i, token in enumerate(tokens[1:-1], start=1):  # "..., provided those weeks are not locked"
        if token.word in _IF_OPENERS and not tokens[i].joined and tokens[i + 1].stop:
            return "if"
    for i in range(len(keys)):
        for size in (3, 2, 1):
            found = table.get("_".join(keys[i : i + size]))
            if found:
                return found if found in ("if", "unless") else ""
    return ""


@functools.lru_cache(maxsize=1 << 14)
def _said(piece: str) -> tuple[dict[str, set[int]], str]:
    """The polarities a window clause gives its terms, and its condition (remembered: a window
    is compared with every claim of its answer). Read only, never changed."""
    said: dict[str, set[int]] = {}
    for key, sign in _terms(read(piece)):
        said.setdefault(key, set()).add(sign)
    return said, _condition(read(piece))


@functools.lru_cache(maxsize=1 << 14)
def _said_plainly(piece: str) -> tuple[dict[str, set[int]], str]:
    """`_said`, with "unless X" read as "if not X" and its condition dropped: for a claim that
    states the case without a condition ("a business that has not given a VAT number pays
    the local rate" against "... charges the local rate unless you provide a VAT number")."""
    tokens = read(piece)
    table = lexicon().condition
    at = next((i for i, t in enumerate(tokens) if table.get(t.key) == "unless"), None)
    if at is None:
        return _said(piece)
    said: dict[str, set[int]] = {}
    for part, turn in ((tokens[:at], 1), (tokens[at + 1 :], -1)):
        for key, sign in _terms(part):
            said.setdefault(key, set()).add(sign * turn)
    return said, ""


OVERLAP_MARGIN = 0.5  # a clause sharing at least half as much with the claim as the closest one

# "if you don't", "if not", "otherwise": a condition that denies the clause before it, elided.
_ELIDED = re.compile(
    r"^(?:if (?:you|they|we|it|he|she) (?:don't|do not|doesn't|does not|didn't)|if not|otherwise)\b\W*,", re.I
)


def _said_or_not(located: tuple[tuple[str, str], ...], n: int) -> tuple[dict[str, set[int]], str]:
    """`_said` of the n-th window clause; where the next clause of its sentence opens with the
    elided denial of it ("choose a plan; if you don't, the workspace becomes read-only"), the
    window speaks of both cases, so each of its terms is said both ways."""
    piece, sentence = located[n]
    said, condition = _said(piece)
    if n + 1 < len(located) and located[n + 1][1] == sentence and _ELIDED.match(located[n + 1][0].strip()):
        return {key: signs | {-sign for sign in signs} for key, signs in said.items()}, condition
    return said, condition


def _polarity_problem(clause: str, window: str) -> str | None:
    """Each term of the claim's clause against the window clause about it: of the window's
    clauses that mention the term (or an opposite of it), the one sharing most terms with
    the claim's clause. Its polarity there must be the claim's.

    Two exceptions. A term the claim's clause says together with its opposite ("stays locked
    until an admin unlocks it") has no one polarity there. And where one clause says "if" and
    the other "unless", "unless X" is "if not X": the negation has moved into the condition, so
    the clauses agree when some shared term's polarity differs, and the claim turns the
    condition around when none does ("if you give a VAT number" for "unless you give" it)."""
    condition = _condition(read(clause))
    located = _clauses_in_sentences(window)
    pieces = [piece for piece, _ in located]
    normal = [(_overlap(clause, piece), *_said_or_not(located, n), piece) for n, piece in enumerate(pieces)]
    # How much each window sentence shares with the claim's clause: a term whose clauses all sit in
    # sentences sharing far less than the closest one is about something else there ("Owners can be
    # exempted from the allowlist" for "requests from addresses not on the allowlist are blocked").
    shared = {piece: _overlap(clause, sentence)[0] for piece, sentence in located}
    closest = max(shared.values(), default=0)
    nearest = max((entry[0][0] for entry in normal), default=0)  # the closest clause's shared terms
    # A term the claim denies, with no condition of its own, may be the window's "unless" case:
    # "a business that has not given a VAT number" is the one "unless you provide" it leaves out.
    # Built on first use: most claims deny nothing.
    plainly: list[tuple[tuple[int, int, bool], dict[str, set[int]], str, str]] = []
    mine = _terms(read(clause))
    keys = {key for key, _ in mine}
    moved: dict[str, list[bool]] = {}  # window clause -> whether each shared term kept its polarity
    for key, sign in mine:
        if not keys.isdisjoint(opposites(key)):
            continue
        if sign < 0 and not condition and not plainly:
            plainly = [(entry[0], *_said_plainly(entry[3]), entry[3]) for entry in normal]
        theirs = plainly if sign < 0 and not condition else normal
        about = [entry for entry in theirs if _polarity(key, entry[1]) is not None]
        if not about:
            continue
        if all(shared[entry[3]] < OVERLAP_MARGIN * closest for entry in about):
            continue
        if max(entry[0][0] for entry in about) == 0 and nearest >= 2:
            continue  # another clause of its sentence is the claim's ("are removed from the pickers")
        (best, *_), said, other, piece = max(about, key=lambda entry: entry[0])
        polarity = _polarity(key, said)
        if condition and other and condition != other:
            moved.setdefault(piece, []).append(polarity is not None and sign in polarity)
            continue
        agreed = any(  # another clause, as close to the claim's, that says it the claim's way
            entry[0][0] >= OVERLAP_MARGIN * best and sign in (_polarity(key, entry[1]) or ())
            for entry in about
        )
        if polarity is not None and sign and sign not in polarity and 0 not in polarity and not agreed:
            if sign < 0 and _only_elsewhere(piece, keys):
                continue  # "doesn't ask for write access" where it "only asks for read access"
            return f"{OPPOSITE} about '{key}'" + (" (negated)" if sign < 0 else "")
    tokens = read(clause)
    at = next((i for i, t in enumerate(tokens) if lexicon().condition.get(t.key) == "if"), len(tokens))
    # "only ... if" (or "only if"), not "if ... only"
    only = any(
        lexicon().quantifier.get(t.key) == "only" or t.word.startswith("only ") for t in tokens[: at + 1]
    )
    for piece, kept in moved.items():
        # "past entries only if you tick X" is "new entries only, unless you tick X": "Y only if
        # X" is "not Y unless X", so it agrees where the window's clause says "only" too
        sentence = dict(located).get(piece, piece)
        theirs_only = any(lexicon().quantifier.get(t.key) == "only" for t in read(sentence))
        if len(kept) >= 2 and all(kept) and not (only and theirs_only):
            other = "unless" if condition == "if" else "if"
            return f"says '{condition}' where the context says '{other}' ('{piece.strip()}')"
    return None


_WITHOUT = frozenset("without except excluding unless".split())


def _only_elsewhere(piece: str, keys: set[str]) -> bool:
    """Whether a window clause that states a term the claim denies says "only" of it, and the
    claim's clause names the opposite of what it is said of there: "Acme doesn't ask for
    write access" where it "only asks for read access". "Only X" denies the other cases."""
    if not any(lexicon().quantifier.get(t.key) == "only" for t in read(piece)):
        return False
    theirs = term_set(piece)
    return any(opposite in theirs for key in keys - theirs for opposite in opposites(key))


def _exception_problem(clause: str, window: str) -> str | None:
    """An exception the window does not make: "Unless they are on Business, owners can set the
    limit" (or "..., except when they come from the mobile apps") where the window's clause
    about it states the excepted part plainly, as what the rule is about ("Owners on Business
    can set the limit"). The terms after "unless" or "except" (up to the next punctuation mark)
    are found in the sentence of the aligned window clause, with no exception, condition or
    negation there."""
    tokens = read(clause)
    table = lexicon().condition
    start = next((i for i, t in enumerate(tokens) if table.get(t.key) == "unless"), None)
    if start is None:
        return None
    end = phrase_end(tokens, start)
    excepted = {t.key for t in tokens[start + 1 : end] if not (t.stop or t.negation)}
    if not excepted:
        return None
    aligned = _aligned(clause, window)  # its sentence: "After X, ..., and then Y" states X
    piece = next((x for x in split_sentences(window) if aligned in x), aligned)
    theirs = read(piece)
    if any(t.negation or t.key in table or t.word in _WITHOUT for t in theirs):
        return None
    said = {key for key, sign in _terms(theirs) if sign > 0}
    if len(excepted & said) * 2 > len(excepted):
        return f"makes an exception of what the context states plainly ('{piece.strip()}')"
    return None


def _comparison_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], whole: tuple[Token, ...]
) -> str | None:
    """A comparison turned around ("more" for "less") is the context's only when what is
    compared is turned around too: a term before the comparison in the claim comes after it
    in the window, and one after it comes before."""
    converse = lexicon().converse
    keys = [t.key for t in window]
    everywhere = {t.key for t in whole}
    for i, token in enumerate(claim):
        turned = [k for k in converse.get(token.key, ()) if k in keys and token.key not in everywhere]
        if not turned:
            continue
        pivot = keys.index(turned[0])
        compared = {t.key for t in claim[i + 1 : i + 4] if not t.stop} & {
            t.key for t in window[pivot + 1 : pivot + 4]
        }
        if not compared:
            continue  # another comparison: "valid an hour before it expires", "expires after 60 minutes"
        before = {t.key for t in claim[:i] if not t.stop} & set(keys)
        after = {t.key for t in claim[i + 1 :] if not t.stop} & set(keys)
        swapped = any(k in keys[pivot + 1 :] for k in before) and any(k in keys[:pivot] for k in after)
        if not swapped:
            return f"says '{token.word}' where the context says '{window[pivot].word}'"
    return None


# Comparisons of when something happens, by their keys: the first set says sooner, the second later.
_SOONER = frozenset({word_key("earlier"), word_key("sooner"), word_key("faster")})
_LATER = frozenset({word_key("later"), word_key("slower")})
# A statement that something happens later than now ("at the start of the next billing period").
_DEFERRED = frozenset({word_key("next"), word_key("later"), word_key("afterwards"), word_key("end")})


def _timing_problem(claim: tuple[Token, ...], window: str) -> str | None:
    """A comparison of time turned around: "downgrades take effect sooner than upgrades" where
    the window says upgrades take effect immediately and downgrades at the start of the next
    period. Each side of a comparison of time ("earlier", "sooner", "faster", "later",
    "slower" ... "than") is placed in the one sentence of the window that holds its words
    found in no other sentence, and what happens "immediately" there is sooner than what is
    deferred ("next", "later", "at the end"). Left alone when a side has no such sentence, or
    its sentence says neither or both."""
    immediate = word_key("immediately")
    sentences: list[set[str]] = []  # the window's, read only for a claim that compares times

    def happens_now(side: set[str]) -> bool | None:  # None: the window does not say
        own = {n for key in side for n, keys in enumerate(sentences) if key in keys and _once(key, sentences)}
        if len(own) != 1:
            return None
        keys = sentences[own.pop()]
        now, deferred = immediate in keys, bool(keys & _DEFERRED)
        return now if now != deferred else None

    for i, token in enumerate(claim):
        sooner = token.key in _SOONER
        if not (sooner or token.key in _LATER):
            continue
        than = next((j for j in range(i + 1, min(i + 4, len(claim))) if claim[j].word == "than"), None)
        if than is None:
            continue
        sentences = sentences or [{t.key for t in read(x)} for x in split_sentences(window)]
        first = {t.key for t in claim[:i] if not t.stop}
        second = {t.key for t in claim[than + 1 :] if not t.stop}
        now = happens_now(first - second), happens_now(second - first)
        if None not in now and now[0] != now[1] and now[0] != sooner:
            return f"says '{token.word}', where the context says which happens first the other way round"
    return None


def _once(key: str, sentences: list[set[str]]) -> bool:
    return sum(key in keys for keys in sentences) == 1


# A calendar month in seconds, only to order "1 year" against "90 days" (never to equate them).
_MONTH = 30.436875 * 86400


def _magnitude(quantity: Quantity) -> tuple[str, float]:
    """A quantity's kind and size for ordering: time and calendar spans are one kind, and so
    are all counts and bare numbers ("100 requests per minute, 300 per minute")."""
    if quantity.dimension == "calendar":
        return "time", quantity.value * _MONTH
    return (quantity.dimension if quantity.measured else ""), quantity.value


@functools.lru_cache(maxsize=1 << 12)
def _quantities_of_tokens(tokens: tuple[Token, ...]) -> tuple[Quantity, ...]:
    return tuple(quantities(tokens))


def _values(
    tokens: tuple[Token, ...], parties: frozenset[str] | set[str]
) -> dict[str, set[tuple[str, float]]]:
    """The quantities the window gives each party: those in the same stretch of text between
    punctuation marks ("Team is $12 per seat, Business is $20" gives Team $12)."""
    found_quantities = _quantities_of_tokens(tokens)
    found: dict[str, set[tuple[str, float]]] = {}
    start = 0
    for end in [*(i for i, t in enumerate(tokens) if not t.joined and i > 0), len(tokens)]:
        inside = [_magnitude(q) for q in found_quantities if start <= q.start < end]
        for t in tokens[start:end]:
            if inside and (t.stem in parties or t.key in parties):
                found.setdefault(t.stem, set()).update(inside)
        start = end
    return found


def _beside(tokens: tuple[Token, ...]) -> dict[str, set[tuple[str, float]]]:
    """The quantities each word beside one gives it (`_near`): "the past 30 days and the next
    7 days" gives "past" 30 days and "next" 7 days."""
    found: dict[str, set[tuple[str, float]]] = {}
    for quantity in _quantities_of_tokens(tokens):
        for key in _near(tokens, quantity):
            found.setdefault(key, set()).add(_magnitude(quantity))
    return found


def _order_problem(
    claim: tuple[Token, ...],
    window: str,
    parties: frozenset[str] | set[str],
    known: frozenset[str] = frozenset(),
) -> str | None:
    """A comparison the window does not state but whose numbers it gives: "Team keys allow
    more requests than Enterprise keys" where a sentence of it gives Team 100 and Enterprise
    300. Some party before the comparison must be larger (or smaller) than every party after
    "than"; with a superlative ("Solo has the lowest limit"), than every other party the
    sentence gives a number of that kind (the names of the context, `known`, are parties)."""
    lex = lexicon()
    if any(t.key in lex.comparative or t.key in lex.superlative for t in read(window)):
        return None  # the window makes comparisons of its own: _comparison_problem compares them
    for i, token in enumerate(claim):
        direction = lex.comparative.get(token.key) or lex.superlative.get(token.key)
        if not direction:
            continue
        for sentence in split_sentences(window):
            problem = _order_in(claim, i, direction, read(sentence), parties, known)
            if problem:
                return problem
    return None


def _order_in(
    claim: tuple[Token, ...],
    i: int,
    direction: str,
    sentence: tuple[Token, ...],
    parties: frozenset[str] | set[str],
    known: frozenset[str],
) -> str | None:
    """`_order_problem` for the comparison at claim[i] against one sentence of the window."""
    lex = lexicon()
    token = claim[i]
    comparative = token.key in lex.comparative
    values = _values(sentence, parties if comparative else set(parties) | known)

    def found(tokens: tuple[Token, ...]) -> set[str]:
        return {t.stem if t.stem in values else t.key for t in tokens if t.stem in values or t.key in values}

    if comparative:
        than = next((j for j in range(i + 1, len(claim)) if claim[j].word == "than"), None)
        if than is None or any(q.start == than + 1 for q in _quantities_of_tokens(claim)):
            return None  # no "than", or a bound ("more than 60 days"): the quantity check reads it
        before, after = found(claim[:than]), found(claim[than + 1 :])  # "longer on Business than on ..."
        if not (before - after and after - before):  # no parties: the words beside each number
            values = _beside(sentence)  # "the past 30 days and the next 7 days"
            before, after = found(claim[:than]), found(claim[than + 1 :])
    else:
        before = found(claim[:i])
        after = set(values) - before
    after -= before
    if not before or not after:
        return None
    larger = direction in ("more", "most")
    for kind in sorted({kind for party in before for kind, _ in values[party]}):
        if not all(any(k == kind for k, _ in values[party]) for party in after):
            continue  # a party after it has no number of this kind: the numbers cannot settle it
        mine = [v for party in before for k, v in values[party] if k == kind]
        others = [v for party in after for k, v in values[party] if k == kind]
        fits = any(
            all(
                (v > o if comparative else v >= o) if larger else (v < o if comparative else v <= o)
                for o in others
            )
            for v in mine
        )
        if not fits:
            return f"says '{token.word}', which the context's numbers do not bear out"
    return None


_NOT_GERUNDS = frozenset(
    "during nothing something anything everything according including regarding pending following "
    "morning evening string thing things spring bring ring king".split()
)


def _cause_and_effect(tokens: tuple[Token, ...]) -> tuple[set[str], set[str]] | None:
    """The terms of a clause's cause and of its effect, when it says which is which: a cause
    opened by "when", "if", "once" or "after" (up to the next punctuation mark, or to the end),
    or a gerund that opens the clause ("Removing a member frees their seat": the cause runs up to
    the first lower-case word in -s after a content word). None when it says neither."""
    openers = lexicon().openers["cause"]
    words = [(i, t) for i, t in enumerate(tokens) if not t.stop or t.word in openers]
    if not words:
        return None
    opened = [i for i, t in enumerate(tokens) if t.word in openers]
    inside: range | set[int]
    if opened:  # every condition is a cause: "If you turn it on, ... after it is approved"
        inside = {j for i in opened for j in range(i + 1, phrase_end(tokens, i))}
    else:
        first, token = words[0]
        if not (token.word.endswith("ing") and len(token.word) > 5 and token.word not in _NOT_GERUNDS):
            return None
        verb = next(
            (
                j
                for j in range(first + 2, len(tokens))
                if tokens[j].word.endswith("s")
                and not tokens[j].stop
                and not tokens[j - 1].stop
                and tokens[j].word == tokens[j].word.lower()
            ),
            None,
        )
        if verb is None:
            return None
        inside = range(first, verb)

    def counts(t: Token) -> bool:  # a word, not a function word, a negation or a number ("a new one")
        return not (t.stop or t.negation or t.number is not None)

    cause = {tokens[j].key for j in inside if counts(tokens[j])}
    effect = {t.key for j, t in enumerate(tokens) if j not in inside and counts(t)}
    return (cause, effect) if cause and effect else None


def _cause_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """Cause and effect traded ("Stopping the current timer starts a new one" for "starting a
    new one stops the current timer"): a term of the claim's cause is only in the window's
    effect, and a term of its effect only in the window's cause."""
    mine, theirs = _cause_and_effect(claim), _cause_and_effect(window)
    if mine is None or theirs is None:
        return None
    (cause, effect), (their_cause, their_effect) = mine, theirs
    moved = (cause & their_effect) - their_cause
    back = (effect & their_cause) - their_effect
    if moved and back:
        return f"turns cause and effect around: '{sorted(moved)[0]}' and '{sorted(back)[0]}'"
    return None


def _matched(mine: set[str], theirs: set[str]) -> bool:
    """Whether a claim's clause shares more than half of its terms with the window clause."""
    return len(mine & theirs) * 2 > len(mine)


def _swap_problem(claim: str, window: str) -> str | None:
    """Terms traded between two clauses: the claim puts term x in its first clause and y in
    its second, where the window's matching clauses have y in the first and x in the second
    ("applies to past entries only, unless you tick Apply to new entries")."""
    parts = _window_clauses(claim)
    if len(parts) < 2:
        return None
    terms = [set(content_terms(part)) for part in parts]
    aligned = [set(content_terms(_aligned(part, window))) for part in parts]
    for a in range(len(parts)):
        for b in range(a + 1, len(parts)):
            if aligned[a] == aligned[b] or not (
                _matched(terms[a], aligned[a]) and _matched(terms[b], aligned[b])
            ):
                continue  # a clause that matches its window clause by half or less may be aligned wrongly
            x = (terms[a] - aligned[a]) & (aligned[b] - terms[b])
            y = (terms[b] - aligned[b]) & (aligned[a] - terms[a])
            if x and y:
                return f"swaps '{sorted(x)[0]}' and '{sorted(y)[0]}' between the context's clauses"
    return None


_SEGMENT_BREAK = re.compile(r"[,;()]|:(?!\d)|\s(?:and|or|but|then|whereas|while)\s", re.IGNORECASE)


def _segments(text: str) -> list[Counter[str]]:
    """The terms of each segment of `text` (between commas, brackets, "and", "or"...), counted."""
    return [Counter(content_terms(piece)) for piece in _SEGMENT_BREAK.split(text) if content_terms(piece)]


def _segment_swap_problem(claim: str, window: str) -> str | None:
    """Words traded between two segments of one statement: "applies to existing sessions
    immediately and to new sessions at their next page load" where the window applies it "to
    new sessions immediately and to existing sessions at their next page load"; "hh:mm (1.75)
    or decimal hours (1:45)". Each segment of the claim is aligned with the window's segment
    sharing most of its terms; two claim segments aligned with different ones must not each
    hold a term that only the other's holds. Counted, so a word said twice ("new limit ...
    new sessions") counts twice."""
    mine = [segment for segment in _segments(claim) if sum(segment.values()) >= 2]
    theirs = _segments(window)
    if len(mine) < 2 or len(theirs) < 2:
        return None
    aligned = [max(range(len(theirs)), key=lambda k: (sum((m & theirs[k]).values()), -k)) for m in mine]
    for a in range(len(mine)):
        for b in range(a + 1, len(mine)):
            if aligned[a] == aligned[b]:
                continue
            left, right = theirs[aligned[a]], theirs[aligned[b]]
            x = (mine[a] - left) & (right - mine[b])
            y = (mine[b] - right) & (left - mine[a])
            if x and y and not (_one_list(claim, x, y) and _one_list(window, x, y)):
                return f"swaps '{min(x)}' and '{min(y)}' between the context's phrases"
    return None


def _one_list(text: str, some: Counter[str], others: Counter[str]) -> bool:
    """Whether a term of `some` and one of `others` are items of one list in `text`, next to
    each other across "and", "or" or a comma ("Google Calendar or Outlook"): a list's order
    says nothing, so trading them is no swap."""
    tokens = read(text)
    for i, token in enumerate(tokens):
        if token.word not in _COORDINATORS and (token.joined or token.stop):
            continue
        join = i if token.word in _COORDINATORS else i - 1  # "A or B", or "A, B" (B opens after the comma)
        before = [t.key for t in tokens[max(0, join - 2) : join] if not t.stop]
        after = [t.key for t in tokens[join + 1 : join + 3] if not t.stop]
        if (set(before) & set(some) and set(after) & set(others)) or (
            set(before) & set(others) and set(after) & set(some)
        ):
            return True
    return False


_BRACKETED = re.compile(r"([^\W_][^()]*?)\s*\(([^()]+)\)")


def _brackets(text: str) -> list[tuple[str, frozenset[str]]]:
    """Each bracket of `text` with the word it belongs to: the last content term before it
    ("decimal hours (1.75)" gives ("hour", {"1.75"}))."""
    found: list[tuple[str, frozenset[str]]] = []
    if "(" not in text:
        return found  # the pattern would try every start in a long sentence without one
    for match in _BRACKETED.finditer(plain(text)):
        before, inside = content_terms(match.group(1)), frozenset(content_terms(match.group(2)))
        if before and inside:
            found.append((before[-1], inside))
    return found


def _bracket_problem(claim: str, window: str) -> str | None:
    """What a bracket says given to another word than the window gives it: "decimal hours
    (1:45) or hh:mm (1.75)" where the window says "decimal hours (1.75) or hh:mm (1:45)"."""
    theirs = _brackets(window)
    heads = {head for head, _ in theirs}
    for head, inside in _brackets(claim):
        owners = {h for h, i in theirs if i == inside}
        if owners and head not in owners and head in heads:
            return f"gives '({' '.join(sorted(inside))})' to '{head}', the context to '{sorted(owners)[0]}'"
    return None


def _classes(tokens: tuple[Token, ...], table: dict[str, str]) -> list[str]:
    """The classes of a clause's words, in order; not a word after "as" ("three times as many
    requests" compares, it does not say "some"). A denied "any" that makes an exception says
    "only" ("can't see any entries other than their own")."""
    compared = {
        i for i in range(2, len(tokens)) if (tokens[i - 2].word, tokens[i - 1].word) == ("times", "as")
    }
    return [
        "only" if table[t.key] == "all" and _denied_but(tokens, i) else table[t.key]
        for i, t in enumerate(tokens)
        if t.key in table and i not in compared
    ]


def _denied_but(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether the word at tokens[i] is denied by a negation at most three words before it, in
    a statement that makes an exception ("can't see any entries except their own")."""
    start = next((j for j in range(i - 1, max(-1, i - 4), -1) if tokens[j].negation), None)
    return start is not None and _excepting(tokens[start + 1 :])


_RELATIVES = frozenset("who whose that which".split())


def _restricted(tokens: tuple[Token, ...], table: dict[str, str]) -> bool:
    """Whether an "all" of a clause (or "anyone") is narrowed by what follows it: "anyone who
    hasn't submitted", "every entry that is billable"."""
    return any(
        (table.get(t.key) == "all" or t.word in _ANYONE)
        and any(u.word in _RELATIVES for u in tokens[i + 1 : i + 4])
        for i, t in enumerate(tokens)
    )


_IF_UNLESS = frozenset({"if", "unless"})  # "unless X" is "if not X": compared by _polarity_problem


def _class_problem(
    claim: tuple[Token, ...],
    window: tuple[Token, ...],
    whole: tuple[Token, ...],
    table: dict[str, str],
    what: str,
    alike: frozenset[str] = frozenset(),
) -> str | None:
    """The claim's first quantifier (or modal) against the aligned clause's, or its
    sentence's when that clause has none ("Optionally, Acme writes ..." puts it apart).
    Classes that are both in `alike` are compared elsewhere."""
    mine, theirs = _classes(claim, table), _classes(window, table) or _classes(whole, table)
    if mine and theirs and mine[0] not in theirs and theirs[0] not in mine:
        if {mine[0], theirs[0]} <= alike:
            return None
        if (mine[0], theirs[0]) == ("only", "all") and _restricted(window or whole, table):
            return None  # "only to people who haven't submitted" is "to anyone who hasn't"
        return f"{what} '{mine[0]}' where the context says '{theirs[0]}'"
    return None


_AUXILIARIES = frozenset("can could may might must shall should will would".split())


def _modals(tokens: tuple[Token, ...]) -> list[int]:
    """Where the modal words of a clause are, in order: a modal word right after a modal is
    governed by it, a verb ("can require 2FA" is "can" + a verb)."""
    table = lexicon().modal
    return [
        i
        for i, t in enumerate(tokens)
        if t.key in table and not any(u.key in table for u in tokens[max(0, i - 2) : i])
    ]


def _modal_signs(tokens: tuple[Token, ...]) -> list[tuple[str, int, str]]:
    """Each modal of a clause (lexicon.toml [modals]) with whether it is denied and the word it
    governs (the next content word): -1 with a negation just before it or right after it
    ("does not need", "need not", "can no longer sign"), 0 with a negation further before it
    ("no credit card is needed" denies the card as much), else +1.

    A "can" that is a requirement in other words reads as "must": denied with a "without" after
    it ("can never be left without an Owner" is "must always have one"), denied where the
    negation bounds a comparison ("can be no shorter than 12 characters" is "must be at least
    12"), or made "only" on a condition ("can only be used once SAML is configured" is what
    "requires SAML" says)."""
    table, bounds = lexicon().modal, lexicon().bound
    found = []
    for i in _modals(tokens):
        # the negations before it and right after it, but not one that denies a bound ("can't
        # run more than one timer" is "can run at most one")
        negations = [
            j
            for j in range(min(i + 2, len(tokens)))
            if tokens[j].negation and j != i and not _denies_a_bound(tokens, j)
        ]
        sign = -1 if any(j >= i - 2 for j in negations) else 0 if negations else 1
        kind = table[tokens[i].key]
        after = tokens[i + 1 :]
        if kind == "can" and sign < 0 and any(t.word == "without" for t in after):
            kind, sign = "must", 1
        elif kind == "can" and any(
            (t.negation and _denies_a_bound(tokens, j))
            or (t.key in bounds and t.word.startswith(("no ", "not ")))
            for j, t in enumerate(tokens[max(0, i - 2) : i + 4], start=max(0, i - 2))
        ):
            kind = "must"  # "can never have fewer than one", "can be no shorter than 12": a requirement
        elif kind == "can" and sign > 0 and _only_on_condition(tokens[max(0, i - 1) : i + 2], after):
            kind = "must"
        governed = next(
            (
                t.key
                for t in tokens[i + 1 :]
                if not (t.stop or t.negation or t.number is not None or t.key in table)
                and t.word not in _SKIPPED_AFTER_NEGATION
            ),
            "",
        )
        found.append((kind, sign, governed))
    return found


def _only_on_condition(around: tuple[Token, ...], after: tuple[Token, ...]) -> bool:
    """Whether a modal's "only" (next to it) is made to hang on a condition later in its clause:
    "can only be used once SAML is configured", "can only sign in if"."""
    lex = lexicon()
    if not any(lex.quantifier.get(t.key) == "only" for t in around):
        return False
    return any(t.word in lex.openers["time"] or lex.condition.get(t.key) == "if" for t in after)


def _modal_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], sentence_text: str, whole: str
) -> str | None:
    """The claim's first modal against the window's. Where a clause of the window (`whole`)
    puts a modal on the verb the claim's governs, those two are compared ("the idle time has
    to be discarded" against "you can discard it"). Else the aligned clause's modal (or its
    sentence's) is compared, unless it governs another verb and a clause of the window states
    the claim's verb with none: "verification can take up to 2 days" is what "owners must
    contact support, and verification takes up to 2 days" says."""
    mine = _modal_signs(claim)
    if not mine:
        return None
    kind, sign, governed = mine[0]
    denied_must = kind == "must" and sign < 1  # "no need to poll": you can do without, as in the window
    table = lexicon().modal
    # A "can" read as "must" agrees with either: "can only be switched on once SSO is verified"
    # requires it and says "once verified, you can"; "can't have fewer than one" is "must have one"
    read_as_must = kind == "must" and table.get(claim[_modals(claim)[0]].key) == "can"
    if kind == "must" and sign > 0 and _conditioned(read(whole), _required(claim)):
        return None  # "you need to allow it" where it "works once you allow it": a condition requires
    if governed:
        own = claim[_modals(claim)[0]].key
        written = {t.key for t in claim} - {own}  # "you allow" in both is the verb, not the modal "allowed"
        said = {
            "can" if kind_there == "must" and sign < 1 else kind_there  # "not needed": you can do without
            for tokens in map(read, _window_clauses(whole))
            for at, (kind_there, sign, g) in zip(_modals(tokens), _modal_signs(tokens), strict=True)
            if g == governed and (tokens[at].word in _AUXILIARIES or tokens[at].key not in written)
        }
        if said:
            ours = "can" if denied_must else kind
            if ours in said or (read_as_must and "can" in said):
                return None
            return f"says '{kind}' where the context says '{sorted(said)[0]}'"
    sentence = read(sentence_text)
    theirs = _modal_signs(window) or _modal_signs(sentence)
    if not theirs:
        return None
    if governed and all(g != governed for _, _, g in theirs):
        for piece in _window_clauses(sentence_text):
            plain_clause = read(piece)
            if any(t.key == governed for t in plain_clause) and not any(t.key in table for t in plain_clause):
                return None  # a clause of its own states the verb, with no modal
    kinds = [k for k, _, _ in theirs]
    if kind == "can" and all(k != "must" or sign < 1 for k, sign, _ in theirs):
        kinds = [k for k in kinds if k != "must"] or ["can"]  # "no credit card is needed": you can go without
    if {kind, kinds[0]} == {"can", "will"}:
        return None  # "the app can hold 500 entries" where it "stores them and syncs automatically"
    if read_as_must and "can" in kinds:
        return None
    if kind not in kinds and kinds[0] not in {k for k, _, _ in mine}:
        return f"says '{kind}' where the context says '{kinds[0]}'"
    return None


def _required(claim: tuple[Token, ...]) -> str:
    """The verb the claim's first modal requires, when only function words stand between them
    ("you need to allow", "you first have to allow"), or ""."""
    at = _modals(claim)[0]
    verb = next((j for j in range(at + 1, len(claim)) if not claim[j].stop), None)
    if verb is None or any(t.word in lexicon().openers["cause"] for t in claim[at + 1 : verb]):
        return ""
    return claim[verb].key


def _conditioned(window: tuple[Token, ...], verb: str) -> bool:
    """Whether the window makes `verb` a condition: an opener ("once", "if", "after", "when")
    at most three words before it, no punctuation between ("once you allow activity
    detection", "once SSO is verified")."""
    openers = lexicon().openers["cause"]
    for j, token in enumerate(window):
        if verb and token.key == verb:
            before = window[max(0, j - 3) : j + 1]
            k = next((k for k in range(len(before) - 1, -1, -1) if before[k].word in openers), None)
            if k is not None and all(t.joined for t in before[k + 1 :]):
                return True
    return False


_UNCONDITIONAL = frozenset({"always", "by default"})  # the words: "the default thresholds" is none


def _unconditional_problem(claim: tuple[Token, ...], sentence: tuple[Token, ...]) -> str | None:
    """ "The invoice PDF always shows your tax ID" (or "by default") where the window's sentence
    shows it "if you have added" it: a condition the claim drops by saying "always". Compared
    where the claim states no condition of its own and the sentence says neither word."""
    said = next((t for t in claim if t.word in _UNCONDITIONAL), None)
    if said is None or _condition_opener(claim) is not None:
        return None
    opener = _condition_opener(sentence)
    if opener is None or any(t.word in _UNCONDITIONAL for t in sentence):
        return None
    shared = {t.key for t in claim if not t.stop} & {t.key for t in sentence[:opener] if not t.stop}
    if len(shared) < 2:
        return None  # the condition is of something else
    return f"says '{said.word}' where the context says '{sentence[opener].word}'"


def _condition_opener(tokens: tuple[Token, ...]) -> int | None:
    """Where the first condition of a reading opens ("if", "once", "when", "as long as"), or None."""
    openers = lexicon().openers["cause"]
    table = lexicon().condition
    return next((i for i, t in enumerate(tokens) if t.word in openers or table.get(t.key) == "if"), None)


_DOERS = frozenset("you they we he she it having".split())


def _without_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Works without you having to allow activity detection" (or "without allowing it",
    "without SSO having been verified") where the window says it works "once you allow
    activity detection": "without" doing what the window makes a condition. "Without" a noun
    phrase ("without a valid VAT number", "exercise without WBC") is no step."""
    must = {key for key, kind in lexicon().modal.items() if kind == "must"}
    for i, token in enumerate(claim):
        if token.word != "without":
            continue
        rest = claim[i + 1 : i + 7]
        having = next((k for k, t in enumerate(rest) if t.word == "having"), None)
        if having is not None:  # "without you having to allow", "without SSO having been verified"
            doing = rest[having + 1 :]
        elif rest and (rest[0].word in _DOERS or rest[0].key in must):  # "without needing to allow"
            doing = rest[1:]
        elif rest and not rest[0].stop and rest[0].word.endswith("ing"):  # "without allowing"
            doing = rest[:1]
        else:
            continue
        verb = next((t for t in doing if not t.stop and t.key not in must), None)
        if verb is not None and _conditioned(window, verb.key):
            return f"says 'without' of '{verb.word}', which the context makes a condition"
    return None


def _modal_denied(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """The same modal of the same verb denied on one side only: "A workspace does not need an
    Owner" where the window says it "must always have at least one Owner"."""
    theirs = _modal_signs(window)
    for kind, sign, governed in _modal_signs(claim):
        other = {s for k, s, g in theirs if k == kind and g == governed}
        if sign and other and 0 not in other and sign not in other:
            said = "not " + kind if sign < 0 else kind
            return f"says '{said}' where the context says the opposite"
    return None


def _steps(tokens: tuple[Token, ...], nearest: int = 0) -> list[tuple[set[str], set[str]]]:
    """Each (what comes first, what comes next) a reading orders: "A, then B", "A and then B",
    "B after A", "A, and after that B"... as sets of content terms; "A before B" and "A first,
    then B" too. With `nearest`, only so many terms on either side of the ordering word: the
    steps themselves, not the setting both share ("After a workspace is cancelled, ...")."""

    def terms(part: tuple[Token, ...], nearest_last: bool) -> set[str]:
        # a number orders nothing: "read-only for 30 days, then deleted" and "deleted for 30
        # days, then read-only" differ in their steps, whichever step the days are said with
        found = [
            t.key for t in part if not (t.stop or t.negation or t.word in _SEQUENCE or t.number is not None)
        ]
        if not nearest:
            return set(found)
        return set(found[-nearest:] if nearest_last else found[:nearest])

    found = []
    for i, token in enumerate(tokens):
        joined = not token.joined or "and" in {t.word for t in tokens[max(0, i - 2) : i]}  # "and it then"
        after_that = token.word == "after" and i + 1 < len(tokens) and tokens[i + 1].word in ("that", "this")
        if (token.word == "then" and i > 0 and joined) or after_that:  # "..., and after that B" is "then B"
            found.append((terms(tokens[:i], True), terms(tokens[i + 1 :], False)))
        elif token.word in ("before", "after") and 0 < i < len(tokens) - 1:
            before, after = terms(tokens[:i], True), terms(tokens[i + 1 :], False)
            found.append((before, after) if token.word == "before" else (after, before))
    return [(a, b) for a, b in found if a and b]


def _sequence_problem(claim: tuple[Token, ...], window: str) -> str | None:
    """Steps in the other order from the window's: "you enter the code before scanning the QR
    code" where the window says "scan the QR code, then enter the code". What the claim puts
    first shares more with what the window puts next, and the other way round (each sentence
    of the window ordered on its own)."""
    theirs = [pair for sentence in split_sentences(window) for pair in _steps(read(sentence))]

    def order(first: set[str], last: set[str], their_first: set[str], their_last: set[str]) -> int:
        """+1 where the two orders agree, -1 where they are swapped, 0 where it cannot tell."""
        ahead = len(first & their_first) - len(first & their_last)
        behind = len(last & their_last) - len(last & their_first)
        return 1 if ahead > 0 and behind > 0 else -1 if ahead < 0 and behind < 0 else 0

    for first, last in _steps(claim, nearest=3):
        first, last = first - last, last - first  # a word on both sides ("the code") orders nothing
        if not (first and last):
            continue
        said = [order(first, last, a, b) for a, b in theirs]
        if -1 in said and 1 not in said:  # no order of the window's says it the claim's way
            return "puts the steps in the other order from the context"
    return None


_LIST_ITEM = re.compile(r",\s*|\s+(?:and|or)\s+")


def _listed(piece: str) -> set[str]:
    """The items a clause lists ("date, email, project and duration"): the last term of each
    part between commas and "and"/"or", where there are three parts or more."""
    parts = [content_terms(part) for part in _LIST_ITEM.split(piece)]
    return {terms[-1] for terms in parts if terms} if len(parts) >= 3 else set()


def _listed_modal_problem(claim: str, window: str) -> str | None:
    """An item of the window's list with the modal of another list of the same sentence: "the
    client column is required" where the window says "Required columns are date, email,
    project and duration; client, task, description and billable are optional". Each clause
    of the claim is compared on its own ("..., while billable is optional")."""
    lists: list[tuple[str, set[str]]] = []
    for sentence in split_sentences(window):
        here = []
        for piece in re.split(r";", sentence):
            said, items = _modal_signs(read(piece)), _listed(piece)
            if said and items:
                here.append((said[0][0], items))
        if len({k for k, _ in here}) >= 2:  # one sentence sets lists against each other
            lists.extend(here)
    if not lists:
        return None
    for part in _window_clauses(claim):
        mine = _modal_signs(read(part))
        if not mine or copied(part, window):
            continue
        kind, keys = mine[0][0], {t.key for t in read(part)}
        ours = set().union(*(items for k, items in lists if k == kind))
        for other, items in lists:
            if other != kind and keys & items and not keys & items & ours:
                item = sorted(keys & items)[0]
                return f"says '{kind}' of '{item}', which the context lists as '{other}'"
    return None


_EVERYONE = frozenset("nobody everyone everybody anyone anybody".split())


def _everyone_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Nobody can sign in with a password" (or "everyone", "anyone") where the window says it
    of "members" only: a claim about every person, where the window names the people."""
    said = next((t.word for t in claim if t.word in _EVERYONE), None)
    if said is None or any(t.word in _ANYONE or t.word in _EVERYONE for t in window):
        return None
    roles = lexicon().roles
    mine = {t.stem for t in claim if t.word in roles and t.stem in _PERSONS}
    theirs = sorted({t.stem for t in window if t.word in roles and t.stem in _PERSONS})
    if theirs and not mine:
        return f"says '{said}' where the context says {', '.join(theirs)}"
    return None


_INSTEAD = frozenset({"instead", "rather"})


def _instead_problem(claim: tuple[Token, ...], sentence: tuple[Token, ...]) -> str | None:
    """ "Paying monthly instead of annually" where the window says "annually instead of monthly"
    ("rather than" alike): the words on either side of it trade places."""

    def pairs(tokens: tuple[Token, ...]) -> set[tuple[str, str]]:
        found = set()
        for i, t in enumerate(tokens):
            if t.word in _INSTEAD:
                before = next((u.key for u in reversed(tokens[:i]) if not u.stop), None)
                after = next((u.key for u in tokens[i + 1 :] if not u.stop), None)
                if before and after:
                    found.add((before, after))
        return found

    theirs = pairs(sentence)
    for before, after in pairs(claim):
        if (after, before) in theirs and (before, after) not in theirs:
            return f"says '{before}' instead of '{after}', the context the other way round"
    return None


_WHEN_WORDS = frozenset("time point moment date day stage".split())


def _any_time(tokens: tuple[Token, ...]) -> bool:
    """Whether the clause says "at any time" ("any point", "any date", "anytime", "whenever you
    like": lexicon.toml's synonyms of "anytime")."""
    anytime = lexicon().canonical.get(word_key("anytime"), word_key("anytime"))
    return any(
        t.key == anytime or (t.word == "any" and i + 1 < len(tokens) and tokens[i + 1].stem in _WHEN_WORDS)
        for i, t in enumerate(tokens)
    )


_SPANS = frozenset({"time", "workdays", "calendar"})
_LATER_WORDS = frozenset("next later then end start".split())


def _immediate_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Immediately" (or "right away", "at once") where the aligned window clause, which does
    not say it, puts the thing at a later time: after or within a span ("deleted within a
    further 30 days"), or at the next, the end or the start of something ("at the start of the
    next billing period")."""
    now = read("immediately")[0].key
    if (now, 1) not in _terms(claim) or any(t.key == now for t in window):
        return None  # "doesn't happen right away" says what the window says
    spans = [q for q in _quantities_of_tokens(window) if q.dimension in _SPANS]
    later = [t.word for t in window if t.key in _LATER_WORDS]
    if spans or later:
        return f"says 'immediately' where the context says '{spans[0].text if spans else later[0]}'"
    return None


def _unbounded_problem(claim: tuple[Token, ...], sentence: tuple[Token, ...]) -> str | None:
    """ "At any time" where the window's sentence bounds the time ("within 30 days", "up to 60
    days in the past") and the claim gives no time of its own."""
    if not _any_time(claim) or _any_time(sentence):
        return None
    if any(q.dimension in _SPANS for q in _quantities_of_tokens(claim)):
        return None
    for quantity in _quantities_of_tokens(sentence):
        if quantity.dimension in _SPANS and quantity.bound == "at_most":
            return f"says 'at any time' where the context sets a limit ({quantity.text})"
    return None


# Words that say a number has no limit: "an unlimited number of recipients", "however many".
_NO_LIMIT = re.compile(
    r"\b(?:unlimited|limitless|no limit|without (?:a |any )?limit|any number of|however many|"
    r"no matter how many|as many (?:\w+ )*?as you (?:like|want|need))\b"
)


def _no_limit_problem(claim: str, window: tuple[Token, ...]) -> str | None:
    """A claim that there is no limit to a number of things ("an unlimited number of
    recipients", "however many you add") where the window bounds the number of those things
    ("up to 20 recipients"): the counted noun (the quantity's, or the word after it) is the
    claim's."""
    said = _NO_LIMIT.search(plain(claim).lower())
    if said is None:
        return None
    mine = {key for t in read(claim) for key in (t.key, t.stem)}
    for quantity in _quantities_of_tokens(window):
        counted = quantity.dimension if quantity.dimension and not quantity.measured else ""
        if not counted and quantity.end < len(window):
            counted = window[quantity.end].key
        if quantity.bound == "at_most" and counted in mine:
            return f"says '{said.group(0)}' where the context sets a limit ({quantity.text})"
    return None


def _time_conditions(
    tokens: tuple[Token, ...], openers: frozenset[str] | None = None
) -> list[tuple[str, set[str]]]:
    """Each time condition of a reading ("once the timesheet is approved", "as soon as the timer
    stops", "when you reconnect"; with `openers`, other conditions too), as its text and its
    content terms, up to the next punctuation mark. Not a frequency, a time or a step ("works
    only once", "at once", "after 30 days", "30 days after buying it", "after that")."""
    openers = lexicon().openers["time"] if openers is None else openers
    found = []
    for i, token in enumerate(tokens):
        soon = (
            token.word == "soon"
            and 0 < i < len(tokens) - 1
            and tokens[i - 1].word == tokens[i + 1].word == "as"
        )
        if not (soon or token.word in openers or lexicon().condition.get(token.key, "") in openers):
            continue
        before = tokens[i - 1] if i else None
        if before is not None and (
            before.word in ("only", "at") or before.number is not None or before.stem in lexicon().unit
        ):
            continue
        start = i + 2 if soon else i + 1
        end = phrase_end(tokens, start - 1)
        words = [t for t in tokens[start:end] if not (t.stop or t.negation)]
        if not words or words[0].number is not None or tokens[start].word in ("that", "this"):
            continue
        text = " ".join(t.word for t in tokens[i - 1 if soon else i : end])
        found.append((text, {t.key for t in words if t.number is None}))
    return found


def _when_problem(
    claim: tuple[Token, ...], sentence: tuple[Token, ...], whole: tuple[Token, ...]
) -> str | None:
    """Another time condition for what the window's sentence says happens on one: "writes
    tracked time back to Jira as soon as the timer stops" where the window says "... once the
    timesheet is approved". Compared where the two share at least two terms besides their
    conditions: a condition of the claim must share a term with one of the window's, or say
    only what the window's sentence says besides ("once a week is approved" of "approved weeks
    are locked ... until an admin unlocks them")."""
    any_condition = lexicon().openers["time"] | {"if", "unless"}  # words, or a [conditions] class
    mine, theirs = _time_conditions(claim), _time_conditions(sentence, any_condition)
    if not mine or not theirs:
        return None
    conditioned = set().union(*(terms for _, terms in mine + theirs))
    keys = {t.key for t in claim if not t.stop}
    rest = keys & {t.key for t in sentence if not t.stop}
    if len(rest - conditioned) < 2:
        return None  # not the same event
    said = {t.key for t in whole}
    for text, terms in mine:
        if any(terms & other for _, other in theirs):
            continue
        own = terms - (keys - set().union(*(t for _, t in mine)))  # what only the condition says
        # what the window says besides, not in the claim's main clause: "writes tracked time
        # back ... as soon as the time is tracked" restates its own words as a new time
        besides = said - _outside_conditions(claim)
        if not own & besides:
            return f"says '{text}' where the context says '{theirs[0][0]}'"
    return None


def _outside_conditions(tokens: tuple[Token, ...]) -> set[str]:
    """The keys of the words of a reading outside its time conditions ("as soon as ...")."""
    inside: set[int] = set()
    for i, token in enumerate(tokens):
        soon = token.word == "soon" and 0 < i < len(tokens) - 1 and tokens[i - 1].word == "as"
        if soon or token.word in lexicon().openers["time"]:
            inside.update(range(i, phrase_end(tokens, i)))
    return {t.key for i, t in enumerate(tokens) if i not in inside and not t.stop}


_MANY_TIMES = re.compile(
    r"\b(?:(?:several|multiple|many|any number of|unlimited) times|more than once|repeatedly"
    r"|again)\b"
)
_ONE_TIME = re.compile(r"\b(?:only once|just once|once only|single[- ]use|one[- ]time)\b")


def _examples(window: tuple[Token, ...]) -> list[list[frozenset[str]]]:
    """The lists of examples the window gives ("an authenticator app such as Google
    Authenticator, 1Password or Authy", "for example ..."): each list as its items' keys."""
    found = []
    for i in range(len(window) - 2):
        opened = (window[i].word, window[i + 1].word) == ("such", "as") or (
            window[i].word == "for" and window[i + 1].key == word_key("example")
        )
        if not opened:
            continue
        items: list[set[str]] = [set()]
        for token in window[i + 2 :]:
            if token.stop and token.word not in _COORDINATORS:
                break
            if token.word in _COORDINATORS or (not token.joined and items[-1]):
                items.append(set())  # "Google Authenticator, 1Password or Authy": three items
            if not token.stop:
                items[-1].add(token.key)
        found.append([frozenset(item) for item in items if item])
    return found


def _example_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "You must use Google Authenticator" where the window gives it as one example of several
    ("an authenticator app such as Google Authenticator, 1Password or Authy"): a requirement
    (or "only") of one example the window gives, naming none of the others."""
    requires = any(kind == "must" and sign > 0 for kind, sign, _ in _modal_signs(claim))
    if not (requires or any(lexicon().quantifier.get(t.key) == "only" for t in claim)):
        return None
    keys = {t.key for t in claim}
    for items in _examples(window):
        named = [item for item in items if item <= keys]
        if len(items) > 1 and len(named) == 1:
            shown = " ".join(t.word for t in claim if t.key in named[0])
            return f"requires '{shown}', one of the context's examples"
    return None


def _times_problem(claim: str, window: str) -> str | None:
    """ "Can be used several times" (or "any number of times", "more than once", "view it
    again") where the window says a thing works "only once" or is "single-use". A claim that
    denies it ("cannot be used more than once") says what the window says."""
    said = _MANY_TIMES.search(plain(claim).lower())
    once = _ONE_TIME.search(plain(window).lower())
    if said is None or once is None:
        return None
    if any(t.negation for t in read(plain(claim)[: said.start()])):
        return None
    return f"says '{said.group(0)}' where the context says '{once.group(0)}'"


def _even_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Even after it has ended", "regardless of the plan": a claim that its statement holds
    whatever the condition, where the window makes no such concession."""
    table = lexicon().condition
    said = [t for t in claim if table.get(t.key) == "even"]
    conceded = any(table.get(t.key) == "even" or t.word == "always" for t in window)  # "owners always keep"
    if said and not conceded:
        return f"says '{said[0].word}', which the context does not"
    return None


_SUBJECTS = frozenset("you we they he she".split())  # a pronoun after a content word starts a clause


def _condition_end(tokens: tuple[Token, ...], opener: int) -> int:
    """Where the condition that tokens[opener] opens ends: at the next punctuation mark, at the
    main clause's subject (a pronoun after a content word: "Once SSO is verified you can ...",
    "you"), or at the end of the reading."""
    end = phrase_end(tokens, opener)
    return next(
        (j for j in range(opener + 2, end) if tokens[j].word in _SUBJECTS and not tokens[j - 1].stop), end
    )


def _event_order_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "before X" where the window says "once X" or "after X" (or the other way round): the
    terms after the word, up to the next punctuation mark (or the main clause's subject, "Once
    SSO is verified you can ..."), are mostly the same."""

    def spans(tokens: tuple[Token, ...], words: frozenset[str]) -> list[tuple[str, set[str]]]:
        return [
            (t.word, {u.key for u in tokens[i + 1 : _condition_end(tokens, i)] if not (u.stop or u.negation)})
            for i, t in enumerate(tokens)
            if t.word in words
        ]

    earlier, later = lexicon().openers["earlier"], lexicon().openers["later"]
    for mine, other in ((earlier, later), (later, earlier)):
        for word, span in spans(claim, mine):
            if not span or any(len(span & s) * 2 > len(span) for _, s in spans(window, mine)):
                continue
            said = [w for w, s in spans(window, other) if len(span & s) * 2 > len(span)]
            if said:
                return f"says '{word}' where the context says '{said[0]}'"
    return None


def _parties(tokens: tuple[Token, ...], found: frozenset[str]) -> list[tuple[int, str]]:
    roles = lexicon().roles
    return [(i, t.key) for i, t in enumerate(tokens) if not t.stop and (t.word in roles or t.stem in found)]


def _passive(tokens: tuple[Token, ...]) -> bool:
    """A clause in the passive voice names its agent after "by" and a participle
    ("is overridden by", "are approved by", "have their 2FA reset by"); "by default" is not one."""
    return any(
        t.word == _PASSIVE_AGENT
        and i > 0
        and (tokens[i - 1].word.endswith(("ed", "en", "wn", "ught")) or tokens[i - 1].word in _PARTICIPLES)
        for i, t in enumerate(tokens)
    )


# Participles that do not end as most do: "reset by an owner", "sent by Acme".
_PARTICIPLES = frozenset(
    "reset set put cut shut let sent built kept paid made held sold told found lost run".split()
)


def _role_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], claim_names: frozenset[str]
) -> str | None:
    """Two parties around a word that relates them, on the other sides in the window."""
    lex = lexicon()
    parties = _parties(claim, claim_names)
    where: dict[str, list[int]] = {}
    for i, token in enumerate(window):
        where.setdefault(token.key, []).append(i)
    flipped = _passive(claim) != _passive(window)
    agent = next((i for i, t in enumerate(claim) if t.word == _PASSIVE_AGENT), -1) if _passive(claim) else -1
    converse = any(
        t.key not in where and any(k in where for k in lex.converse.get(t.key, ())) for t in claim
    )  # "fewer" for "more": what is compared turns around with it
    once = {key for key in {k for _, k in parties} if sum(k == key for _, k in parties) == 1}
    for a in range(len(parties)):
        for b in range(a + 1, len(parties)):
            (ia, left), (ib, right) = parties[a], parties[b]
            if not {left, right} <= once or len(where.get(left, ())) != 1 or len(where.get(right, ())) != 1:
                continue  # a party named twice on either side has no one side
            if agent >= 0 and not ia < agent < ib:
                continue  # in "A is invited by B", only A and B trade places
            between = claim[ia + 1 : ib]
            if any(t.word in _COPULAS for t in between):
                continue  # "X is the Y" says the same as "the Y is X"
            named = {k for _, k in parties}
            for token in between:
                if token.stop or token.key in named or token.stem in named or token.number is not None:
                    continue  # a party is not a relation: "Authy or 1Password" lists two names
                if token.word in _ADVERBS:
                    continue  # "automatically" says how, not who does what to whom
                relation = token.key
                if relation not in where:
                    continue
                for r in where[relation]:
                    span = range(
                        min(r, *where[left], *where[right]) + 1, max(r, *where[left], *where[right]) + 1
                    )
                    if any(not window[p].joined for p in span):
                        continue  # punctuation between them: separate statements, in either order
                    kept = any(p < r for p in where[left]) and any(p > r for p in where[right])
                    swapped = any(p > r for p in where[left]) and any(p < r for p in where[right])
                    if kept == swapped:
                        continue
                    if swapped != (flipped != converse):
                        verb = token.word
                        return f"swaps '{left}' and '{right}' around '{verb}' compared with the context"
                    break
    return None


def _is_party(t: Token, parties: frozenset[str] | set[str]) -> bool:
    """A content word naming a party: a role (lexicon.toml [roles]) or one of `parties`."""
    return not t.stop and (t.word in lexicon().roles or t.stem in parties or t.key in parties)


@functools.lru_cache(maxsize=1 << 12)
def _side_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], parties: frozenset[str] | set[str]
) -> str | None:
    """A party on the other side of the word that relates it, where other parties are named on
    both sides: "The project rate overrides a member's rate on that project" where the window
    says "a member's rate on a project overrides the project rate" ("project" is on both sides
    of "overrides", so only "member" can tell who overrides whom). The relating word is said
    once in each clause, with no punctuation between it and the party; a passive clause or a
    converse word on one side only turns the sides around."""
    if _passive(claim) != _passive(window):
        return None
    lex = lexicon()
    if any(k in {t.key for t in window} for t in claim for k in lex.converse.get(t.key, ())):
        return None

    party = functools.partial(_is_party, parties=parties)

    def sides(tokens: tuple[Token, ...], at: int, key: str) -> set[str]:
        """The sides of tokens[at] that the party `key` is named on, within its stretch."""
        found = set()
        for j, t in enumerate(tokens):
            if j != at and t.key == key and party(t):
                lo, hi = min(j, at), max(j, at)
                if all(u.joined for u in tokens[lo + 1 : hi + 1]):
                    found.add("before" if j < at else "after")
        return found

    def flanked(tokens: tuple[Token, ...], at: int) -> bool:
        """A party among the two content words on each side of tokens[at]."""
        before = [t for t in reversed(tokens[:at]) if not t.stop][:2]
        after = [t for t in tokens[at + 1 :] if not t.stop][:2]
        return any(map(party, before)) and any(map(party, after))

    keys = [t.key for t in claim]
    theirs = [t.key for t in window]
    for i, token in enumerate(claim):
        if token.stop or party(token) or token.number is not None or token.key in _COPULAS:
            continue
        if keys.count(token.key) != 1 or theirs.count(token.key) != 1:
            continue
        r = theirs.index(token.key)
        verb = (  # "overrides", "takes precedence"; not "access", "business"
            token.word.endswith(("s", "ed")) and not token.word.endswith("ss")
        ) or " " in token.word
        if token.key in lex.modal or token.key in lex.comparative or not verb:
            continue  # a verb, as far as its ending tells: not "required", "less"
        if not (flanked(claim, i) and flanked(window, r)):
            continue  # a party close on both sides: "rate overrides a member's rate"
        if (i and claim[i - 1].word in _COPULAS) or (r and window[r - 1].word in _COPULAS):
            continue  # "Enforce SSO is switched on": passive, with no agent to say so
        for key in {t.key for t in claim if party(t)}:
            mine, other = sides(claim, i, key), sides(window, r, key)
            if len(mine) == 1 and len(other) == 1 and mine != other:
                return f"puts '{key}' on the other side of '{token.word}' from the context"
    return None


def _subject_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], parties: frozenset[str] | set[str]
) -> str | None:
    """Another party doing what the window says a party does: "Managers submit their weekly
    timesheets to members" where the window says "members submit their weekly timesheet ...,
    usually their manager". The word right after a party (its verb: "submit") is said once in
    the claim and after a party in the window; the two parties differ, and each is named after
    the verb on the other side."""
    if _passive(claim) or _passive(window):
        return None
    lex = lexicon()
    if any(k in {t.key for t in window} for t in claim for k in lex.converse.get(t.key, ())):
        return None  # "members see fewer reports than admins": a converse turns the sides around

    party = functools.partial(_is_party, parties=parties)

    def subjects(tokens: tuple[Token, ...]) -> dict[str, list[tuple[str, int]]]:
        found: dict[str, list[tuple[str, int]]] = {}
        for i in range(1, len(tokens)):
            verb = tokens[i]
            if verb.stop or party(verb) or verb.number is not None or verb.word.endswith(_NOUN_ENDINGS):
                continue  # "Jira integration" is no subject and verb
            j = i - 1
            while j > 0 and i - j <= 2 and tokens[j].word in _VERB_HELPERS and tokens[j].joined:
                j -= 1  # "a member can reset", "ask an owner to reset"
            before = tokens[j]
            if party(before) and all(t.joined for t in tokens[j + 1 : i + 1]):
                found.setdefault(verb.key, []).append((before.key, i))
        return found

    keys, theirs_keys = [t.key for t in claim], [t.key for t in window]
    theirs = subjects(window)
    for verb, said in subjects(claim).items():
        if verb not in theirs or len(said) != 1:
            continue
        (mine, at), (other, there) = said[0], theirs[verb][0]
        if mine in {party for party, _ in theirs[verb]}:
            continue  # the window has that party do it too
        if mine in theirs_keys[there:] and other in keys[at:]:
            return f"says '{mine}' does what the context says '{other}' does ('{claim[at].word}')"
    return None


_ADVERBS = frozenset("always only also still then automatically usually just".split())


def _subject_before(tokens: tuple[Token, ...], at: int) -> list[Token]:
    """The words of meaning right before tokens[at], nearest first, past adverbs ("always"), up
    to a function word or punctuation: "web version" of "the web version always wins"."""
    found: list[Token] = []
    for t in reversed(tokens[:at]):
        if t.word in _ADVERBS and not found:
            continue
        if t.stop or t.negation or t.number is not None:
            break
        found.append(t)
        if not t.joined:
            break
    return found


def _present_verb(token: Token) -> bool:
    """A word that reads as a verb in the present tense, as far as its form tells: one word in
    -s, neither a number nor a unit ("wins", "applies"; not "right away", "anything", "days")."""
    plain_word = token.number is None and " " not in token.word and token.stem not in lexicon().unit
    return plain_word and token.word.endswith("s") and len(token.word) > 3


def _last_verb_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], whole: tuple[Token, ...]
) -> str | None:
    """Another thing doing what the window's clause ends with: "the web version always wins"
    where it says "the most recent change wins". Both clauses end with the same verb; what
    stands before it in the claim shares no word with what stands before it in the window,
    and its nearest word is nowhere in the window."""
    mine = [i for i, t in enumerate(claim) if not t.stop]
    theirs = [i for i, t in enumerate(window) if not t.stop]
    if not mine or not theirs or claim[mine[-1]].key != window[theirs[-1]].key:
        return None
    verb = claim[mine[-1]]
    if not _present_verb(verb) or [t.key for t in claim].count(verb.key) != 1:
        return None
    ours, their = _subject_before(claim, mine[-1]), _subject_before(window, theirs[-1])
    if not ours or not their or {t.key for t in ours} & {t.key for t in their}:
        return None
    if ours[0].key in {t.key for t in whole}:
        return None
    said = " ".join(t.word for t in reversed(ours))
    other = " ".join(t.word for t in reversed(their))
    return f"says the {said} {verb.word} where the context says the {other} {verb.word}"


_VERB_HELPERS = frozenset("can could may might must should will would to".split())
_NOUN_ENDINGS = ("tion", "sion", "ment", "ness", "ity", "ship", "ance", "ence", "ure", "age", "ism")
_DIRECTIONS = frozenset({"from", "to", "into", "onto"})


def _targets(
    tokens: tuple[Token, ...], parties: frozenset[str] | set[str]
) -> list[tuple[str, str, set[str]]]:
    """Each (preposition, party, terms before it) of "from X", "to X", "into X": the party is
    the first party (a role noun or a name) of the two content words after the preposition;
    the terms are those of the same stretch before it (what is moved, and how)."""
    roles = lexicon().roles
    found = []
    for i, token in enumerate(tokens):
        if token.word not in _DIRECTIONS:
            continue
        words = [t for t in tokens[i + 1 : i + 5] if not t.stop][:2]  # "into the identity provider"
        after = next((t for t in words if t.word in roles or t.stem in parties), None)
        if after is None:
            continue
        start = i
        while start > 0 and tokens[start].joined:
            start -= 1
        before = {t.key for t in tokens[start:i] if not (t.stop or t.negation)}
        # "paste it, along with the base URL, into Okta": what is moved may stand before a comma
        whole = {t.key for t in tokens[:i] if not (t.stop or t.negation)}
        found.append((token.word, after.key, before or whole))
    return found


def _target_problem(
    claim: tuple[Token, ...], window: tuple[Token, ...], parties: frozenset[str] | set[str]
) -> str | None:
    """A move to (or from, or into) another party than the window's: "moving from Team to
    Business" where the window moves "from Business to Team"; "copies the URL into Acme"
    where it copies the URL "into the identity provider". The window's phrase with the same
    preposition shares a term of what comes before it, names another party, and the window
    names the claim's party elsewhere."""
    everywhere = {t.key for t in window}
    theirs = _targets(window, parties)
    for word, party, before in _targets(claim, parties):
        same = [p for w, p, b in theirs if w == word and before & b]
        if same and party not in same and party in everywhere:
            return f"says '{word} {party}' where the context says '{word} {same[0]}'"
    return None


def _window_clauses(window: str) -> list[str]:
    """The clauses of a window: its sentences cut as a claim is (claims.clauses), and at
    colons and brackets."""
    return [piece for piece, _ in _clauses_in_sentences(window)]


@functools.lru_cache(maxsize=1 << 12)
def _clauses_in_sentences(window: str) -> tuple[tuple[str, str], ...]:
    """Each clause of `_window_clauses` with the sentence it is in."""
    found = tuple(
        (c, sentence)
        for sentence in split_sentences(window)
        for part in _WINDOW_BREAK.split(sentence)
        for c in clauses(part)
        if c.strip()
    )
    return found or ((window, window),)


def _aligned(clause: str, window: str) -> str:
    """The clause of `window` that matches the claim's clause best (`_overlap`; the first on ties)."""
    return max(_window_clauses(window), key=lambda piece: _overlap(clause, piece))


def _overlap(clause: str, piece: str) -> tuple[int, int, bool]:
    """How well a window's clause matches a claim's: shared terms, then fewer terms unshared,
    then the same text (so a copied clause always aligns with itself)."""
    mine, theirs = set(content_terms(clause)), set(content_terms(piece))
    return len(mine & theirs), -len(mine ^ theirs), piece.strip() == clause.strip()


_PERSONS = frozenset(
    stem(word)
    for word in """owner admin administrator member guest manager user client customer approver viewer
    editor author recipient sender employee contractor patient doctor parent child partner""".split()
)  # the roles that are people: "workspace" or "project" names no one
_GENERIC = frozenset({stem("user"), stem("customer")})
_ANYONE = frozenset("someone anyone everyone somebody anybody everybody people person".split())


def _role_missing(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """A person the claim names by a role ("managers") where the window names other people
    ("owners and admins") but not that one, nor "someone". "Users" is anyone too ("Excel users"),
    and a workspace, a team or an app is no person."""
    roles = lexicon().roles
    if any(t.word in _ANYONE for t in window):
        return None  # "when someone is unassigned": a member is someone
    theirs = {t.stem for t in window if t.word in roles and t.stem in _PERSONS}
    for token in claim:
        if token.word in roles and token.stem in _PERSONS - _GENERIC and theirs and token.stem not in theirs:
            return f"names '{token.word}' where the context names {', '.join(sorted(theirs))}"
    return None


def _actor(tokens: tuple[Token, ...]) -> Token | None:
    """The person a clause opens with: a role that is a person among its first four content
    words, before any modal ("Workspace owners on Business can ...", "Members who lose their
    device must ..."). None for anyone generic ("users") or where no person opens it."""
    lex = lexicon()
    seen = 0
    for t in tokens:
        if t.key in lex.modal or t.word in _AUXILIARIES:
            return None
        if t.stop or t.negation:
            continue
        seen += 1
        if t.word in lex.roles and t.stem in _PERSONS:
            return None if t.stem in _GENERIC else t
        if seen == 4:
            return None
    return None


def _actor_problem(claim: tuple[Token, ...], aligned: tuple[Token, ...]) -> str | None:
    """Another person doing what the window's aligned clause says one does: "Members who lose
    their device must contact support" where it says "Owners who lose their own device must
    contact support". Both clauses open with a person (`_actor`); the claim does not name the
    window's, and the window names the claim's only after its modal, as an object ("owners can
    require 2FA for every member"); and the rest of the claim's clause is the window's: two
    terms or more, and at most one in three not said there."""
    mine, theirs = _actor(claim), _actor(aligned)
    if mine is None or theirs is None or mine.stem == theirs.stem:
        return None
    if theirs.stem in {t.stem for t in claim}:
        return None  # "members can ask an owner" of "owners can reset it for members": both are named
    modal = next(
        (i for i, t in enumerate(aligned) if t.key in lexicon().modal or t.word in _AUXILIARIES), None
    )
    if mine.stem in {t.stem for t in aligned[:modal]}:
        return None  # the claim's person is a subject there too; after the modal, an object
    rest = {t.key for t in claim if not (t.stop or t.negation or t.number is not None) and t is not mine}
    shared = rest & {t.key for t in aligned}
    if len(shared) >= 2 and len(rest - shared) * 3 <= len(rest):
        return f"says '{mine.word}' where the context says '{theirs.word}'"
    return None


def _together(tokens: tuple[Token, ...], a: int, b: int) -> bool:
    """Whether tokens[a] and tokens[b] stand in one stretch of text, no punctuation between."""
    return all(t.joined for t in tokens[min(a, b) + 1 : max(a, b) + 1])


def _binding_problem(
    claim: str, window: str, parties: frozenset[str] | set[str], others: frozenset[str] = frozenset()
) -> str | None:
    """A number the claim gives to one party ("Solo is $12") that the window gives only to
    another ("Team is $12 ..., Solo is $9"), or to others only where it names the claim's with
    no such number ("Enterprise is $20" where "Business is $20 ..., and Enterprise is priced on
    request"): each quantity belongs to its nearest party (`others`: the window's names too)."""

    def owner(
        tokens: tuple[Token, ...], quantity: Quantity, among: frozenset[str] | set[str] = parties
    ) -> str | None:
        near = [
            (min(abs(i - quantity.start), abs(i - quantity.end + 1)), t.key)
            for i, t in enumerate(tokens)
            if t.key in among
            and not quantity.start <= i < quantity.end
            and _together(tokens, i, quantity.start)
        ]
        near = [pair for pair in near if pair[0] <= 3]
        rate = [t.word for t in tokens[quantity.end : quantity.end + 3]]
        if len(rate) == 3 and rate[0] == "per" and rate[2] in ("on", "for", "in"):  # "300 per minute on X"
            end = quantity.end + 3
            after = tokens[end] if end < len(tokens) else None
            if after is not None and after.key in among and _together(tokens, quantity.start, end):
                return after.key
        return min(near)[1] if near else None

    have = quantities_of(window)
    claim_tokens, window_tokens = read(claim), read(window)
    for quantity in quantities_of(claim):
        if quantity.dimension == "clock":
            continue  # a time of day belongs to an event, not to a party
        mine = owner(claim_tokens, quantity)
        if mine is None or _difference(quantity, claim_tokens, have, window_tokens):
            continue  # "Business costs $8 more than Team" gives Business no price of $8
        theirs = [q for q in have if q.dimension == quantity.dimension and owner(window_tokens, q) == mine]
        if theirs and not any(q.term == quantity.term for q in theirs):
            return f"gives {quantity.text} to '{mine}', the context gives it {theirs[0].text}"
        if not theirs and quantity.measured and any(t.key == mine for t in window_tokens):  # named, no number
            holders = {
                owner(window_tokens, q, set(parties) | others) for q in have if q.term == quantity.term
            }
            named = sorted(holder for holder in holders if holder is not None)
            if named and len(named) == len(holders) and mine not in holders:
                return f"gives {quantity.text} to '{mine}', the context gives it to '{named[0]}'"
    return None


def _listed_together(tokens: tuple[Token, ...], quantities: Sequence[Quantity], quantity: Quantity) -> bool:
    """Whether a quantity is one of a list of them ("80% and 100% of the budget"): the words
    beside the list are the list's, not one item's."""
    return any(
        (q.start == quantity.end + 1 or quantity.start == q.end + 1)
        and tokens[min(q.end, quantity.end)].word in _COORDINATORS
        for q in quantities
    )


def _beside_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """Two numbers traded between the words beside them (`_near`): "8 hours per week or 40
    hours per day" where the window says "40 hours per week or 8 hours per day". The window
    states both, each beside a word the claim puts beside the other, and neither beside a word
    the claim puts beside it. Numbers listed together ("80% and 100%") share their words."""
    mine = _quantities_of_tokens(claim)
    if len(mine) < 2:
        return None
    have = _quantities_of_tokens(window)

    def beside(quantity: Quantity) -> tuple[set[str], set[str]] | None:
        """The words beside a quantity in the claim and beside its value in the window."""
        theirs = [q for q in have if q.term == quantity.term and not _listed_together(window, have, q)]
        if len(theirs) != 1 or _listed_together(claim, mine, quantity):
            return None
        return _near(claim, quantity), _near(window, theirs[0])

    words = [beside(q) for q in mine]
    for (a, first), (b, second) in itertools.combinations(zip(mine, words, strict=True), 2):
        if first is None or second is None or a.term == b.term or _magnitude(a)[0] != _magnitude(b)[0]:
            continue
        (a_mine, a_theirs), (b_mine, b_theirs) = first, second
        if a_mine & b_theirs and b_mine & a_theirs and not (a_mine & a_theirs or b_mine & b_theirs):
            shared = a_mine & b_theirs
            word = min(  # the shared word closest to the number, as the claim writes it
                (
                    (min(abs(i - a.start), abs(i - a.end)), t.word)
                    for i, t in enumerate(claim)
                    if t.key in shared
                )
            )[1]
            return f"puts {a.text} beside '{word}', where the context puts {b.text}"
    return None


@functools.lru_cache(maxsize=1 << 12)
def _vocabulary(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words of `text`, and their stems and synonym keys, with the stem of each word of a
    phrase (remembered: every claim of an answer is looked up in the same contexts)."""
    tokens = read(text)
    parts = {stem(part) for t in tokens if " " in t.word for part in t.word.split()}  # "At" of "At least"
    keys = {t.stem for t in tokens} | {t.key for t in tokens} | parts
    return frozenset(t.word for t in tokens), frozenset(keys)


@functools.lru_cache(maxsize=1 << 12)
def _initials(text: str) -> frozenset[str]:
    """The initials of every run of two to five words of `text` ("single sign-on" gives "sso")."""
    words = [t.word for t in read(text) if t.word[:1].isalpha()]
    return frozenset(
        "".join(word[0] for word in words[i : i + n]) for n in range(2, 6) for i in range(len(words) - n + 1)
    )


def _spelled_out(name: str, context: str) -> bool:
    """Whether an acronym of the claim ("SSO") is spelled out in the context ("single sign-on")."""
    return name.isalpha() and 2 <= len(name) <= 5 and name in _initials(context)


def copied(claim: str, window: str) -> bool:
    """Whether the claim is the window's own words (after the plain-text steps of reading)."""
    wanted = _folded(claim).strip(" .!?")
    return bool(wanted) and wanted in _folded(window)


@functools.lru_cache(maxsize=1 << 15)  # a context is looked in for every claim of its answer
def _folded(text: str) -> str:
    return plain(text).casefold()


def guard(
    claim: str, window: str, context: str = "", given_names: Sequence[str] = (), tiers: Sequence[str] = ()
) -> str | None:
    """Why `window` cannot support `claim` (see the module docstring); None if it can.
    Names and dates are looked up in `context` (all the answer's contexts) when given, as a
    name from the next sentence is still the context's; `given_names` ([judge] names, such as
    the product's) any context may use; `tiers` ([judge] tiers, lowest first) are what "the
    Team plan and above" reaches. A claim copied from the window passes."""
    return None if copied(claim, window) else compare(claim, window, context, given_names, tiers)


def compare(
    claim: str, window: str, context: str = "", given_names: Sequence[str] = (), tiers: Sequence[str] = ()
) -> str | None:
    """The guard's checks themselves, part for part, with no shortcut for copied text."""
    whole = read(window)
    problem = _quantity_problem(claim, window, context)
    if problem:
        return problem
    words, stems = _vocabulary(context or window)
    for word in sorted(DATE_WORDS & {t.word for t in read(claim)} - words):
        return f"names the date {word}, which the context does not"
    for address in _ADDRESS.findall(claim):  # "billing@acme.app" is a name as a whole
        if _folded(address).rstrip(".,;:!?)") not in _folded(context or window):
            return f"names '{address}', which the context does not"
    claim_names = names(claim)
    reach = tier_reach(window, tuple(tiers)) if tiers else frozenset()
    given = _given_names(tuple(given_names)) | reach
    missing = sorted(
        name for name in claim_names - stems - given if not _spelled_out(name, context or window)
    )
    if missing:
        return f"names '{missing[0]}', which the context does not"
    lex = lexicon()
    known = names(context or window)  # "Solo" opening the claim is still the plan's name
    written = {stem(word.lower()) for word in _CAPITALISED.findall(plain(claim))}  # "Solo", not "set"
    parties = claim_names | {
        t.stem for t in read(claim) if t.word in lex.roles or (t.stem in known and t.stem in written)
    }
    capitalised = {t.stem for t in read(" ".join(_CAPITALISED.findall(plain(window)))) if not t.stop}
    problem = (
        _binding_problem(claim, window, parties, known | capitalised)
        or _beside_problem(read(claim), whole)
        or _role_missing(read(claim), whole)
    )
    if problem:
        return problem
    problem = (
        _swap_problem(claim, window)
        or _segment_swap_problem(claim, window)
        or _bracket_problem(claim, window)
        or _clause_problem(claim, context or window)
        or _timing_problem(read(claim), window)
        or _coordinated_problem(read(claim), window, claim_names | known | written, reach)
        or (_tier_problem(claim, window, tuple(tiers), frozenset(written)) if tiers else None)
        or _universal_problem(read(claim), whole, names(window) | capitalised, known)
        or _sequence_problem(read(claim), window)
        or _listed_modal_problem(claim, window)
        or _everyone_problem(read(claim), whole)
        or _no_limit_problem(claim, whole)
        or _times_problem(claim, window)
        or _example_problem(read(claim), whole)
        or _without_problem(read(claim), whole)
    )
    if problem:
        return problem
    for clause in _window_clauses(claim):  # cut as the window is, so a copy aligns with itself
        mine = read(clause)
        aligned = _aligned(clause, window)
        theirs = read(aligned)
        sentence_text = next((x for x in split_sentences(window) if aligned in x), window)
        sentence = read(sentence_text)
        problem = (
            _polarity_problem(clause, window)
            or _exception_problem(clause, window)
            or _class_problem(mine, theirs, sentence, lex.quantifier, "says")
            or _only_problem(mine, whole)
            or _modal_problem(mine, theirs, sentence_text, window)
            or _modal_denied(mine, theirs)
            or _event_order_problem(mine, theirs)
            or _instead_problem(mine, sentence)
            or _unbounded_problem(mine, sentence)
            or _when_problem(mine, sentence, whole)
            or _immediate_problem(mine, theirs)
            or _even_problem(mine, whole)
            or _unconditional_problem(mine, sentence)
            or _class_problem(mine, theirs, sentence, lex.condition, "says", _IF_UNLESS)
            or _order_problem(mine, window, parties, known)
            or _cause_problem(mine, theirs)
            or _role_problem(mine, theirs, claim_names)
            or _side_problem(mine, theirs, parties)
            or _target_problem(mine, whole, parties)
            or _subject_problem(mine, whole, parties)
            or _actor_problem(mine, theirs)
            or _last_verb_problem(mine, theirs, whole)
            or _comparison_problem(mine, theirs, whole)
        )
        if problem:
            return problem
    return None


_COORDINATORS = frozenset({"and", "or"})
_SEQUENCE = frozenset("first then later also too again afterwards next finally".split())


def _coordinated_problem(
    claim: tuple[Token, ...], window: str, named: frozenset[str], reach: frozenset[str] = frozenset()
) -> str | None:
    """A party added to what the window lists: "Business and Enterprise workspaces" where the
    window says "Enterprise workspaces", "the web app, the extension and the mobile apps"
    where it names the first two. Of the two items that "and" or "or" joins (each the run of
    content words next to it, up to a function word or punctuation), the window holds the word
    of one next to "and", and not the other's, whose item names a party (a name, or a role
    noun such as "apps").
    Other words that "and" joins may be statements of their own, in words of their own.
    The tiers the window reaches with "and above" (`reach`) are the window's."""
    _, have = _vocabulary(window)
    have = have | reach
    window_tokens = read(window)
    roles = lexicon().roles

    def item(indices: range) -> list[Token]:
        run: list[Token] = []
        step = indices.step
        for j in indices:
            token = claim[j]
            if token.stop and not run and step > 0:
                continue  # "and the mobile apps": the item starts after its article
            if token.stop or token.negation or token.number is not None:
                break
            run.append(token)
            if not token.joined:
                break  # punctuation before it: the item starts here
        return run if len(run) <= 3 else []  # longer, it is a statement, not an item of a list

    def inside(run: list[Token]) -> bool:  # the item's word next to "and" is the window's
        return run[0].key in have or run[0].stem in have

    for i, token in enumerate(claim):
        if token.word not in _COORDINATORS or not 0 < i < len(claim) - 1:
            continue
        left = item(range(i - 1, -1, -1))
        right = item(range(i + 1, len(claim)))
        if not left or not right or inside(left) == inside(right):
            continue
        if left[0].word in _SEQUENCE or right[0].word in _SEQUENCE:
            continue  # "scan it first and then enter the code": steps, not a list
        missing = right if inside(left) else left
        present = left if missing is right else right
        restricted = any(  # the window says "only" of the item the claim keeps: "only asks for read access"
            lexicon().quantifier.get(u.key) == "only"
            for j, t in enumerate(window_tokens)
            if t.key == present[0].key
            for u in window_tokens[max(0, j - 3) : j]
        )
        if restricted or any(t.word in roles or t.stem in named for t in missing):
            return f"lists '{missing[0].word}' with what the context lists, which the context does not"
    return None


_AND_ABOVE = word_key("and above")
# A tier with one of these after it, or after its noun, reaches the tiers above it ("the Team
# plan and above", "Business or higher") or below it ("Team and below", "Business or lower").
_UPWARD = frozenset({_AND_ABOVE, word_key("or higher"), word_key("or above")})
_DOWNWARD = frozenset({word_key("and below"), word_key("or lower"), word_key("or below")})


@functools.lru_cache(maxsize=64)
def _tier_keys(tiers: tuple[str, ...]) -> tuple[str, ...]:
    """The key of each of [judge] tiers, lowest first, read as a claim's names are: the stem
    of its last word ("Business" -> "busi", "Pro Plus" -> "plu")."""
    return tuple(words[-1].stem if (words := read(tier)) else "" for tier in tiers)  # one key a tier


def _tier_bounds(tokens: tuple[Token, ...], keys: tuple[str, ...]) -> list[tuple[int, int, int, int]]:
    """Each tier `tokens` bound with "and above" or "or lower": (its index, its rank, +1 for
    the tiers above it or -1 for those below, the bound's index). The tier stands right before
    the bound or before one noun and then the bound ("the Team plan and above"), with no
    punctuation between."""
    found = []
    for j, token in enumerate(tokens):
        way = 1 if token.key in _UPWARD else -1 if token.key in _DOWNWARD else 0
        for i in (j - 1, j - 2) if way else ():
            if i < 0 or not tokens[i + 1].joined:
                break
            if tokens[i].stem in keys:
                found.append((i, keys.index(tokens[i].stem), way, j))
                break
            if tokens[i].stop:
                break
    return found


@functools.lru_cache(maxsize=1 << 12)
def tier_reach(window: str, tiers: tuple[str, ...]) -> frozenset[str]:
    """The keys of the tiers `window` names by a bound: "the Team plan and above", with tiers
    Solo, Team, Business and Enterprise, names Team, Business and Enterprise; a claim may name
    any of them ("available on Business") or list them ("Team, Business and Enterprise")."""
    keys = _tier_keys(tiers)
    reach: set[str] = set()
    for _, rank, way, _ in _tier_bounds(read(window), keys):
        reach.update(keys[rank:] if way > 0 else keys[: rank + 1])
    return frozenset(reach)


def _tier_slot(tokens: tuple[Token, ...], i: int, keys: tuple[str, ...]) -> str:
    """The key of the word before the list of tiers that tokens[i] is in ("available on the
    Solo, Team and Business plans" gives "on"), or ""."""
    j = i - 1
    while j >= 0 and (tokens[j].stem in keys or tokens[j].word in ("and", "or", "the", "a")):
        j -= 1
    return tokens[j].key if j >= 0 else ""


def _tier_problem(claim: str, window: str, tiers: tuple[str, ...], written: frozenset[str]) -> str | None:
    """A tier the window's bound leaves out, named where the window puts the bound ("available
    on the Solo plan", "on Solo and Team" where it says "available on the Team plan and
    above"), or reached by a bound of the claim's own ("any Solo user or higher"), though Solo
    is named in another sentence of the context; and "only" (or "limited to") of some of the
    tiers the bound reaches. Only capitalised words are tiers (`written`: "your team" is
    none), and a claim that denies ("not on Solo") is left to the other checks."""
    keys = _tier_keys(tiers)
    whole = read(window)
    bounds = _tier_bounds(whole, keys)
    mine = read(claim)
    if not bounds or any(t.negation for t in mine):
        return None
    reach = tier_reach(window, tiers)
    slots = {_tier_slot(whole, i, keys): (i, end) for i, _, _, end in bounds}
    first = (bounds[0][0], bounds[0][3])

    def shown(slot: str) -> str:  # the window's bound in its words: "team plan and above"
        start, end = slots.get(slot, first)
        return " ".join(t.word for t in whole[start : end + 1])

    named_apart = {t.stem for t in whole if t.stem in keys} - {whole[i].stem for i, *_ in bounds}
    own = {i: (rank, way) for i, rank, way, _ in _tier_bounds(mine, keys)}  # "Team and below"
    said: set[str] = set()  # the tiers the claim names
    for i, token in enumerate(mine):
        if token.stem not in keys or token.stem not in written:
            continue
        rank, way = own.get(i, (keys.index(token.stem), 0))
        reached = keys[rank:] if way > 0 else keys[: rank + 1] if way < 0 else (token.stem,)
        said.update(reached)
        outside = [key for key in reached if key not in reach and key not in named_apart]
        slot = _tier_slot(mine, i, keys)  # a bound of the claim's own is about tiers anywhere
        if outside and (slot in slots or i in own):
            return f"names {tiers[keys.index(outside[0])]}, which the context's '{shown(slot)}' leaves out"
    left = sorted(reach - said, key=keys.index)
    if said and left and _restricts(mine) and not _restricts(whole):  # "limited to Business"
        return f"leaves out {tiers[keys.index(left[0])]}, which the context's '{shown('')}' reaches"
    return None


_RESTRICTING = frozenset({word_key("limited to"), word_key("restricted"), word_key("reserved")})


def _restricts(tokens: tuple[Token, ...]) -> bool:
    """Whether the words say "only" ("only", "exclusively", "limited to", "reserved for")."""
    quantifier = lexicon().quantifier
    return any(quantifier.get(t.key) == "only" or t.key in _RESTRICTING for t in tokens)


def _opening_name(window: tuple[Token, ...], j: int, named: frozenset[str] | set[str]) -> bool:
    """Whether window[j] is a name (in `named`), and not a quantifier capitalised because it
    opens a sentence ("Every workspace has ...")."""
    t = window[j]
    return t.stem in named and not t.stop and t.key not in lexicon().quantifier


def _named_before(
    window: tuple[Token, ...],
    noun: str,
    named: frozenset[str] | set[str],
    proper: frozenset[str] = frozenset(),
) -> set[str] | None:
    """The names right before each plural `noun` of the window ("the Business and Enterprise
    plans" gives Business and Enterprise), or None where the window says "every" or "any"
    of it too."""
    quantifier = lexicon().quantifier
    found: set[str] = set()
    for j, t in enumerate(window):
        if t.key != noun:
            continue
        if any(quantifier.get(u.key) == "all" for u in window[max(0, j - 4) : j]):
            return None  # the window says "every plan" too
        above = j + 1 < len(window) and window[j + 1].key == _AND_ABOVE  # "the Business plan and above"
        namer = window[j - 1] if j else None  # a name, not a code such as "2FA"
        named_before = namer is not None and _opening_name(window, j - 1, named)
        named_before = named_before and namer is not None and not any(c.isdigit() for c in namer.word)
        if named_before and (t.word.endswith("s") or above) and t.joined:
            found.add(window[j - 1].stem)  # "Enterprise customers", "Business and Enterprise plans"
            if j >= 3 and window[j - 2].word in ("and", "or") and window[j - 3].stem in named:
                found.add(window[j - 3].stem)
    return found


def _named_in_its_place(
    claim: tuple[Token, ...],
    at: int,
    window: tuple[Token, ...],
    named: frozenset[str] | set[str],
    proper: frozenset[str] = frozenset(),
) -> set[str]:
    """The names the window puts where the claim puts "every plan" (claim[at] is "every"): after
    the content word before it, said once in the window ("available on every plan" against
    "available on Business and Enterprise", "saves 20% on every plan" against "saves 20% on
    Solo, Team and Business"), or a name right before that word ("owners on any plan" against
    "Enterprise owners"). A list of names joined by commas, "and" or "or"; empty if the window
    says something else there."""
    anchor = next((t.key for t in reversed(claim[:at]) if not t.stop), None)
    places = [j for j, t in enumerate(window) if t.key == anchor]
    if anchor is None or len(places) != 1:
        return set()
    before = window[places[0] - 1] if places[0] else None
    if before is not None and window[places[0]].joined and _opening_name(window, places[0] - 1, named):
        return {before.stem}  # "owners on any plan" where the window says "Enterprise owners"
    found: set[str] = set()
    for t in window[places[0] + 1 : places[0] + 9]:
        if not found and not t.joined:
            break  # past punctuation ("Acme has four plans. Solo is $9"): not the claim's place
        if t.stem in named and not any(c.isdigit() for c in t.word):
            found.add(t.stem)
        elif not t.stop or (found and not t.joined):
            break  # a word of meaning, or punctuation and no name after it (", and overtime can ...")
    return found


def _universal_problem(
    claim: tuple[Token, ...],
    window: tuple[Token, ...],
    named: frozenset[str] | set[str],
    proper: frozenset[str] = frozenset(),
) -> str | None:
    """ "Any plan" (or "every", "all") where the window speaks of that noun, in the plural,
    only with names right before it ("the Business and Enterprise plans", "Enterprise
    customers"), none of which the claim gives; and "Business workspaces" where it names
    only "Enterprise workspaces" (`named`: the window's names and capitalised words; `proper`:
    the context's names, which alone may stand before a role noun such as "workspaces")."""
    quantifier, roles = lexicon().quantifier, lexicon().roles
    keys = {t.key for t in claim}
    for i, token in enumerate(claim):
        if quantifier.get(token.key) == "all":
            run = list(itertools.takewhile(lambda t: not t.stop and t.joined, claim[i + 1 : i + 4]))
            noun = next((t for t in reversed(run) if t.stem not in named), None)  # "every paid plan": plan
            if (noun is not None and noun.stem == "time") or (i and claim[i - 1].word in _COPULAS):
                continue  # "at all times" is "always"; "they are all required" says it of each
            restricted = _named_before(window, noun.key, named, proper) if noun is not None else None
            if noun is not None and restricted == set():  # the window never says the noun with names
                restricted = _named_in_its_place(claim, i, window, named, proper)
            if noun is not None and restricted and not restricted & keys:
                shown = sorted({t.word for t in window if t.stem in restricted})  # words, not stems
                return f"says '{token.word} {noun.word}' where the context names {', '.join(shown)}"
        elif (
            i + 1 < len(claim) and token.stem in proper and claim[i + 1].word in roles and claim[i + 1].joined
        ):
            restricted = _named_before(window, claim[i + 1].key, named, proper)
            together = any(  # the window says it too: "case patients"
                a.stem == token.stem and b.key == claim[i + 1].key for a, b in itertools.pairwise(window)
            )
            if restricted and token.stem not in restricted and not together:
                kind = claim[i + 1].word
                return f"says '{token.word} {kind}' where the context says '{sorted(restricted)[0]} {kind}'"
    return None


CLAUSE_SUPPORT = 0.5  # share of a clause's terms the context must hold, whatever the judge's score


def _clause_problem(claim: str, context: str) -> str | None:
    """A clause most of whose terms the context never uses is not the context's, however well
    the rest of the sentence is supported ("..., which includes unlimited storage")."""
    parts = clauses(claim)
    if len(parts) < 2:
        return None
    have = term_set(context)
    for part in parts:
        terms = content_terms(part)
        implied = implied_terms(part, context)  # "it is 10 minutes", of "10 by default"
        if terms and sum(term in have or term in implied for term in terms) / len(terms) < CLAUSE_SUPPORT:
            return f"the clause '{part}' is not in the context"
    return None


def _opens_condition(t: Token) -> bool:
    """Whether a word opens a condition: "when", "while", "once", "before"... (the openers of
    lexicon.toml), or a word of its [conditions] ("if", "unless", "as long as")."""
    lex = lexicon()
    return t.word in lex.openers["time"] or t.word in lex.openers["earlier"] or t.key in lex.condition


def _spans(tokens: tuple[Token, ...]) -> list[set[str]]:
    """The terms of each condition a reading states, from the word that opens it to where it
    ends (`_condition_end`)."""
    return [
        {u.key for u in tokens[i + 1 : _condition_end(tokens, i)] if not (u.stop or u.negation)}
        for i, t in enumerate(tokens)
        if _opens_condition(t)
    ]


def _only_a_number(claim: tuple[Token, ...], i: int) -> bool:
    """Whether claim[i] is the "only" of a number, which the quantity check compares: "only
    one trial", "only gets one trial" (a verb between); not "only the 100% alert"."""
    after = claim[i + 1 : i + 3]
    return bool(after) and (
        after[0].number is not None or (len(after) == 2 and not after[0].stop and after[1].number is not None)
    )


def _only_once(claim: tuple[Token, ...], i: int, window: tuple[Token, ...]) -> bool:
    """Whether claim[i] is the "only" of "can be used only once" (a frequency, at the end of its
    statement) where the window says so too ("single-use", "works only once")."""
    if i + 1 >= len(claim) or claim[i + 1].word != "once":
        return False
    if i + 2 < len(claim) and claim[i + 2].joined:
        return False  # "only once you confirm it": a condition
    return bool(_ONE_TIME.search(" ".join(t.word for t in window)))


def _only_after_a_step(claim: tuple[Token, ...], i: int, window: tuple[Token, ...]) -> bool:
    """Whether claim[i] is the "only" of "only after X" where X is a step the window orders
    ("scan the QR code, then enter the code"): the order itself is `_sequence_problem`'s."""
    if i + 1 >= len(claim) or claim[i + 1].word != "after":
        return False
    step = {t.key for t in claim[i + 2 : phrase_end(claim, i + 1)] if not t.stop}
    return any(step & (first | last) for first, last in _steps(window))


def _only_problem(claim: tuple[Token, ...], window: tuple[Token, ...]) -> str | None:
    """ "Only" (or "just", "solely") in the claim restricts what the window may not. "Only
    when ..." ("only if", "only works once", within three words) states a condition, which the
    window states too when it requires it ("SCIM requires SAML to be configured first") or
    makes a condition that says nothing the claim leaves out ("while a timer is running"; not
    "when it reaches 80% and 100%" for "only when it reaches 100%")."""
    lex = lexicon()
    table = lex.quantifier

    def only(t: Token) -> bool:  # "only", or a condition of it read as one word ("only when")
        return table.get(t.key) == "only" or t.word.startswith("only ")

    found = [
        i
        for i, t in enumerate(claim)
        if only(t)
        and not _only_a_number(claim, i)
        and not _only_once(claim, i, window)
        and not (i and claim[i - 1].word == "not")  # "not only owners" adds to them
    ]
    if not found or any(only(t) for t in window):
        return None
    if all(any(t.word in _RELATIVES for t in claim[i + 1 : i + 6]) for i in found) and _restricted(
        window, table
    ):
        return None  # "only goes to people who haven't submitted" of "goes to anyone who hasn't"
    conditional = all(  # "only if", "only when", "only works once"
        claim[i].word.startswith("only ") or any(_opens_condition(t) for t in claim[i + 1 : i + 4])
        for i in found
    )
    if conditional:
        if any(lex.modal.get(t.key) == "must" for t in window):
            return None
        if all(_only_after_a_step(claim, i, window) for i in found):
            return None  # "only after scanning it" of "scan it, then enter the code": an order of steps
        mine = {t.key for t in claim if not (t.stop or t.negation)}
        asked = set().union(*_spans(claim[found[0] :]))
        if any(span & asked and span <= mine for span in _spans(window)):
            return None
    return "says 'only', which the context does not"

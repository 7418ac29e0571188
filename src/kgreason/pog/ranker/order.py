"""Order-aware alignment of a question's relation words with a path's hops (issue 37).

Bag-of-words alignment cannot tell "the parent of [X]'s son" (children, then parents) from
"the son of [X]'s parent" (parents, then children). English puts the relation words in a
predictable order around the topic mention, whatever the KG:
    "[X] 's A 's B"          possessives after the topic read outwards: A is hop 1, B hop 2
    "the B of the A of [X]"  'of' phrases before the topic read from the topic back: A, B
    "which B is [X] 's A"    the wh-noun comes last, after the possessive chain: A, B
    "the B of [X] 's A"      possessives first, then the 'of' phrases: A, B
    "where was the A of [X] born"  words after the topic that no possessive links come last
    "the films of the [X] director"  an agent noun right after the topic (-er, -or, -ist,
                                      -ian, -ress, plural or not) reads as "[X] 's director";
                                      after do-support ("what did [X] direct") it is a verb
So the expected hop order is: the possessive chain after the topic (left to right), then the
phrases before the topic (nearest first), then the other words after it. A phrase is a run
of content words (`other half`, `parent company`); two phrases joined by 'of' may also be
read as one relation name (`place of birth`).

A path is scored by a monotone alignment (dynamic programming) of its hops, in order, with
the phrases in that order; each matched pair gains sim - tau, a hop matched to nothing
costs tau, a phrase no hop answers costs rho. So the score prefers the path whose hop k
answers the k-th phrase, and its length follows the number of phrases the question asks
with. A hop's relation is read forward through any of its clustered alternatives (`parents`
forward is often clustered with, and shown as, `children` backward); a hop that can only
be read backwards costs beta. No KG's vocabulary is involved: only an embedder's word and
relation-name vectors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kgreason.pog.ranker.features import MASK, mask_question
from kgreason.pog.ranker.words import STOPWORDS
from kgreason.pog.types import Hop, ReasoningPath

#: the ranker feature (features.scalars) of new artefacts: order_alignment's score
ORDER_SCALARS = ("order_align",)

#: a token: a possessive, or a word (`_`-joined compounds kept whole)
_TOKEN = re.compile(r"'s\b|[A-Za-z][A-Za-z'-]*(?:_[A-Za-z][A-Za-z'-]*)*")
#: words that may sit between two phrases that still name ONE relation ("place of birth")
_JOINERS = frozenset({"of"})
#: a noun that names who does something ("director", "actors", "screenwriters", "members")
_AGENT = re.compile(r"[a-z]+(?:er|or|ist|ian|ress)(?:e?s)?")
#: do-support: after these, the word following the subject is a verb ("did [X] discover")
_DO = frozenset({"do", "does", "did"})
_WH = frozenset({"which", "what"})


@dataclass(frozen=True)
class Phrase:
    """One content word of the question, in the question's expected hop order."""

    text: str
    #: this word and the NEXT one in hop order read as one relation name, in text order:
    #: two words of one run ("other half", "parent company"), or two runs joined by 'of'
    #: ("place of birth"); "" when they are neither
    joined: str = ""
    #: the join crosses an 'of' (then only a relation named in several words may take it:
    #: "parent of son" is two hops, "place of birth" one)
    across_of: bool = False


def _tokens(masked: str) -> list[str]:
    out = []
    for t in _TOKEN.findall(masked.replace("\u2019", "'")):
        if t.lower().endswith("'s") and len(t) > 2:
            out += [t[:-2], "'s"]
        else:
            out.append(t)
    return out


def _runs(tokens: list[str], stop: frozenset[str]) -> list[tuple[int, int]]:
    """(start, end) token spans of consecutive content words."""
    runs: list[tuple[int, int]] = []
    start = None
    for i, t in enumerate([*tokens, "'s"]):
        content = t != "'s" and t != MASK and t.lower() not in stop
        if content and start is None:
            start = i
        elif not content and start is not None:
            runs.append((start, i))
            start = None
    return runs


def question_phrases(masked: str, stop: frozenset[str]) -> tuple[list[Phrase], bool]:
    """(content words in expected hop order, whether the order is known). Runs of content
    words are ordered (the module's docstring); the words of a run keep their text order.
    The order is known when the topic mention (MASK) occurs once; otherwise the words come
    in text order."""
    toks = _tokens(masked)
    runs = _runs(toks, stop)

    def word(i: int) -> str:
        return toks[i].lower().replace("_", " ")

    def of_between(r1: tuple[int, int], r2: tuple[int, int]) -> bool:
        """r1 then r2 in the text, separated by 'of' (and articles) only."""
        between = [t.lower() for t in toks[r1[1] : r2[0]]]
        return bool(between) and between[0] in _JOINERS and set(between[1:]) <= {"the", "a"}

    def make(order: list[tuple[int, int]], pair: tuple[tuple[int, int], ...] = ()) -> list[Phrase]:
        out = []
        for n, r in enumerate(order):
            for i in range(*r):
                if i + 1 < r[1]:
                    out.append(Phrase(word(i), f"{word(i)} {word(i + 1)}"))
                    continue
                nxt = order[n + 1] if n + 1 < len(order) else None
                if nxt is None:
                    out.append(Phrase(word(i)))
                    continue
                first, second = (r, nxt) if r[0] < nxt[0] else (nxt, r)
                # the join reads the last word of the earlier run and the first of the later
                joined = ""
                single = r[1] - r[0] == 1 == nxt[1] - nxt[0]
                if of_between(first, second) and single:
                    joined = " ".join(
                        t.lower().replace("_", " ") for t in toks[first[0] : second[1]]
                    )
                elif (first, second) == pair and single:
                    # "which university did [X] attend": one relation, asked for twice
                    out.append(Phrase(word(i), f"{word(first[0])} {word(second[0])}"))
                    continue
                out.append(Phrase(word(i), joined, across_of=True))
        return out

    where = [i for i, t in enumerate(toks) if t == MASK]
    if len(where) != 1:
        return make(runs), False
    x = where[0]
    before = [r for r in runs if r[1] <= x]
    after = [r for r in runs if r[0] > x]
    chain: list[tuple[int, int]] = []
    if _agent_after(toks, x, after):
        # "[X] director": the noun is the first link of the chain, as "[X] 's director"
        toks = [*toks[: x + 1], "'s", *toks[x + 1 :]]
        runs = _runs(toks, stop)
        before = [r for r in runs if r[1] <= x]
        after = [r for r in runs if r[0] > x]
    if x + 1 < len(toks) and toks[x + 1] == "'s":
        # the possessive chain: runs linked by 's (or 'of' inside a name) from the topic on
        prev_end = x + 1
        for r in after:
            between = [t.lower() for t in toks[prev_end : r[0]]]
            if all(t in {"'s", "the", "a", *_JOINERS} for t in between):
                chain.append(r)
                prev_end = r[1]
            else:
                break
    rest = [r for r in after if r not in chain]
    if not (before and rest and not chain and _wh_noun(toks, before[0])):
        return make(chain + before[::-1] + rest), True
    # "in which region was the founder of [X] born": the verb after the subject is a hop,
    # and the wh-noun asks for the last one; a verb that ends the question after do-support
    # and the wh-noun may name one relation ("which university did [X] attend")
    pair = (before[0], rest[-1]) if _do_verb(toks, x, rest) else ()
    return make(before[:0:-1] + rest + [before[0]], pair), True


def _wh_noun(toks: list[str], run: tuple[int, int]) -> bool:
    """The run directly follows which / what at the start ("which university ...")."""
    return run[0] >= 1 and toks[run[0] - 1].lower() in _WH and run[0] <= 2


def _do_verb(toks: list[str], x: int, rest: list[tuple[int, int]]) -> bool:
    """One word after the topic ends the question, and do-support precedes the subject."""
    if len(rest) != 1 or rest[0][1] - rest[0][0] != 1:
        return False
    tail = [t for t in toks[rest[0][1] :] if t not in {"?", "."}]
    head = {t.lower() for t in toks[:x]}
    return not tail and bool(head & _DO)


def _agent_after(toks: list[str], x: int, after: list[tuple[int, int]]) -> bool:
    """An agent noun follows the topic (x) directly, not after do-support."""
    if not after or after[0][0] != x + 1 or _AGENT.fullmatch(toks[x + 1].lower()) is None:
        return False
    prev = [t.lower() for t in toks[:x] if t.lower() not in {"the", "a", "an"}]
    return not prev or prev[-1] not in _DO


def hop_order(question: str, mentions: Sequence[str] = ()) -> list[str]:
    """The question's relation phrases in the hop order its English implies (for tests and
    traces): "the parent of [X] 's son" -> ["son", "parent"]."""
    return [p.text for p in question_phrases(mask_question(question, mentions), STOPWORDS)[0]]


def monotone_alignment(
    single: np.ndarray,
    joined: np.ndarray,
    tau: float,
    rho: float,
    hop_cost: np.ndarray | None = None,
) -> np.ndarray:
    """Best monotone alignment score per path. single: (P, K, M) gain-free sims of hop k
    with phrase j (-inf where hop k does not exist); joined: (P, K, M) sims of hop k with
    phrases j and j+1 read as one (-inf where they cannot be). A path's hops are the first
    K' <= K (the rest -inf). Each matched pair gains sim - tau; an unmatched hop costs tau,
    an unmatched phrase rho; hop_cost (P, K), when given, is what an unmatched hop costs
    beyond tau (the callers put a backward hop's cost into `single` and here alike, so a
    hop read backwards costs the same matched or not). Vectorised over paths; K and M are
    small."""
    p, k_max, m = single.shape
    present = np.isfinite(single).any(2) if m else np.zeros((p, k_max), bool)
    if m == 0:
        return -tau * present.sum(1).astype(np.float64)
    n_hops = present.sum(1)
    extra = np.zeros((p, k_max)) if hop_cost is None else hop_cost
    neg = -np.inf
    # best[k, j]: hops < k and phrases < j consumed
    best = np.full((k_max + 1, m + 1, p), neg)
    best[0, 0] = 0.0
    for k in range(k_max + 1):
        for j in range(m + 1):
            cur = best[k, j]
            if j < m:  # phrase j answered by no hop
                best[k, j + 1] = np.maximum(best[k, j + 1], cur - rho)
            if k < k_max:
                live = present[:, k]
                # hop k matched to nothing
                unmatched = cur - tau - extra[:, k]
                best[k + 1, j] = np.maximum(best[k + 1, j], np.where(live, unmatched, neg))
                if j < m:
                    s = single[:, k, j]
                    best[k + 1, j + 1] = np.maximum(
                        best[k + 1, j + 1], np.where(live, cur + s - tau, neg)
                    )
                if j + 1 < m:
                    s2 = joined[:, k, j]
                    best[k + 1, j + 2] = np.maximum(
                        best[k + 1, j + 2], np.where(live, cur + s2 - tau, neg)
                    )
    return best[n_hops, m, np.arange(p)]


def reading_keys(path: ReasoningPath) -> tuple[tuple[str, bool], ...]:
    """Each hop's relation as read forward when the hop can be: the primary relation if it
    is forward, else the first forward one of the hop's clustered alternatives, else the
    primary (backward). "children" backward clustered with "parents" forward reads
    "parents", which is what the question asks with ("[X] 's father")."""
    return tuple(reading_key(h) for h in path.hops)


def reading_key(hop: Hop) -> tuple[str, bool]:
    """One hop's reading (reading_keys)."""
    keys = hop.relation_keys()
    return next((k for k in keys if k[1]), keys[0])


def order_alignment(
    phrases: Sequence[Phrase],
    known: bool,
    unit_vectors: Callable[[Sequence[str]], np.ndarray],
    rel: np.ndarray,
    sign: np.ndarray,
    rel_texts: Sequence[str],
    *,
    tau: float = 0.1,
    rho: float = 0.1,
    beta: float = 0.5,
    adaptive: bool = True,
    rel_vectors: np.ndarray | None = None,
) -> np.ndarray:
    """The monotone alignment score of each path with the question's phrases (in their hop
    order; the better of text order and its reverse when the order is not known).
    rel: (n, K) index into `rel_texts` per hop (-1 = none; hops first); sign: (n, K) +1
    forward, -1 backward (a backward hop costs beta); unit_vectors: texts -> unit vectors
    (cached by the caller); rel_vectors: unit_vectors(rel_texts) when the caller has them.
    adaptive: tau is added to the median similarity of the phrases with the relation texts
    the paths use (the encoders' scales differ: MiniLM's unrelated pairs are more similar
    than static's), so it depends on this question's candidates only, as at ask time."""
    m = len(phrases)
    rv = rel_vectors if rel_vectors is not None else unit_vectors(list(rel_texts))
    one = np.full((m, len(rel_texts)), -np.inf, np.float32)
    two = np.full((m, len(rel_texts)), -np.inf, np.float32)
    if m and len(rel_texts) and len(rel):
        one[:] = unit_vectors([p.text for p in phrases]) @ rv.T
        # two words across an 'of' are read as one name only by a relation named in several
        one_word = np.array([len(t.split()) < 2 for t in rel_texts])
        for j, ph in enumerate(phrases):
            if ph.joined:
                two[j] = unit_vectors([ph.joined])[0] @ rv.T
                if ph.across_of:
                    two[j, one_word] = -np.inf
    present = rel >= 0
    idx = np.maximum(rel, 0)
    used = np.unique(rel[present])
    if adaptive and m and len(used):
        tau = tau + float(np.median(one[:, used]))
    cost = np.where(present & (sign < 0), beta, 0.0)
    back = cost[:, :, None]
    single = np.where(present[:, :, None], one.T[idx] - back, -np.inf)  # (n, K, M)
    joined = np.where(present[:, :, None], two.T[idx] - back, -np.inf)
    score = monotone_alignment(single, joined, tau, rho, cost)
    if not known and m > 1:  # order unknown: the better of text order and its reverse
        rev_joined = np.full_like(joined, -np.inf)
        rev_joined[:, :, :-1] = joined[:, :, ::-1][:, :, 1:]
        rev = monotone_alignment(single[:, :, ::-1], rev_joined, tau, rho, cost)
        score = np.maximum(score, rev)
    return score

"""Name and span lookups rewritten against super-linear request and reply text
(tests/security/test_server_parsers_llm.py holds the attacks) return what the old loops
returned: rejoining split answer names, the LKG linker, fallback entities, exact-span links
and SPARQL search fragments; each old form is kept here as the oracle, and hypothesis
compares the two (the reply readers' twins: test_server_parsers_equivalence.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kgreason.kg.ranking import normalize_name
from kgreason.kg.sparql.search import _fragments
from kgreason.lkg.construction import _Linker
from kgreason.lkg.ids import lkg_name_key
from kgreason.lkg.retrieval import _STOP, fallback_entities
from kgreason.lkg.types import LKGraph, Node
from kgreason.pog.answering import MAX_NAME_PARTS, rejoin_names
from kgreason.pog.linking import _exact_ends, _holds_exact, _Span
from kgreason.pog.types import TopicEntity


def _old_rejoin(names: list[str], known: Callable[[str], bool]) -> list[str]:
    out, i = [], 0
    while i < len(names):
        for j in range(len(names), i + 1, -1):
            if known(", ".join(names[i:j])) and not all(known(x) for x in names[i:j]):
                out.append(", ".join(names[i:j]))
                i = j
                break
        else:
            out.append(names[i])
            i += 1
    return out


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=MAX_NAME_PARTS), st.data())
def test_rejoin_names_matches_the_old_loop_up_to_its_span(names, data):
    spans = [", ".join(names[i:j]) for i in range(len(names)) for j in range(i + 1, len(names) + 1)]
    known = set(data.draw(st.lists(st.sampled_from(spans), max_size=6))) if spans else set()
    assert rejoin_names(names, known.__contains__) == _old_rejoin(names, known.__contains__)


class _OldLinker(_Linker):
    def resolve(self, name: str) -> tuple[list[str], bool]:
        key = lkg_name_key(name)
        if key in self.by_name:
            return self.by_name[key], False
        squashed = key.replace(" ", "")
        hits = [i for k, ids in self.by_name.items() if k.replace(" ", "") == squashed for i in ids]
        return hits, bool(hits)


_NAMES = st.lists(
    st.sampled_from(["ab", "a b", "A B", "the ab", "abc", "a bc", "ab c"]), max_size=6
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _NAMES), max_size=12))
def test_linker_resolves_as_the_old_scan(ops):
    new, old = _Linker(LKGraph()), _OldLinker(LKGraph())
    for k, (add, names) in enumerate(ops):
        if add:
            node = Node(
                id=f"n{k % 4}", kind="entity", name=names[0] if names else "x", aliases=names[1:]
            )
            new.add(node)
            old.add(node)
        for name in names:
            assert new.resolve(name) == old.resolve(name)


def _old_fallback(index: Any, query: str, max_n: int = 4) -> list[str]:
    words = lkg_name_key(query).split()
    found: list[str] = []
    grams: list[str] = []
    for n in range(max_n, 0, -1):
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i : i + n])
            ids = index.names.get(gram)
            if gram in _STOP or not ids or any(f" {gram} " in f" {g} " for g in grams):
                continue
            grams.append(gram)
            found.append(index.nodes[ids[0]].name)
    return found


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=12), st.sets(st.text("abcd ", max_size=8)))
def test_fallback_entities_match_the_old_scan(query, names):
    index = SimpleNamespace(names={}, nodes={})
    for k, name in enumerate(sorted(names)):
        index.names.setdefault(lkg_name_key(name), []).append(f"n{k}")
        index.nodes[f"n{k}"] = SimpleNamespace(name=name)
    text = " ".join(w * 3 for w in query)
    assert fallback_entities(index, text) == _old_fallback(index, text)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 3), st.sampled_from("ab"), st.booleans()))
)
def test_exact_span_lookup_matches_the_old_scan(raw):
    spans = [
        _Span(i, n, TopicEntity(e, e, method="exact" if x else "fuzzy"), False)
        for i, n, e, x in raw
    ]
    ends = _exact_ends(spans)
    for s in spans:
        old = any(
            e.link.method == "exact" and e.link.id == s.link.id and s.start <= e.start
            and e.start + e.n <= s.start + s.n
            for e in spans
        )  # fmt: skip
        assert _holds_exact(s, ends) == old


def _old_fragments(text: str) -> list[str]:
    frags: list[str] = []
    for tok in re.findall(r"[a-z0-9]+", normalize_name(text)):
        grams = [tok] if len(tok) <= 3 else [tok[i : i + 3] for i in range(len(tok) - 2)]
        frags.extend(g for g in grams if g not in frags)
    return frags[:24]


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="abcd 1_", max_size=200))
def test_candidate_filter_fragments_match_the_old_loop(text):
    assert _fragments(text) == _old_fragments(text)

"""MetaQA and PathQuestion questions with KGs built from their own files, for PoG tests.

Expected answers are computed by following the question's gold relation chain in the KG
itself (MetaQA's KB here is incomplete, see its PROVENANCE), and a question is used only
when that agrees with the dataset's gold answers, so a test checks PoG, not the data.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from tests.data import SKIP_REASON, SMALL_DATA, shared_data_dir

from kgreason.kg.base import Triple
from kgreason.kg.bundled import bundled_kb_file
from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG

METAQA = SMALL_DATA / "kgqa" / "metaqa"  # dev slices vendored in tests/data
_SHARED = shared_data_dir()
PQ = _SHARED / "kgqa" / "pathquestion" / "PathQuestion" if _SHARED else None  # not vendored

#: MetaQA question-type words -> the KB relation joining a movie to that type
_METAQA_REL = {
    "director": "directed_by",
    "writer": "written_by",
    "actor": "starred_actors",
    "year": "release_year",
    "language": "in_language",
    "tag": "has_tags",
    "tags": "has_tags",
    "genre": "has_genre",
    "imdbvotes": "has_imdb_votes",
    "imdbrating": "has_imdb_rating",
}


@dataclass(frozen=True)
class Case:
    question: str
    topic: str
    #: (relation, forward) steps of the gold path from the topic entity
    chain: tuple[tuple[str, bool], ...]
    answers: frozenset[str]


def metaqa_kg() -> MemoryKG:
    """The package's bundled MetaQA KB (the distinct triples of kb_ids_incomplete)."""
    return MemoryKG(list(Source(bundled_kb_file())), name="metaqa-kb-incomplete")


def pathquestion_kg(hops: int = 2) -> MemoryKG:
    if PQ is None:
        pytest.skip(f"PathQuestion is not vendored (no licence): {SKIP_REASON}")
    rows = (ln.rstrip("\n").split("\t") for ln in (PQ / f"{hops}H-kb.txt").open(encoding="utf-8"))
    return MemoryKG([tuple(r) for r in rows if len(r) == 3], name=f"pathquestion-{hops}H")


class Follow:
    """Direct traversal of a MemoryKG's triples (independent of PoG's path search)."""

    def __init__(self, triples: set[Triple]):
        self.out: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.inn: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in triples:
            self.out[(t.head, t.relation)].add(t.tail)
            self.inn[(t.tail, t.relation)].add(t.head)

    def chain(self, start: str, chain: tuple[tuple[str, bool], ...]) -> set[str]:
        cur: set[str] = {start}
        prev: tuple[set[str], tuple[str, bool] | None] = (set(), None)
        for rel, fwd in chain:
            nxt: set[str] = set()
            for e in cur:
                nxt |= self.out[(e, rel)] if fwd else self.inn[(e, rel)]
            if prev[1] == (rel, not fwd):  # like PoG's paths: no step straight back
                nxt -= prev[0]
            prev = (cur, (rel, fwd))
            cur = nxt
        return cur - {start}


def metaqa_chain(qtype: str) -> tuple[tuple[str, bool], ...]:
    kinds = qtype.split("_to_")
    steps = []
    for a, b in itertools.pairwise(kinds):
        if a == "movie":
            steps.append((_METAQA_REL[b], True))
        else:
            steps.append((_METAQA_REL[a], False))
    return tuple(steps)


def metaqa_cases(
    kg: MemoryKG, hops: int, n: int, follow: Follow, max_answers: int = 8
) -> list[Case]:
    """The first `n` dev questions whose KB answers equal the gold ones (at most
    `max_answers`, names without ', ' so they can be read back from a rendered set)."""
    qs = (METAQA / f"{hops}-hop" / "dev.txt").open(encoding="utf-8")
    types = (METAQA / f"{hops}-hop" / "qa_dev_qtype.txt").open(encoding="utf-8")
    out: list[Case] = []
    for line, qtype in zip(qs, types, strict=False):
        q, gold = line.rstrip("\n").split("\t")
        topic = re.search(r"\[([^\]]+)\]", q).group(1)
        chain = metaqa_chain(qtype.strip())
        got = follow.chain(topic, chain)
        gold_set = set(gold.split("|"))
        if got == gold_set and len(got) <= max_answers and not any(", " in g for g in got):
            out.append(Case(q, topic, chain, frozenset(got)))
            if len(out) == n:
                break
    return out


def pathquestion_cases(follow: Follow, n: int, hops: int = 2) -> Iterator[Case]:
    seen: set[str] = set()
    count = 0
    for line in (PQ / f"PQ-{hops}H.txt").open(encoding="utf-8"):
        q, ans, path = line.rstrip("\n").split("\t")
        parts = path.split("#")
        topic, rels = parts[0], tuple((r, True) for r in parts[1 : 2 * hops : 2])
        gold = {a for a in ans[ans.index("(") + 1 : ans.rindex(")")].split("/") if a}
        if topic in seen or follow.chain(topic, rels) != gold:
            continue
        seen.add(topic)
        yield Case(q, topic, rels, frozenset(gold))
        count += 1
        if count == n:
            return

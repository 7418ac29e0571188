"""BranchReduceSelect per entity (section 4.3: "for each entity e in the entity list, we
extract the initial D-step paths ... into a new set Paths_e. If the number of Paths_e
exceeds W_max, these paths are pruned using precise path selection"), the default; one
selection over the union of every entity's branches is `pog.branch_selection = "union"`."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from tests.pog.scripted_pog import shown_paths
from tests.pog.test_e2e_nijmegen import FRANCE, NIJMEGEN, QUESTION, load_fixture, script

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.kg.base import Triple
from kgreason.llm.testing import ScriptedLLM
from kgreason.pog.branch import branch_reduce_select
from kgreason.pog.clustering import ClusteredGraph
from kgreason.pog.paths import topic_entity_paths
from kgreason.pog.pipeline import PoG
from kgreason.pog.settings import PoGSettings
from kgreason.pog.types import ReasoningPath

#: a -r_i-> m_i -s_i-> x, i = 1..3: three paths joining the two topic entities a and x
TRIPLES = [Triple("a", f"r{i}", f"m{i}") for i in (1, 2, 3)] + [
    Triple(f"m{i}", f"s{i}", "x") for i in (1, 2, 3)
]
#: a selector's taste: a's r1, r2 and x's s3, s2 first; a union selection of 2 keeps only
#: a's branches, so x has no say
PREFERENCE = ["r1", "r2", "s3", "s2", "r3", "s1"]


def _paths() -> list[ReasoningPath]:
    g = ClusteredGraph.from_triples(TRIPLES)
    paths = topic_entity_paths(g, ["a", "x"], 1, max_paths=10).paths
    assert len(paths) == 3
    return list(paths)


def _selector(calls: list[list[ReasoningPath]]):
    async def select(cands: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
        calls.append(list(cands))
        return sorted(cands, key=lambda c: PREFERENCE.index(c.hops[0].relation))[:w]

    return select


def _rels(paths: Sequence[ReasoningPath]) -> list[list[str]]:
    return sorted([h.relation for h in p.hops] for p in paths)


async def test_per_entity_selects_each_entitys_branches_apart():
    calls: list[list[ReasoningPath]] = []
    res = await branch_reduce_select(_paths(), ["a", "x"], 2, 1, _selector(calls))
    # one selection per entity, each among that entity's own three branches
    assert [sorted(c.entity_list for c in call) for call in calls] == [[("a",)] * 3, [("x",)] * 3]
    assert res.selector_calls == 2
    # a kept r1, r2; x kept s3, s2: the path whose both branches were kept is m2's
    assert _rels(res.paths) == [["r2", "s2"]]
    assert res.rounds[0]["branches"] == 6 and res.rounds[0]["kept"] == 4


async def test_union_is_one_selection_over_every_branch():
    calls: list[list[ReasoningPath]] = []
    res = await branch_reduce_select(_paths(), ["a", "x"], 2, 1, _selector(calls), per_entity=False)
    assert [len(c) for c in calls] == [6] and res.selector_calls == 1
    # the union kept a's r1 and r2 only: x's branches had no say
    assert _rels(res.paths) == [["r1", "s1"], ["r2", "s2"]]


async def test_one_entity_is_the_same_either_way():
    g = ClusteredGraph.from_triples(TRIPLES)
    paths = list(topic_entity_paths(g, ["a"], 2, max_paths=10).paths)
    got = []
    for per_entity in (True, False):
        calls: list[list[ReasoningPath]] = []
        res = await branch_reduce_select(
            paths, ["a"], 2, 3, _selector(calls), per_entity=per_entity
        )
        got.append((_rels(res.paths), [len(c) for c in calls]))
    assert got[0] == got[1]


def test_setting_default_and_values():
    assert PoGSettings().branch_selection == "per-entity"
    assert PoGSettings(branch_selection="union").branch_selection == "union"
    with pytest.raises(ValueError):
        PoGSettings(branch_selection="each")


@pytest.mark.parametrize("selection", ["per-entity", "union"])
def test_the_pipeline_uses_the_setting(selection: str):
    s = PoGSettings(strategy="fuzzy-branch", branch_selection=selection)
    # a summary of every kept path (the fixture's default summarises the first only, and
    # the two selections keep the answer's path in different places)
    llm = ScriptedLLM(script(summarise=lambda m: "summary: " + " ; ".join(shown_paths(m))))
    embedder = build_embedder(EmbedSettings(backend="static"))
    r = PoG(load_fixture(), llm, embedder, s).ask(QUESTION, topic_entities=[NIJMEGEN, FRANCE])
    assert r.ok, r.error
    steps = [st for t in r.trace for st in t.get("pruning", []) if st["step"] == "branch"]
    assert steps and all(st["selection"] == selection for st in steps)
    assert r.phase == "topic-entity-path" and [a.name for a in r.answers] == ["Germany"]


async def test_per_entity_survivors_come_out_best_first():
    """With a selection per entity no one ranking orders the paths: the survivors are
    sorted by their branches' places (r2 and s2 first here), so the next step, or a
    summary of the first path, sees the preferred path first."""
    calls: list[list[ReasoningPath]] = []
    prefer = ["r2", "r1", "s2", "s1", "r3", "s3"]

    async def select(cands: Sequence[ReasoningPath], w: int) -> list[ReasoningPath]:
        calls.append(list(cands))
        return sorted(cands, key=lambda c: prefer.index(c.hops[0].relation))[:w]

    paths = _paths()
    assert [p.hops[0].relation for p in paths][:2] == ["r1", "r2"]  # the candidates' order
    res = await branch_reduce_select(paths, ["a", "x"], 2, 1, select)
    assert [[h.relation for h in p.hops] for p in res.paths] == [["r2", "s2"], ["r1", "s1"]]
    union = await branch_reduce_select(paths, ["a", "x"], 2, 1, select, per_entity=False)
    assert [[h.relation for h in p.hops] for p in union.paths] == [["r1", "s1"], ["r2", "s2"]]

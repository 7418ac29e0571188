"""BranchReduceSelect (section 4.3, Algorithm 2), with the selector plugged in.

    D = 1
    while |Paths_c| >= W and D <= D_max:
        for e in list:                                          # per entity (the default)
            Paths_e = ExtractHeadSteps(Paths_c, e, D)
            if |Paths_e| > W: Paths_e = select(Paths_e, W)      # PrecisePathSelect in PoG
            kept += Paths_e
        Paths_c = IntersectMatchUpdate(kept, Paths_c)
        D += 1
    if |Paths_c| > W: Paths_c = select(Paths_c, W)

Per entity is section 4.3's prose ("for each entity e ... into a new set Paths_e. If the
number of Paths_e exceeds W_max, these paths are pruned"); Algorithm 2 writes
`Paths_e <- Paths_e U ExtractHeadSteps(...)` inside the loop with Paths_e emptied after it,
which also reads as one growing set. `per_entity=False` (pog.branch_selection = "union") is
one selection over the union of every entity's branches: one selector call a round instead
of one per entity, but the selector may keep only one entity's branches (the others then
have no say in IntersectMatchUpdate). Per entity, the surviving paths come out best first
(by their branches' places in the entities' selections, as a Selector's output does); the
union keeps the candidates' order, as before.

`select` is any async callable `select(paths, W) -> paths` (best first): the LLM stage passes
PrecisePathSelect (`pruning.py`); any other selector works the same way.

Definitions where Algorithm 2 is terse:
- ExtractHeadSteps(p, e, D): the D hops of p that start where entity e sits on p (the first
  node set containing e), read forward; when e ends the path (the last topic of an entity
  path), the D hops that end at e. Paths whose head steps follow the same relation sequence
  from e share one branch (the first such sub-path represents it); that is what shrinks the
  selector's input from paths to branches.
- IntersectMatchUpdate: a path survives when, for every list entity whose branches were
  kept by the selector, the path's branch from that entity is among the kept ones. If no
  path satisfies all entities at once, paths matching any kept branch survive instead (so a
  selector that kept branches of only one entity cannot empty the candidate set).

API:
    Selector = Callable[[Sequence[ReasoningPath], int], Awaitable[list[ReasoningPath]]]
    extract_head_steps(path, entity, d) -> ReasoningPath | None
    await branch_reduce_select(paths, entity_list, w, d_max, select, per_entity=True)
        -> BranchResult
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from kgreason.pog.types import ReasoningPath

Selector = Callable[[Sequence[ReasoningPath], int], Awaitable[list[ReasoningPath]]]

BranchKey = tuple[str, bool, tuple[tuple[str, bool], ...]]


def _position(path: ReasoningPath, entity: str) -> int | None:
    """Index of the first node set of `path` containing `entity` (0 = src of hop 0)."""
    if path.hops and entity in path.hops[0].src:
        return 0
    for i, h in enumerate(path.hops, 1):
        if entity in h.dst:
            return i
    return None


def _head(path: ReasoningPath, entity: str, d: int) -> tuple[BranchKey, ReasoningPath] | None:
    i = _position(path, entity)
    if i is None:
        return None
    n = len(path.hops)
    if i < n:
        hops, forward = path.hops[i : i + d], True
    else:
        hops, forward = path.hops[max(0, i - d) : i], False
    key = (entity, forward, tuple((h.relation, h.forward) for h in hops))
    return key, ReasoningPath(hops, (entity,))


def extract_head_steps(path: ReasoningPath, entity: str, d: int) -> ReasoningPath | None:
    got = _head(path, entity, d)
    return got[1] if got else None


def _sig(p: ReasoningPath) -> tuple:
    return tuple((h.src, h.relation, h.forward, h.dst) for h in p.hops)


@dataclass
class BranchResult:
    paths: list[ReasoningPath]
    selector_calls: int = 0
    #: per round: depth, candidates in, branches, branches kept, candidates out
    rounds: list[dict[str, int]] = field(default_factory=list)


def intersect_match_update(
    candidates: Sequence[ReasoningPath],
    keys_per_path: Sequence[dict[str, BranchKey]],
    kept: set[BranchKey],
) -> list[ReasoningPath]:
    kept_entities = {k[0] for k in kept}
    strict, loose = [], []
    for p, keys in zip(candidates, keys_per_path, strict=True):
        relevant = [k for e, k in keys.items() if e in kept_entities]
        if relevant and all(k in kept for k in relevant):
            strict.append(p)
        if any(k in kept for k in keys.values()):
            loose.append(p)
    return strict or loose


def _best_first(
    survivors: list[ReasoningPath],
    cand: Sequence[ReasoningPath],
    keys_per_path: Sequence[dict[str, BranchKey]],
    rank: dict[BranchKey, int],
    w: int,
) -> list[ReasoningPath]:
    """Per-entity survivors, best first as a Selector's output is: by the summed places of
    their branches in the entities' selections (stable, so ties keep the earlier order).
    With one selection per entity no single ranking orders the paths otherwise."""
    keys = {id(p): k for p, k in zip(cand, keys_per_path, strict=True)}
    return sorted(survivors, key=lambda p: sum(rank.get(k, w) for k in keys[id(p)].values()))


async def branch_reduce_select(
    paths: Sequence[ReasoningPath],
    entity_list: Sequence[str],
    w: int,
    d_max: int,
    select: Selector,
    *,
    per_entity: bool = True,
) -> BranchResult:
    cand = list(paths)
    res = BranchResult(cand)
    d = 1
    while len(cand) >= w and d <= d_max and cand:
        reps: dict[BranchKey, ReasoningPath] = {}
        keys_per_path: list[dict[str, BranchKey]] = []
        for p in cand:
            keys: dict[str, BranchKey] = {}
            for e in entity_list:
                got = _head(p, e, d)
                if got is not None:
                    keys[e] = got[0]
                    reps.setdefault(got[0], got[1])
            keys_per_path.append(keys)
        branches = list(reps.values())
        groups = (
            [{k: v for k, v in reps.items() if k[0] == e} for e in dict.fromkeys(entity_list)]
            if per_entity
            else [reps]
        )
        rank: dict[BranchKey, int] = {}  # a kept branch's place in its selection
        for group in groups:
            if len(group) > w:
                res.selector_calls += 1
                chosen = await select(list(group.values()), w)
                by_sig = {_sig(v): k for k, v in group.items()}
                for i, k in enumerate(by_sig[s] for s in map(_sig, chosen) if s in by_sig):
                    rank.setdefault(k, i)
            else:
                rank.update(dict.fromkeys(group, 0))
        kept = set(rank)
        before = len(cand)
        if kept:
            survivors = intersect_match_update(cand, keys_per_path, kept)
            cand = _best_first(survivors, cand, keys_per_path, rank, w) if per_entity else survivors
        res.rounds.append(
            {
                "depth": d,
                "candidates_in": before,
                "branches": len(branches),
                "kept": len(kept),
                "candidates_out": len(cand),
            }
        )
        d += 1
    if len(cand) > w:
        res.selector_calls += 1
        cand = list(await select(cand, w))
    res.paths = cand
    return res

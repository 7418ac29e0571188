"""The facts ToG's reasoning and answer prompts show: the triples of the N paths (ToG), or
their relation chains with the entities reached (ToG-R)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgreason.tog.types import BeamPath


def facts(paths: Sequence[BeamPath], names: Mapping[str, str], variant: str) -> list[str]:
    def n(x: str) -> str:
        return names.get(x, x)

    if variant == "tog-r":
        chains: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for p in paths:
            chains.setdefault((p.topic, p.relations), []).append(n(p.end))
        return [
            f"{n(topic)} -> {' -> '.join(rels)}: {', '.join(dict.fromkeys(ends))}"
            for (topic, rels), ends in chains.items()
        ]
    seen: dict[str, None] = {}
    for p in paths:
        for t in p.triples:
            seen.setdefault(f"({n(t.head)}, {t.relation}, {n(t.tail)})")
    return list(seen)

"""`GET /v1/kg/search` is prefix-aware: the explorer's search box sends partial words while
the user types, so a prefix of a name finds it after exact and normalised matches and
before fuzzy ones (the KG layer's ranking: tests/kg/test_search_prefix.py)."""

from __future__ import annotations

from kgreason.server.service import Service


def test_partial_name_finds_the_entity_ranked_first(warm: Service) -> None:
    hits = warm.search("Once Were Warr", limit=5)
    assert hits[0]["id"] == "Once Were Warriors" and hits[0]["kind"] == "prefix"
    assert 0 < hits[0]["score"] < 1
    hits = warm.search("once were w", limit=5)
    assert hits[0]["id"] == "Once Were Warriors"


def test_shorter_prefix_lists_completions_before_fuzzy_matches(warm: Service) -> None:
    hits = warm.search("Schindler", limit=5)
    assert hits[0]["name"] == "Schindler's List" and hits[0]["kind"] == "prefix"
    kinds = [h["kind"] for h in hits]
    assert kinds == sorted(kinds, key=["exact", "normalized", "prefix", "fuzzy"].index)
    hits = warm.search("Star Wa", limit=10)
    names = [h["name"] for h in hits if h["kind"] == "prefix"]
    assert names and all(n.lower().startswith("star wa") for n in names)
    lengths = [len(n) for n in names]
    assert lengths == sorted(lengths)  # the shortest completion first


def test_exact_match_still_first(warm: Service) -> None:
    hits = warm.search("Heat", limit=5)
    assert hits[0] == {**hits[0], "id": "Heat", "kind": "exact"}
    assert any(h["kind"] == "prefix" and h["name"].lower().startswith("heat") for h in hits)

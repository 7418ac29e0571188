"""kg.noise_filter: the PoG paper's setting, no filter (Appendix D's queries have none and
Table 9's third path walks `common.topic.notable_types`), is the default; "tog" drops ToG's
list (its released code's abandoned relations). ToG's own pipeline keeps ToG's list."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kgreason.config import load_settings
from kgreason.kg.base import Triple
from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG
from kgreason.kg.open import open_kg
from kgreason.kg.settings import NOISE_FILTERS, TOG_NOISE_PREFIXES, KGSettings
from kgreason.kg.sparql import queries as Q
from kgreason.kg.sparql.dialects import FREEBASE
from kgreason.kg.store import build_store
from kgreason.tog.relations import Neighbourhood
from kgreason.tog.settings import ToGSettings

#: Table 9's third example: the continent is reached through common.topic.notable_types
TRIPLES = [
    ("m.cz", "time.time_zone.locations_in_this_time_zone", "m.am"),
    ("m.am", "common.topic.notable_types", "m.cont"),
    ("m.am", "location.location.contains", "m.fk"),
    ("m.am", "type.object.type", "location.continent"),
    ("m.am", "freebase.valuenotation.has_value", "m.x"),
]


def _tsv(tmp_path: Path) -> Path:
    f = tmp_path / "g.tsv"
    f.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in TRIPLES))
    return f


def test_default_is_no_filter_and_tog_is_tog_list():
    assert KGSettings().noise_filter == "none" and KGSettings().noise_prefixes == []
    tog = KGSettings(noise_filter="tog")
    assert tog.noise_prefixes == list(TOG_NOISE_PREFIXES) == list(NOISE_FILTERS["tog"])
    assert "common." in tog.noise_prefixes and "type.object." in tog.noise_prefixes
    # an explicit list is a custom filter, and says so
    custom = KGSettings(noise_prefixes=["has_"])
    assert custom.noise_filter == "custom" and custom.noise_prefixes == ["has_"]
    assert KGSettings(noise_prefixes=list(TOG_NOISE_PREFIXES)).noise_filter == "tog"
    # what a settings dump holds loads back to the same settings
    for s in (KGSettings(), tog, custom):
        assert KGSettings(**s.model_dump()) == s
    with pytest.raises(ValueError, match="noise_filter"):
        KGSettings(noise_filter="tog", noise_prefixes=["has_"])
    with pytest.raises(ValueError, match="noise_prefixes"):
        KGSettings(noise_filter="custom")
    env = {"KGREASON_KG__NOISE_FILTER": "tog"}
    assert load_settings(environ=env).settings.kg.noise_prefixes == list(TOG_NOISE_PREFIXES)


@pytest.mark.parametrize("backend", ["memory", "store"])
def test_both_filters_on_an_opened_kg(tmp_path: Path, backend: str):
    f = _tsv(tmp_path)
    if backend == "store":
        build_store([Source(f)], tmp_path / "store")
        where = {"backend": "store", "store": tmp_path / "store"}
    else:
        where = {"backend": "memory", "files": [f]}
    for noise, want in (
        ("none", {r for h, r, t in TRIPLES if "m.am" in (h, t)}),
        ("tog", {"location.location.contains", "time.time_zone.locations_in_this_time_zone"}),
    ):
        kg = open_kg(KGSettings(**where, noise_filter=noise))
        try:
            got = asyncio.run(kg.neighbors(["m.am"]))["m.am"]
        finally:
            kg.close()
        assert {n.relation for n in got} == want, noise


def test_sparql_query_filters_only_under_tog():
    none = Q.neighbors_query(FREEBASE, ["m.am"], tuple(KGSettings().noise_prefixes), named=False)
    tog = Q.neighbors_query(
        FREEBASE, ["m.am"], tuple(KGSettings(noise_filter="tog").noise_prefixes), named=False
    )
    assert "common." not in none and "FILTER(!(" not in none
    assert "http://rdf.freebase.com/ns/common." in tog and "FILTER(!(" in tog


def test_tog_keeps_its_own_filter_on_an_unfiltered_kg():
    kg = MemoryKG([Triple(*t) for t in TRIPLES], {}, noise_prefixes=())
    assert ToGSettings().noise_filter == "tog"
    for noise, has_common in (("tog", False), ("none", True)):
        hood = Neighbourhood(kg, ToGSettings(noise_filter=noise))
        asyncio.run(hood.fetch(["m.am"]))
        rels = {n.relation for n in hood.of("m.am")}
        assert ("common.topic.notable_types" in rels) is has_common, noise
        assert ("type.object.type" in rels) is has_common, noise
        assert "location.location.contains" in rels

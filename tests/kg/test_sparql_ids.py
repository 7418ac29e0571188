"""ID validation and literal escaping: nothing hostile reaches SPARQL query text."""

from __future__ import annotations

import httpx
import pyoxigraph as ox
import pytest

from kgreason.kg.base import InvalidIdentifierError, Triple
from kgreason.kg.sparql import SparqlClient, SparqlKG, ids
from kgreason.kg.sparql import search as S
from kgreason.kg.sparql.dialects import FREEBASE, GENERIC, WIKIDATA

HOSTILE_SUFFIXES = [
    "> } ; DROP ALL ; #",
    "}",
    "> <x",
    '"',
    "'",
    "\n",
    "\r\nSELECT",
    " ",
    "#comment",
    "\u200b",  # zero-width space
    "\u0000",
    "\\u003E",
    "%",
    "{",
]


@pytest.mark.parametrize(
    "check, good",
    [
        (ids.freebase_entity, ["m.0k3f7", "g.11bc2xk4r9", "m.0j9_k", "location.country"]),
        (ids.freebase_relation, ["location.location.containedby", "type.object.name"]),
        (ids.wikidata_entity, ["Q183", "P17", "L7"]),
        (ids.wikidata_property, ["P47"]),
        (
            ids.iri,
            ["http://example.org/a#b", "urn:isbn:0451450523", "http://x.org/a%20b?q=1&r=(2)"],
        ),
    ],
)
def test_valid_ids_pass_and_any_hostile_suffix_fails(check, good):
    # `'` and `#` are legal IRI characters and harmless inside <...> (see the test below).
    suffixes = [b for b in HOSTILE_SUFFIXES if check is not ids.iri or b not in ("'", "#comment")]
    for g in good:
        assert check(g) == g
        for bad in suffixes:
            with pytest.raises(InvalidIdentifierError):
                check(g + bad)


def test_legal_iri_punctuation_stays_inside_the_term():
    store = ox.Store()
    for iri in ["http://e.org/a#b';DROP", "http://e.org/x?y=(1)&z=2!$*+,;=@~"]:
        rows = list(store.query(f"SELECT ?x WHERE {{ BIND(<{ids.iri(iri)}> AS ?x) }}"))
        assert [r["x"].value for r in rows] == [iri]


@pytest.mark.parametrize(
    "check, bad",
    [
        (
            ids.freebase_entity,
            ["ｍ.0k3f7", "m.0k3f７", "M.0K3F7", "m.", "m.0k3f7.", "", "m.0k3f7/../a"],
        ),
        (ids.freebase_relation, ["location", "Location.location.x", ".a.b", "a..b", "a.b."]),
        (ids.wikidata_entity, ["Q", "Q0", "q183", "Q٤٢", "Q183 ", "Q1" + "0" * 20, "X5"]),
        (ids.wikidata_property, ["Q183", "P", "P1.5"]),
        (
            ids.iri,
            [
                "http://x/ä",
                "http://x/a%zz",
                "no-scheme",
                "http://x/a`b",
                "http://x/a|b",
                "http://x/^",
                "http://x/[1]",
            ],
        ),
    ],
)
def test_malformed_ids_fail(check, bad):
    for b in bad:
        with pytest.raises(InvalidIdentifierError):
            check(b)


def test_non_strings_fail():
    for check in (ids.freebase_entity, ids.wikidata_entity, ids.iri):
        for b in (None, 42, b"m.0k3f7", ["m.0k3f7"]):
            with pytest.raises(InvalidIdentifierError):
                check(b)


def test_dialect_terms_validate():
    assert FREEBASE.entity_term("m.0k3f7") == "<http://rdf.freebase.com/ns/m.0k3f7>"
    assert WIKIDATA.relation_term("P17") == "<http://www.wikidata.org/prop/direct/P17>"
    assert GENERIC.entity_term("http://e.org/x") == "<http://e.org/x>"
    for d, bad in ((FREEBASE, "m.1> } DROP"), (WIKIDATA, "Q1 }"), (GENERIC, "http://e/x> <y")):
        with pytest.raises(InvalidIdentifierError):
            d.entity_term(bad)
    assert FREEBASE.entity_id("http://rdf.freebase.com/ns/m.0k3f7") == "m.0k3f7"
    assert FREEBASE.entity_id("http://example.org/m.0k3f7") is None
    assert WIKIDATA.entity_id("http://www.wikidata.org/entity/statement/Q1-abc") is None


TRICKY_TEXTS = [
    'Nijmegen" } ; DROP ALL ; #',
    'a\\"b',
    "line\nbreak\r\ttab",
    "back\\slash\\",
    "it's",
    "\\u0022 quote escape",
    "Düsseldorf ｆｕｌｌ 東京",
    "bell\u0007 nul\u0000 nel\u0085 ls\u2028",
]


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_escaped_literal_parses_back_to_one_literal(text):
    """A real SPARQL parser (Oxigraph) reads the escaped literal as exactly one string."""
    store = ox.Store()
    rows = list(store.query(f"SELECT ?x WHERE {{ BIND({ids.escape_literal(text)} AS ?x) }}"))
    assert len(rows) == 1
    expected = "".join(
        " "
        if (ord(c) < 0x20 and c not in "\n\r\t\b\f")
        or 0x7F <= ord(c) <= 0x9F
        or c in "\u2028\u2029"
        else c
        for c in text
    )
    assert rows[0]["x"].value == expected


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_search_filter_is_valid_sparql(text):
    store = ox.Store()
    store.add(ox.Quad(ox.NamedNode("http://e/a"), ox.NamedNode("http://e/n"), ox.Literal(text)))
    q = f"SELECT ?e WHERE {{ ?e <http://e/n> ?n . {S.candidate_filter(text)} }}"
    assert len(list(store.query(q))) <= 1


def test_lone_surrogate_rejected():
    with pytest.raises(InvalidIdentifierError):
        ids.escape_literal("bad \ud800")


async def test_hostile_ids_never_reach_the_endpoint():
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"head": {"vars": []}, "results": {"bindings": []}})

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    client = SparqlClient("http://kg.invalid/sparql", http=http)
    kg = SparqlKG("http://kg.invalid/sparql", client=client)
    bad = "m.0k3f7> } ; DROP ALL ; #"
    with pytest.raises(InvalidIdentifierError):
        await kg.names(["m.0k3f7", bad])
    with pytest.raises(InvalidIdentifierError):
        await kg.neighbors([bad])
    with pytest.raises(InvalidIdentifierError):
        await kg.expand(["m.0k3f7", bad], 2, max_triples=10)
    with pytest.raises(InvalidIdentifierError):
        await kg.contains([Triple("m.0k3f7", "location.location.contains} ", "m.0f4kq")])
    assert sent == []
    await kg.search('France" } ; DROP ALL ; #')
    assert sent, "search text is escaped, not rejected"
    await http.aclose()

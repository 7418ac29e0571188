"""The KnowledgeGraph interface on real servers gives MemoryKG's answers for the same data.

Backends: Virtuoso 7 (freebase dialect, ResultSetMaxRows=7 so that nearly every query must
be paged past the server's cap) and Oxigraph (freebase and wikidata dialects, tiny pages).
"""

from __future__ import annotations

import pytest
from tests.kg.conftest import VIRTUOSO_MAX_ROWS, VIRTUOSO_MAX_SORTED

from kgreason.kg.base import UNNAMED, Triple
from kgreason.kg.memory import MemoryKG
from kgreason.kg.sparql import SparqlKG
from kgreason.kg.sparql import queries as Q
from kgreason.kg.sparql.client import RetryPolicy, SparqlClient, SparqlHTTPError

pytestmark = pytest.mark.integration

BACKENDS = [
    # (server fixture, dialect, page_size, batch_size)
    ("virtuoso", "freebase", 10_000, 200),
    ("virtuoso", "freebase", 4, 3),
    ("oxigraph", "freebase", 3, 5),
    ("oxigraph", "wikidata", 3, 5),
    ("oxigraph", "wikidata", 10_000, 200),
]
SEARCHES = {
    "freebase": [
        "Nijmegen",
        "nijmegen",
        "NIJMEGEN ",
        "Dusseldorf",
        "düsseldorf airport",
        "Nimwegen",
        "Weeze airprt",
        "airport",
        "France",
        "Western Europe",
        "Lyon Saint-Exupery",
        "Brussel",
        "Gelderland",
        "xyzzy",
        "東京",
        "",
    ],
}
SEARCHES["wikidata"] = SEARCHES["freebase"] + ["country", "city"]


@pytest.fixture(params=BACKENDS, ids=lambda b: f"{b[0]}-{b[1]}-p{b[2]}-b{b[3]}")
def pair(request):
    """(SparqlKG factory, MemoryKG) over the same fixture."""
    server_name, dialect, page, batch = request.param
    server = request.getfixturevalue(server_name)
    memory = request.getfixturevalue(f"{dialect}_memory")

    def make(**kw) -> SparqlKG:
        return SparqlKG(server.url, dialect=dialect, page_size=page, batch_size=batch, **kw)

    return make, memory


def all_ids(memory: MemoryKG) -> list[str]:
    return sorted(memory._entities())


def unknown_id(dialect: str) -> str:
    return "m.0nothere" if dialect == "freebase" else "Q999999999"


async def test_names_match_memory(pair):
    make, memory = pair
    async with make() as kg:
        ids = [*all_ids(memory), unknown_id(kg.dialect.name)]
        got = await kg.names(ids)
        assert got == await memory.names(ids)
        assert UNNAMED in got.values() and unknown_id(kg.dialect.name) not in got


async def test_neighbors_match_memory(pair):
    make, memory = pair
    async with make() as kg:
        ids = all_ids(memory)
        got = await kg.neighbors(ids)
        want = await memory.neighbors(ids)
        for i in ids:
            key = lambda n: (n.direction, n.relation, n.entity)  # noqa: E731
            assert sorted(got[i], key=key) == sorted(want[i], key=key), i
        assert max(len(v) for v in got.values()) > VIRTUOSO_MAX_ROWS
        assert not any(
            r.relation.startswith(("type.object.", "common.")) for v in got.values() for r in v
        )
        limited = await kg.neighbors(ids, limit_per_entity=2)
        assert all(limited[i] == got[i][:2] for i in ids)


async def test_d3_named_neighbors_agree_with_d1_and_d2(pair):
    make, _ = pair
    async with make() as kg:
        seeds = ["m.0k3f7", "m.0wg8d1c"] if kg.dialect.name == "freebase" else ["Q183", "Q47887"]
        named = await kg.neighbors_named(seeds)
        plain = await kg.neighbors(seeds)
        names = await kg.names([n.entity for v in plain.values() for n in v])
        for s in seeds:
            assert [n for n, _ in named[s]] == plain[s]
            assert [name for _, name in named[s]] == [names[n.entity] for n in plain[s]]


@pytest.mark.parametrize("depth", [1, 2, 3])
async def test_expand_matches_memory(pair, depth):
    make, memory = pair
    async with make() as kg:
        seeds = ["m.0d2hgq", "m.0f4kq"] if kg.dialect.name == "freebase" else ["Q47887", "Q142"]
        full = await kg.expand(seeds, depth, max_triples=10_000)
        ref = await memory.expand(seeds, depth, max_triples=10_000)
        assert full.triples == ref.triples and not full.truncated and not ref.truncated
        bounded = await kg.expand(seeds, depth, max_triples=9)
        ref_b = await memory.expand(seeds, depth, max_triples=9)
        assert bounded.truncated == ref_b.truncated
        assert len(bounded.triples) == len(ref_b.triples)
        assert set(bounded.triples) <= set(full.triples)
        if bounded.truncated:
            assert "max_triples=9" in bounded.truncation_reason


async def test_search_matches_memory(pair):
    make, memory = pair
    async with make() as kg:
        for text in SEARCHES[kg.dialect.name]:
            for fuzzy in (True, False):
                got = await kg.search(text, limit=6, fuzzy=fuzzy)
                # MemoryKG also matches unnamed nodes by their ID; an endpoint searches names.
                want = [
                    m for m in await memory.search(text, limit=50, fuzzy=fuzzy) if m.name != m.id
                ][:6]
                assert got == want, (text, fuzzy)


async def test_contains_matches_memory(pair):
    make, memory = pair
    async with make() as kg:
        real = sorted(memory._triples)
        swapped = [Triple(t.tail, t.relation, t.head) for t in real[:40]]
        rels = sorted({t.relation for t in real})
        wrong_rel = [
            Triple(t.head, rels[(rels.index(t.relation) + 1) % len(rels)], t.tail)
            for t in real[:40]
        ]
        probe = real + swapped + wrong_rel
        got = await kg.contains(probe)
        assert got == await memory.contains(probe)
        assert any(got) and not all(got)


async def test_question_paths_and_unique_answer(pair):
    """The fixture's point: the country bordering France with an airport serving Nijmegen."""
    make, _ = pair
    async with make() as kg:
        fb = kg.dialect.name == "freebase"
        city = (await kg.search("Nijmegen", limit=1))[0].id
        france = (await kg.search("France", limit=1))[0].id
        serves, inside = (
            ("aviation.airport.serves", "location.location.containedby") if fb else ("P931", "P17")
        )
        airports = [
            n.entity
            for n in (await kg.neighbors([city]))[city]
            if n.relation == serves and n.direction == "head"
        ]
        nb = await kg.neighbors(airports)
        countries = {
            n.entity
            for a in airports
            for n in nb[a]
            if n.relation == inside and n.direction == "tail"
        }
        sub = await kg.expand([france], 2, max_triples=1000)
        if (
            fb
        ):  # Freebase borders go through an unnamed CVT: country -adjoin_s-> CVT -adjoins-> country
            cvts = {
                t.tail
                for t in sub.triples
                if t.relation == "location.location.adjoin_s" and t.head == france
            }
            bordering = {t.tail for t in sub.triples if t.head in cvts and t.tail != france}
            assert set((await kg.names(list(cvts))).values()) == {UNNAMED}
        else:
            bordering = {t.tail for t in sub.triples if t.head == france and t.relation == "P47"}
        answer = countries & bordering
        assert (await kg.names(list(answer))) == {next(iter(answer)): "Germany"}
        assert len(countries) > 1  # the Netherlands also has an airport serving Nijmegen


async def test_virtuoso_really_caps_results(virtuoso):
    """Guards the paging tests: without paging, Virtuoso would silently drop rows."""
    async with SparqlKG(virtuoso.url) as kg:
        q = Q.neighbors_query(kg.dialect, ["m.0k3f7"], (), named=False)
        res = await kg._client.select(q)
        assert len(res.rows) == VIRTUOSO_MAX_ROWS and res.capped
        assert len((await kg.neighbors(["m.0k3f7"]))["m.0k3f7"]) > VIRTUOSO_MAX_ROWS


async def test_virtuoso_sort_limit_is_not_retried_and_paging_gets_past_it(virtuoso):
    """OFFSET+LIMIT beyond MaxSortedTopRows is a deterministic error (SR353, HTTP 500):
    no retry; select_all moves the sort into a subquery and still returns every row."""
    sleeps: list[float] = []

    async def sleep(s: float) -> None:
        sleeps.append(s)

    client = SparqlClient(virtuoso.url, retry=RetryPolicy(max_retries=3), sleep=sleep)
    q = "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?s), 'http://rdf.freebase.com/ns/')) }"
    with pytest.raises(SparqlHTTPError) as err:
        await client.select(f"{q} ORDER BY ?s ?p ?o LIMIT 5 OFFSET {VIRTUOSO_MAX_SORTED}")
    assert "SR353" in str(err.value) and sleeps == []
    rows, complete = await Q.select_all(client, q, "?s ?p ?o", 5)
    keys = [(r["s"].value, r["p"].value, r["o"].value) for r in rows]
    assert complete and len(keys) == len(set(keys)) > 5 * VIRTUOSO_MAX_SORTED
    await client.aclose()


async def test_hostile_search_text_on_real_servers(virtuoso, oxigraph):
    for url, dialect in ((virtuoso.url, "freebase"), (oxigraph.url, "wikidata")):
        async with SparqlKG(url, dialect=dialect) as kg:
            for text in ['France" } ; DROP ALL ; #', "France'>\n}", "\\u0022France", "Fr%ance"]:
                hits = await kg.search(text, limit=3)
                assert all(h.name for h in hits)
            assert [h.name for h in await kg.search("France", limit=1)] == ["France"]


async def test_lookup_search_is_case_insensitive_without_scanning(pair):
    """search_mode="lookup": only index lookups of case/spacing variants; equals MemoryKG's
    exact+normalized matches whenever the names differ from the text only in case/spacing."""
    make, memory = pair
    async with make(search_mode="lookup") as kg:
        for text in [
            "Nijmegen",
            "nijmegen",
            "NIJMEGEN",
            "western  europe",
            "weeze airport",
            "France",
        ]:
            got = await kg.search(text, limit=5, fuzzy=False)
            assert got and got == await memory.search(text, limit=5, fuzzy=False), text
        assert await kg.search("Dusseldorf", fuzzy=False) == []  # documented: no diacritic folding
        assert await kg.search("Nijmegn", fuzzy=True) == []  # and no typo tolerance


async def test_virtuoso_text_index_search(virtuoso, freebase_memory):
    """search_mode="virtuoso-text" (bif:contains) agrees with MemoryKG where its word-prefix
    candidates cover the matches, and has the documented blind spot (diacritics)."""
    async with SparqlKG(virtuoso.url, search_mode="virtuoso-text") as kg:
        for text in [
            "Nijmegen",
            "nijmegen",
            "Weeze airprt",
            "airport",
            "France",
            "düsseldorf",
            "Western Europe",
            "Brussel",
            'Lyon" } ; DROP ALL ; #',
        ]:
            want = [m for m in await freebase_memory.search(text, limit=50) if m.name != m.id][:6]
            assert await kg.search(text, limit=6) == want, text
        assert await kg.search("Dusseldorf", fuzzy=False) == []
        assert await kg.search("of", limit=3) == []  # no word of 3+ letters: exact lookup only


async def test_empty_and_degenerate_calls_match_memory(pair):
    make, memory = pair
    async with make() as kg:
        seed = "m.0d2hgq" if kg.dialect.name == "freebase" else "Q47887"
        assert await kg.names([]) == {} and await kg.neighbors([]) == {}
        assert await kg.contains([]) == []
        for depth, cap in ((0, 10), (1, 0), (2, 1)):
            got, want = (
                await kg.expand([seed], depth, max_triples=cap),
                await memory.expand([seed], depth, max_triples=cap),
            )
            assert (got.truncated, len(got.triples)) == (want.truncated, len(want.triples))
        dup = await kg.neighbors([seed, seed], limit_per_entity=1)
        assert list(dup) == [seed] and len(dup[seed]) == 1
        assert kg.fingerprint() == f"sparql:{kg.dialect.name}:{kg.url}"

"""The gold-SPARQL reader behind PoG's Figs 5-7: relations counted by hand on real query
shapes (CWQ, WebQSP-style CVTs and time constraints, GrailQA), abbreviations and limits."""

from __future__ import annotations

import pytest

from kgreason.eval.gold_sparql import gold_fields, parse_gold_sparql, relation_overlap

LOU_SEAL = """PREFIX ns: <http://rdf.freebase.com/ns/>
SELECT DISTINCT ?x
WHERE {
FILTER (?x != ?c)
FILTER (!isLiteral(?x) OR lang(?x) = '' OR langMatches(lang(?x), 'en'))
?c ns:sports.sports_team.team_mascot ns:m.03_dwn .
?c ns:sports.sports_team.championships ?x .
?x ns:time.event.start_date ?sk0 .
}
ORDER BY DESC(xsd:datetime(?sk0))
LIMIT 1
"""
TIME_CONSTRAINED = """PREFIX ns: <http://rdf.freebase.com/ns/>
SELECT DISTINCT ?x
WHERE {
FILTER (?x != ns:m.07c1_2)
ns:m.07c1_2 ns:sports.pro_athlete.teams ?y .
?y ns:sports.sports_team_roster.team ?x .
FILTER(NOT EXISTS {?y ns:sports.sports_team_roster.from ?sk0} ||
EXISTS {?y ns:sports.sports_team_roster.from ?sk1 .
FILTER(xsd:datetime(?sk1) <= "2015-08-10"^^xsd:dateTime) })
?x ns:sports.school_sports_team.school ns:m.07t90 .
}"""
GRAILQA = """PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> PREFIX : <http://rdf.freebase.com/ns/>
SELECT (?x0 AS ?value) WHERE {
SELECT DISTINCT ?x0  WHERE {
?x0 :type.object.type :theater.play .
VALUES ?x1 { :m.0yrlqjm }
?x0 :theater.play.productions ?x1 .
FILTER ( ?x0 != ?x1  )
}
}"""


def test_cwq_query_relations_in_order():
    g = parse_gold_sparql(LOU_SEAL)
    assert g is not None and g.length == 3
    assert g.relations == (
        "sports.sports_team.team_mascot",
        "sports.sports_team.championships",
        "time.event.start_date",
    )


def test_relations_inside_filter_exists_count_and_the_filters_do_not_swallow_the_rest():
    g = parse_gold_sparql(TIME_CONSTRAINED)
    assert g is not None
    assert g.relations == (
        "sports.pro_athlete.teams",
        "sports.sports_team_roster.team",
        "sports.sports_team_roster.from",
        "sports.sports_team_roster.from",
        "sports.school_sports_team.school",
    )


def test_grailqa_sub_select_values_and_type_constraint():
    g = parse_gold_sparql(GRAILQA)
    assert g is not None and g.relations == ("type.object.type", "theater.play.productions")
    assert g.relation_set(drop_noise=True) == {"theater.play.productions"}


def test_abbreviations_full_iris_a_and_variable_predicates():
    q = """SELECT ?x WHERE { ?x <http://rdf.freebase.com/ns/people.person.spouse_s> ?m ;
        ns:people.person.nationality ?n , ?o .
        ?x a ns:people.person . ?x ?p ?q . # a comment with ns:fake.relation
        ?x wdt:P31 "lit"@en . }"""
    g = parse_gold_sparql(q)
    assert g is not None
    assert g.relations == (
        "people.person.spouse_s",
        "people.person.nationality",
        "people.person.nationality",
        "rdf:type",
        "P31",
    )


def test_property_paths_are_flagged():
    g = parse_gold_sparql("SELECT ?x WHERE { ns:m.1 ns:a.b/ns:c.d ?x . }")
    assert g is not None and g.property_path and g.relations == ("a.b", "c.d")


@pytest.mark.parametrize("q", ["", "   ", "SELECT ?x WHERE { }", "not sparql at all {"])
def test_no_triple_pattern_is_none(q: str):
    assert parse_gold_sparql(q) is None


def test_overlap_ratio_is_pogs_definition():
    g = parse_gold_sparql(LOU_SEAL)
    assert g is not None
    assert relation_overlap(["sports.sports_team.team_mascot"], g) == pytest.approx(1 / 3)
    assert relation_overlap(["ns:sports.sports_team.team_mascot", "x.y"], g) == pytest.approx(1 / 3)
    assert relation_overlap([], g) == 0.0
    only_noise = parse_gold_sparql("SELECT ?x WHERE { ?x ns:common.topic.notable_types ?t . }")
    assert only_noise is not None and relation_overlap(["a"], only_noise) is None


def test_row_fields():
    paths = [[["m.1", "sports.sports_team.team_mascot", "m.2"], ["m.2", "x.y", "m.3"]]]
    assert gold_fields(None, paths) == {}
    f = gold_fields(LOU_SEAL, paths)
    assert f["sparql_length"] == 3 and f["relation_overlap"] == pytest.approx(1 / 3)
    assert f["gold_relations"][0] == "sports.sports_team.team_mascot"
    assert gold_fields(LOU_SEAL, [])["relation_overlap"] is None  # no path: no ratio
    assert gold_fields("garbage", paths) == {
        "sparql_length": None,
        "gold_relations": [],
        "relation_overlap": None,
    }


def test_every_cwq_query_parses_with_lengths_in_the_papers_range(shared_data):
    import json

    rows = json.loads((shared_data / "kgqa/freebase-questions/pog/cwq.json").read_text())
    lengths = [parse_gold_sparql(r["sparql"]) for r in rows]
    assert all(g is not None for g in lengths)
    counted = [g.length for g in lengths if g is not None]
    assert min(counted) >= 2 and sum(n <= 4 for n in counted) / len(counted) > 0.8


def test_hostile_gold_queries_never_break_a_run():
    # a dataset file is input too: deep nesting and huge queries give no field, not a crash
    deep = "SELECT ?x WHERE { " + "FILTER(EXISTS { " * 5000 + "?x ns:a.b ?y" + " })" * 5000 + " }"
    assert gold_fields(deep, [])["sparql_length"] is None
    huge = "SELECT ?x WHERE { " + "?x ns:a.b ?y . " * 20_000 + "}"
    assert gold_fields(huge, [])["sparql_length"] is None
    nested = "SELECT ?x WHERE { " + "FILTER(EXISTS { " * 40 + "?x ns:a.b ?y" + " })" * 40 + " }"
    assert len(nested) < 2_000 and gold_fields(nested, [])["sparql_length"] is None
    shallow = "SELECT ?x WHERE { " + "FILTER(EXISTS { " * 3 + "?x ns:a.b ?y" + " })" * 3 + " }"
    assert gold_fields(shallow, [])["sparql_length"] == 1

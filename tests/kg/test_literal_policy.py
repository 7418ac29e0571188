"""The RDF literal policy (kg.literals): loader, manifest, `kg build`/`kg info`, open_kg,
and the name choice the loader shares with SparqlKG (no servers needed here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.base import KGError
from kgreason.kg.loaders import LoadError, Source, literal_policy, load_all
from kgreason.kg.open import open_kg
from kgreason.kg.settings import KGSettings
from kgreason.kg.sparql import SparqlKG
from kgreason.kg.store import StoreKG, build_store

FB = "http://rdf.freebase.com/ns/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SAMEAS = "http://www.w3.org/2002/07/owl#sameAs"
NT = (
    f'<{FB}m.01> <{FB}type.object.name> "Weeze Airport"@en .\n'
    f'<{FB}m.01> <{FB}aviation.airport.iata> "NRN" .\n'
    f"<{FB}m.01> <{FB}aviation.airport.serves> <{FB}m.02> .\n"
    f'<{FB}m.02> <{FB}type.object.name> "Nijmegen" .\n'
    f'<{FB}m.02> <{FB}location.location.area> "57.63"^^<http://www.w3.org/2001/XMLSchema#float> .\n'
    f'<{FB}m.03> <{FB}location.location.area> "1.0" .\n'  # only a literal fact, no name
    f'<{FB}location.country> <{FB}type.property.note> "only literals" .\n'
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_drop_and_keep_in_the_loader(tmp_path):
    f = _write(tmp_path / "g.nt", NT)
    dropped = Source(f)
    assert dropped.literals == "drop"
    assert list(dropped) == [("m.01", "aviation.airport.serves", "m.02")]
    assert dropped.dropped == {"m.01": 1, "m.02": 1, "m.03": 1, "location.country": 1}
    kept = Source(f, literals="keep")
    assert [t[2] for t in kept] == ["NRN", "m.02", "57.63", "1.0", "only literals"]
    assert kept.dropped == {} and kept.names == dropped.names
    _, names = load_all([Source(f)])
    # a subject left with no edges is still an entity; the nameless MID m.03 cannot be
    # expressed in load_all's names (the store keeps it, see below)
    assert names == {
        "m.01": "Weeze Airport",
        "m.02": "Nijmegen",
        "location.country": "location.country",
    }
    with pytest.raises(LoadError, match="literal policy"):
        Source(f, literals="maybe")


async def test_store_records_the_policy_and_keeps_literal_only_subjects(tmp_path):
    f = _write(tmp_path / "g.nt", NT)
    build_store([Source(f)], tmp_path / "drop")
    build_store([Source(f, literals="keep")], tmp_path / "keep")
    drop, keep = StoreKG(tmp_path / "drop"), StoreKG(tmp_path / "keep")
    assert literal_policy(drop.manifest.sources) == "drop"
    assert literal_policy(keep.manifest.sources) == "keep"
    assert drop.manifest.counts["literal_triples_dropped"] == 4
    # known to the store as to an endpoint (which finds them through any triple)
    assert await drop.names(["m.03", "location.country", "NRN"]) == {
        "m.03": "Unnamed Entity",
        "location.country": "location.country",
    }
    assert (await keep.names(["NRN"])) == {"NRN": "NRN"}
    assert [n.entity for n in (await keep.neighbors(["NRN"]))["NRN"]] == ["m.01"]
    assert drop.fingerprint() != keep.fingerprint()


def test_line_formats_have_no_policy(tmp_path):
    f = _write(tmp_path / "g.tsv", "a\tr\tb\n")
    build_store([Source(f, literals="keep")], tmp_path / "s")
    s = StoreKG(tmp_path / "s")
    assert literal_policy(s.manifest.sources) is None and "literals" not in s.manifest.sources[0]
    assert literal_policy([{"format": "nt", "path": "old.nt"}]) == "keep"  # built before
    assert literal_policy([{"format": "nt", "literals": "drop"}, {"format": "ttl"}]) == "mixed"
    open_kg(KGSettings(store=tmp_path / "s", literals="keep"))  # nothing to disagree with


def test_open_kg_refuses_a_store_built_under_the_other_policy(tmp_path):
    f = _write(tmp_path / "g.nt", NT)
    build_store([Source(f, literals="keep")], tmp_path / "keep")
    with pytest.raises(KGError, match=r"literal policy 'keep' but kg\.literals is 'drop'"):
        open_kg(KGSettings(store=tmp_path / "keep"))
    assert open_kg(KGSettings(store=tmp_path / "keep", literals="keep")).path == tmp_path / "keep"
    with pytest.raises(KGError, match="only 'drop'"):
        open_kg(KGSettings(sparql_url="http://127.0.0.1:9/sparql", literals="keep"))
    with pytest.raises(KGError, match="only 'drop'"):
        SparqlKG.from_settings(KGSettings(sparql_url="http://127.0.0.1:9/sparql", literals="keep"))


def test_cli_build_and_info_show_the_policy(tmp_path):
    f = _write(tmp_path / "g.nt", NT)
    runner = CliRunner()
    r = runner.invoke(app, ["kg", "build", str(f), "--out", str(tmp_path / "d"), "--json"])
    assert r.exit_code == 0, r.stderr
    built = json.loads(r.stdout)
    assert (built["literals"], built["literal_triples_dropped"], built["triples"]) == ("drop", 4, 1)
    r = runner.invoke(
        app, ["kg", "build", str(f), "--out", str(tmp_path / "k"), "--literals", "keep"]
    )
    assert r.exit_code == 0, r.stderr
    assert "literals keep" in r.stdout
    r = runner.invoke(app, ["kg", "info", str(tmp_path / "d")])
    assert r.exit_code == 0 and "RDF literals: drop (4 literal triples dropped)" in r.stdout
    r = runner.invoke(app, ["kg", "info", str(tmp_path / "k"), "--json"])
    assert json.loads(r.stdout)["literals"] == "keep"
    r = runner.invoke(
        app, ["kg", "build", str(f), "--out", str(tmp_path / "x"), "--literals", "some"]
    )
    assert r.exit_code != 0 and "kg.literals" in r.stderr and not (tmp_path / "x").exists()


def test_names_are_chosen_as_sparqlkg_chooses_them(tmp_path):
    """Predicate first (type.object.name, rdfs:label, owl:sameAs), then en, en-*, untagged,
    then the smallest value; other languages are ignored (Appendix D's lang filter)."""
    lines = [
        f'<{FB}m.01> <{LABEL}> "Label"@en .',
        f'<{FB}m.01> <{FB}type.object.name> "Nimwegen" .',
        f'<{FB}m.01> <{FB}type.object.name> "Nijmegen"@en .',
        f'<{FB}m.02> <{FB}type.object.name> "Untagged" .',
        f'<{FB}m.02> <{FB}type.object.name> "Colour"@en-GB .',
        f'<{FB}m.03> <{FB}type.object.name> "Zeta"@en .',
        f'<{FB}m.03> <{FB}type.object.name> "Alpha"@en .',
        f'<{FB}m.04> <{FB}type.object.name> "Weeze"@de .',
        f'<{FB}m.05> <{SAMEAS}> "Same As"@en .',
        f'<{FB}m.05> <{FB}type.object.name> "Nom"@fr .',
        f"<{FB}m.01> <{FB}r> <{FB}m.04> .",
    ]
    for order in (lines, lines[::-1]):
        _, names = load_all([Source(_write(tmp_path / "n.nt", "\n".join(order) + "\n"))])
        assert names == {"m.01": "Nijmegen", "m.02": "Colour", "m.03": "Alpha", "m.05": "Same As"}

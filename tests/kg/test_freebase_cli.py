"""`kgreason kg build freebase-rdf-latest.gz` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.kg.fbdump import NS, fact, generator, write_dump
from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()


def test_build_from_the_dump_by_its_name_alone(tmp_path: Path) -> None:
    dump = tmp_path / "freebase-rdf-latest.gz"  # no format suffix: told by its first line
    generator().generate(dump, 20_000)
    r = runner.invoke(app, ["kg", "build", str(dump), "--out", str(tmp_path / "s"), "--no-warm"])
    assert r.exit_code == 0, r.stderr
    assert "from the Freebase dump: 20,000 lines" in r.stdout
    assert "dropped by rule:" in r.stdout and "name_other_language:" in r.stdout
    r = runner.invoke(app, ["kg", "info", str(tmp_path / "s"), "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["triples"] > 5000


def test_json_and_options(tmp_path: Path) -> None:
    dump = write_dump(
        tmp_path / "d.gz",
        [
            fact("m.0a", "type.object.name", '"Nimègue"@fr'),
            fact("m.0a", "common.topic.notable_types", f"<{NS}m.0t>"),
        ],
    )
    args = ["kg", "build", str(dump), "--out", str(tmp_path / "s"), "--json", "--no-warm"]
    r = runner.invoke(app, [*args, "--lang", "fr", "--keep", "common", "--memory", "64M"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["format"], out["triples"], out["entities"]) == ("freebase", 1, 2)
    assert {d["rule"] for d in out["dropped"]} >= {"common", "literal", "key"}


def test_errors_name_the_problem(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "d.gz", [fact("m.0a", "r.r.r", f"<{NS}m.0b>"), "oops"])
    base = ["kg", "build", str(dump), "--out", str(tmp_path / "s"), "--no-warm"]
    r = runner.invoke(app, base)
    assert r.exit_code == 1 and "d.gz:2: expected a Freebase dump line" in r.stderr
    assert not (tmp_path / "s.partial").exists()
    for bad, what in (("lots", "not a size"), ("1M", "below the 16M minimum")):
        r = runner.invoke(app, [*base, "--memory", bad, "--format", "freebase"])
        assert r.exit_code != 0 and what in r.stderr
    r = runner.invoke(app, [*base, "--keep", "literal", "--format", "freebase"])
    assert r.exit_code != 0 and "cannot keep" in r.stderr
    r = runner.invoke(app, [*base, "--literals", "keep", "--format", "freebase"])
    assert r.exit_code != 0 and "not available for Freebase dumps" in r.stderr

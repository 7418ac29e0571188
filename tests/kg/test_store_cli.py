"""`kgreason kg build` and `kg info` through the real CLI on the real MetaQA and PathQuestion files."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kgreason.cli import app

runner = CliRunner()


def test_build_and_info_metaqa_ids(shared_data, tmp_path):
    out = tmp_path / "metaqa"
    r = runner.invoke(
        app,
        [
            "kg",
            "build",
            str(shared_data / "kgqa/metaqa/kb_ids_incomplete"),
            "--out",
            str(out),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    built = json.loads(r.stdout)
    assert (built["triples"], built["input_triples"], built["relations"]) == (128_185, 134_741, 9)
    r = runner.invoke(app, ["kg", "info", str(out), "--json", "--top", "3"])
    assert r.exit_code == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["counts"]["entities"] == built["entities"] == info["counts"]["named"]
    assert [x["relation"] for x in info["relations"]] == [
        "starred_actors",
        "has_tags",
        "written_by",
    ]
    assert sum(x["triples"] for x in info["relations"]) < 128_185
    deg = info["degree"]
    assert deg["out"]["mean"] == deg["in"]["mean"] == round(128_185 / built["entities"], 3)
    assert deg["total"]["max"] == info["hubs"][0]["degree"] >= deg["total"]["p99"]
    assert info["hubs"][0]["name"] in {"English", "Drama", "Comedy"}  # the obvious hubs
    r = runner.invoke(app, ["kg", "info", str(out)])  # human-readable form
    assert r.exit_code == 0 and "starred_actors" in r.stdout and "p99" in r.stdout


def test_build_pathquestion_and_refuse_overwrite(shared_data, tmp_path):
    kb = shared_data / "kgqa/pathquestion/PathQuestion/2H-kb.txt"
    out = tmp_path / "pq"
    r = runner.invoke(app, ["kg", "build", str(kb), "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "1,211 triples" in r.stdout
    r = runner.invoke(app, ["kg", "build", str(kb), "--out", str(out)])
    assert r.exit_code != 0 and "already exists" in r.stderr
    r = runner.invoke(
        app, ["kg", "build", str(kb), "--out", str(out), "--force", "--format", "pathquestion"]
    )
    assert r.exit_code == 0, r.stderr
    info = json.loads(runner.invoke(app, ["kg", "info", str(out), "--json"]).stdout)
    assert info["counts"]["triples"] == 1211
    assert info["hubs"][0]["id"] == "male"


def test_build_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\nonly two\tfields\n")
    r = runner.invoke(app, ["kg", "build", str(bad), "--out", str(tmp_path / "s")])
    assert r.exit_code != 0
    assert "bad.tsv:2" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s").exists()
    r = runner.invoke(app, ["kg", "info", str(tmp_path)])
    assert r.exit_code != 0 and "not a kgreason store" in r.stderr
    r = runner.invoke(
        app, ["kg", "build", str(bad), "--out", str(tmp_path / "s"), "--format", "xml"]
    )
    assert r.exit_code != 0 and "unknown format" in r.stderr

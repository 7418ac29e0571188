"""PathQuestion-family question files in every shape (issue 16 part 5)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.eval.loaders import load_pathquestion

FOOTBALL = Path(__file__).resolve().parents[1] / "fixtures" / "football"
runner = CliRunner()


def test_six_column_variant_reads_full_answer_set_and_topics() -> None:
    res = load_pathquestion(FOOTBALL / "questions6.tsv")
    assert res.problems == [] and len(res.records) == 3
    r = res.records[2]
    assert [a.name for a in r.answers] == ["Tigres_UANL", "Club_Atlas_Rojo"]
    assert r.topic_entities == {"Mexico": "Mexico"} and r.hops == 1
    first = res.records[0]
    assert first.topic_entities == {
        "England": "England",
        "Charlton_Athletic_FC": "Charlton_Athletic_FC",
    }
    assert first.gold_path[0] == "England" and first.hops == 2


def test_pq_and_malformed_lines(tmp_path: Path) -> None:
    f = tmp_path / "pq.txt"
    f.write_text(
        " who is a ?\tb(b/c/)\ta#r#b#<end>#b\n"
        "only\ttwo\n"
        "q\tx\ta#r#b\tx/y\t\t\n"  # six columns, empty support and topics: topic from the path
    )
    res = load_pathquestion(f)
    assert [p.position for p in res.problems] == ["line 2"]
    pq, six = res.records
    assert pq.answers[0].surface_forms() == ["b", "c"] and pq.topic_entities == {"a": "a"}
    assert [a.name for a in six.answers] == ["x", "y"] and six.topic_entities == {"a": "a"}


def test_eval_of_a_file_that_yields_nothing_exits_non_zero(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.tsv"
    bad.write_text("not a question line\n")
    r = runner.invoke(app, ["eval", str(bad), "--method", "llm-free"])
    assert r.exit_code == 1 and "no question could be read" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1

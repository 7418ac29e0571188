"""Label-free ranker training (issue 37 item 2): questions generated from a KG's own
triples, checked against the triples themselves, and `kgreason train ranker --kg STORE`
end to end on a hand-written company KG (tests/data/ownkg)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.base import Triple
from kgreason.pog.ranker import synth
from kgreason.pog.ranker.features import relation_text

OWN = Path(__file__).resolve().parents[1] / "data" / "ownkg"
runner = CliRunner()


def company() -> list[Triple]:
    rows = [ln.split("\t") for ln in (OWN / "company.tsv").read_text().splitlines()]
    return [Triple(*r) for r in rows if len(r) == 3 and not r[0].startswith("#")]


def follow(triples: list[Triple], start: set[str], key: tuple[str, bool]) -> set[str]:
    rel, fwd = key
    if fwd:
        return {t.tail for t in triples if t.relation == rel and t.head in start}
    return {t.head for t in triples if t.relation == rel and t.tail in start}


def test_every_generated_answer_set_is_what_the_walk_reaches():
    triples = company()
    cfg = synth.SynthConfig(per_hop=60, seed=3)
    got = synth.sample(triples, cfg)
    assert got and {len(s.keys) for s in got} == {1, 2, 3}
    for s in got:
        assert 1 <= len(s.answers) <= cfg.max_answers
        if len(s.topics) == 1:
            reached = {s.topics[0]}
            for key in s.keys:
                reached = follow(triples, reached, key)
            assert set(s.answers) == reached - set(s.topics), s
        else:  # two topics: the intersection of what each one's key reaches
            a, b = s.topics
            both = follow(triples, {a}, s.keys[0]) & follow(triples, {b}, s.keys[1])
            assert set(s.answers) == both - {a, b}, s
    assert len(set(got)) == len(got)


def test_generation_is_deterministic_and_seeded():
    triples = company()
    one = synth.sample(triples, synth.SynthConfig(per_hop=40, seed=1))
    assert one == synth.sample(triples, synth.SynthConfig(per_hop=40, seed=1))
    assert one != synth.sample(triples, synth.SynthConfig(per_hop=40, seed=2))


def test_questions_name_the_topic_in_brackets_and_every_hop_by_its_relation_text():
    sampled = synth.sample(company(), synth.SynthConfig(per_hop=30, seed=0))
    qs = synth.questions(sampled, {})
    for s, q in zip(sampled, qs, strict=True):
        for t in s.topics:
            assert f"[{t}]" in q.text
        for rel, _ in s.keys:
            assert relation_text(rel) in q.text, (q.text, s.keys)
        assert set(q.gold) == set(s.answers) and q.topic_ids == s.topics


def test_wide_answer_sets_are_not_generated():
    hub = [Triple(f"p{i}", "nationality", "Freedonia") for i in range(80)]
    got = synth.sample(hub, synth.SynthConfig(per_hop=20, hops=(1,), max_answers=30))
    assert got and all(len(s.answers) <= 30 for s in got)
    assert all(s.topics != ("Freedonia",) for s in got)  # 80 answers: dropped


def test_an_empty_kg_generates_nothing():
    assert synth.sample([], synth.SynthConfig(per_hop=5)) == []


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path, dict]:
    d = tmp_path_factory.mktemp("own")
    r = runner.invoke(app, ["kg", "build", str(OWN / "company.tsv"), "--out", str(d / "store")])
    assert r.exit_code == 0, r.output
    args = ["--json", "train", "ranker", "--kg", str(d / "store"), "--out", str(d / "lf")]
    r = runner.invoke(app, [*args, "--limit", "150"], env={"KGREASON_EMBED__BACKEND": "static"})
    assert r.exit_code == 0, r.output
    return d / "store", d / "lf", json.loads(r.stdout)


def test_train_ranker_on_a_store_is_label_free_and_says_so(trained):
    _, out, report = trained
    spec = json.loads((out / "ranker.json").read_text())
    tr = spec["training"]
    assert tr["label_free"] is True and tr["dataset"] == "generated"
    assert tr["generated"]["per_hop"] == 150 and tr["generated"]["hops"] == [1, 2, 3]
    assert tr["questions"] > 100 and report["training"]["label_free"] is True
    assert "align_assign" in spec["features"]["scalars"]
    source = json.loads((out / "training_questions.json").read_text())["source"]
    assert source.startswith("label-free: questions generated from the KG")


def test_the_label_free_ranker_answers_one_hop_questions_on_its_kg(trained):
    store, out, _ = trained
    rows = [ln.split("\t") for ln in (OWN / "questions.tsv").read_text().splitlines()]
    one_hop = [r for r in rows if len(r) == 3 and r[2] == "1"]
    assert len(one_hop) == 4
    for q, gold, _ in one_hop:
        r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store), "--ranker", str(out)])
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        assert [a["name"] for a in d["answers"]][:1] == [gold], (q, d["answers"])


def test_label_free_training_refuses_a_kg_it_cannot_read_whole():
    import asyncio

    from kgreason.eval.ranker_data import RankerDataError
    from kgreason.eval.ranker_training import TrainRequest, generated_questions

    class Remote:
        name = "http://example.org/sparql"

    req = TrainRequest("generated", "dev", (1,), 5, None, Path("/nonexistent"))
    with pytest.raises(RankerDataError, match="not a local store or TSV"):
        asyncio.run(generated_questions(Remote(), req, lambda *a: None))


def _ranker_record(out: str) -> dict:
    trace = json.loads(out)["trace"]
    return next(t for t in trace if t.get("stage") == "llm-free")


def test_every_answer_says_which_ranker_and_why(trained):
    store, out, _ = trained
    q = "who founded [Globex]"
    r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store), "--ranker", str(out)])
    rec = _ranker_record(r.stdout)
    assert rec["ranker"] == "label-free, trained on this KG" and str(out) in rec["why"]
    # no ranker for this KG: the zero-shot order-aligned ranking, and the reason says why
    # and how to train one
    r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store)])
    rec = _ranker_record(r.stdout)
    assert rec["ranker"] == "zero-shot order-aligned" and "train ranker --kg" in rec["why"]
    assert "no ranker was trained on this KG" in rec["why"]
    r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store), "--ranker", "none"])
    assert _ranker_record(r.stdout)["ranker"].startswith("none")
    text = runner.invoke(app, ["ask", q, "--kg", str(store), "--ranker", "hop-aligned"]).stdout
    assert "Ranker: zero-shot hop-aligned (pog.ranker = hop-aligned)" in text
    bundled = _ranker_record(runner.invoke(app, ["--json", "ask", "who directed [Heat]"]).stdout)
    assert bundled["ranker"].startswith("bundled, trained on metaqa")


def test_auto_passes_over_a_label_free_ranker_beside_the_store(tmp_path):
    """kg build names the default ranking and the label-free training with its caveat; auto
    keeps the zero-shot ranking when a label-free ranker is beside the store (it ranked
    below it on every KG measured), says so and how to use it; `--ranker DIR` uses it; a
    ranker trained on question-answer pairs beside the store is what auto uses."""
    store = tmp_path / "store"
    r = runner.invoke(app, ["kg", "build", str(OWN / "company.tsv"), "--out", str(store)])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    assert f"kgreason train ranker --kg {store} --out DIR" in flat and "experimental" in flat
    assert "zero-shot order-aligned" in flat
    q = "who founded [Globex]"
    before = _ranker_record(runner.invoke(app, ["--json", "ask", q, "--kg", str(store)]).stdout)
    assert before["ranker"] == "zero-shot order-aligned"
    beside = store / "ranker"
    args = ["train", "ranker", "--kg", str(store), "--out", str(beside)]
    r = runner.invoke(app, [*args, "--limit", "60"])
    assert r.exit_code == 0 and f"--ranker {beside}" in " ".join(r.stdout.split()), r.output
    r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store)])
    rec = _ranker_record(r.stdout)
    assert rec["ranker"] == "zero-shot order-aligned", rec
    assert "without labels" in rec["why"] and f"--ranker {beside}" in rec["why"]
    assert json.loads(r.stdout)["answers"], r.stdout
    r = runner.invoke(app, ["--json", "ask", q, "--kg", str(store), "--ranker", str(beside)])
    assert _ranker_record(r.stdout)["ranker"] == "label-free, trained on this KG"
    # the same artefact, as if trained on labelled question-answer pairs of this KG
    spec_file = beside / "ranker.json"
    spec = json.loads(spec_file.read_text())
    spec["training"]["label_free"] = False
    spec_file.write_text(json.dumps(spec))
    rec = _ranker_record(runner.invoke(app, ["--json", "ask", q, "--kg", str(store)]).stdout)
    assert rec["ranker"].startswith("trained on") and "beside the store" in rec["why"], rec


# --- out of the box (issue 37): the company KG and its 12 questions, no ranker trained ---

OWN_QUESTIONS = [
    ln.split("\t")
    for ln in (OWN / "questions.tsv").read_text().splitlines()
    if ln.strip() and not ln.startswith("#")
]
#: questions the default ranking gets wrong (none today: "in which region was the founder of
#: [Initech] born" answered the 2-hop "born in" until a verb after the subject was read as a
#: hop before the wh-noun's); a miss goes here as a strict xfail, so a fix shows
MISSED: set[str] = set()


@pytest.fixture(scope="module")
def own_store(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("own-default")
    r = runner.invoke(app, ["kg", "build", str(OWN / "company.tsv"), "--out", str(d / "store")])
    assert r.exit_code == 0, r.output
    return d / "store"


@pytest.mark.parametrize(
    ("question", "gold", "hops"),
    [
        pytest.param(*row, marks=pytest.mark.xfail(strict=True, reason="wh-noun hop"))
        if row[0] in MISSED
        else row
        for row in OWN_QUESTIONS
    ],
)
def test_a_fresh_kg_is_answered_out_of_the_box(own_store, question, gold, hops, monkeypatch):
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    r = runner.invoke(app, ["--json", "ask", question, "--kg", str(own_store)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert _ranker_record(r.stdout)["ranker"] == "zero-shot order-aligned"
    assert not d["abstained"] and [a["name"] for a in d["answers"]] == [gold], (hops, d["answers"])

"""The subgraph cap is switchable (`--max-subgraph-triples N|none`) and every run counts the
bounds its questions hit (summary, `kgreason eval` table, `kgreason report`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.config import load_settings
from kgreason.eval.summarize import bound_kind, run_figures
from kgreason.kg.base import Triple
from kgreason.kg.loaders import Source
from kgreason.kg.memory import MemoryKG
from kgreason.kg.store import StoreKG, build_store
from kgreason.pog.settings import PoGSettings
from kgreason.pog.subgraph import detect_subgraph, walk_subgraph

#: a star of 12 edges around "hub", one more hop behind each leaf
EDGES = [("hub", "r", f"leaf{i}") for i in range(6)] + [
    (f"leaf{i}", "s", f"far{i}") for i in range(6)
]


def test_settings_accept_none_and_the_word_none():
    assert PoGSettings().max_subgraph_triples == 200_000
    assert PoGSettings(max_subgraph_triples=None).max_subgraph_triples is None
    for word in ("none", "None", " NONE "):
        assert PoGSettings(max_subgraph_triples=word).max_subgraph_triples is None
    assert PoGSettings(max_subgraph_triples="5000").max_subgraph_triples == 5000
    with pytest.raises(ValueError):
        PoGSettings(max_subgraph_triples=0)
    with pytest.raises(ValueError):
        PoGSettings(max_subgraph_triples="unbounded")
    # a config file or the environment can say it too
    env = {"KGREASON_POG__MAX_SUBGRAPH_TRIPLES": "none"}
    assert load_settings(environ=env).settings.pog.max_subgraph_triples is None


def test_memory_subgraph_uncapped_with_none():
    kg = MemoryKG([Triple(*e) for e in EDGES], {})
    capped = asyncio.run(detect_subgraph(kg, ["hub"], PoGSettings(max_subgraph_triples=4)))
    assert capped.truncated and len(capped.triples) == 4
    assert capped.bounds_hit()[0].startswith("subgraph: ")
    free = asyncio.run(detect_subgraph(kg, ["hub"], PoGSettings(max_subgraph_triples=None)))
    assert not free.truncated and len(free.triples) == len(EDGES) and not free.bounds_hit()


@pytest.mark.parametrize("bound", ["edge-order", "relation-aware"])
def test_store_subgraph_uncapped_with_none(tmp_path: Path, bound: str):
    tsv = tmp_path / "g.tsv"
    tsv.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in EDGES))
    build_store([Source(tsv)], tmp_path / "store")
    kg = StoreKG(tmp_path / "store")
    try:
        s = PoGSettings(max_subgraph_triples=4, subgraph_bound=bound)
        capped, _ = walk_subgraph(kg, ["hub"], s)
        assert capped.truncated and len(capped.triples) <= 4
        free, _ = walk_subgraph(kg, ["hub"], s.model_copy(update={"max_subgraph_triples": None}))
        assert not free.truncated and len(free.triples) == len(EDGES)
    finally:
        kg.close()


def test_bound_kinds():
    assert bound_kind("subgraph: max_triples=200000 reached (depth 3); cut at hop 2") == "subgraph"
    assert bound_kind("path search: level 3 would read 9,000,000 rows") == "path search"
    assert bound_kind("entity sets cut (pog.set_items=None): answering prompts: 1") == (
        "entity sets cut"
    )
    assert bound_kind("neighbours of m.0x cut at tog.max_neighbors=10000") == "neighbours"
    assert bound_kind("node expand: max_new_paths=5000 reached") == "node expand"


def _row(i: int, bounds: object) -> dict:
    return {"id": f"q{i}", "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
            "strict_hit1": i % 2 == 0, "extra": {"bounds_hit": bounds}}  # fmt: skip


def test_run_figures_count_questions_per_bound_kind():
    rows = [
        _row(0, ["subgraph: max_triples=200000 reached (depth 3)", "path search: x"]),
        _row(1, ["subgraph: max_triples=200000 reached (depth 3)"]),
        _row(2, []),
        _row(3, None),  # a method that reports none
        _row(4, ["path search: a", "path search: b"]),  # counted once per question
        {**_row(5, []), "extra": "not an object"},  # a malformed extra is not counted
    ]
    fig = run_figures("r", {}, rows, [])
    assert fig.bounds == {
        "questions": 6,
        "hit": 3,
        "by_kind": {"path search": 2, "subgraph": 2},
        "subgraph_hit": 2,
    }


def _fixture_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    rows = [_row(0, ["subgraph: max_triples=200000 reached (depth 3)"]), _row(1, [])]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "config.json").write_text(json.dumps({"dataset": "toy", "method": "pog"}))
    return out


def test_report_says_how_often_the_cap_was_hit(tmp_path: Path):
    run = _fixture_run(tmp_path)
    res = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "subgraph cap hit on 1 of 2 questions" in md
    assert "| subgraph | 1 | 50.0 |" in md
    assert "subgraph cap hit on 1 of 2 questions" in (tmp_path / "rep" / "report.html").read_text()


def test_eval_records_the_cap_and_counts_bounds(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("KGREASON_EMBED__BACKEND", "static")
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(tmp_path / "cache"))
    # MetaQA's 3-hop neighbourhoods hold more than 1,000 triples: that cap cuts both
    for cap, want, cut in (("none", None, 0), ("1000", 1000, 2)):
        out = tmp_path / f"cap-{cap}"
        res = CliRunner().invoke(
            app,
            ["eval", "metaqa", "--method", "llm-free", "--limit", "2", "--out", str(out),
             "--max-subgraph-triples", cap, "--json"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        config = json.loads((out / "config.json").read_text())
        assert config["settings"]["pog.max_subgraph_triples"] == want
        head = json.loads(res.stdout)["headline"]
        assert head["bounds"]["questions"] == 2
        assert head["bounds"]["subgraph_hit"] == cut
        assert head["bounds"]["cap"] == ("no cap" if want is None else "cap 1,000")
    bad = CliRunner().invoke(
        app, ["eval", "metaqa", "--method", "llm-free", "--max-subgraph-triples", "lots"]
    )
    assert bad.exit_code != 0 and "max-subgraph-triples" in bad.output

"""Issue 34 item 10: `Subgraph: 1887 entities / 2735 triples -> reduced 1887 entities / 2735
triples` said nothing was cut without saying why. Graph reduction (pog/reduction.py) keeps
what lies on paths joining topic entities: with one topic the neighbourhood is kept whole,
as it is when no two topics connect; the line now says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.cli.ask import subgraph_line
from kgreason.pog.types import PoGResult, SubgraphStats, TopicEntity
from tests.cli.support import isolate_env

runner = CliRunner()


def _result(topics: int, sizes: tuple[int, int, int, int], note: str) -> PoGResult:
    r = PoGResult(question="q", mode="llm-free")
    r.topic_entities = [TopicEntity(f"e{i}", f"E{i}") for i in range(topics)]
    e, t, re_, rt = sizes
    r.subgraph = SubgraphStats(entities=e, triples=t, reduced_entities=re_, reduced_triples=rt)
    r.trace.append({"stage": "graph", "reduction": note})
    return r


def test_one_topic_says_why_nothing_was_reduced():
    note = "fewer than two topic entities in the subgraph: neighbourhood kept whole"
    line = subgraph_line(_result(1, (1887, 2735, 1887, 2735), note))
    assert line.startswith("Subgraph: 1887 entities / 2735 triples (not reduced: ")
    assert "-> reduced" not in line and "two or more topic entities" in line


def test_unconnected_topics_say_so():
    note = "topic entities not connected within 6 hops: subgraph kept whole"
    line = subgraph_line(_result(2, (40, 50, 40, 50), note))
    assert line.endswith("(not reduced: topic entities not connected within 6 hops)")


def test_a_graph_wholly_on_connecting_paths_is_not_called_unreduced_by_topic_count():
    note = "kept nodes on paths of length <= 6 connecting topic entities"
    line = subgraph_line(_result(2, (5, 4, 5, 4), note))
    assert "every entity lies on a path between the topic entities" in line


def test_a_reduction_shows_both_sizes():
    note = "kept nodes on paths of length <= 6 connecting topic entities"
    line = subgraph_line(_result(2, (100, 300, 20, 30), note))
    assert line == "Subgraph: 100 entities / 300 triples -> reduced 20 entities / 30 triples"


@pytest.fixture
def env(monkeypatch, tmp_path) -> None:
    isolate_env(monkeypatch, tmp_path, llm_cache=True)


@pytest.mark.usefixtures("env")
def test_ask_with_one_topic_prints_the_reason(tmp_path: Path):
    kb = tmp_path / "kb.tsv"
    kb.write_text("Alpha\tdirected_by\tBeta\nGamma\tdirected_by\tBeta\nAlpha\tyear\t1999\n")
    store = tmp_path / "store"
    assert runner.invoke(app, ["kg", "build", str(kb), "--out", str(store)]).exit_code == 0
    r = runner.invoke(app, ["ask", "who directed [Alpha]", "--kg", str(store)])
    assert r.exit_code == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("Subgraph:"))
    assert "(not reduced: graph reduction keeps the paths joining two or more" in line

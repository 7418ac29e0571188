"""On a KG no ranker was trained on, the LLM-free mode's search revisits the topic when a
step would otherwise be empty (PoGSettings.revisit_when_empty = "auto": on for a zero-shot
ranking), so "the child of [X]'s parent", where X is the only child, answers X, and a chain
may go on through X. A trained ranker and PoG's own exploration keep the paper's paths.
Also: an unbracketed possessive ("Xena Ardent's parent") links the name without its 's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.memory import MemoryKG
from kgreason.pog.linking import link_spans
from kgreason.pog.settings import PoGSettings

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("llm_free_env")

FAMILY = """\
Xena Ardent\tparents\tPaulus Ardent
Paulus Ardent\tchildren\tXena Ardent
Xena Ardent\tnationality\tNorway
Paulus Ardent\tnationality\tSweden
Paulus Ardent\tspouse\tQuintana Ardent
Quintana Ardent\tspouse\tPaulus Ardent
Quintana Ardent\tplace_of_birth\tBergen
Xena Ardent\tplace_of_birth\tOslo
Paulus Ardent\tplace_of_birth\tUppsala
Ivo Brandt\tparents\tQuintana Ardent
Quintana Ardent\tchildren\tIvo Brandt
Ivo Brandt\tnationality\tDenmark
Ivo Brandt\tplace_of_birth\tAarhus
"""


def test_auto_revisits_for_a_zero_shot_ranking_only():
    assert PoGSettings().revisit_when_empty == "auto"
    assert PoGSettings().revisits(zero_shot=True) and not PoGSettings().revisits()
    assert PoGSettings(revisit_when_empty="on").revisits()
    assert not PoGSettings(revisit_when_empty="off").revisits(zero_shot=True)
    assert PoGSettings(revisit_when_empty=True).revisit_when_empty == "on"  # TOML true
    with pytest.raises(ValidationError):
        PoGSettings(revisit_when_empty="sometimes")


@pytest.fixture(scope="module")
def family(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("family")
    (d / "family.tsv").write_text(FAMILY)
    r = runner.invoke(app, ["kg", "build", str(d / "family.tsv"), "--out", str(d / "store")])
    assert r.exit_code == 0, r.stderr
    return d / "store"


def _ask(question: str, store: Path, *extra: str) -> dict:
    r = runner.invoke(app, ["ask", question, "--kg", str(store), "--json", *extra])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize(
    ("question", "gold"),
    [
        ("who is the child of Xena Ardent's parent", "Xena Ardent"),
        ("who is the child of Ivo Brandt's parent", "Ivo Brandt"),
        # the chain goes on through the topic: X -> P -> X -> Norway
        ("what is the nationality of Xena Ardent's parent's child", "Norway"),
    ],
)
def test_a_chain_through_the_topic_is_answered(family, monkeypatch, question, gold):
    got = _ask(question, family)
    assert [a["name"] for a in got["answers"]] == [gold]
    # off, the chain cannot be found and the answer is another
    monkeypatch.setenv("KGREASON_POG__REVISIT_WHEN_EMPTY", "off")
    off = _ask(question, family)
    assert [a["name"] for a in off["answers"]] != [gold]


def test_a_possessive_links_the_bare_name():
    kg = MemoryKG([("Xena Ardent", "parents", "Paulus Ardent"), ("Ivan's Childhood", "x", "y")])
    (t,) = asyncio.run(link_spans(kg, "who is the child of Xena Ardent's parent"))
    assert (t.id, t.keyword, t.method) == ("Xena Ardent", "Xena Ardent", "exact")
    # a name that holds the possessive still links whole
    (t,) = asyncio.run(link_spans(kg, "who directed Ivan's Childhood"))
    assert t.id == "Ivan's Childhood"

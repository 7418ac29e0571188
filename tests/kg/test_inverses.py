"""Explicit inverse relations found at build time (kgreason.kg.inverses), shown by kg info."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.inverses import OWL_INVERSE_OF, detect_inverses, inverse_map

runner = CliRunner()


def _table(triples: list[tuple[str, str, str]]):  # type: ignore[no-untyped-def]
    keys: dict[str, int] = {}
    rels: dict[str, int] = {}
    h, r, t = [], [], []
    for a, b, c in triples:
        h.append(keys.setdefault(a, len(keys)))
        r.append(rels.setdefault(b, len(rels)))
        t.append(keys.setdefault(c, len(keys)))
    return np.array(h), np.array(r), np.array(t), list(keys), list(rels)


def test_name_owl_and_mirror_pairs_with_coverage() -> None:
    triples = [
        ("a", "plays_for", "x"),
        ("x", "plays_for_inverse", "a"),
        ("b", "plays_for", "x"),  # no mirror: the named pair covers half of plays_for
        ("p", "parent", "q"),
        ("q", "child", "p"),
        ("parent", OWL_INVERSE_OF, "child"),
        ("m", "containedby", "n"),
        ("n", "contains", "m"),  # undeclared exact mirror
        ("u", "likes", "v"),
    ]
    found = {(d["relation"], d["inverse"]): d for d in detect_inverses(*_table(triples))}
    assert found[("plays_for", "plays_for_inverse")]["source"] == "name"
    assert found[("plays_for", "plays_for_inverse")]["mirrored"] == 0.5
    assert found[("child", "parent")]["source"] == "owl"
    assert found[("containedby", "contains")]["source"] == "mirror"
    assert not any("likes" in k for k in found)
    # only declared, exact pairs are folded by the pipeline
    assert inverse_map(found.values()) == {"parent": "child"}


def test_kg_info_lists_pairs_and_rounds_figures(tmp_path: Path) -> None:
    kb = tmp_path / "kb.tsv"
    rows = [f"p{i}\tplays_for\tc{i % 7}\nc{i % 7}\tplays_for_inverse\tp{i}" for i in range(101)]
    kb.write_text("\n".join(rows) + "\n")
    out = tmp_path / "store"
    assert runner.invoke(app, ["kg", "build", str(kb), "--out", str(out)]).exit_code == 0
    r = runner.invoke(app, ["kg", "info", str(out)])
    assert r.exit_code == 0, r.stderr
    assert "plays_for <-> plays_for_inverse (name, mirrored 1.0)" in r.stdout
    import json

    # degrees 3, 2 and five 1s: numpy's p99 is 2.9399999999999995, shown as 2.94
    kb2 = tmp_path / "star.tsv"
    kb2.write_text("A\tr\tl1\nA\tr\tl2\nA\tr\tl3\nB\tr\tm1\nB\tr\tm2\n")
    out2 = tmp_path / "star"
    assert runner.invoke(app, ["kg", "build", str(kb2), "--out", str(out2)]).exit_code == 0
    data = json.loads(runner.invoke(app, ["kg", "info", str(out2), "--json"]).stdout)
    assert data["degree"]["total"]["p99"] == 2.94
    assert "none" in runner.invoke(app, ["kg", "info", str(out2)]).stdout

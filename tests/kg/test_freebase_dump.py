"""`kg build` on the Freebase dump: the same store as the cleaned N-Triples, whatever the
memory budget; the cleaning rules, counted by rule; bad lines named by number."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import pytest
from tests.kg.fbdump import NS, fact, generator, store_files, write_dump

from kgreason.kg.freebase import Cleaning, DumpOptions, build_freebase
from kgreason.kg.freebase.parse import looks_like_dump
from kgreason.kg.loaders import LoadError, Source
from kgreason.kg.store import StoreKG, build_store


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fb") / "freebase-rdf-latest.gz"
    generator().generate(path, 60_000, seed=3)
    return path


@pytest.fixture(scope="module")
def reference(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store `kg build` makes from the reference cleaning written as N-Triples."""
    d = tmp_path_factory.mktemp("ref")
    nt = d / "clean.nt"
    generator().clean(dump, nt)
    build_store([Source(nt)], d / "store")
    return d / "store"


@pytest.mark.parametrize("memory", [2 << 30, 1 << 20])
def test_dump_build_equals_the_cleaned_n_triples_build(
    dump: Path, reference: Path, tmp_path: Path, memory: int
) -> None:
    """Byte for byte (ids, CSR, names, indexes), at one chunk and at many chunks and
    buckets (a 1 MB budget: 5+ chunks, 3+ buckets)."""
    m = build_freebase(dump, tmp_path / "s", options=DumpOptions(memory=memory, block=1 << 15))
    kg = StoreKG(reference)
    ref = kg.manifest
    kg.close()
    assert m.fingerprint == ref.fingerprint
    for k in ("triples", "input_triples", "entities", "relations", "unnamed", "isolated"):
        assert m.counts[k] == ref.counts[k], k
    assert store_files(tmp_path / "s") == store_files(reference)
    assert m.inverse_relations == ref.inverse_relations
    assert m.counts["triples"] > 20_000 and m.counts["input_triples"] > m.counts["triples"]


def test_name_indexes_sorted_in_runs_equal_the_n_triples_build(
    dump: Path, reference: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name-index sorts in runs of 50 records merged from files (a budget far below
    the entity count) give the same store."""
    from kgreason.kg.store import external

    monkeypatch.setattr(external, "MIN_READ", 1)
    monkeypatch.setattr(external, "RECORD_BYTES", (1 << 20) // 50)
    spills: list[str] = []
    real = external.Sorter._spill

    def counted(self: external.Sorter) -> None:
        spills.append(self.name)
        real(self)

    monkeypatch.setattr(external.Sorter, "_spill", counted)
    m = build_freebase(dump, tmp_path / "s", options=DumpOptions(memory=1 << 20, block=1 << 15))
    assert store_files(tmp_path / "s") == store_files(reference)
    for name in ("keys", "labels", "groups", "pairs", "norm-hashes", "prefixes"):
        assert name in spills, name  # (one block of names or hashes is one run)
    assert spills.count("pairs") >= m.counts["entities"] // 50


def test_small_budget_really_splits_the_work(dump: Path, tmp_path: Path) -> None:
    from kgreason.kg.freebase import build as fb_build
    from kgreason.kg.freebase.state import BuildState

    seen: list[BuildState] = []
    real = fb_build._finish

    def spy(work, dump, state, options):  # type: ignore[no-untyped-def]
        seen.append(state)
        return real(work, dump, state, options)

    fb_build._finish = spy  # type: ignore[assignment]
    try:
        build_freebase(dump, tmp_path / "s", options=DumpOptions(memory=1 << 20, block=1 << 15))
    finally:
        fb_build._finish = real  # type: ignore[assignment]
    assert len(seen[0].chunks) >= 5 and seen[0].buckets >= 3


def test_rules_drop_and_count_each_kind_of_line(tmp_path: Path) -> None:
    en, fr = '"Nijmegen"@en', '"Nimègue"@fr'
    lines = [
        fact("m.0a", "type.object.name", en),
        fact("m.0a", "type.object.name", fr),
        fact("m.0a", "type.object.name", '"Nijmegen, NL"@en-GB'),
        fact("m.0a", "type.object.type", f"<{NS}location.citytown>"),
        fact("m.0a", "type.object.key", '"/en/nijmegen"'),
        fact("m.0a", "common.topic.description", '"A city \\"on\\" the Waal."@en'),
        fact("location.citytown", "type.type.properties", f"<{NS}location.citytown.x>"),
        fact("m.0a", "freebase.valuenotation.has_value", f"<{NS}m.0b>"),
        f'<{NS}m.0a>\t<http://rdf.freebase.com/key/wikipedia.en>\t"Nijmegen"\t.',
        f"<{NS}m.0a>\t<http://www.w3.org/2002/07/owl#sameAs>\t<http://dbpedia.org/r/N>\t.",
        fact("m.0a", "location.location.area", '"169.0"^^<http://www.w3.org/2001/XMLSchema#float>'),
        fact("m.0a", "location.location.containedby", f"<{NS}g.11bc_7x>"),
        fact("m.0a", "location.location.containedby", f"<{NS}g.11bc_7x>"),
        fact("m.0a", "location.location.time_zones", f"<{NS}en>"),
        fact("g.11bc_7x", "type.object.name", '"Gelderland \\u00e9"@en'),
        fact("m.0c", "type.object.name", '"Only Dutch"@nl'),
    ]
    m = build_freebase(write_dump(tmp_path / "d.gz", lines), tmp_path / "s")
    dropped = {d["rule"]: d["lines"] for d in m.sources[0]["dropped"]}  # type: ignore[union-attr]
    assert dropped == {
        "name_other_language": 2,
        "type_object": 2,
        "schema": 1,
        "common": 1,
        "freebase_meta": 1,
        "key": 1,
        "non_freebase_predicate": 1,
        "literal": 1,
        "subject_not_entity": 0,
        "object_not_entity": 1,
    }
    assert all(d["source"] for d in m.sources[0]["dropped"])  # type: ignore[union-attr]
    assert m.counts["triples"] == 1 and m.counts["input_triples"] == 2
    kg = StoreKG(tmp_path / "s")
    try:
        names = asyncio.run(kg.names(["m.0a", "g.11bc_7x"]))
        assert names == {"m.0a": "Nijmegen", "g.11bc_7x": "Gelderland é"}  # @en, not @en-GB
        hood = asyncio.run(kg.neighbors(["m.0a"]))["m.0a"]
        assert [n.relation for n in hood] == ["location.location.containedby"]
    finally:
        kg.close()
    assert m.sources[0]["format"] == "freebase" and m.sources[0]["sha256"]


def test_a_configured_language_and_kept_rules(tmp_path: Path) -> None:
    lines = [
        fact("m.0a", "type.object.name", '"Nimègue"@fr'),
        fact("m.0a", "type.object.name", '"Nijmegen"@en'),
        fact("m.0a", "common.topic.notable_types", f"<{NS}m.0t>"),
    ]
    dump = write_dump(tmp_path / "d.gz", lines)
    options = DumpOptions(cleaning=Cleaning("fr", ("common",)))
    m = build_freebase(dump, tmp_path / "s", options=options)
    kg = StoreKG(tmp_path / "s")
    try:
        assert asyncio.run(kg.names(["m.0a"])) == {"m.0a": "Nimègue"}
    finally:
        kg.close()
    assert m.counts["triples"] == 1
    with pytest.raises(ValueError, match="cannot keep"):
        Cleaning("en", ("literal",))


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (f"<{NS}m.0a>\t<{NS}r.r.r>\t<{NS}m.0b>", "expected a Freebase dump line"),
        (f"<{NS}m.0a>\t<{NS}r.r.r>\t<{NS}m.0b>\t;", "expected a Freebase dump line"),
        (f"<{NS}m.0a> <{NS}r.r.r> <{NS}m.0b> .", "1 tab-separated field"),
        (f"<{NS}m.0{'x' * 40}>\t<{NS}r.r.r>\t<{NS}m.0b>\t.", "not a Freebase id"),
        (f"<{NS}m.0A!>\t<{NS}r.r.r>\t<{NS}m.0b>\t.", "not a Freebase id"),
    ],
)
def test_a_bad_line_is_named_by_its_number(tmp_path: Path, bad: str, match: str) -> None:
    good = [fact("m.0a", "r.r.r", f"<{NS}m.0{i}>") for i in range(5)]
    dump = write_dump(tmp_path / "d.gz", [*good, bad, *good])
    with pytest.raises(LoadError, match=rf"d\.gz:6: .*{match}"):
        build_freebase(dump, tmp_path / "s")
    assert not (tmp_path / "s").exists()


def test_bad_utf8_in_a_name_and_a_truncated_gzip(tmp_path: Path) -> None:
    raw = f'<{NS}m.0a>\t<{NS}type.object.name>\t"\xff"@en\t.\n'.encode("latin-1")
    with gzip.open(tmp_path / "u.gz", "wb") as f:
        f.write(fact("m.0a", "r.r.r", f"<{NS}m.0b>").encode() + b"\n" + raw)
    with pytest.raises(LoadError, match=r"u\.gz:2: not UTF-8"):
        build_freebase(tmp_path / "u.gz", tmp_path / "s")
    lines = [fact("m.0a", "r.r.r", f"<{NS}m.0{i}>") for i in range(20000)]
    data = gzip.compress("\n".join(lines).encode())
    (tmp_path / "t.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match=r"t\.gz:\d+: unreadable"):
        build_freebase(tmp_path / "t.gz", tmp_path / "s2")


def test_empty_and_all_dropped_dumps_are_refused(tmp_path: Path) -> None:
    from kgreason.kg.store.build import EmptyInputError

    with pytest.raises(EmptyInputError, match="no lines"):
        build_freebase(write_dump(tmp_path / "e.gz", []), tmp_path / "s")
    only_keys = [fact("m.0a", "type.object.key", '"/en/x"')]
    with pytest.raises(EmptyInputError, match="no entity-to-entity triple"):
        build_freebase(write_dump(tmp_path / "k.gz", only_keys), tmp_path / "s")


def test_the_dump_is_told_apart_by_its_first_line(dump: Path, tmp_path: Path) -> None:
    assert looks_like_dump(dump)
    plain = tmp_path / "plain"
    plain.write_bytes(gzip.decompress(dump.read_bytes())[:10000])
    assert looks_like_dump(plain)
    (tmp_path / "x.gz").write_bytes(gzip.compress(b"a\tb\tc\n"))
    assert not looks_like_dump(tmp_path / "x.gz")
    assert not looks_like_dump(tmp_path / "missing")

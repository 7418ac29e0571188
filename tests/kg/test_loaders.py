"""Loaders: every format on small files and on the real MetaQA / PathQuestion data;
malformed input names file and line and leaves no store behind."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kgreason.kg.loaders import LoadError, Source, detect_format, load_all
from kgreason.kg.store import StoreKG, build_store

FB = "http://rdf.freebase.com/ns/"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_tsv_and_metaqa_lines(tmp_path):
    tsv = _write(tmp_path / "a.tsv", "A\tr\tB\n\nB\tr2\tC\r\n")
    mq = _write(
        tmp_path / "kb.txt", "Kismet|directed_by|William Dieterle\nKismet|release_year|1944\n"
    )
    assert list(Source(tsv)) == [("A", "r", "B"), ("B", "r2", "C")]
    assert Source(mq).format == "metaqa"
    assert list(Source(mq))[1] == ("Kismet", "release_year", "1944")


def test_detection(tmp_path):
    assert detect_format(_write(tmp_path / "x.txt", "a\tb\tc\n")) == "tsv"
    assert detect_format(_write(tmp_path / "y.txt", "a|b|c\n")) == "metaqa"
    assert detect_format(_write(tmp_path / "z.nt", "")) == "nt"
    assert detect_format(_write(tmp_path / "z.ttl", "")) == "ttl"
    with pytest.raises(LoadError, match=r"w\.json: cannot tell the format"):
        detect_format(_write(tmp_path / "w.json", "{}"))
    # --format overrides the extension
    assert list(Source(_write(tmp_path / "q.dat", "a|b|c\n"), "metaqa")) == [("a", "b", "c")]


def test_gzip(tmp_path):
    p = tmp_path / "kb.txt.gz"
    with gzip.open(p, "wt") as f:
        f.write("a|b|c\nd|e|f\n")
    assert list(Source(p)) == [("a", "b", "c"), ("d", "e", "f")]


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("bad.tsv", "a\tb\tc\na\tb\n", 2),
        ("bad.tsv", "a\tb\tc\n\n\na\t\tc\n", 4),
        ("bad.txt", "a|b|c\na|b|c|d\n", 2),
        ("bad.nt", "<http://x/a> <http://x/b> <http://x/c> .\n<http://x/a> <http://x/b> c .\n", 2),
        ("bad.ttl", "@prefix x: <http://x/> .\nx:a x:b x:c .\nx:a x:b ;; .\n", 3),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, name, text, line):
    f = _write(tmp_path / name, text)
    with pytest.raises(LoadError, match=rf"{name}:{line}\b"):
        list(Source(f))
    with pytest.raises(LoadError, match=rf"{name}:{line}\b"):
        build_store([Source(f)], tmp_path / "store")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no store, no temp dir


def test_failed_rebuild_keeps_the_old_store(tmp_path):
    good = _write(tmp_path / "g.tsv", "a\tr\tb\n")
    build_store([Source(good)], tmp_path / "s")
    bad = _write(tmp_path / "b.tsv", "a\tr\tb\nbroken\n")
    with pytest.raises(LoadError, match=r"b\.tsv:2"):
        build_store([Source(bad)], tmp_path / "s", force=True)
    assert StoreKG(tmp_path / "s").manifest.counts["triples"] == 1
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_not_utf8(tmp_path):
    f = tmp_path / "x.tsv"
    f.write_bytes(b"a\tb\tc\n\xff\tb\tc\n")
    with pytest.raises(LoadError, match=r"x\.tsv:2: not UTF-8"):
        list(Source(f))


def test_rdf_names_and_freebase_ids(tmp_path):
    nt = _write(
        tmp_path / "fb.nt",
        f'<{FB}m.01> <{FB}type.object.name> "Nijmegen"@en .\n'
        f'<{FB}m.02> <http://www.w3.org/2000/01/rdf-schema#label> "Weeze"@de .\n'
        f'<{FB}m.02> <http://www.w3.org/2000/01/rdf-schema#label> "Weeze Airport"@en .\n'
        f"<{FB}m.01> <{FB}location.location.adjoin_s> <{FB}m.0cvt> .\n"
        f"<{FB}m.0cvt> <{FB}location.adjoining_relationship.adjoins> <{FB}m.02> .\n"
        f"<http://example.org/x> <http://example.org/p> <{FB}m.01> .\n",
    )
    triples, names = load_all([Source(nt)])
    assert triples[0] == ("m.01", "location.location.adjoin_s", "m.0cvt")
    assert names == {
        "m.01": "Nijmegen",
        "m.02": "Weeze Airport",
        "http://example.org/x": "http://example.org/x",  # no label: the identifier itself
    }  # m.0cvt is unnamed
    ttl = _write(
        tmp_path / "fb.ttl",
        f'@prefix ns: <{FB}> .\nns:m.01 ns:type.object.name "Nijmegen" ; ns:r ns:m.02 .\n',
    )
    assert load_all([Source(ttl)]) == ([("m.01", "r", "m.02")], {"m.01": "Nijmegen"})


def test_metaqa_ids_errors(tmp_path):
    _write(tmp_path / "entity2text.txt", "0\tA\n1\tB\n")
    _write(tmp_path / "relation2text.txt", "0\tdirected by\n")
    f = _write(tmp_path / "train.tsv", "0\t0\t1\n0\t0\t5\n")
    assert detect_format(tmp_path) == "metaqa-ids"
    assert detect_format(f) == "metaqa-ids"
    with pytest.raises(LoadError, match=r"train\.tsv:2: id out of range"):
        list(Source(tmp_path))
    _write(f, "0\t0\t1\nx\t0\t1\n")
    with pytest.raises(LoadError, match=r"train\.tsv:2: expected three integer ids"):
        list(Source(f))
    _write(f, "0\t0\t1\n")
    assert list(Source(tmp_path)) == [("A", "directed_by", "B")]


def test_real_metaqa_ids(shared_data):
    d = shared_data / "kgqa/metaqa/kb_ids_incomplete"
    triples = list(Source(d))
    assert len(triples) == 134_741
    assert len(set(triples)) == 128_185
    assert ("Kismet", "directed_by", "William Dieterle") in set(triples)
    assert {r for _, r, _ in triples} == {
        "directed_by", "written_by", "starred_actors", "release_year", "in_language",
        "has_tags", "has_genre", "has_imdb_votes", "has_imdb_rating",
    }  # fmt: skip
    # the relation names and entity names match the answers of MetaQA's questions
    kb = set(triples)
    ok = 0
    lines = (d.parent / "1-hop/dev.txt").read_text().splitlines()[:300]
    for line in lines:
        q, answers = line.split("\t")
        topic = q[q.index("[") + 1 : q.index("]")]
        ok += any(
            (topic, r, a) in kb or (a, r, topic) in kb
            for a in answers.split("|")
            for r in {r for _, r, _ in kb}
        )
    assert ok >= 0.9 * len(lines)


@pytest.mark.parametrize(
    ("name", "count"), [("2H-kb.txt", 1211), ("3H-kb.txt", 2839), ("PQL2-KB.txt", 4247)]
)
def test_real_pathquestion(shared_data, name, count):
    src = Source(shared_data / "kgqa/pathquestion/PathQuestion" / name)
    assert src.format == "tsv"
    triples = list(src)
    assert len(triples) == count
    assert all(len(x) == 3 and all(x) for x in triples)

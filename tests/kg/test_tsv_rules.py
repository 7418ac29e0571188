"""Issue 34 item 7: what a hand-written triple file may contain. A byte order mark is not
part of the first entity's id (TSV, MetaQA, N-Triples, Turtle, gzipped or not); TSV `#`
comment lines and blank lines are skipped, in both of the TSV reader's paths (a clean block
split at once, and line by line); the README's rules section says so."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.base import Triple
from kgreason.kg.loaders import LoadError, Source, detect_format, load_all
from kgreason.kg.store import StoreKG

BOM = b"\xef\xbb\xbf"
README = Path(__file__).resolve().parents[2] / "README.md"


def _write(path: Path, data: bytes) -> Path:
    if path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", ["kb.tsv", "kb.tsv.gz"])
def test_a_bom_is_not_part_of_the_first_id_in_tsv(tmp_path: Path, name: str):
    f = _write(tmp_path / name, BOM + b"Alpha\tr\tBeta\nBeta\tr\tGamma\n")
    assert list(Source(f)) == [("Alpha", "r", "Beta"), ("Beta", "r", "Gamma")]


def test_a_bom_is_not_part_of_the_first_id_in_metaqa(tmp_path: Path):
    f = _write(tmp_path / "kb.txt", BOM + b"Alpha|r|Beta\n")
    assert detect_format(f) == "metaqa" and list(Source(f)) == [("Alpha", "r", "Beta")]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("kb.nt", b'<http://x/a> <http://x/r> <http://x/b> .\n<http://x/a> <http://www.w3.org/2000/01/rdf-schema#label> "A" .\n'),
        ("kb.ttl", b'@prefix x: <http://x/> .\nx:a x:r x:b .\n'),
        ("kb.nt.gz", b"<http://x/a> <http://x/r> <http://x/b> .\n"),
    ],
)  # fmt: skip
def test_rdf_with_a_bom_parses(tmp_path: Path, name: str, text: bytes):
    plain = list(Source(_write(tmp_path / ("plain-" + name), text)))
    with_bom = list(Source(_write(tmp_path / name, BOM + text)))  # was a syntax error
    assert with_bom == plain == [("http://x/a", "http://x/r", "http://x/b")]


COMMENTED = (
    b"# my movie KB: head<TAB>relation<TAB>tail\n"
    b"\n"
    b"Alpha\tdirected_by\tBeta\n"
    b"   # an indented comment\n"
    b"# a\tcomment\twith three fields\n"
    b"Gamma\tdirected_by\tBeta\r\n"
    b"\n"
)


@pytest.mark.parametrize("name", ["kb.tsv", "kb.tsv.gz", "kb.txt"])
def test_tsv_comments_and_blank_lines_are_skipped(tmp_path: Path, name: str):
    f = _write(tmp_path / name, BOM + COMMENTED)
    assert detect_format(f) == "tsv"  # a .txt is judged by its first non-comment line
    triples, names = load_all([Source(f)])
    assert triples == [("Alpha", "directed_by", "Beta"), ("Gamma", "directed_by", "Beta")]
    assert names is None


def test_a_clean_block_with_one_comment_line_is_not_split_blindly(tmp_path: Path):
    """Three fields on every line, no stray whitespace: the fast path's shape, which a `#`
    line must still leave."""
    f = _write(tmp_path / "kb.tsv", b"a\tr\tb\n#c\tr\td\ne\tr\tf\n")
    assert list(Source(f)) == [("a", "r", "b"), ("e", "r", "f")]
    f = _write(tmp_path / "kb2.tsv", b"#c\tr\td\na\tr\tb\n")
    assert list(Source(f)) == [("a", "r", "b")]


def test_a_bad_line_is_still_named(tmp_path: Path):
    f = _write(tmp_path / "kb.tsv", b"# header\nAlpha\tr\n")
    with pytest.raises(LoadError, match=r"kb.tsv:2: expected head<TAB>relation<TAB>tail"):
        list(Source(f))


def test_metaqa_lines_starting_with_hash_are_not_comments(tmp_path: Path):
    """Comments are a TSV rule: MetaQA's `|` format is read as it always was."""
    f = _write(tmp_path / "kb.txt", b"#1 Hit|r|Beta\n")
    assert list(Source(f)) == [("#1 Hit", "r", "Beta")]


def test_kg_build_of_a_commented_bom_file_keeps_clean_ids(tmp_path: Path):
    f = _write(tmp_path / "kb.tsv", BOM + COMMENTED)
    out = tmp_path / "store"
    r = CliRunner().invoke(app, ["kg", "build", str(f), "--out", str(out), "--json"])
    assert r.exit_code == 0, r.stderr
    kg = StoreKG(out)
    try:
        found = asyncio.run(kg.contains([Triple("Alpha", "directed_by", "Beta")]))
        assert found == [True] and asyncio.run(kg.names(["Alpha"])) == {"Alpha": "Alpha"}
    finally:
        kg.close()
    assert '"triples": 2' in r.stdout


def test_the_readme_writes_the_tsv_rules_down():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("The TSV rules:") :][:1200]
    for rule in ("head<TAB>relation<TAB>tail", "`#`", "blank lines", "byte order mark", ".gz"):
        assert rule in section, rule

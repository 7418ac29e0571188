"""The bundled MetaQA KG: built into the cache on first use, safely under concurrency."""

from __future__ import annotations

import threading

from kgreason.kg import StoreKG, open_kg
from kgreason.kg.bundled import bundled_kb_file, bundled_store_path, cache_dir
from kgreason.kg.settings import KGSettings


def test_cache_dir_resolution(tmp_path):
    assert cache_dir({"KGREASON_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "kgreason"


def test_vendored_files_present():
    kb = bundled_kb_file()
    assert (
        kb.is_file()
        and (kb.parent / "LICENSE").is_file()
        and (kb.parent / "PROVENANCE.md").is_file()
    )
    assert "CC BY 3.0" in (kb.parent / "LICENSE").read_text().replace("(", "").replace(")", "")


async def test_first_use_builds_once_concurrently(tmp_path):
    env = {"KGREASON_CACHE_DIR": str(tmp_path)}
    results: list = []
    threads = [
        threading.Thread(target=lambda: results.append(bundled_store_path(env))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1
    path = results[0]
    stores = [p for p in (tmp_path / "stores").iterdir() if p.is_dir()]
    assert stores == [path]  # no temp or duplicate directories left
    mtime = (path / "manifest.json").stat().st_mtime_ns
    assert bundled_store_path(env) == path
    assert (path / "manifest.json").stat().st_mtime_ns == mtime  # not rebuilt
    kg = StoreKG(path)
    assert kg.manifest.counts["triples"] == 128_185
    nb = await kg.neighbors(["Kismet"])
    assert ("William Dieterle", "directed_by", "tail") in {
        (n.entity, n.relation, n.direction) for n in nb["Kismet"]
    }
    assert (await kg.search("kismet", fuzzy=False))[0].id == "Kismet"


async def test_open_kg(tmp_path, monkeypatch):
    monkeypatch.setenv("KGREASON_CACHE_DIR", str(tmp_path))
    kg = open_kg(KGSettings())
    assert isinstance(kg, StoreKG) and str(tmp_path) in kg.name
    again = open_kg(KGSettings(store=kg.path, noise_prefixes=["has_"]))
    assert again.fingerprint() == kg.fingerprint()
    nb = (await again.neighbors(["Kismet"]))["Kismet"]
    assert nb and not any(n.relation.startswith("has_") for n in nb)
    from kgreason.kg.sparql import SparqlKG

    sp = open_kg(KGSettings(sparql_url="http://127.0.0.1:9/sparql", dialect="wikidata"))
    assert isinstance(sp, SparqlKG) and sp.name == "http://127.0.0.1:9/sparql"

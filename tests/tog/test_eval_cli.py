"""`kgreason eval cwq --method tog` end to end, as a user runs it: a CWQ-format file (with
gold SPARQL) over a KG store built from the Nijmegen fixture, the LLM behind the local
OpenAI-protocol test server answering like a careful model, then `kgreason report`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgreason.kg.loaders import Source
from kgreason.kg.store import build_store
from tests.llm.fake_server import FakeOpenAIServer
from tests.pog.test_e2e_nijmegen import FIXTURE, FRANCE, GERMANY, NIJMEGEN
from tests.tog.scripted import listed_candidates, listed_relations, prefer, shown_facts

PREFIX = "PREFIX ns: <http://rdf.freebase.com/ns/>\nSELECT DISTINCT ?x\nWHERE {\n"
QUESTIONS = [
    {
        "ID": "c1",
        "question": "What country bordering France contains an airport that serves Nijmegen?",
        "answer": "Germany",
        "topic_entity": {NIJMEGEN: "Nijmegen", FRANCE: "France"},
        "compositionality_type": "conjunction",
        "sparql": PREFIX + f"ns:{NIJMEGEN} ns:location.location.nearby_airports ?a .\n"
        "?a ns:location.location.containedby ?x .\n?x ns:location.location.adjoin_s ?c .\n"
        f"?c ns:location.adjoining_relationship.adjoins ns:{FRANCE} .\n}}",
    },
    {
        "ID": "c2",
        "question": "What time zone is Germany in?",
        "answer": "Central European Time Zone",
        "topic_entity": {GERMANY: "Germany"},
        "compositionality_type": "composition",
        "sparql": PREFIX + f"ns:{GERMANY} ns:location.location.time_zones ?x .\n}}",
    },
    {
        "ID": "c3",
        "question": "Which sea borders Atlantis?",
        "answer": "Atlantic Ocean",
        "topic_entity": {"m.0nosuch": "Atlantis"},
        "compositionality_type": "composition",
        "sparql": PREFIX + "ns:m.0nosuch ns:location.location.adjoin_s ?x .\n}",
    },
]


def careful_model(messages: list[dict[str, str]]) -> str:
    """Replies by stage, read off the prompt; it knows nothing of the gold answers."""
    prompt = messages[0]["content"]
    question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
    if "Relations:\n" in prompt:
        words = ["time_zones"] if "time zone" in question else ["nearby_airports", "containedby"]
        return prefer(words, listed_relations)(messages)
    if "Candidates:\n" in prompt:
        return prefer(["Weeze", "Germany"], listed_candidates)(messages)
    if "{Yes} if they are enough" in prompt:
        facts = "\n".join(shown_facts(messages))
        done = "Weeze Airport, location.location.containedby, Germany" in facts
        return "{Yes}. Enough." if done or "time_zones" in facts else "{No}. Not yet."
    if "knowledge graph facts below" in prompt:
        if "time zone" in question:  # a wrong extraction: the right answer is on the path
            return "Germany keeps Eastern European Time.\nanswer: {Eastern European Time}"
        return "Weeze Airport serves Nijmegen and is in Germany.\nanswer: {Germany}"
    return "answer: {Unknown}"


class ReadingServer(FakeOpenAIServer):
    """The test server, replying to each request from its prompt (one question at a time)."""

    def respond(self, h: Any, kind: str, arg: Any) -> None:
        if kind == "ok" and arg == "fine" and self.requests:
            arg = careful_model(self.requests[-1]["messages"])
        return super().respond(h, kind, arg)


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env.update(KGREASON_CACHE_DIR=str(tmp / "cache"), **extra)
    return env


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgreason", *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, list[dict[str, Any]], ReadingServer]:
    work = tmp_path_factory.mktemp("togcli")
    store = work / "nijmegen-store"
    build_store([Source(FIXTURE, "nt")], store)
    data = work / "data" / "kgqa" / "freebase-questions" / "pog"
    data.mkdir(parents=True)
    (data / "cwq.json").write_text(json.dumps(QUESTIONS))
    server = ReadingServer().start()
    try:
        env = _env(work, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test")
        out = work / "cwq-tog"
        args = ["eval", "cwq", "--data-dir", str(work / "data"), "--kg", str(store)]
        r = _cli([*args, "--method", "tog", "--out", str(out), "--no-cache", "--json"], env, work)
        assert r.returncode == 0, r.stderr + r.stdout
    finally:
        server.close()
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return out, rows, server


def test_rows_of_a_tog_run(run):
    out, rows, server = run
    assert [r["id"] for r in rows] == ["c1", "c2", "c3"]
    c1, c2, c3 = rows
    assert c1["method"] == "tog" and c1["answers"] == ["Germany"] and c1["strict_hit1"]
    assert c1["answer_ids"] == [GERMANY] and c1["phase"] == "paths"
    assert c1["paths"] and c1["names"][GERMANY] == "Germany" and c1["topics"] == [NIJMEGEN, FRANCE]
    assert set(c1["usage"]) == {
        "tog.relation_prune", "tog.entity_score", "tog.reasoning", "tog.answer", "total",
    }  # fmt: skip
    assert c1["llm_calls"] == c1["usage"]["total"]["calls"] > 0
    assert c1["extra"]["variant"] == "tog" and c1["extra"]["depth"] == 2
    # gold-SPARQL fields: 4 relations; the paths walk 2 of the 4 (airports, containedby)
    assert c1["sparql_length"] == 4 and c1["relation_overlap"] == 0.5
    assert c2["answers"] == ["Eastern European Time"] and not c2["strict_hit1"]
    assert c2["sparql_length"] == 1 and c2["relation_overlap"] == 1.0
    assert c3["error_kind"] == "unknown-entity" and c3["answers"] == []
    # every request went over HTTP with ToG's temperatures
    temps = {m["temperature"] for m in server.requests}
    assert temps == {0.0, 0.4}
    config = json.loads((out / "config.json").read_text())
    assert config["method"] == "tog"
    assert any(k.startswith("kgreason.tog/") for k in config["prompt_hashes"])


def test_report_of_the_run_breaks_cwq_down_by_gold_sparql(run):
    out, _, _ = run
    r = _cli(["report", str(out)], _env(out.parent), out.parent)
    assert r.returncode == 0, r.stderr
    md = (out / "report.md").read_text()
    assert "accuracy by gold SPARQL length (cwq" in md
    assert "| 4 | 1 | 100.0 |" in md and "| 1 | 2 | 0.0 |" in md
    assert "| answer generation error | gold on paths | 1 |" in md  # c2
    assert "| run error | unknown-entity | 1 |" in md  # c3


def test_a_tog_run_replays_identically_without_the_server(run):
    out, _, _ = run
    work = out.parent
    args = ["--data-dir", str(work / "data"), "--kg", str(work / "nijmegen-store")]
    r = _cli(["eval", "--replay", str(out), *args, "--json"], _env(work), work)
    assert r.returncode == 0, r.stderr + r.stdout
    assert '"identical_to_original": true' in r.stdout

"""PoG with an LLM through the real server: a scripted LLM that follows the question's
relation chain (tests/pog/scripted_chain.py) answers; the stream carries every PoG stage in
order, the result is PoG's answer (not candidates) and /metrics counts the LLM calls and
tokens of each stage."""

from __future__ import annotations

import re

import kgreason
from kgreason.server.service import Service
from tests.pog.scripted_chain import chain_llm
from tests.server.live import live_server, sse_events

QUESTION = "who directed [Once Were Warriors]"


def test_pog_stream_result_and_llm_metrics(warm: Service) -> None:
    llm = chain_llm(QUESTION, "Once Were Warriors", ["directed_by"])
    base = warm.pog_free
    pog = kgreason.PoG(warm.kg, llm, base.embedder, base.settings)
    svc = Service(warm.kg, pog, warm.lkg, llm_free=False, pog_free=base)
    body = {"question": QUESTION, "topics": ["Once Were Warriors"]}
    with live_server(svc) as srv, srv.client() as c:
        r = c.post("/v1/ask/stream", json=body)
        events = sse_events(r.text)
        ends = [d["stage"] for e, d in events if e == "stage" and d["kind"] == "end"]
        assert ends == ["topic_entity", "graph", "question_analysis", "exploration", "faithfulness"]
        kind, out = events[-1]
        assert kind == "result" and out["ok"], out
        assert out["mode"] == "pog" and "label" not in out
        assert [a["name"] for a in out["answers"]] == ["Lee Tamahori"]
        assert out["unverified_triples"] == []
        qa = next(d for e, d in events if e == "stage" and d["stage"] == "question_analysis"
                  and d["kind"] == "end")  # fmt: skip
        assert qa["usage"]["calls"] == 1 and qa["usage"]["prompt_tokens"] > 0
        m = c.get("/metrics").text
        calls = dict(re.findall(r'kgreason_llm_calls_total\{stage="(\w+)"\} (\d+)', m))
        assert calls == {k: str(v["calls"]) for k, v in out["usage"].items() if k != "total"}
        assert int(calls["question_analysis"]) == 1
        tokens = re.search(
            r'kgreason_llm_prompt_tokens_total\{stage="question_analysis"\} (\d+)', m
        )
        assert tokens and int(tokens.group(1)) == out["usage"]["question_analysis"]["prompt_tokens"]
        # the same server can still be asked for the LLM-free mode per request
        free = c.post("/v1/ask", json={"question": QUESTION, "llm_free": True}).json()
        assert free["mode"] == "llm-free" and "label" in free

"""The Prometheus text the server writes by hand: counters, histogram, LLM usage by stage."""

from __future__ import annotations

import re

from kgreason.server.metrics import BUCKETS, Metrics, _fmt_labels


def test_render_counts_latency_and_llm_usage_by_stage() -> None:
    m = Metrics()
    m.record_request("/v1/ask", "POST", 200, 0.03)
    m.record_request("/v1/ask", "POST", 200, 3.0)
    m.record_request("/v1/ask", "POST", 429, 0.001)
    m.record_usage({
        "question_analysis": {"calls": 1, "prompt_tokens": 120, "completion_tokens": 30},
        "precise_select": {"calls": 2, "prompt_tokens": 400, "completion_tokens": 20},
        "total": {"calls": 3, "prompt_tokens": 520, "completion_tokens": 50},
    })  # fmt: skip
    m.record_usage({"precise_select": {"calls": 1, "prompt_tokens": 100, "completion_tokens": 5}})
    m.record_error("deadline")
    text = m.render({"kgreason_questions_inflight": 2})
    lines = text.splitlines()
    assert 'kgreason_http_requests_total{route="/v1/ask",method="POST",status="200"} 2' in lines
    assert 'kgreason_http_requests_total{route="/v1/ask",method="POST",status="429"} 1' in lines
    b = {float(x) if x != "+Inf" else float("inf"): int(n) for x, n in re.findall(
        r'duration_seconds_bucket\{route="/v1/ask",le="([^"]+)"\} (\d+)', text)}  # fmt: skip
    assert len(b) == len(BUCKETS) + 1
    assert (b[0.005], b[0.05], b[2.5], b[5.0], b[float("inf")]) == (1, 2, 2, 3, 3)
    assert 'kgreason_http_request_duration_seconds_count{route="/v1/ask"} 3' in lines
    assert 'kgreason_llm_calls_total{stage="precise_select"} 3' in lines
    assert 'kgreason_llm_prompt_tokens_total{stage="precise_select"} 500' in lines
    assert 'kgreason_llm_completion_tokens_total{stage="question_analysis"} 30' in lines
    assert not any('stage="total"' in ln for ln in lines)
    assert 'kgreason_errors_total{kind="deadline"} 1' in lines
    assert "kgreason_questions_inflight 2" in lines
    # every sample line belongs to a declared metric family
    declared = {ln.split()[2] for ln in lines if ln.startswith("# TYPE")}
    for ln in lines:
        if not ln.startswith("#"):
            name = re.match(r"[a-z_]+", ln).group(0)  # type: ignore[union-attr]
            assert re.sub(r"_(bucket|sum|count)$", "", name) in declared, ln


def test_label_values_are_escaped() -> None:
    assert _fmt_labels((("route", '/x"y\\z\n'),)) == '{route="/x\\"y\\\\z\\n"}'
    m = Metrics()  # and such a value never reaches a label (tests/security/test_server_metrics)
    m.record_request('/x"y\\z\n', "GET", 200, 0.1)
    assert 'route="other"' in m.render()

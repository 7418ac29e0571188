"""`kgreason doctor` reports the structured-output setting and, for `auto`, the flavour a run
would detect for the endpoint (docs/structured-outputs.md), through the real CLI app and a
local OpenAI-protocol server. No LLM configured: no probe, LLM-free mode said plainly."""

from __future__ import annotations

import json

import pytest

from tests.llm.test_doctor import clean_env, closed_port, invoke  # noqa: F401 (fixture)
from tests.llm.test_structured_outputs import MODELS, models

pytestmark = pytest.mark.usefixtures("clean_env")  # no LLM, no config file to start with


def doctor_json(env: dict[str, str], *sections: str) -> tuple[int, dict]:
    args = [a for s in sections or ("llm",) for a in ("-s", s)]
    r = invoke("doctor", "--json", *args, env=env)
    return r.exit_code, json.loads(r.stdout)


def test_no_llm_reports_setting_and_llm_free_mode():
    r = invoke("doctor", "-s", "llm", env={"KGREASON_LLM__STRUCTURED_OUTPUT": "vllm"})
    assert r.exit_code == 0, r.output
    assert "structured output: vllm (not used: LLM-free mode)" in r.stdout
    code, rep = doctor_json({})
    assert code == 0 and rep["llm"]["structured"]["setting"] == "auto"
    assert "flavour" not in rep["llm"]["structured"]  # nothing was detected: nothing to probe


def test_auto_detects_vllm_and_its_release(openai_server):
    openai_server.gets = {MODELS: models("vllm"), "/version": (200, {}, {"version": "0.11.0"})}
    env = {"OPENAI_BASE_URL": openai_server.base_url}
    r = invoke("doctor", "-s", "llm", env=env)
    assert r.exit_code == 0, r.output
    assert "structured output: auto -> vllm 0.11.0 (GET /models: owned_by vllm)" in r.stdout
    _, rep = doctor_json(env)
    st = rep["llm"]["structured"]
    assert (st["setting"], st["flavour"], st["vllm_version"]) == ("auto", "vllm", "0.11.0")
    assert "probe_failures" not in st
    # the chat probe carries no schema: detection is the GETs alone
    assert all(set(req) == {"model", "messages", "temperature", "max_tokens"}
               for req in openai_server.requests)  # fmt: skip


def test_auto_detects_ollama_and_llamacpp(openai_server):
    env = {"OPENAI_BASE_URL": openai_server.base_url}
    openai_server.gets = {"/api/version": (200, {}, {"version": "0.6.2"})}
    _, rep = doctor_json(env)
    assert rep["llm"]["structured"]["flavour"] == "ollama"
    assert "Ollama 0.6.2" in rep["llm"]["structured"]["detail"]
    openai_server.gets = {MODELS: (200, {"Server": "llama.cpp"}, {"data": []})}
    _, rep = doctor_json(env)
    assert rep["llm"]["structured"]["flavour"] == "llamacpp"


def test_auto_without_signature_falls_back_to_openai_form(openai_server):
    code, rep = doctor_json({"OPENAI_BASE_URL": openai_server.base_url})
    st = rep["llm"]["structured"]
    assert code == 0 and st["flavour"] == "openai" and "no server signature" in st["detail"]
    assert "probe_failures" not in st  # a 404 is an answer, not a failed probe
    assert openai_server.get_paths == ["/v1/models", "/api/version"]


def test_configured_flavour_is_reported_without_probing(openai_server):
    for mode, line in (("off", "off (configured): plain prompting"),
                       ("llamacpp", "llamacpp (configured)")):  # fmt: skip
        env = {"OPENAI_BASE_URL": openai_server.base_url, "KGREASON_LLM__STRUCTURED_OUTPUT": mode}
        code, rep = doctor_json(env)
        assert code == 0 and rep["llm"]["structured"]["detail"] == line
    assert openai_server.get_paths == []


def test_configured_vllm_reads_its_release_or_says_unknown(openai_server):
    env = {"OPENAI_BASE_URL": openai_server.base_url, "KGREASON_LLM__STRUCTURED_OUTPUT": "vllm"}
    _, rep = doctor_json(env)
    assert "release unknown" in rep["llm"]["structured"]["detail"]
    openai_server.gets = {"/version": (200, {}, {"version": "0.6.3"})}
    _, rep = doctor_json(env)
    assert rep["llm"]["structured"]["detail"] == "vllm 0.6.3 (configured)"


def test_probe_timeout_is_one_clear_line_and_not_a_failure(openai_server):
    openai_server.get_delay_s = {MODELS: 3.0}
    openai_server.gets = {"/api/version": (200, {}, {"version": "0.5.1"})}
    env = {"OPENAI_BASE_URL": openai_server.base_url}
    r = invoke("doctor", "-s", "llm", "--timeout", "0.4", env=env)
    assert r.exit_code == 0, r.output  # the endpoint answers: detection moved on past /models
    assert "Traceback" not in r.output
    line = next(x for x in r.stdout.splitlines() if "structured output:" in x)
    assert "auto -> ollama" in line
    assert f"probes that failed: GET {openai_server.base_url}/models: timed out after 0.4s" in line


def test_unreachable_endpoint_reports_probe_failures_and_other_sections():
    url = f"http://127.0.0.1:{closed_port()}/v1"
    r = invoke("doctor", "-s", "llm", "-s", "kernels", env={"OPENAI_BASE_URL": url})
    assert r.exit_code == 1 and "Traceback" not in r.output
    line = next(x for x in r.stdout.splitlines() if "structured output:" in x)
    assert f"GET {url}/models: ConnectError" in line
    assert "auto -> openai (probes failed: OpenAI form" in line  # not "no server signature"
    assert any(x.startswith("kernels") for x in r.stdout.splitlines())  # not hidden
    _, rep = doctor_json({"OPENAI_BASE_URL": url}, "llm")
    assert len(rep["llm"]["structured"]["probe_failures"]) == 2


def test_a_crashing_detection_is_one_line_not_a_traceback(openai_server, monkeypatch):
    from kgreason.llm.openai_adapter import OpenAIChat

    async def boom(self):
        raise RuntimeError("probe exploded")

    monkeypatch.setattr(OpenAIChat, "detect", boom)
    r = invoke(
        "doctor", "-s", "llm", "-s", "kernels", env={"OPENAI_BASE_URL": openai_server.base_url}
    )
    assert r.exit_code == 0, r.output  # the endpoint answered; only detection failed
    assert "structured output: auto: detection failed (RuntimeError: probe exploded)" in r.stdout
    assert "Traceback" not in r.output and "kernels" in r.stdout

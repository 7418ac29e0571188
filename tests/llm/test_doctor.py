"""`kgreason doctor` through the real CLI app (typer's CliRunner)."""

from __future__ import annotations

import json
import os
import socket

import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.cli.doctor import NO_LLM, _optional


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No LLM, no config file: the state of a fresh machine."""
    for name in list(os.environ):
        if name.startswith(("KGREASON_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_llm_configured_says_so_and_exits_0(clean_env):
    r = invoke("doctor", "--section", "llm")
    assert r.exit_code == 0, r.output
    assert NO_LLM in r.stdout
    assert "LLM-free mode" in NO_LLM and "OPENAI_BASE_URL" in NO_LLM


def test_bad_base_url_names_url_and_error(clean_env):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    r = invoke("doctor", "-s", "llm", env={"OPENAI_BASE_URL": url})
    assert r.exit_code != 0
    assert f"{url}/chat/completions" in r.stdout
    assert "connection failed" in r.stdout
    err = r.stderr.strip()
    assert "\n" not in err and url in err and "connection failed" in err


def test_reachable_endpoint_reports_model_and_latency(clean_env, openai_server):
    openai_server.plan = [("ok", "ok")]
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_MODEL": "probe-model"}
    r = invoke("doctor", "-s", "llm", "--json", env=env)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["ok"] is True
    assert rep["llm"]["status"] == "ok" and rep["llm"]["served_model"] == "fake-model"
    assert rep["llm"]["latency_ms"] > 0
    (req,) = openai_server.requests  # exactly one tiny request, not retried, not cached
    assert req["model"] == "probe-model" and req["max_tokens"] == 5


def test_endpoint_error_status_is_reported(clean_env, openai_server):
    openai_server.plan = [("status", 401)]
    r = invoke("--json", "doctor", "-s", "llm", env={"OPENAI_BASE_URL": openai_server.base_url})
    assert r.exit_code == 1
    rep = json.loads(r.stdout)
    assert rep["ok"] is False and rep["llm"]["status"] == "error"
    assert "HTTP 401" in rep["llm"]["detail"] and openai_server.base_url in rep["llm"]["detail"]


def test_unknown_section_is_one_line_error(clean_env):
    r = invoke("doctor", "-s", "llmm")
    assert r.exit_code != 0 and "unknown doctor section 'llmm'" in r.stderr


def test_all_sections_with_fast_embedder(clean_env):
    r = invoke("doctor", "--json", env={"KGREASON_EMBED__BACKEND": "static"})
    rep = json.loads(r.stdout)
    assert set(rep) == {"llm", "embed", "solvers", "kg", "kernels", "ok"}
    assert rep["llm"]["status"] == "not configured"
    for name in ("embed", "solvers", "kg", "kernels"):
        allowed = {"ok", "partial", "missing", "error"} | (
            {"not compiled"} if name == "kernels" else set()
        )
        assert rep[name]["status"] in allowed, rep[name]
    if rep["embed"]["status"] == "ok":
        assert rep["embed"]["dim"] > 0 and rep["embed"]["sentences_per_s"] > 0
    assert r.exit_code == (0 if rep["ok"] else 1)


def test_optional_sections_report_not_installed():
    obj, rep = _optional("kgreason.no_such_module", "thing")
    assert obj is None and rep["status"] == "missing" and "not installed yet" in rep["detail"]
    obj, rep = _optional("kgreason.llm", "no_such_name")
    assert obj is None and "kgreason.llm.no_such_name" in rep["detail"]
    obj, rep = _optional("kgreason.llm", "build_llm")
    assert callable(obj) and rep is None


def test_slow_endpoint_times_out_with_short_probe_timeout(clean_env, openai_server):
    openai_server.plan = [("sleep", 3.0)]
    r = invoke(
        "doctor", "-s", "llm", "--timeout", "0.3", env={"OPENAI_BASE_URL": openai_server.base_url}
    )
    assert r.exit_code == 1
    assert "timed out after 0.3s" in r.stderr and openai_server.base_url in r.stderr
    assert len(openai_server.requests) == 1  # no retries in the probe


def test_kernels_section(clean_env, monkeypatch):
    r = invoke("doctor", "--json", "-s", "kernels")
    rep = json.loads(r.stdout)["kernels"]
    # a cold cache (fresh install) is "not compiled", not an error: doctor never compiles
    assert r.exit_code == 0 and rep["status"] in {"ok", "not compiled"}, rep
    assert rep["numba"] and 0 <= rep["cached"] <= rep["kernels"]
    r = invoke("doctor", "--json", "-s", "kernels", env={"KGREASON_JIT": "0"})
    rep = json.loads(r.stdout)["kernels"]
    assert r.exit_code == 0 and rep["status"] == "partial" and "KGREASON_JIT=0" in rep["detail"]


def test_kg_section_names_the_store_layout(clean_env, tmp_path):
    """A store in key order says so; one built with first-appearance ids (an earlier
    kgreason) says how to rebuild it, and why."""
    from kgreason.kg.loaders import Source
    from kgreason.kg.store import build_store
    from tests.kg.test_store_walk import legacy_layout

    (tmp_path / "g.tsv").write_text("b\tr\ta\nc\tr\tb\n")
    layouts = {}
    for name, legacy in (("new", False), ("old", True)):
        with legacy_layout(legacy):
            build_store([Source(tmp_path / "g.tsv")], tmp_path / name)
        r = invoke("doctor", "--json", "-s", "kg", env={"KGREASON_KG__STORE": str(tmp_path / name)})
        assert r.exit_code == 0, r.stdout + r.stderr
        layouts[name] = json.loads(r.stdout)["kg"]
    assert layouts["new"]["layout"] == "in key order"
    assert "first-appearance" in layouts["old"]["layout"]
    assert "kgreason kg build --force" in layouts["old"]["detail"]


def test_doctor_does_not_build_the_bundled_kg(clean_env, tmp_path):
    """A fresh install's doctor says the bundled KG is not built yet (the first question
    builds it) instead of spending its time building it; once built, it opens it."""
    from kgreason.kg.bundled import bundled_store_path, bundled_store_target

    env = {"KGREASON_CACHE_DIR": str(tmp_path / "cache")}
    r = invoke("doctor", "--json", "-s", "kg", env=env)
    assert r.exit_code == 0, r.stdout + r.stderr
    kg = json.loads(r.stdout)["kg"]
    assert kg["status"] == "ok" and kg["built"] is False
    assert "not built yet" in kg["detail"] and "kgreason ask" in kg["detail"]
    assert not bundled_store_target(env).exists()  # nothing was built
    bundled_store_path(env)
    r = invoke("doctor", "--json", "-s", "kg", env=env)
    kg = json.loads(r.stdout)["kg"]
    assert kg["status"] == "ok" and "built" not in kg and kg["name"]

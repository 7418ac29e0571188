"""`kgreason serve` as a user runs it: a subprocess on a free port, asked over HTTP, then
stopped with SIGTERM (clean exit)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[2] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_answers_then_stops_on_sigterm(tmp_path: Path) -> None:
    port, token = free_port(), "tok-123"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env |= {"PYTHONPATH": str(SRC), "KGREASON_SERVER__TOKEN": token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgreason", "serve", "--port", str(port), "--llm-free",
         "--runs-dir", str(tmp_path)],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url, t_end = f"http://127.0.0.1:{port}", time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < t_end, "kgreason serve did not come up"
            time.sleep(0.2)
        auth = {"Authorization": f"Bearer {token}"}
        r = httpx.post(
            url + "/v1/ask", content='{"question":"who directed [Once Were Warriors]"}',
            headers=auth, timeout=60,
        )  # fmt: skip
        assert r.status_code == 200 and r.json()["answers"][0]["name"] == "Lee Tamahori"
        assert httpx.get(url + "/v1/runs", headers=auth).json() == {"items": []}
        assert httpx.post(url + "/v1/ask", json={"question": "q"}).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, err
    assert "LLM-free mode" in err and "token required" in err
    assert f"listening on http://127.0.0.1:{port}/" in err

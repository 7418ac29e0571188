"""`kgreason eval` end to end, as a user runs it: killed and resumed, replayed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.llm.fake_server import FakeOpenAIServer

LIMIT = 10


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_"))}
    env.update(
        KGREASON_EMBED__BACKEND="static",
        KGREASON_CACHE_DIR=str(tmp / "cache"),
        KGREASON_LLM__CACHE_PATH=str(tmp / "llm-cache.sqlite"),
        **extra,
    )
    return env


def _eval(args: list[str], env: dict[str, str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgreason", "eval", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        **kw,
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("evalcli")


def test_killed_run_resumes_to_the_same_file(work: Path):
    env = _env(work)
    args = ["metaqa", "--hops", "1", "--method", "llm-free", "--limit", str(LIMIT)]
    full = _eval([*args, "--out", str(work / "full")], env, work)
    assert full.returncode == 0, full.stderr
    expected = (work / "full" / "results.jsonl").read_bytes()
    assert expected.count(b"\n") == LIMIT

    out = work / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgreason", "eval", *args, "--out", str(out)],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = out / "results.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline:
        if results.exists() and results.read_bytes().count(b"\n") >= 3:
            break
        if proc.poll() is not None:
            pytest.fail("the run finished before it could be killed")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_at_kill = results.read_bytes().count(b"\n")
    assert 3 <= done_at_kill < LIMIT

    resumed = _eval([*args, "--out", str(out), "--resume", "--json"], env, work)
    assert resumed.returncode == 0, resumed.stderr
    assert f'"done_before": {done_at_kill}' in resumed.stdout
    assert results.read_bytes() == expected


def test_scripted_llm_run_replays_identically(work: Path):
    server = FakeOpenAIServer().start()
    try:
        server.plan = [("ok", f"So the answer is {{Answer {i}}}.") for i in range(3)]
        env = _env(work, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test")
        run = _eval(
            ["metaqa", "--method", "cot", "--limit", "4", "--out", str(work / "rec"), "--no-cache"],
            env,
            work,
        )
        assert run.returncode == 0, run.stderr
    finally:
        server.close()
    assert (work / "rec" / "transcript.jsonl").read_text().count("\n") >= 4
    replay = _eval(["--replay", str(work / "rec"), "--json"], _env(work), work)
    assert replay.returncode == 0, replay.stderr + replay.stdout
    assert '"identical_to_original": true' in replay.stdout
    assert (work / "rec-replay" / "results.jsonl").read_bytes() == (
        work / "rec" / "results.jsonl"
    ).read_bytes()


def test_llm_method_without_llm_fails_with_one_line(work: Path):
    r = _eval(
        ["metaqa", "--method", "cot", "--limit", "1", "--out", str(work / "nollm")],
        _env(work),
        work,
    )
    assert r.returncode == 1
    assert "needs an LLM" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_unknown_dataset(work: Path):
    r = _eval(["nosuch", "--method", "llm-free"], _env(work), work)
    assert r.returncode == 1 and "unknown dataset 'nosuch'" in r.stderr

"""Run directories and helpers shared by the attacks on the files a `kgreason serve
--runs-dir` shows (test_server_runs_files.py: symlinks, special files, caps;
test_server_runs_rows.py: malformed content, any JSON in any field): two valid runs under
a root beside files of known content outside it, the app over that root, and calls that
fail a test instead of hanging it. Test modules import the fixtures (`root_fixture` and
`client_fixture`, named `root` and `client`, and `warm`, which `client` needs).
"""

from __future__ import annotations

import errno
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from kgreason.server.app import create_app
from kgreason.server.config import ServerConfig
from kgreason.server.runs import RunsError, list_runs, read_run
from kgreason.server.service import Service
from tests.server.conftest import warm  # noqa: F401  (the session's warm service)
from tests.server.test_runs_traversal import make_run

REPO = Path(__file__).resolve().parents[2]
FILES = ("config.json", "results.jsonl", "timings.jsonl")
#: the caps docs/security-data.md states
CAPS = {"config.json": 1 << 20, "results.jsonl": 64 << 20, "timings.jsonl": 16 << 20}
SECRET = "SECRET-7f3a"
#: a hang guard, not a timing assertion: a regression fails here instead of hanging the suite
HANG_S = 60.0


def row(i: int, **over: Any) -> dict[str, Any]:
    base = {"id": f"q{i}", "llm_calls": 1, "prompt_tokens": 10, "completion_tokens": 2,
            "phase": None, "strict_hit1": i % 2 == 0, "question": f"q {i}?"}  # fmt: skip
    return {**base, **over}


def jsonl(rows: list[Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def guarded(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on a thread; its value, or a RunsError it raised; any other exception is
    re-raised, and a call still running after HANG_S fails the test."""
    out: list[Any] = []

    def go() -> None:
        try:
            out.append(("ok", fn(*args)))
        except BaseException as e:  # handed back to the test thread
            out.append(("raised", e))

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(HANG_S)
    if t.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)}{args[1:]} hung")
    kind, value = out[0]
    if kind == "raised" and not isinstance(value, RunsError):
        raise value
    return value


def said(out: Any) -> str:
    """Everything a response says about what it skipped or refused, as one string."""
    if isinstance(out, RunsError):
        return str(out)
    if isinstance(out, list):
        return json.dumps([r.get("problems") for r in out])
    return json.dumps([out.get("problems"), out.get("skipped_lines"), out.get("skipped_count")])


@pytest.fixture(name="root")
def root_fixture(tmp_path: Path) -> Iterator[Path]:
    """runs/good and runs/other (two valid runs) and, outside the root, files of known
    content; FIFOs left under the root are opened for writing at the end, which frees any
    reader an old build left blocked on them."""
    root = tmp_path / "runs"
    make_run(root / "good", n=3)
    make_run(root / "other", n=2)
    out = tmp_path / "outside"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"method": SECRET, "dataset": SECRET}))
    (out / "results.jsonl").write_text(jsonl([row(i, question=SECRET) for i in range(3)]))
    (out / "timings.jsonl").write_text(jsonl([{"id": f"q{i}", "wall_s": 4242.5} for i in range(3)]))
    yield root
    for p in root.rglob("*"):
        if p.is_fifo():
            for _ in range(8):
                try:
                    os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
                except OSError as e:
                    if e.errno == errno.ENXIO:  # no reader left
                        break


@pytest.fixture(name="client")
def client_fixture(warm: Service, root: Path) -> TestClient:  # noqa: F811
    app = create_app(warm, ServerConfig(runs_dir=root), close_service=False)
    return TestClient(app, base_url="http://127.0.0.1")


def http(client: TestClient, url: str) -> Any:
    """GET through the app (hang-guarded); the JSON body, never a 500."""
    r = guarded(client.get, url)
    assert r.status_code != 500, r.text
    assert r.status_code in (200, 422), r.text
    return r.json()["items"] if url == "/v1/runs" else r.json()


def both(root: Path, client: TestClient, name: str = "good") -> dict[str, Any]:
    """The listing entry and the run, directly and over HTTP (which must agree in kind)."""
    listed = guarded(list_runs, root)
    read = guarded(read_run, root, name)
    h_listed, h_read = http(client, "/v1/runs"), http(client, f"/v1/runs/{name}")
    assert isinstance(read, RunsError) == ("error_kind" in h_read)
    return {"listed": listed, "read": read, "h_listed": h_listed, "h_read": h_read}


def entry(items: list[dict[str, Any]], name: str = "good") -> dict[str, Any]:
    (e,) = [i for i in items if i["name"] == name]
    return e


def assert_refused_or_skipped(got: dict[str, Any], fname: str) -> None:
    """The run answers: results refused with 422 naming the file; config/timings skipped
    and named, the rest of the run served."""
    if fname != "timings.jsonl":  # the listing reads config.json and results.jsonl
        for listed in (got["listed"], got["h_listed"]):
            assert fname in said([entry(listed)])
    if fname == "results.jsonl":
        assert isinstance(got["read"], RunsError) and got["read"].status == 422
        assert fname in str(got["read"]) and fname in got["h_read"]["message"]
        assert entry(got["listed"])["questions"] is None
    else:
        assert fname in said(got["read"]) and fname in said(got["h_read"])
        assert got["read"]["total_rows"] == 3
    if fname == "config.json":
        assert got["read"]["config"] == {} and got["h_read"]["config"] == {}

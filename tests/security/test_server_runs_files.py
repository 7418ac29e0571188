"""Attacks on the files inside a run directory that `kgreason serve --runs-dir` shows,
written before the defence (each failed on the old code: a leak, a hang, a 500 or a silent
skip; see the notes on each test).

Covered: config.json / results.jsonl / timings.jsonl as symlinks out of the root (to files of
known content, and to /dev/zero), as FIFOs, as directories, as symlink loops and over the
size caps; result rows with missing or mistyped fields; timing rows without or with a bad
`wall_s`; a 100k-deep JSON line and a deep-but-parseable one; invalid UTF-8, lone
surrogates and NaN; a config.json that is not an object; and a property: any JSON in any
field of the three files gives a normal answer or a RunsError, never anything else. Each is
called directly (`list_runs` / `read_run`) and through the HTTP app (in process).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgreason.eval.report import write_report
from kgreason.eval.rundir import RunDirError
from kgreason.eval.summarize import load_run
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


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
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


@pytest.fixture
def client(warm: Service, root: Path) -> TestClient:  # noqa: F811
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


# -- files out of the root, special files ----------------------------------------------------


@pytest.mark.parametrize("fname", FILES)
def test_files_symlinked_out_of_the_root_are_not_served(root, client, fname) -> None:
    """Old code: config and results behind a symlink out of the root were listed and served
    (the secret method, the secret rows); timings were read (median 4242.5 s)."""
    target = root.parent / "outside" / fname
    (root / "good" / fname).unlink()
    (root / "good" / fname).symlink_to(target)
    got = both(root, client)
    for v in got.values():
        text = json.dumps(v, default=str)
        assert SECRET not in text and "4242.5" not in text
    assert_refused_or_skipped(got, fname)
    assert "leaves the runs directory" in said(got["read"])


@pytest.mark.parametrize("fname", FILES)
def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path, fname) -> None:
    """Old code: listing read config.json -> /dev/zero until memory ran out. Run in a child
    under a 2 GB address-space limit so a regression fails instead of eating the machine."""
    root = tmp_path / "runs"
    make_run(root / "good")
    (root / "good" / fname).unlink()
    (root / "good" / fname).symlink_to("/dev/zero")
    code = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from kgreason.server.runs import RunsError, list_runs, read_run\n"
        "root = Path(sys.argv[1])\n"
        "listed = list_runs(root)\n"
        "try:\n"
        "    read = read_run(root, 'good')\n"
        "except RunsError as e:\n"
        "    read = {'refused': str(e), 'status': e.status}\n"
        "print(json.dumps({'listed': listed, 'read': read}, default=str))\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'src'}"}
    p = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True,
                       text=True, timeout=HANG_S * 2, env=env, check=False)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert fname == "timings.jsonl" or fname in json.dumps(entry(out["listed"])["problems"])
    if fname == "results.jsonl":
        assert out["read"]["status"] == 422 and fname in out["read"]["refused"]
    else:
        assert fname in json.dumps(out["read"]["problems"])


@pytest.mark.parametrize("fname", FILES)
def test_a_fifo_hangs_neither_the_listing_nor_other_runs(root, client, fname) -> None:
    """Old code: a FIFO as config.json blocked the listing forever (and with it a thread of
    the shared pool); as results/timings it was silently ignored."""
    (root / "good" / fname).unlink()
    os.mkfifo(root / "good" / fname)
    got = both(root, client)
    assert_refused_or_skipped(got, fname)
    assert "not a regular file" in said(got["read"]) + said(got["listed"])
    assert http(client, "/v1/runs/other")["total_rows"] == 2  # the pool still serves


@pytest.mark.parametrize("fname", FILES)
def test_a_directory_in_place_of_a_file_is_named(root, client, fname) -> None:
    """Old code: silently ignored (config {}, no timings), or the run was not listed."""
    (root / "good" / fname).unlink()
    (root / "good" / fname).mkdir()
    assert_refused_or_skipped(both(root, client), fname)


@pytest.mark.parametrize("fname", FILES)
def test_a_symlink_loop_is_named(root, client, fname) -> None:
    """Old code: a loop as results.jsonl was not listed; as a run directory it was a 500."""
    (root / "good" / fname).unlink()
    (root / "good" / fname).symlink_to(fname)
    assert_refused_or_skipped(both(root, client), fname)
    (root / "loop").symlink_to("loop")
    assert isinstance(guarded(read_run, root, "loop"), RunsError)
    assert guarded(client.get, "/v1/runs/loop").status_code in (400, 404)


@pytest.mark.parametrize("fname", FILES)
def test_a_file_over_its_cap_is_refused_naming_the_cap(root, client, fname) -> None:
    """Old code: read whole (config) or as one torn line of NULs (results, timings: 0 rows,
    no word said). The big files are sparse, so the test writes nothing to disk."""
    path = root / "good" / fname
    if fname == "config.json":
        path.write_text('{"method": "big"' + " " * CAPS[fname] + "}")
    else:
        path.unlink()
        with path.open("wb") as f:
            f.truncate(CAPS[fname] + 1)
    got = both(root, client)
    assert_refused_or_skipped(got, fname)
    assert "MiB cap" in said(got["read"])
    assert fname == "timings.jsonl" or "MiB cap" in said(got["listed"])


def test_a_file_symlinked_inside_the_root_is_still_served(root, client) -> None:
    """Not an attack: a symlink that stays inside the root is a legitimate layout."""
    for fname in FILES:
        (root / "good" / fname).unlink()
        (root / "good" / fname).symlink_to(Path("..") / "other" / fname)
    got = both(root, client)
    assert got["read"]["total_rows"] == 2 and got["read"]["config"]["dataset"] == "metaqa"
    assert not got["read"]["problems"] and not got["read"]["skipped_lines"]


# -- malformed content ---------------------------------------------------------------------

#: stands for a 900-deep object, written as text (the parser takes it; rendering it did not)
DEEP_900 = "DEEP-900"
BAD_ROWS = [
    ("llm_calls", {"llm_calls": None}),  # replaced by a deletion below
    ("llm_calls", {"llm_calls": "x"}),
    ("em", {"em": "a"}),
    ("hops", {"hops": [1]}),
    ("qtype", {"qtype": {}}),
    ("error_kind", {"error_kind": ["x"]}),
    ("answers", {"answers": 5, "paths": [[["a", "r", "b"]]]}),
    ("paths", {"paths": [[["a", "r"]]]}),
    ("names", {"names": ["a"], "paths": [[["a", "r", "b"]]]}),
    ("dataset", {"dataset": 7, "extra": {"route_structural": "z3"}}),
    ("prompt_tokens", {"prompt_tokens": 1e400}),
    ("em", {"em": float("nan")}),
    ("question", {"question": "\ud800"}),
    ("id", {"id": ["q1"]}),
    ("nested deeper", {"extra": DEEP_900}),
]


@pytest.mark.parametrize(("field", "over"), BAD_ROWS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(BAD_ROWS)])  # fmt: skip
def test_a_malformed_result_row_is_skipped_and_named(root, client, field, over) -> None:
    """Old code: KeyError / TypeError / ValueError (NaN) / UnicodeEncodeError (a lone
    surrogate) / RecursionError (the 900-deep field, when rendered): a 500; the mistyped
    hops / qtype were served as they were."""
    bad = row(1, **over)
    if over == {"llm_calls": None}:
        del bad["llm_calls"]
    line = json.dumps(bad).replace(json.dumps(DEEP_900), '{"a":' * 900 + "1" + "}" * 900)
    (root / "good" / "results.jsonl").write_text(jsonl([row(0)]) + line + "\n" + jsonl([row(2)]))
    got = both(root, client)
    for out in (got["read"], got["h_read"]):
        assert out["total_rows"] == 2 and out["skipped_count"] == 1
        (where,) = out["skipped_lines"]
        assert where.startswith("good/results.jsonl:2: ") and field in where, where


@pytest.mark.parametrize("wall", [None, "x", True, 1e999, [1]])
def test_a_malformed_timing_row_is_skipped_and_named(root, client, wall) -> None:
    """Old code: KeyError (no wall_s) or TypeError in the median: a 500."""
    t = {"id": "q1"} if wall is None else {"id": "q1", "wall_s": wall}
    lines = [{"id": "q0", "wall_s": 0.5}, t, {"id": "q2", "wall_s": 0.5}]
    (root / "good" / "timings.jsonl").write_text(jsonl(lines))
    got = both(root, client)
    for out in (got["read"], got["h_read"]):
        assert out["metrics"]["median_wall_s"] == 0.5
        (where,) = out["skipped_lines"]
        assert where.startswith("good/timings.jsonl:2: wall_s"), where


@pytest.mark.parametrize("fname", FILES)
def test_a_100k_deep_line_is_skipped_and_named(root, client, fname) -> None:
    """Old code: RecursionError, a 500 (of the listing too, for config.json)."""
    deep = "[" * 100_000 + "]" * 100_000
    path = root / "good" / fname
    if fname == "config.json":
        path.write_text(deep)
    else:
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0], deep, *lines[1:]]) + "\n")
    got = both(root, client)
    assert fname in said(got["read"]) and fname in said(got["h_read"])
    if fname != "config.json":
        assert got["read"]["skipped_lines"][0].startswith(f"good/{fname}:2: ")


def test_invalid_utf8_is_named(root, client) -> None:
    """Old code: a bad-UTF-8 row was skipped without a word; a bad-UTF-8 config.json made
    the whole run a 422."""
    (root / "good" / "config.json").write_bytes(b'{"method": "\xff"}')
    lines = (root / "good" / "results.jsonl").read_bytes().split(b"\n")
    lines[1] = b'{"id": "q1", "llm_calls": 1, "x": "\xfe"}'
    (root / "good" / "results.jsonl").write_bytes(b"\n".join(lines))
    got = both(root, client)
    for out in (got["read"], got["h_read"]):
        assert out["config"] == {} and "config.json" in said(out) and "UTF-8" in said(out)
        assert out["skipped_lines"][0].startswith("good/results.jsonl:2: ")
        assert out["total_rows"] == 2


@pytest.mark.parametrize(
    "config", [[1, 2], "text", None, 3, {"kg": "x"}, {"kg": [1]}, {"method": float("nan")}]
)
def test_a_config_that_is_not_a_plain_object_is_named(root, client, config) -> None:
    """Old code: a list, or `kg` not an object, made the report raise (500); NaN made the
    listing unrenderable (500)."""
    (root / "good" / "config.json").write_text(json.dumps(config))
    got = both(root, client)
    assert "config.json" in said(got["read"]) and "config.json" in said(got["h_read"])
    assert "config.json" in said(got["h_listed"])
    assert got["read"]["total_rows"] == 3


def test_skipped_lines_are_counted_but_listed_boundedly(root, client) -> None:
    """Old code: skipped lines were not reported at all."""
    rows = [row(0)] + [{"id": f"b{i}"} for i in range(500)]
    (root / "good" / "results.jsonl").write_text(jsonl(rows))
    got = both(root, client)
    for out in (got["read"], got["h_read"]):
        assert out["skipped_count"] == 500 and 0 < len(out["skipped_lines"]) <= 50
        assert out["total_rows"] == 1


def test_the_cli_readers_skip_the_same_rows(tmp_path, caplog) -> None:
    """`kgreason report` on one's own directory (symlinks followed there) shares the row
    check. Old code: KeyError for the row without llm_calls, AttributeError for the list
    config."""
    run = make_run(tmp_path / "r", n=3)
    bad = {k: v for k, v in row(1).items() if k != "llm_calls"}
    (run / "results.jsonl").write_text(jsonl([row(0), bad, row(2)]))
    (run / "timings.jsonl").write_text(jsonl([{"id": "q0"}, {"id": "q2", "wall_s": 2.0}]))
    md, _ = write_report([run], tmp_path / "rep")
    assert (
        "| questions | 2 |" in md.read_text() and "| median wall time (s) | 2 |" in md.read_text()
    )
    logged = caplog.text
    assert f"{run / 'results.jsonl'}:2: llm_calls: missing" in logged
    assert f"{run / 'timings.jsonl'}:1: wall_s: missing" in logged
    (run / "config.json").write_text("[1, 2]")
    with pytest.raises(RunDirError, match=r"config.json: not a JSON object \(array\)"):
        load_run(run)


# -- any JSON anywhere -----------------------------------------------------------------------

SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
    st.sampled_from(["\ud800", "a\udfffb", "", "z3", "horn", "folio"]),
)  # fmt: skip
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip
PATHS = st.lists(st.lists(st.lists(SCALAR, min_size=2, max_size=4), max_size=3), max_size=3)
RESULT_FIELDS = ["id", "llm_calls", "prompt_tokens", "completion_tokens", "paper_calls",
                 "strict_hit1", "lenient_hit", "any_hit", "correct", "em", "f1", "recall@2",
                 "recall@5", "hops", "qtype", "phase", "error_kind", "dataset", "question",
                 "answers", "answer_kind", "gold", "paths", "names", "topics", "extra",
                 "sparql_length", "relation_overlap", "x"]  # fmt: skip
VALUE = st.one_of(JSON, PATHS, st.fixed_dictionaries({"route_structural": SCALAR}))
ROW = st.dictionaries(st.sampled_from(RESULT_FIELDS), VALUE, max_size=4)
CONFIG_KEYS = ["method", "dataset", "split", "hops", "model", "created", "kg", "version",
               "git_revision"]  # fmt: skip
CONFIG = st.one_of(JSON, st.dictionaries(st.sampled_from(CONFIG_KEYS), JSON, max_size=4))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    config=CONFIG,
    results=st.lists(st.tuples(ROW, st.sets(st.sampled_from(RESULT_FIELDS[:4]))), max_size=4),
    timings=st.lists(st.dictionaries(st.sampled_from(["id", "wall_s"]), VALUE), max_size=4),
)
def test_any_json_in_any_field_gives_an_answer_or_a_runs_error(
    root, client, config, results, timings
) -> None:
    """Old code: KeyError, TypeError, AttributeError, ValueError and UnicodeEncodeError."""
    run = root / "good"
    shutil.rmtree(run)
    run.mkdir()
    (run / "config.json").write_text(json.dumps(config))
    rows = []
    for i, (over, drop) in enumerate(results):
        r = {**row(i), **over}
        rows.append({k: v for k, v in r.items() if k not in drop})
    (run / "results.jsonl").write_text(jsonl(rows))
    (run / "timings.jsonl").write_text(jsonl(timings))
    for out in (guarded(list_runs, root), guarded(read_run, root, "good")):
        if not isinstance(out, RunsError):  # what the HTTP layer does with it must work
            json.dumps(out, ensure_ascii=False, allow_nan=False).encode("utf-8")
    http(client, "/v1/runs")
    http(client, "/v1/runs/good")

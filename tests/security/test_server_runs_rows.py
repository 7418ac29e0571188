"""Attacks on the CONTENT of the files inside a run directory that `kgreason serve
--runs-dir` shows, written before the defence (each failed on the old code: a 500 or a
silent skip; see the notes on each test): result rows with missing or mistyped fields;
timing rows without or with a bad `wall_s`; a 100k-deep JSON line and a deep-but-parseable
one; invalid UTF-8, lone surrogates and NaN; a config.json that is not an object; and a
property: any JSON in any field of the three files gives a normal answer or a RunsError,
never anything else. Each is called directly (`list_runs` / `read_run`) and through the
HTTP app (in process). The files themselves (symlinks, FIFOs, caps):
test_server_runs_files.py.
"""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgreason.eval.report import write_report
from kgreason.eval.rundir import RunDirError
from kgreason.eval.summarize import load_run
from kgreason.server.runs import RunsError, list_runs, read_run
from tests.security.runs_files import (  # noqa: F401  (client_fixture, root_fixture: fixtures)
    FILES,
    both,
    client_fixture,
    guarded,
    http,
    jsonl,
    root_fixture,
    row,
    said,
)
from tests.server.conftest import warm  # noqa: F401  (the session's warm service: client's)
from tests.server.test_runs_traversal import make_run

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

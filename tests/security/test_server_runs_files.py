"""Attacks on the files inside a run directory that `kgreason serve --runs-dir` shows,
written before the defence (each failed on the old code: a leak, a hang, a 500 or a silent
skip; see the notes on each test).

Covered: config.json / results.jsonl / timings.jsonl as symlinks out of the root (to files of
known content, and to /dev/zero), as FIFOs, as directories, as symlink loops and over the
size caps. Each is called directly (`list_runs` / `read_run`) and through the HTTP app (in
process). Their content (malformed rows, deep JSON, any JSON in any field):
test_server_runs_rows.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgreason.server.runs import RunsError, read_run
from tests.security.runs_files import (  # noqa: F401  (client_fixture, root_fixture: fixtures)
    CAPS,
    FILES,
    HANG_S,
    REPO,
    SECRET,
    assert_refused_or_skipped,
    both,
    client_fixture,
    entry,
    guarded,
    http,
    root_fixture,
    said,
)
from tests.server.conftest import warm  # noqa: F401  (the session's warm service: client's)
from tests.server.test_runs_traversal import make_run

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

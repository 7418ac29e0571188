"""Stores under faults: empty inputs, concurrent builds, a kill mid-swap, a full disk."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.kg.loaders import Source
from kgreason.kg.store import StoreKG, build_store
from kgreason.kg.store.build import EmptyInputError
from kgreason.kg.store.format import MANIFEST
from kgreason.kg.store.swap import BuildLock, StoreBusyError, StoreWriteError

REPO = Path(__file__).resolve().parents[2]
TSV = "a\tr\tb\nb\tr\tc\n"


def tsv(tmp_path: Path, text: str = TSV, name: str = "kb.tsv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def build(path: Path, out: Path, **kw):
    return build_store([Source(path, "tsv")], out, **kw)


@pytest.mark.parametrize(
    ("text", "fmt"), [("", "tsv"), ("\n\n", "tsv"), ("# only a comment\n", "nt"), ("", "ttl")]
)
def test_empty_input_is_refused_naming_the_file(tmp_path, text, fmt):
    kb = tsv(tmp_path, text, f"kb.{fmt}")
    with pytest.raises(EmptyInputError, match=rf"{kb}: no triples read"):
        build_store([Source(kb, fmt)], tmp_path / "st")
    assert sorted(p.name for p in tmp_path.iterdir()) == [kb.name]


def test_empty_input_cli_is_one_line(tmp_path):
    kb = tsv(tmp_path, "")
    r = CliRunner().invoke(app, ["kg", "build", str(kb), "--out", str(tmp_path / "st")])
    assert r.exit_code == 1
    assert "no triples read" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_one_empty_file_among_several_is_refused(tmp_path):
    good, empty = tsv(tmp_path), tsv(tmp_path, "", "empty.tsv")
    with pytest.raises(EmptyInputError, match=r"empty\.tsv"):
        build_store([Source(good, "tsv"), Source(empty, "tsv")], tmp_path / "st")


def test_store_directories_are_0755(tmp_path):
    build(tsv(tmp_path), tmp_path / "st")
    mode = stat.S_IMODE((tmp_path / "st").stat().st_mode)
    assert mode == 0o755
    files = [stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "st").iterdir()]
    assert files and all(m & 0o044 == 0o044 and not m & 0o022 for m in files)


def test_concurrent_build_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "st"
    busy = rf"another kgreason kg build .*pid {os.getpid()}"
    with BuildLock(out), pytest.raises(StoreBusyError, match=busy):
        build(tsv(tmp_path), out)
    build(tsv(tmp_path), out)  # released
    assert StoreKG(out).manifest.counts["triples"] == 2


def test_cli_concurrent_build_is_one_line(tmp_path):
    out = tmp_path / "st"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from pathlib import Path
            from kgreason.kg.store.swap import BuildLock
            with BuildLock(Path({str(out)!r})):
                print("held", flush=True)
                sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        r = CliRunner().invoke(app, ["kg", "build", str(tsv(tmp_path)), "--out", str(out)])
    finally:
        holder.communicate(b"", timeout=60)
    assert r.exit_code == 1
    assert f"another kgreason kg build is writing this store (pid {holder.pid})" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


def test_target_is_rechecked_before_the_swap(tmp_path, monkeypatch):
    """A store that appears at the target while we build (a writer not using the lock) is
    not silently replaced."""
    out = tmp_path / "st"
    from kgreason.kg.store import build as build_mod

    real = build_mod.build_into

    def racing(directory, sources, progress):
        m = real(directory, sources, progress)
        out.mkdir()
        (out / MANIFEST).write_text("{}")
        return m

    monkeypatch.setattr(build_mod, "build_into", racing)
    with pytest.raises(build_mod.StoreExistsError, match="already exists"):
        build(tsv(tmp_path), out)
    assert (out / MANIFEST).read_text() == "{}"
    assert not list(tmp_path.glob("st.tmp-*"))


def _kill_between_renames(tmp_path: Path) -> Path:
    """A store rebuilt with --force by a process killed between the two renames."""
    out = tmp_path / "st"
    build(tsv(tmp_path), out)
    script = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from kgreason.kg.loaders import Source
        from kgreason.kg.store import build as b
        real = Path.rename
        def rename(self, target):
            r = real(self, target)
            if ".old-" in str(target):
                os._exit(9)  # killed right after the first rename
            return r
        Path.rename = rename
        b.build_store([Source(Path({str(tmp_path / "kb2.tsv")!r}), "tsv")], Path({str(out)!r}),
                      force=True)
    """)
    tsv(tmp_path, "x\tr\ty\n", "kb2.tsv")
    r = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        timeout=300,
    )
    assert r.returncode == 9, r.stderr
    assert not out.exists() and len(list(tmp_path.glob("st.old-*"))) == 1
    assert len(list(tmp_path.glob("st.tmp-*"))) == 1
    return out


def test_open_recovers_a_store_stranded_mid_swap(tmp_path):
    out = _kill_between_renames(tmp_path)
    kg = StoreKG(out)  # the previous store is back
    assert kg.manifest.counts["triples"] == 2
    assert not list(tmp_path.glob("st.old-*")) and not list(tmp_path.glob("st.tmp-*"))


def test_next_build_recovers_and_cleans(tmp_path):
    out = _kill_between_renames(tmp_path)
    with pytest.raises(Exception, match="already exists"):
        build(tsv(tmp_path), out)  # recovered first, so the old store is found and kept
    assert StoreKG(out).manifest.counts["triples"] == 2
    build(tmp_path / "kb2.tsv", out, force=True)
    assert StoreKG(out).manifest.counts["triples"] == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("st")) == ["st"]


def test_open_leaves_a_running_builds_temp_dir_alone(tmp_path):
    out = tmp_path / "st"
    build(tsv(tmp_path), out)
    tmp = tmp_path / "st.tmp-running"
    tmp.mkdir()
    with BuildLock(out):
        StoreKG(out)
        assert tmp.exists()
    StoreKG(out)  # idle now: the stale temp dir goes
    assert not tmp.exists()


def test_full_disk_is_one_line_and_leaves_no_partial_dir(tmp_path, monkeypatch):
    from kgreason.kg.store import build_index

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", "keys.blob.npy")

    monkeypatch.setattr(build_index, "key_ranks", lambda keys: full())
    from kgreason.kg.store import build as build_mod

    monkeypatch.setattr(build_mod, "key_ranks", lambda keys: full())
    with pytest.raises(StoreWriteError, match=r"cannot write store .*st: disk full"):
        build(tsv(tmp_path), tmp_path / "st")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb.tsv"]


def test_full_disk_cli_is_one_line(tmp_path, monkeypatch):
    real_save = np.save

    def save(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", save)
    r = CliRunner().invoke(app, ["kg", "build", str(tsv(tmp_path)), "--out", str(tmp_path / "s")])
    monkeypatch.setattr(np, "save", real_save)
    assert r.exit_code == 1, r.output
    assert "disk full" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.glob("s.tmp-*")) and not (tmp_path / "s").exists()

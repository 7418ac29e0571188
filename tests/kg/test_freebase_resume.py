"""A dump build killed at any stage resumes from its checkpoint and ends with the same
store, byte for byte, as a build that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.kg.fbdump import generator, store_files

from kgreason.kg.freebase import DumpOptions, ResumeError, build_freebase

OPTIONS = DumpOptions(memory=1 << 20, block=1 << 15)
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fb") / "dump.gz"
    generator().generate(path, 40_000, seed=5)
    return path


@pytest.fixture(scope="module")
def uninterrupted(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "store"
    build_freebase(dump, out, options=OPTIONS)
    return out


def _killed_build(dump: Path, out: Path, target: str, call: int) -> int:
    """Run the build in a child that dies (os._exit: no cleanup, like SIGKILL) right after
    the `call`-th call of `target` returns: its files are written, its checkpoint not."""
    module, name = target.rsplit(".", 1)
    code = textwrap.dedent(
        f"""
        import os, importlib
        from kgreason.kg.freebase import DumpOptions, build_freebase
        mod = importlib.import_module({module!r})
        real, calls = getattr(mod, {name!r}), [0]
        def dying(*a, **k):
            out = real(*a, **k)
            calls[0] += 1
            if calls[0] == {call}:
                os._exit(9)
            return out
        setattr(mod, {name!r}, dying)
        build_freebase({str(dump)!r}, {str(out)!r},
                       options=DumpOptions(memory={OPTIONS.memory}, block={OPTIONS.block}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=300).returncode


@pytest.mark.parametrize(
    ("target", "call"),
    [
        ("kgreason.kg.freebase.stages.spill", 3),
        ("kgreason.kg.freebase.stages.merge_keys", 1),
        ("kgreason.kg.freebase.stages.map_chunk", 2),
        ("kgreason.kg.freebase.stages.fwd_bucket", 2),
        ("kgreason.kg.freebase.stages.rev_bucket", 1),
        ("kgreason.kg.freebase.stages.label_bucket", 2),
        ("kgreason.kg.freebase.build._label_file", 1),
        ("kgreason.kg.store.build_norms._write_groups", 1),
        ("kgreason.kg.freebase.build.write_name_indexes", 1),
        ("kgreason.kg.freebase.build._swap_in", 1),
    ],
)
def test_killed_build_resumes_to_the_same_store(
    dump: Path, uninterrupted: Path, tmp_path: Path, target: str, call: int
) -> None:
    out = tmp_path / "store"
    assert _killed_build(dump, out, target, call) == 9
    said: list[str] = []
    if not (out / "manifest.json").exists():  # killed after the swap: nothing to resume
        assert (tmp_path / "store.partial" / "state.json").is_file()
        build_freebase(dump, out, options=OPTIONS, say=said.append)
        assert said and said[0].startswith("resuming the build")
    assert store_files(out) == store_files(uninterrupted)
    assert (out / "manifest.json").read_bytes() == (uninterrupted / "manifest.json").read_bytes()
    assert not (tmp_path / "store.partial").exists() or target.endswith("_swap_in")


def test_sigkill_mid_build_resumes(dump: Path, uninterrupted: Path, tmp_path: Path) -> None:
    """A real SIGKILL, once the checkpoint shows the build past its first chunk."""
    out = tmp_path / "store"
    code = (
        "from kgreason.kg.freebase import DumpOptions, build_freebase\n"
        f"build_freebase({str(dump)!r}, {str(out)!r}, "
        f"options=DumpOptions(memory={OPTIONS.memory}, block={OPTIONS.block}))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    state = tmp_path / "store.partial" / "state.json"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and child.poll() is None:
            try:
                if len(json.loads(state.read_text())["chunks"]) >= 2:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    build_freebase(dump, out, options=OPTIONS)
    assert store_files(out) == store_files(uninterrupted)


def test_other_options_are_refused_until_restart(
    dump: Path, uninterrupted: Path, tmp_path: Path
) -> None:
    out = tmp_path / "store"
    assert _killed_build(dump, out, "kgreason.kg.freebase.stages.map_chunk", 1) == 9
    with pytest.raises(ResumeError, match="another dump or with other options"):
        build_freebase(dump, out, options=DumpOptions(memory=2 << 20, block=OPTIONS.block))
    build_freebase(dump, out, options=OPTIONS, restart=True)
    assert store_files(out) == store_files(uninterrupted)


def test_a_dump_shorter_than_the_checkpoint_is_an_error(dump: Path, tmp_path: Path) -> None:
    """The checkpoint says the dump was read further than it now reaches (a file rewritten
    in place with the same size and time): the resume refuses, it does not call it done."""
    out = tmp_path / "store"
    assert _killed_build(dump, out, "kgreason.kg.freebase.stages.spill", 2) == 9
    state = tmp_path / "store.partial" / "state.json"
    data = json.loads(state.read_text())
    assert data["stage"] == "parse" and data["offset"] > 0
    data["offset"] = 10**12
    state.write_text(json.dumps(data))
    with pytest.raises(ResumeError, match="before where the interrupted build stopped"):
        build_freebase(dump, out, options=OPTIONS)

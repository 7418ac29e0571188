"""Engines the sandbox user cannot run, and infrastructure failures: named, never
"repaired" by the LLM, and visible in `doctor`.

Before the fix: with the virtualenv where `nobody` cannot read it, every clingo run
reported `crash` (`No module named 'clingo'`), the LLM was asked to repair a correct
program three times, and `doctor` still said clingo was fine. An exception other than
SolverUnavailable ended the question."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgreason.lkg.codegen import ProgramGenerator
from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.retrieval import RetrievedSubgraph
from kgreason.lkg.solvers import HornRunner, Sandbox, SolverLimits, Z3Runner, available, horn
from kgreason.lkg.solvers.preflight import unreadable_for
from kgreason.llm.testing import ScriptedLLM

SUB = RetrievedSubgraph(query="q", nodes=[], edges=[])
GOOD = "```smt2\n(declare-const x Bool)(assert x)(define-fun goal () Bool x)\n```"


@pytest.fixture
def hidden_worker(monkeypatch) -> Iterator[Path]:
    """The clingo worker copied into a directory only its owner can enter (like /root),
    inside an open one."""
    outer = Path(tempfile.mkdtemp(prefix="kgr-test-"))
    os.chmod(outer, 0o755)
    private = outer / "private"
    private.mkdir(mode=0o700)
    os.chmod(private, 0o700)
    worker = private / "_clingo_worker.py"
    shutil.copy(horn._WORKER[-1], worker)
    monkeypatch.setattr(horn, "_WORKER", [*horn._WORKER[:-1], str(worker)])
    yield private
    shutil.rmtree(outer)


def test_unreadable_for_names_the_closed_directory(hidden_worker: Path):
    assert unreadable_for([hidden_worker / "_clingo_worker.py"]) == [str(hidden_worker)]
    assert unreadable_for(["/usr/bin/env"]) == []


def test_an_engine_nobody_cannot_read_is_named_not_crashed(hidden_worker: Path):
    box = Sandbox(SolverLimits(10, 512, 30))
    res = HornRunner(box).run_asp("a. b :- a.")
    check = box.checks["clingo"]
    if box.isolation().can_drop:  # root: the drop is what fails
        assert check.status == "degraded" and str(hidden_worker) in check.detail
        assert "chmod o+rx" in check.detail
        assert res.ok and res.verdict == "sat"  # run as the calling user, Landlock kept
    else:
        assert check.status == "ok" and res.ok
    info = available(box)
    if box.isolation().can_drop:
        assert "warning" in info["clingo"] and str(hidden_worker) in info["clingo"]


def test_without_landlock_the_drop_is_required(hidden_worker: Path):
    box = Sandbox(SolverLimits(10, 512, 30), require_isolation=False)
    if not box.isolation().can_drop:
        pytest.skip("no drop to nobody when not root")
    box._isolation = dataclasses.replace(box.isolation(), landlock_abi=0)
    res = HornRunner(box).run_asp("a.")
    assert res.status == "unavailable" and res.error_kind == "unavailable"
    assert str(hidden_worker) in (res.error or "")


def test_no_filesystem_isolation_fails_closed():
    box = Sandbox(SolverLimits(5, 256, 10))
    box._isolation = dataclasses.replace(box.isolation(), landlock_abi=0)
    res = Z3Runner(box).run("(check-sat)")
    assert res.status == "unavailable" and "no filesystem isolation" in (res.error or "")
    assert "NO FILESYSTEM ISOLATION" in available(box)["sandbox"]


def test_no_isolation_is_the_reason_wherever_kgreason_is_installed(hidden_worker: Path):
    """Issue 34: in a clone under a 0700 directory (as root), the refusal named the
    directory nobody cannot read instead of the missing isolation, so the test above failed
    for users who clone into /root or a private temp dir."""
    box = Sandbox(SolverLimits(5, 256, 10))
    box._isolation = dataclasses.replace(box.isolation(), landlock_abi=0)
    res = HornRunner(box).run_asp("a.")
    assert res.status == "unavailable" and "no filesystem isolation" in (res.error or "")
    assert str(hidden_worker) not in (res.error or "")


async def test_infrastructure_failures_are_not_sent_for_repair():
    box = Sandbox(SolverLimits(5, 256, 10))
    box._isolation = dataclasses.replace(box.isolation(), landlock_abi=0)
    llm = ScriptedLLM({"codegen": [GOOD], "repair": [GOOD]})
    out = await ProgramGenerator(llm, ProgramExecutor(sandbox=box), max_repairs=3).generate(
        "z3", "Is x true?", None, SUB
    )
    assert [a.status for a in out.attempts] == ["unavailable"]
    assert llm.stages_called() == ["codegen"]


async def test_any_exception_is_recorded_per_attempt_and_the_loop_goes_on(monkeypatch):
    ex = ProgramExecutor(SolverLimits(5, 256, 10))
    real = ex.run
    calls = []

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("boom")
        return real(*a, **k)

    monkeypatch.setattr(ex, "run", flaky)
    llm = ScriptedLLM({"codegen": [GOOD], "repair": [GOOD]})
    out = await ProgramGenerator(llm, ex, max_repairs=2).generate("z3", "Is x?", None, SUB)
    assert out.attempts[0].status == "crash"
    assert out.attempts[0].error_kind == "internal_error"
    assert "KeyError" in (out.attempts[0].error or "")
    assert out.answer == "True" and len(out.attempts) == 2

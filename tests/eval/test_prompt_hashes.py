"""Eval runs record the hashes of their method's prompt AND schema files, and `--resume`
refuses a run whose recorded files changed since (a schema edit changes what the model is
asked for as much as a prompt edit does). Runs recorded before schemas were hashed resume."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from tests.llm.fake_server import FakeOpenAIServer
from typer.testing import CliRunner

from kgreason.cli import app
from kgreason.config import Settings
from kgreason.eval import rundir
from kgreason.eval.adapters import build_method
from kgreason.eval.methods import BASELINES
from kgreason.eval.records import Answer, Record
from kgreason.eval.runner import prompt_changes, run
from kgreason.eval.setup import run_config
from kgreason.llm.testing import ScriptedLLM
from kgreason.prompts import prompt_hashes

SCHEMA = "kgreason.pog/evaluate.schema.json"


def test_schema_files_are_hashed_and_an_edit_changes_the_hash(tmp_path, monkeypatch):
    pkg = tmp_path / "kgr_hash_pkg"
    (pkg / "prompts").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "prompts" / "stage.txt").write_text("Answer $question")
    (pkg / "prompts" / "stage.schema.json").write_text('{"type": "object"}')
    (pkg / "prompts" / "notes.md").write_text("not a prompt")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    before = prompt_hashes("kgr_hash_pkg")
    assert set(before) == {"stage.txt", "stage.schema.json"}
    (pkg / "prompts" / "stage.schema.json").write_text('{"type": "array"}')
    after = prompt_hashes("kgr_hash_pkg")
    assert after["stage.schema.json"] != before["stage.schema.json"]
    assert after["stage.txt"] == before["stage.txt"]
    shipped = prompt_hashes("kgreason.pog")
    assert {"evaluate.txt", "evaluate.schema.json"} <= set(shipped)
    assert "construct.schema.json" in prompt_hashes("kgreason.lkg")


def test_run_config_records_only_the_methods_own_files():
    s = Settings()
    io = build_method("io", s, dataset="metaqa").prompt_hashes
    assert "kgqa_io.txt" in io  # bare names, as runs recorded the baselines' prompts before
    cfg = run_config(s, dataset="metaqa", split=None, hops=1, limit=None, method="io",
                     model="m", kg=None, extra_prompt_hashes=io)  # fmt: skip
    assert cfg["prompt_hashes"] == io
    llm_free = build_method("llm-free", s, dataset="metaqa")
    assert llm_free.prompt_hashes == {}  # no prompt is sent, none can change its results
    pog = build_method("pog", s, dataset="metaqa").prompt_hashes
    assert SCHEMA in pog and "kgqa_io.txt" not in pog


def test_prompt_changes_compares_files_recorded_on_both_sides():
    old = {"a.txt": "1", "a.schema.json": "2", "gone.txt": "3"}
    assert prompt_changes(old, {"a.txt": "1", "a.schema.json": "9"}) == ["a.schema.json"]
    assert prompt_changes(old, {"a.txt": "8", "a.schema.json": "2", "new.txt": "4"}) == ["a.txt"]
    assert prompt_changes({"a.txt": "1"}, {"a.txt": "1", "a.schema.json": "2"}) == []
    assert prompt_changes(None, {"a.txt": "1"}) == [] and prompt_changes("junk", {}) == []


def _records(n: int) -> list[Record]:
    return [Record(id=f"q{i}", dataset="t", task="kgqa", question=f"q{i}?", answers=[Answer("x")])
            for i in range(n)]  # fmt: skip


async def test_resume_refuses_a_changed_schema_or_prompt(tmp_path: Path):
    out = tmp_path / "r"
    recorded = {"method": "io", "prompt_hashes": {SCHEMA: "s1", "kgreason.pog/evaluate.txt": "p1"}}
    llm = ScriptedLLM({"*": ["So the answer is {x}."] * 4})
    await run(_records(2), BASELINES["io"](), llm, out, config=recorded)
    for changed in ({SCHEMA: "s2", "kgreason.pog/evaluate.txt": "p1"},
                    {SCHEMA: "s1", "kgreason.pog/evaluate.txt": "p2"}):  # fmt: skip
        with pytest.raises(rundir.RunDirError) as e:
            cfg = {"method": "io", "prompt_hashes": changed}
            await run(_records(3), BASELINES["io"](), llm, out, config=cfg, resume=True)
        name = next(k for k in changed if changed[k] != recorded["prompt_hashes"][k])
        assert f"prompt files changed since it started: {name}" in str(e.value)
        assert "another --out" in str(e.value)
    # the refused resumes changed nothing: config and results are as recorded
    assert json.loads((out / "config.json").read_text()) == recorded
    assert len(rundir.read_jsonl(out / "results.jsonl").rows) == 2


async def test_run_recorded_before_schema_hashes_resumes_and_records_them(tmp_path: Path):
    out = tmp_path / "r"
    old = {"method": "io", "prompt_hashes": {"kgreason.pog/evaluate.txt": "p1"}}
    llm = ScriptedLLM({"*": ["So the answer is {x}."] * 4})
    await run(_records(2), BASELINES["io"](), llm, out, config=old)
    new = {"method": "io", "prompt_hashes": {"kgreason.pog/evaluate.txt": "p1", SCHEMA: "s1"}}
    s = await run(_records(3), BASELINES["io"](), llm, out, config=new, resume=True)
    assert (s.done_before, s.computed) == (2, 1)
    assert json.loads((out / "config.json").read_text())["prompt_hashes"][SCHEMA] == "s1"


def test_cli_resume_with_changed_schema_is_one_line(tmp_path, monkeypatch):
    for k in ("OPENAI_API_KEY", "KGREASON_CONFIG", "KGREASON_DATA_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    server = FakeOpenAIServer().start()
    try:
        env = {"OPENAI_BASE_URL": server.base_url, "KGREASON_EMBED__BACKEND": "static",
               "KGREASON_LLM__CACHE": "false"}  # fmt: skip
        args = ["eval", "metaqa", "--hops", "1", "--method", "pog", "--out", "run"]
        r = CliRunner().invoke(app, [*args, "--limit", "1"], env=env)
        assert r.exit_code == 0, r.stderr
        cfg_path = tmp_path / "run" / "config.json"
        cfg = json.loads(cfg_path.read_text())
        assert SCHEMA in cfg["prompt_hashes"]
        # the run was recorded with another evaluate.schema.json than the one shipped now
        cfg["prompt_hashes"][SCHEMA] = "0" * 64
        cfg_path.write_text(json.dumps(cfg))
        r = CliRunner().invoke(app, [*args, "--limit", "2", "--resume"], env=env)
        assert r.exit_code == 1 and "Traceback" not in r.output
        assert f"prompt files changed since it started: {SCHEMA}" in r.stderr
        assert r.stderr.strip().count("\n") == 0
        # a run dir written before schemas were hashed: no schema entries, resumes
        cfg["prompt_hashes"] = {k: v for k, v in cfg["prompt_hashes"].items()
                                if not k.endswith(".schema.json")}  # fmt: skip
        cfg_path.write_text(json.dumps(cfg))
        r = CliRunner().invoke(app, [*args, "--limit", "2", "--resume", "--json"], env=env)
        assert r.exit_code == 0, r.stderr
        assert '"done_before": 1' in r.stdout
        assert SCHEMA in json.loads(cfg_path.read_text())["prompt_hashes"]
    finally:
        server.close()

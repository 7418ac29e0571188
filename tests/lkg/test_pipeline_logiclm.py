"""Real model-written programs through the pipeline's codegen path: Logic-LM's released
gpt-3.5-turbo programs for ProntoQA and FOLIO are the scripted codegen replies; verdicts come
from the real solvers and must equal what `kgreason.lkg.programs` gives on the same text.
(Accuracy against gold is the solver layer's benchmark, bench/logic_programs.py: several of
these gpt-3.5 programs are wrong, e.g. ProntoQA_1 queries `Sour(Max, False)` for "Max is sour".)"""

import json

import pytest
from tests.data import SMALL_DATA

from kgreason.lkg.pipeline import SymbolLKG
from kgreason.lkg.programs import run_program
from kgreason.lkg.settings import LKGSettings
from kgreason.llm.testing import ScriptedLLM

PROGRAMS = SMALL_DATA / "logic" / "logiclm-programs"  # vendored slices (tests/data)
N = 8


def _records(name: str) -> list[dict]:
    f = PROGRAMS / name
    if not f.is_file():
        pytest.skip(f"{f} not available")
    return json.loads(f.read_text(encoding="utf-8"))[:N]


@pytest.mark.parametrize(
    ("file", "route_word", "dataset"),
    [
        ("ProntoQA_dev_gpt-3.5-turbo.json", "PYKE", "ProntoQA"),
        ("FOLIO_dev_gpt-3.5-turbo.json", "PROVER9", "FOLIO"),
    ],
)
async def test_logiclm_programs_through_codegen(file: str, route_word: str, dataset: str):
    pipe = SymbolLKG(
        ScriptedLLM({}), settings=LKGSettings(solver_timeout_s=10, max_repairs=0), prune=False
    )
    agree = 0
    letters = {o[0] for rec in _records(file) for o in rec["options"]}
    for rec in _records(file):
        program = rec["raw_logic_programs"][0]
        pipe.llm = ScriptedLLM(
            {
                "lkg_construct": ['{"entities": []}'],
                "query_entities": ["[]"],
                "route": [route_word],
                "codegen": [f"```\n{program}\n```"],
            }
        )
        r = await pipe.asolve(rec["context"], rec["question"], rec["options"], id=rec["id"])
        direct = run_program(program, options=rec["options"], dataset=dataset)
        agree += r.verdict == direct.answer
        assert r.status in ("solved", "unsolved"), r.error
        assert r.verdict is None or r.verdict in letters
        if r.verdict is None:  # a parse failure is recorded with the engine's message
            assert r.attempts[0].error
    assert agree == N  # the pipeline reads real programs exactly as the program runner does

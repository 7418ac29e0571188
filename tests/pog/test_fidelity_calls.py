"""LLM calls counted as the PoG paper counts them (one per reasoning step) beside the HTTP
requests: precise selection over 80 paths is 3 requests and 1 paper call, a re-ask is 2
requests and 1 paper call, and an eval run's ledger beneath PoG's sees the same steps."""

from __future__ import annotations

from tests.pog.test_e2e_nijmegen import FRANCE, NIJMEGEN, QUESTION, load_fixture, script
from tests.pog.test_fidelity import CTX

from kgreason.embed import build_embedder
from kgreason.embed.settings import EmbedSettings
from kgreason.llm.testing import ScriptedLLM
from kgreason.llm.usage import MeteredLLM, UsageLedger, paper_step
from kgreason.pog import answering
from kgreason.pog.pipeline import PoG
from kgreason.pog.precise import precise_select
from kgreason.pog.settings import PoGSettings


def _top3(messages) -> str:
    return "top_list: {Path 1, Path 2, Path 3}"


async def test_precise_selection_over_80_paths_is_one_paper_call() -> None:
    scripted = ScriptedLLM({"precise_select": _top3})
    ledger = UsageLedger()
    llm = MeteredLLM(scripted, ledger)
    paths = [f"{{m.{i}: E{i}}} -> r -> {{m.x: X}}" for i in range(80)]
    picked = await precise_select(llm, CTX, paths, 3, PoGSettings())
    assert picked == [0, 1, 2]
    u = ledger.stages["precise_select"]
    assert (u.calls, u.paper_calls) == (3, 1)  # two 40-path batches + the final choice
    # a second selection is a second paper call
    await precise_select(llm, CTX, paths[:10], 3, PoGSettings())
    assert (u.calls, u.paper_calls) == (4, 2)


async def test_a_re_ask_is_a_request_but_not_a_paper_call() -> None:
    scripted = ScriptedLLM(
        {"summarise": ["I think so", "summary: the chain"], "evaluate": ["{No}"]}
    )
    ledger = UsageLedger()
    await answering.evaluate(
        MeteredLLM(scripted, ledger), CTX, ["{m.w: W} -> r -> {m.g: G}"], PoGSettings()
    )
    s, e = ledger.stages["summarise"], ledger.stages["evaluate"]
    assert (s.calls, s.paper_calls, e.calls, e.paper_calls) == (2, 1, 1, 1)
    assert ledger.to_dict()["total"]["paper_calls"] == 2 and ledger.total().calls == 3


async def test_nested_ledgers_count_the_same_steps_and_plain_calls_count_once() -> None:
    run_ledger, question_ledger = UsageLedger(), UsageLedger()
    inner = MeteredLLM(ScriptedLLM({"*": lambda m: "ok"}), run_ledger)
    outer = MeteredLLM(inner, question_ledger)
    with paper_step(outer, "x"):
        for _ in range(3):
            await outer.complete([{"role": "user", "content": "q"}], stage="x")
    await outer.complete([{"role": "user", "content": "q"}], stage="y")  # outside a step
    for ledger in (run_ledger, question_ledger):
        assert (ledger.total().calls, ledger.total().paper_calls) == (4, 2)
    # a bare test double has no ledger: the step is a no-op
    with paper_step(ScriptedLLM({}), "x"):
        pass


def test_pipeline_reports_paper_calls_per_stage() -> None:
    emb = build_embedder(EmbedSettings(backend="static"))
    llm = ScriptedLLM(script())
    r = PoG(load_fixture(), llm, emb, PoGSettings()).ask(QUESTION, [NIJMEGEN, FRANCE])
    assert r.ok, r.error
    total = r.usage["total"]
    assert total["calls"] == len(llm.calls) and 1 <= total["paper_calls"] <= total["calls"]
    precise_steps = sum(
        1
        for t in r.trace
        for st in t.get("pruning", [])
        if st["step"] == "precise" and st["in"] > 3
    )
    assert r.usage["precise_select"]["paper_calls"] == precise_steps
    # every other stage here is one request per step (no re-ask was needed)
    for stage, u in r.usage.items():
        if stage not in ("total", "precise_select"):
            assert u["paper_calls"] == u["calls"], stage

"""The transport-free service: warm state, the operations, their errors and limits."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from kgreason.pog.labels import RANKER_LABEL
from kgreason.server.models import AskRequest, SolveRequest
from kgreason.server.service import Service, ServiceError
from tests.lkg.test_pipeline_fixtures import HORN_PROGRAM, HORN_QUESTION
from tests.server.conftest import GATED_QUESTION

Q = "who directed [Once Were Warriors]"


def run(coro):
    return asyncio.run(coro)


def test_ask_llm_free_is_labelled_and_streams_its_stages(warm: Service) -> None:
    events = []
    out = run(warm.ask(AskRequest(question=Q), events.append))
    # PoG.from_settings loads the bundled path ranker (pog.ranker = "auto"), as `kgreason ask`
    assert out["mode"] == "llm-free" and out["label"] == RANKER_LABEL
    assert [a["name"] for a in out["answers"]][:1] == ["Lee Tamahori"]
    assert out["paths"] and out["request_id"] and out["elapsed_ms"] > 0
    assert out["entity_names"]["Once Were Warriors"] == "Once Were Warriors"
    assert [(e.kind, e.stage) for e in events] == [("start", "llm_free"), ("end", "llm_free")]
    assert events[-1].sizes["paths"] == len(out["paths"])
    assert warm.inflight == 0


def test_per_request_options_reach_the_pipeline(warm: Service) -> None:
    with pytest.raises(ServiceError) as e:
        run(warm.ask(AskRequest(question=Q, strategy="no-such-strategy")))
    assert (e.value.status, e.value.kind) == (400, "bad-request")
    assert "no-such-strategy" in e.value.message
    with pytest.raises(ServiceError) as e:
        run(warm.ask(AskRequest(question=Q, llm_free=False)))
    assert (e.value.status, e.value.kind) == (400, "needs-llm")


def test_unknown_topic_is_404_naming_it(warm: Service) -> None:
    with pytest.raises(ServiceError) as e:
        run(warm.ask(AskRequest(question="who directed it", topics=["Zzyzx Qwertyuiop Film"])))
    assert e.value.status == 404 and e.value.kind == "unknown-entity"
    assert "Zzyzx" in e.value.message


@pytest.mark.parametrize(
    "body",
    [
        {"question": ""},
        {"question": "   "},
        {"question": "x" * 5000},
        {"question": "q", "topics": [""]},
        {"question": "q", "unknown_option": 1},
        {"question": "q", "variant": "tog"},
    ],
)
def test_bad_ask_bodies_are_refused(body) -> None:
    with pytest.raises(ValidationError):
        AskRequest.model_validate(body)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"context": "c", "question": "q", "program": "p"},
        {"context": "c"},
        {"program": "  "},
    ],
)
def test_bad_solve_bodies_are_refused(body) -> None:
    with pytest.raises(ValidationError):
        SolveRequest.model_validate(body)


def test_search_entity_paging_and_unknown(warm: Service) -> None:
    hits = warm.search("Once Were Warriors", limit=5)
    assert hits[0] == {**hits[0], "id": "Once Were Warriors", "kind": "exact"}
    first = warm.entity("Once Were Warriors", 0, 3)
    assert first["name"] == "Once Were Warriors" and len(first["neighbours"]) == 3
    rows, offset = [], 0
    while offset is not None:
        page = warm.entity("Once Were Warriors", offset, 3)
        rows += page["neighbours"]
        offset = page["next_offset"]
    assert len(rows) == first["total"] == len({(r["relation"], r["id"]) for r in rows})
    assert {"relation": "directed_by", "direction": "out", "id": "Lee Tamahori",
            "name": "Lee Tamahori"} in rows  # fmt: skip
    with pytest.raises(ServiceError) as e:
        warm.entity("No Such Entity 123")
    assert e.value.status == 404
    with pytest.raises(ServiceError) as e:
        warm.entity("Once Were Warriors", limit=0)
    assert e.value.status == 400
    with pytest.raises(ServiceError):
        warm.search("   ")


def test_explain_checks_every_cited_triple(warm: Service) -> None:
    out = run(warm.ask(AskRequest(question=Q)))
    ex = warm.explain(out)
    assert ex["triples"] and ex["unverified"] == 0
    forged = {"paths": [{"hops": [{"triples": [
        {"head": "Once Were Warriors", "relation": "directed_by", "tail": "Steven Spielberg"},
    ]}]}]}  # fmt: skip
    assert warm.explain(forged)["triples"][0]["verified"] is False
    with pytest.raises(ServiceError):
        warm.explain({"paths": [{"hops": [{"triples": [{"head": 1}]}]}]})


def test_solve_runs_a_program_without_llm_and_needs_one_for_text(warm: Service) -> None:
    out = run(
        warm.solve(
            SolveRequest(
                program=HORN_PROGRAM, question=HORN_QUESTION, options=["A) True", "B) False"]
            )
        )
    )
    assert (out["route"], out["answer"]) == ("horn", "B")
    with pytest.raises(ServiceError) as e:
        run(warm.solve(SolveRequest(program="this is no program", solver="no-such-format")))
    assert (e.value.status, e.value.kind) == (400, "bad-program")
    with pytest.raises(ServiceError) as e:
        run(warm.solve(SolveRequest(context="All men are mortal.", question="Is it?")))
    assert (e.value.status, e.value.kind) == (400, "needs-llm")


def test_deadline_cancels_a_stuck_question(gated) -> None:
    svc, llm = gated(deadline_s=0.3)
    with pytest.raises(ServiceError) as e:
        run(svc.ask(AskRequest(**GATED_QUESTION)))
    assert (e.value.status, e.value.kind) == (504, "deadline")
    assert "0.3 s deadline" in e.value.message
    assert llm.calls == 1 and svc.inflight == 0


def test_busy_when_full_then_drain_waits_for_in_flight(gated) -> None:
    svc, llm = gated(max_concurrency=1)

    async def scenario():
        first = asyncio.create_task(svc.ask(AskRequest(**GATED_QUESTION)))
        while not llm.entered.is_set():
            await asyncio.sleep(0.01)
        with pytest.raises(ServiceError) as e:
            await svc.ask(AskRequest(question=Q, llm_free=True))
        assert (e.value.status, e.value.kind, e.value.retry_after) == (429, "busy", 1)
        assert not await svc.drain(timeout=0.05)  # still running
        llm.release()
        assert await svc.drain(timeout=30)
        return await first

    out = run(scenario())
    assert out["error_kind"] == "llm-unreadable-reply" and out["request_id"]
    assert svc.inflight == 0


def test_pog_from_settings_uses_the_configured_ranker(warm: Service) -> None:
    """The public-API change the server needed: `PoG.from_settings` builds the selector of
    `pog.ranker`, as `kgreason ask` does (before, it always used plain SBERT similarity)."""
    import kgreason

    kg = warm.kg
    auto = kgreason.PoG.from_settings(kgreason.Settings(), kg=kg, llm_free=True)
    plain = kgreason.PoG.from_settings(
        kgreason.Settings(pog={"ranker": "none"}), kg=kg, llm_free=True
    )
    assert type(auto.fuzzy).__name__ == "RankerSelector"
    assert type(plain.fuzzy).__name__ == "FuzzySelector"
    q = "who directed [Once Were Warriors]"
    assert [a.name for a in auto.ask(q).answers] == ["Lee Tamahori"]
    assert plain.ask(q).answers == []  # plain similarity ranks candidates, never answers

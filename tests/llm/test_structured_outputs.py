"""Structured outputs over real HTTP: the request carries the stage's JSON schema in the shape
each server flavour accepts, `auto` finds the flavour from what the server says about itself,
and an endpoint that refuses the field gets plain prompting (remembered for the session),
with the reply parsed and checked either way."""

from __future__ import annotations

import json

import pytest

from kgreason.llm import LLMOutputError, OpenAIChat, ask_parsed, parse_yes_no
from kgreason.llm.base import LLMRejected
from kgreason.llm.factory import build_llm
from kgreason.llm.schema import load_stage_schema
from kgreason.llm.settings import LLMSettings
from kgreason.llm.structured import rejects_schema, schema_fields

pytestmark = pytest.mark.integration

MSGS = [{"role": "user", "content": "Are the paths sufficient?"}]
EVALUATE = load_stage_schema("kgreason.pog", "evaluate")
CONSTRUCT = load_stage_schema("kgreason.lkg", "construct")
JSON_YES = '{"sufficient": "Yes", "reason": "the teacher and the instrument are there"}'
MODELS = "/v1/models"


def models(owner: str) -> tuple[int, dict[str, str], dict]:
    return 200, {}, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner}]}


async def ask(adapter: OpenAIChat, schema=EVALUATE) -> bool:
    value, _ = await ask_parsed(
        adapter, MSGS, parse_yes_no, stage="evaluate", reminder="{Yes} or {No}.", schema=schema
    )
    return value


def extra_fields(req: dict) -> dict:
    return {
        k: v for k, v in req.items() if k not in ("model", "messages", "temperature", "max_tokens")
    }


async def test_vllm_advertised_gets_structured_outputs(openai_server):
    openai_server.gets = {MODELS: models("vllm"), "/version": (200, {}, {"version": "0.11.0"})}
    openai_server.plan = [("ok", JSON_YES)]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    await adapter.aclose()
    (req,) = openai_server.requests
    assert extra_fields(req) == {"structured_outputs": {"json": EVALUATE.schema}}
    assert adapter.capability is not None and adapter.capability.vllm_version == (0, 11, 0)


async def test_old_vllm_gets_guided_json(openai_server):
    openai_server.gets = {MODELS: models("vllm"), "/version": (200, {}, {"version": "0.6.3.post1"})}
    openai_server.plan = [("ok", JSON_YES)]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    await adapter.aclose()
    assert extra_fields(openai_server.requests[0]) == {"guided_json": EVALUATE.schema}


@pytest.mark.parametrize(
    "gets",
    [
        {MODELS: models("llamacpp")},
        {MODELS: (200, {"Server": "llama.cpp"}, {"object": "list", "data": []})},
    ],
    ids=["owned_by", "server-header"],
)
async def test_llamacpp_gets_json_object_with_schema(openai_server, gets):
    openai_server.gets = gets
    openai_server.plan = [("ok", JSON_YES)]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    await adapter.aclose()
    assert extra_fields(openai_server.requests[0]) == {
        "response_format": {"type": "json_object", "schema": EVALUATE.schema}
    }
    assert adapter.capability is not None and adapter.capability.flavour == "llamacpp"


async def test_ollama_found_by_api_version_gets_json_schema_without_strict(openai_server):
    openai_server.gets = {
        MODELS: models("library"),
        "/api/version": (200, {}, {"version": "0.5.7"}),
    }
    openai_server.plan = [("ok", JSON_YES)]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    await adapter.aclose()
    assert extra_fields(openai_server.requests[0]) == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "evaluate", "schema": EVALUATE.schema},
        }
    }
    assert openai_server.get_paths == [MODELS, "/api/version"]


async def test_openai_flavour_sends_strict_only_for_strict_compatible_schemas(openai_server):
    openai_server.plan = [("ok", JSON_YES), ("ok", JSON_YES)]
    adapter = OpenAIChat("m", openai_server.base_url, structured_output="openai")
    assert await ask(adapter) is True
    with pytest.raises(LLMOutputError):  # parse_yes_no cannot read an extraction; re-asked
        await ask(adapter, schema=CONSTRUCT)
    await adapter.aclose()
    rf = openai_server.requests[0]["response_format"]
    assert rf == {
        "type": "json_schema",
        "json_schema": {"name": "evaluate", "schema": EVALUATE.schema, "strict": True},
    }
    assert openai_server.requests[1]["response_format"]["json_schema"]["strict"] is False
    assert openai_server.get_paths == []  # a configured flavour is not probed


async def test_unknown_server_gets_the_openai_shape(openai_server):
    openai_server.plan = [("ok", JSON_YES)]  # GETs answer 404: no signature
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    await adapter.aclose()
    assert openai_server.requests[0]["response_format"]["type"] == "json_schema"
    assert openai_server.get_paths == [MODELS, "/api/version"]


async def test_refused_schema_falls_back_to_plain_prompting_for_the_session(openai_server):
    openai_server.reject_fields = {"response_format": "response_format is not supported"}
    openai_server.plan = [("ok", "{Yes}. Both hops are there."), ("ok", "**No.**")]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is True
    assert await ask(adapter) is False  # the fixed text form, Markdown and all
    await adapter.aclose()
    sent = [("response_format" in r) for r in openai_server.requests]
    assert sent == [True, False, False]  # refused once, then remembered
    assert openai_server.get_paths == [MODELS, "/api/version"]  # probed once
    assert adapter.capability is not None and adapter.capability.flavour == "off"
    assert "HTTP 400" in adapter.capability.how


async def test_refused_schema_with_a_configured_flavour_is_an_error(openai_server):
    openai_server.reject_fields = {
        "structured_outputs": "extra fields not permitted: structured_outputs"
    }
    adapter = OpenAIChat("m", openai_server.base_url, structured_output="vllm")
    with pytest.raises(LLMRejected, match="structured_output = 'vllm'"):
        await ask(adapter)
    await adapter.aclose()
    assert len(openai_server.requests) == 1


async def test_other_400s_are_not_mistaken_for_a_refused_schema(openai_server):
    openai_server.plan = [("status", 400)]
    adapter = OpenAIChat("m", openai_server.base_url)
    with pytest.raises(LLMRejected):
        await ask(adapter)
    await adapter.aclose()
    assert len(openai_server.requests) == 1


async def test_off_and_schemaless_calls_send_nothing_and_probe_nothing(openai_server):
    openai_server.plan = [("ok", "{Yes}"), ("ok", "{No}")]
    off = OpenAIChat("m", openai_server.base_url, structured_output="off")
    assert await ask(off) is True
    await off.aclose()
    plain = OpenAIChat("m", openai_server.base_url)
    value, _ = await ask_parsed(plain, MSGS, parse_yes_no, stage="evaluate", reminder="r")
    await plain.aclose()
    assert value is False
    assert [extra_fields(r) for r in openai_server.requests] == [{}, {}]
    assert openai_server.get_paths == []


async def test_schema_violating_reply_is_not_trusted(openai_server):
    """A constrained server can still be wrong (or not constrain): a JSON verdict outside
    the enum is not read as an answer; the re-ask's text form is."""
    openai_server.gets = {MODELS: models("vllm")}
    openai_server.plan = [("ok", '{"sufficient": "Maybe", "reason": ""}'), ("ok", "{No}")]
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await ask(adapter) is False
    await adapter.aclose()
    assert len(openai_server.requests) == 2
    assert "structured_outputs" in openai_server.requests[1]


async def test_full_stack_carries_the_schema_and_keys_the_cache_on_it(openai_server, tmp_path):
    openai_server.gets = {MODELS: models("vllm")}
    openai_server.plan = [("ok", JSON_YES), ("ok", "{No}")]
    s = LLMSettings(
        model="m", base_url=openai_server.base_url, cache_path=tmp_path / "c.sqlite", max_retries=0
    )
    llm = build_llm(s)
    assert await ask(llm) is True
    assert await ask(llm) is True  # same request: a cache hit, no new POST
    value, _ = await ask_parsed(llm, MSGS, parse_yes_no, stage="evaluate", reminder="r")
    assert value is False  # no schema: a different request, not the cached JSON reply
    assert len(openai_server.requests) == 2
    assert "structured_outputs" in openai_server.requests[0]
    assert "structured_outputs" not in openai_server.requests[1]


def test_settings_reject_an_unknown_mode():
    with pytest.raises(ValueError):
        LLMSettings(structured_output="guidance")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, "response_format is not supported by this model", True),
        (400, "Unrecognized request argument supplied: response_format", True),
        (422, "extra fields not permitted: structured_outputs", True),
        (400, 'response_format type must be one of "text" or "json_object"', True),
        (400, "invalid response_format type: json_schema", True),
        (
            400,
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            True,
        ),
        (400, "This model's maximum context length is 4096 tokens", False),
        (400, "invalid model name", False),
        (500, "response_format is not supported", False),
    ],
)
def test_rejects_schema(status, body, expected):
    assert rejects_schema(status, body) is expected


def test_schema_field_names_are_sanitised():
    f = schema_fields("openai", "lkg construct/v2", {"type": "object"}, strict=False)
    assert f["response_format"]["json_schema"]["name"] == "lkg_construct_v2"
    assert schema_fields("off", "x", {"type": "object"}, strict=True) == {}
    json.dumps(f)  # what goes on the wire is plain JSON


async def test_transcripts_record_the_schema_and_old_ones_still_replay(tmp_path):
    from kgreason.llm.testing import ScriptedLLM
    from kgreason.llm.transcript import RecordingLLM, ReplayLLM

    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    scripted = ScriptedLLM({"evaluate": [JSON_YES, "{No}"]})
    assert await ask(RecordingLLM(scripted, new)) is True
    assert scripted.calls[0].schema == EVALUATE.schema
    rec = json.loads(new.read_text())
    assert rec["request"]["schema"] == EVALUATE.schema
    assert await ask(ReplayLLM(new)) is True
    await ask_parsed(RecordingLLM(scripted, old), MSGS, parse_yes_no, stage="evaluate", reminder="")
    assert "schema" not in json.loads(old.read_text())["request"]
    assert await ask(ReplayLLM(old)) is False  # recorded without a schema, still answers


async def test_concurrent_first_calls_probe_once(openai_server):
    import asyncio

    openai_server.gets = {MODELS: models("vllm")}
    openai_server.plan = [("ok", JSON_YES)] * 5
    adapter = OpenAIChat("m", openai_server.base_url)
    assert await asyncio.gather(*(ask(adapter) for _ in range(5))) == [True] * 5
    await adapter.aclose()
    assert openai_server.get_paths.count(MODELS) == 1


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.openai.com/v1", True),
        ("https://my-res.openai.azure.com/openai", True),
        ("http://localhost:8000/v1", False),
        ("https://api.openai.com.evil.example/v1", False),
    ],
)
def test_openai_host(url, expected):
    from kgreason.llm.structured import is_openai_host

    assert is_openai_host(url) is expected

"""Request bodies are typed and capped: no field is unbounded, and no value is echoed whole.

The attacks (written before the defences):
- `/v1/explain` with a triple field that is a list, an object, a number or null raised
  TypeError / AttributeError: a 500;
- `strategy` and each `topics` item took 900 KB over HTTP and echoed it back in the error
  (MCP caps them at 40 and 1,000 characters); `options` items and entity ids likewise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kgreason.server import mcp
from kgreason.server.app import create_app
from kgreason.server.config import ServerConfig
from kgreason.server.models import MAX_ID, MAX_NAME, AskRequest, ExplainRequest, SolveRequest
from kgreason.server.service import Service
from tests.server.conftest import warm  # noqa: F401  (the session's warm service)

BIG = "s" * 900_000
#: an error reply is a message, not an echo: well under the 900 KB sent
SMALL_REPLY = 4_000


@pytest.fixture(scope="module")
def client(warm: Service) -> Iterator[httpx.AsyncClient]:  # noqa: F811
    app = create_app(warm, ServerConfig(), close_service=False)
    transport = httpx.ASGITransport(app=app)
    yield httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60)


def call(client: httpx.AsyncClient, method: str, path: str, **kw: Any) -> httpx.Response:
    return asyncio.run(client.request(method, path, **kw))


def triple(**over: Any) -> dict[str, Any]:
    t = {"head": "Once Were Warriors", "relation": "directed_by", "tail": "Lee Tamahori"}
    return {"paths": [{"hops": [{"triples": [t | over]}]}]}


@pytest.mark.parametrize("bad", [["x"], {"a": 1}, 7, None, True, 1.5])
@pytest.mark.parametrize("field", ["head", "relation", "tail"])
def test_explain_refuses_non_string_triple_fields(client, field, bad) -> None:
    r = call(client, "POST", "/v1/explain", json=triple(**{field: bad}))
    assert r.status_code == 422, r.text
    assert r.json()["error_kind"] == "bad-request"
    assert field in r.json()["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"paths": "x"},
        {"paths": [1]},
        {"paths": [{"hops": {"a": 1}}]},
        {"paths": [{"hops": [{"triples": [[1, 2, 3]]}]}]},
        {"paths": [{"hops": [{"triples": "abc"}]}]},
        {"paths": [], "answers": "x"},
        [],
        "a string",
        7,
    ],
)
def test_explain_refuses_malformed_results(client, body) -> None:
    r = call(client, "POST", "/v1/explain", json=body)
    assert r.status_code == 422, r.text


def test_explain_still_checks_a_real_result(client) -> None:
    ask = call(client, "POST", "/v1/ask", json={"question": "who directed [Once Were Warriors]"})
    assert ask.status_code == 200
    ex = call(client, "POST", "/v1/explain", json=ask.json())
    assert ex.status_code == 200 and ex.json()["verified"] >= 1
    forged = call(client, "POST", "/v1/explain", json=triple(tail="Steven Spielberg"))
    assert forged.json()["triples"][0]["verified"] is False


@pytest.mark.parametrize(
    "path, body",
    [
        ("/v1/ask", {"question": "who directed [Once Were Warriors]", "strategy": BIG}),
        ("/v1/ask", {"question": "who directed [Once Were Warriors]", "topics": [BIG]}),
        ("/v1/ask", {"question": "q", "variant": BIG}),
        ("/v1/solve", {"program": "(check-sat)", "options": [BIG]}),
        ("/v1/solve", {"program": "(check-sat)", "solver": BIG}),
        ("/v1/solve", {"program": "(check-sat)", "dataset": BIG}),
        ("/v1/explain", triple(head=BIG)),
        ("/v1/ask", {"question": "q", BIG: 1}),  # an unknown field's name is not echoed
    ],
)
def test_oversized_fields_are_refused_without_an_echo(client, path, body) -> None:
    r = call(client, "POST", path, json=body)
    assert r.status_code == 422, r.text[:300]
    assert len(r.content) < SMALL_REPLY and "s" * 100 not in r.text


def test_oversized_entity_id_and_search_are_refused_without_an_echo(client) -> None:
    r = call(client, "GET", "/v1/kg/entity/" + "e" * (MAX_ID + 1))
    assert r.status_code in (400, 422) and len(r.content) < SMALL_REPLY
    r = call(client, "GET", "/v1/kg/search", params={"q": "e" * 5_000})
    assert r.status_code == 422 and len(r.content) < SMALL_REPLY


def _unbounded(schema: dict[str, Any], defs: dict[str, Any], where: str) -> list[str]:
    """The string and array fields of a JSON schema with no maxLength / maxItems."""
    if "$ref" in schema:
        return _unbounded(defs[schema["$ref"].split("/")[-1]], defs, where)
    out = []
    for sub in schema.get("anyOf", []):
        out += _unbounded(sub, defs, where)
    t = schema.get("type")
    if t == "string" and "maxLength" not in schema and "enum" not in schema:
        out.append(where)
    if t == "array":
        if "maxItems" not in schema:
            out.append(where)
        out += _unbounded(schema.get("items", {}), defs, f"{where}[]")
    if t == "object" or "properties" in schema:
        for name, sub in schema.get("properties", {}).items():
            out += _unbounded(sub, defs, f"{where}.{name}")
    return out


@pytest.mark.parametrize("model", [AskRequest, SolveRequest, ExplainRequest])
def test_every_request_field_is_capped(model) -> None:
    schema = model.model_json_schema()
    assert _unbounded(schema, schema.get("$defs", {}), model.__name__) == []


def test_http_caps_match_mcp() -> None:
    """The same field has the same cap over HTTP and over MCP."""
    ask = AskRequest.model_json_schema()["properties"]
    assert mcp.MAX_ID == MAX_ID
    assert ask["strategy"]["anyOf"][0]["maxLength"] == MAX_NAME == 40
    assert ask["topics"]["anyOf"][0]["items"]["maxLength"] == MAX_ID

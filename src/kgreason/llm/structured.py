"""How a stage's JSON schema travels to each kind of server (`llm.structured_output`).

Flavours and the request fields they add to /chat/completions:

- `openai`:   response_format = {"type": "json_schema", "json_schema":
                {"name": <stage>, "schema": S, "strict": <strict>}}
- `ollama`:   response_format = {"type": "json_schema", "json_schema": {"name": <stage>,
                "schema": S}} (Ollama >= 0.5 turns it into its native `format`; it ignores
                `strict`, so it is not sent)
- `vllm`:     structured_outputs = {"json": S} (vLLM >= 0.10.2; `guided_json`, removed in
                0.12) or guided_json = S when the server's /version is older than 0.10.2
- `llamacpp`: response_format = {"type": "json_object", "schema": S} (llama-server's
                documented form, accepted by old and new builds alike)
- `off`:      nothing; plain prompting.

`auto` picks one per endpoint, once per session (the adapter remembers it), from what the
server says about itself; see `detect_flavour` and docs/structured-outputs.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from kgreason.llm.settings import Mode as Mode  # (defined with the settings that name it)

Flavour = Literal["openai", "vllm", "ollama", "llamacpp", "off"]
MODES: tuple[str, ...] = ("auto", "openai", "vllm", "ollama", "llamacpp", "off")

#: vLLM renamed guided decoding to `structured_outputs` in this release
VLLM_STRUCTURED_SINCE = (0, 10, 2)

#: request fields a flavour adds; a 400 naming one of them means "not supported here"
_FIELDS = ("response_format", "json_schema", "structured_outputs", "guided_json", "schema")
_UNSUPPORTED = re.compile(
    r"not (?:be )?support|unsupported|unknown (?:field|param)|unrecognized|extra (?:fields|inputs)"
    r"|not permitted|\binvalid\b|must be one of",
    re.I,
)


@dataclass(frozen=True)
class Capability:
    """What an endpoint was found to accept; `how` says how we know (shown in logs/doctor)."""

    flavour: Flavour
    how: str
    vllm_version: tuple[int, ...] | None = None
    #: probes that could not be read ("GET /models: timed out"): detection moved on past
    #: them, so `flavour` may be the fallback rather than what the server is
    failed: tuple[str, ...] = ()


def schema_fields(
    flavour: Flavour,
    name: str,
    schema: dict[str, Any],
    *,
    strict: bool,
    vllm_version: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    """The body fields that carry `schema` for `flavour` (empty for "off")."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"
    if flavour == "openai":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": strict},
            }
        }
    if flavour == "ollama":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema},
            }
        }
    if flavour == "vllm":
        if vllm_version is not None and vllm_version < VLLM_STRUCTURED_SINCE:
            return {"guided_json": schema}
        return {"structured_outputs": {"json": schema}}
    if flavour == "llamacpp":
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {}


def rejects_schema(status: int, body: str) -> bool:
    """True when a 400/422 says the structured-output field is not supported: the message
    names one of the fields we add and says it is unsupported/unknown/invalid. A 400 for
    anything else (context too long, bad model name) is left alone."""
    if status not in (400, 422):
        return False
    low = body.lower()
    return any(f in low for f in _FIELDS) and bool(_UNSUPPORTED.search(body))


def parse_version(text: str) -> tuple[int, ...] | None:
    m = re.match(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def flavour_from_models(body: Any, server_header: str) -> Flavour | None:
    """The flavour a /v1/models reply (and its Server header) reveals, if any.

    vLLM lists models `owned_by: "vllm"`; llama-server `owned_by: "llamacpp"` and answers
    with `Server: llama.cpp`; OpenAI's own models are owned by "openai"/"system".
    """
    if "llama.cpp" in server_header.lower():
        return "llamacpp"
    data = body.get("data") if isinstance(body, dict) else None
    owners = {str(m.get("owned_by", "")).lower() for m in data or [] if isinstance(m, dict)}
    if "vllm" in owners:
        return "vllm"
    if "llamacpp" in owners or "llama.cpp" in owners:
        return "llamacpp"
    if owners & {"openai", "system", "openai-internal"}:
        return "openai"
    return None


def is_openai_host(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def server_root(base_url: str) -> str:
    """The server root for /version and /api/version probes (`.../v1` stripped)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))

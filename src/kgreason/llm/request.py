"""The canonical form of a chat request, shared by the cache key and the transcript format.

Everything that can change the reply is in it (model, messages, temperature, max_tokens,
the sample index and the reply schema); `stage` is not, because it only labels the caller.
Temperature is stored as a float so 0 and 0.0 are the same request. The schema is present
only when a stage sent one, so requests without it keep the keys they always had (caches
and transcripts written before schemas existed still match).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kgreason.llm.base import JsonSchema, Message


def canonical_request(
    model: str,
    messages: list[Message],
    temperature: float,
    max_tokens: int | None,
    sample: int,
    schema: JsonSchema | None = None,
) -> dict[str, Any]:
    req: dict[str, Any] = {
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "temperature": float(temperature),
        "max_tokens": max_tokens,
        "sample": int(sample),
        "model": model,
    }
    if schema is not None:
        req["schema"] = schema
    return req


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the request's sorted-key JSON."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()

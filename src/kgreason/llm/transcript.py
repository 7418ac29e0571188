"""Record every LLM call to a JSONL transcript, and replay a transcript as the LLM.

One line per call:
    {"stage": ..., "request": {"messages", "temperature", "max_tokens", "sample", "model",
                               "schema" (only when the stage sent one)},
     "response": {"text": ...}, "usage": {"prompt_tokens", "completion_tokens", "estimated"},
     "cached": bool}
A run made with a real model and `--transcript run.jsonl` is reproduced offline by building
the LLM with `replay=run.jsonl`: each request is answered by the recorded response to the
identical request (same model, messages, temperature, max_tokens, sample, schema); a
transcript recorded before stages sent schemas still answers them, by the same request
without the schema. Identical requests
recorded several times are answered in recorded order; an unmatched request raises
`TranscriptMismatch` instead of inventing a reply.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Unpack

from kgreason.llm.base import CallOptions, ChatLLM, Completion, LLMError, Message, Request, Usage
from kgreason.llm.request import canonical_request, request_key


class TranscriptError(LLMError):
    """A transcript file is unreadable or a line lacks a required field (names file:line)."""


class TranscriptMismatch(LLMError):
    """Replay was asked a request the transcript has no (remaining) answer for."""

    def __init__(self, message: str, *, stage: str):
        super().__init__(message)
        self.stage = stage


class RecordingLLM:
    """Passes calls through to `inner` and appends each completed call to `path`.

    The file is opened per call in append mode, so every line is on disk when the call
    returns and a crash loses nothing; calls that raise are not recorded.
    """

    def __init__(self, inner: ChatLLM, path: Path):
        self.inner = inner
        self.model = inner.model
        self.path = Path(path)

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        c = await self.inner.complete(messages, **opts)
        r = Request.of(opts)
        record = {
            "stage": r.stage,
            "request": canonical_request(
                self.model, messages, r.temperature, r.max_tokens, r.sample, r.schema
            ),
            "response": {"text": c.text, "model": c.model},
            "usage": {
                "prompt_tokens": c.usage.prompt_tokens,
                "completion_tokens": c.usage.completion_tokens,
                "estimated": c.usage.estimated,
            },
            "cached": c.cached,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            f.flush()
        return c


def _load(path: Path) -> tuple[dict[str, deque[Completion]], str]:
    answers: dict[str, deque[Completion]] = {}
    model = ""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise TranscriptError(f"cannot read transcript {path}: {e}") from e
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec: dict[str, Any] = json.loads(line)
            req = rec["request"]
            key = request_key(
                canonical_request(
                    req["model"],
                    req["messages"],
                    req["temperature"],
                    req["max_tokens"],
                    req["sample"],
                    req.get("schema"),
                )
            )
            u = rec.get("usage") or {}
            c = Completion(
                rec["response"]["text"],
                Usage(
                    int(u.get("prompt_tokens", 0)),
                    int(u.get("completion_tokens", 0)),
                    bool(u.get("estimated", False)),
                ),
                model=rec["response"].get("model") or req["model"],
            )
        except (ValueError, KeyError, TypeError) as e:
            raise TranscriptError(f"{path}:{n}: not a transcript record ({e!r})") from None
        answers.setdefault(key, deque()).append(c)
        model = model or req["model"]
    return answers, model


class ReplayLLM:
    """`ChatLLM` that answers only from a recorded transcript; never touches the network.

    `model` defaults to the model of the first record, so requests built by the same stack
    configuration match the recorded ones exactly.
    """

    def __init__(self, path: Path, model: str | None = None):
        self.path = Path(path)
        self._answers, first_model = _load(self.path)
        self.model = model or first_model or "replay"

    def remaining(self) -> int:
        return sum(len(q) for q in self._answers.values())

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        r = Request.of(opts)
        req = canonical_request(
            self.model, messages, r.temperature, r.max_tokens, r.sample, r.schema
        )
        queue = self._answers.get(request_key(req))
        if not queue and r.schema is not None:  # recorded before the stage sent a schema
            del req["schema"]
            queue = self._answers.get(request_key(req))
        if not queue:
            last = messages[-1]["content"] if messages else ""
            raise TranscriptMismatch(
                f"{self.path}: no recorded answer for stage '{r.stage}' "
                f"(model {self.model}, temperature {r.temperature}, sample {r.sample}, "
                f"last message {last[:80]!r})",
                stage=r.stage,
            )
        return queue.popleft()

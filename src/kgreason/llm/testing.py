"""TEST-ONLY: a scripted chat LLM for tests and benchmarks (never used by the product).

Like DSPy's DummyLM: replies are scripted per stage, as a list consumed in order or as a
function of the prompt. An unscripted call fails loudly with `UnscriptedCall`, so a test
cannot pass by accident on an empty reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Unpack

from kgreason.llm.base import (
    CallOptions,
    Completion,
    JsonSchema,
    LLMError,
    Message,
    Request,
    Usage,
)

Responder = Callable[[list[Message]], str]


class UnscriptedCall(LLMError):
    """A stage asked the scripted LLM for a reply the test did not provide."""


@dataclass
class RecordedCall:
    stage: str
    messages: list[Message]
    temperature: float
    max_tokens: int | None
    sample: int
    reply: str
    #: the reply schema the stage sent (None: plain prompting)
    schema: JsonSchema | None = None


def _count(text: str) -> int:
    # Cheap deterministic count for scripted usage; real adapters use the API or tiktoken.
    return max(1, len(text.split()))


@dataclass
class ScriptedLLM:
    """`script` maps a stage name to a list of replies (consumed in order) or a function of
    the messages. A "*" entry answers any stage without its own entry."""

    script: Mapping[str, Sequence[str] | Responder]
    model: str = "scripted"
    calls: list[RecordedCall] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A bare string is a Sequence too: it would be served one character per call.
        for stage, entry in self.script.items():
            if isinstance(entry, str):
                raise TypeError(f"script for stage '{stage}' must be a list of replies, not a str")

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        r = Request.of(opts)
        stage = r.stage
        entry = self.script.get(stage, self.script.get("*"))
        if entry is None:
            raise UnscriptedCall(f"no scripted reply for stage '{stage}'")
        if callable(entry):
            reply = entry(messages)
        else:
            i = self._cursor.get(stage, 0)
            if i >= len(entry):
                raise UnscriptedCall(
                    f"stage '{stage}' called {i + 1} times but only {len(entry)} replies scripted"
                )
            self._cursor[stage] = i + 1
            reply = entry[i]
        self.calls.append(
            RecordedCall(
                stage, list(messages), r.temperature, r.max_tokens, r.sample, reply, r.schema
            )
        )
        prompt = "\n".join(m["content"] for m in messages)
        return Completion(reply, Usage(_count(prompt), _count(reply)), model=self.model)

    def stages_called(self) -> list[str]:
        return [c.stage for c in self.calls]

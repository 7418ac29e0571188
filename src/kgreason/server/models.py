"""Request bodies of the server's operations (HTTP and MCP share them).

They are strict (`extra="forbid"`): an option the server does not know is a 422 naming it,
never silently ignored. Sizes are bounded so one request cannot ask for unbounded work;
the HTTP layer also caps the raw body size before any of this is parsed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: longest question or option text accepted (characters)
MAX_QUESTION = 2_000
#: longest context or program text accepted (characters)
MAX_TEXT = 200_000


class AskRequest(BaseModel):
    """`kgreason ask` as a request: the question and the CLI's per-question options."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION,
        description="The question; [brackets] mark topic entities, as on the CLI.",
    )
    topics: list[str] | None = Field(
        default=None,
        max_length=20,
        description="Topic entity ids or names (skips extraction), like --topic.",
    )
    llm_free: bool | None = Field(
        default=None,
        description="true: LLM-free mode (candidates, not PoG's answer); null: the server's "
        "default (PoG when an LLM is configured).",
    )
    strategy: str | None = Field(
        default=None, description="Path pruning strategy, like --strategy."
    )
    variant: Literal["pog", "pog-e"] | None = Field(default=None, description="Like --variant.")

    @model_validator(mode="after")
    def _not_blank(self) -> AskRequest:
        if not self.question.strip():
            raise ValueError("the question is empty")
        if self.topics is not None and any(not t.strip() for t in self.topics):
            raise ValueError("a topic is empty")
        return self


class SolveRequest(BaseModel):
    """SymbolLKG on a text (`context`, `question`, `options`), or an existing solver program
    run with no LLM (`program`, with `solver` naming its format when detection is not
    wanted)."""

    model_config = ConfigDict(extra="forbid")

    context: str | None = Field(default=None, max_length=MAX_TEXT)
    question: str | None = Field(default=None, max_length=MAX_QUESTION)
    options: list[str] | None = Field(default=None, max_length=26)
    program: str | None = Field(default=None, max_length=MAX_TEXT)
    solver: str | None = Field(
        default=None, max_length=40, description="Program format / route (default: detected)."
    )
    dataset: str | None = Field(
        default=None, max_length=40, description="Logic-LM dataset name, for answer letters."
    )

    @model_validator(mode="after")
    def _one_mode(self) -> SolveRequest:
        if (self.context is None) == (self.program is None):
            raise ValueError("give exactly one of 'context' (with 'question') or 'program'")
        if self.context is not None and not (self.question or "").strip():
            raise ValueError("'context' needs a 'question'")
        if self.program is not None and not self.program.strip():
            raise ValueError("the program is empty")
        return self

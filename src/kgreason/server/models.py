"""Request bodies of the server's operations (HTTP and MCP share them).

They are strict (`extra="forbid"`): an option the server does not know is a 422 naming it,
never silently ignored. Every string and list has a cap (the same as MCP's tools), so one
request cannot ask for unbounded work and no error echoes a huge value; the HTTP layer also
caps the raw body size before any of this is parsed. `ExplainRequest` is the exception to
`forbid`: its body is a whole `/v1/ask` result, of which only the cited triples are read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

RequestErrors = Sequence[dict[str, Any]]

#: longest question or option text accepted (characters)
MAX_QUESTION = 2_000
#: longest context or program text accepted (characters)
MAX_TEXT = 200_000
#: longest entity id, name or relation accepted (characters)
MAX_ID = 1_000
#: longest option name accepted: strategy, solver, dataset (characters)
MAX_NAME = 40
#: paths, hops per path and triples per hop that /v1/explain reads
MAX_PATHS, MAX_HOPS, MAX_HOP_TRIPLES = 1_000, 16, 10_000


def _short(v: object, n: int) -> str:
    s = str(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def brief(e: ValidationError | RequestErrors) -> str:
    """A validation error in one bounded line: where and what, never the value itself (a
    key of an unknown field is named, cut to a few dozen characters)."""
    errors = e.errors() if isinstance(e, ValidationError) else e
    parts = []
    for err in list(errors)[:5]:
        where = ".".join(_short(x, 40) for x in err.get("loc", ()) if x != "body")
        parts.append(f"{where or 'body'}: {_short(err.get('msg', 'invalid'), 200)}")
    return "; ".join(parts) or "invalid request"


Id = Annotated[str, Field(max_length=MAX_ID, strict=True)]
Text = Annotated[str, Field(max_length=MAX_QUESTION)]


class AskRequest(BaseModel):
    """`kgreason ask` as a request: the question and the CLI's per-question options."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION,
        description="The question; [brackets] mark topic entities, as on the CLI.",
    )
    topics: list[Id] | None = Field(
        default=None,
        max_length=20,
        description="Topic entity ids or names (skips extraction), like --topic.",
    )
    llm_free: bool | None = Field(
        default=None,
        description="true: LLM-free mode (no LLM: a path ranker's answer or candidates, "
        "never PoG's answer; the reply's label says which); null: the server's "
        "default (PoG when an LLM is configured).",
    )
    strategy: str | None = Field(
        default=None, max_length=MAX_NAME, description="Path pruning strategy, like --strategy."
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
    options: list[Text] | None = Field(default=None, max_length=26)
    program: str | None = Field(default=None, max_length=MAX_TEXT)
    solver: str | None = Field(
        default=None, max_length=MAX_NAME, description="Program format / route (default: detected)."
    )
    dataset: str | None = Field(
        default=None, max_length=MAX_NAME, description="Logic-LM dataset name, for answer letters."
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


class _Read(BaseModel):
    """Part of a result: the fields read are typed, the others ignored."""

    model_config = ConfigDict(extra="ignore")


class TripleIn(_Read):
    head: Id
    relation: Id
    tail: Id


class HopIn(_Read):
    triples: list[TripleIn] = Field(default_factory=list, max_length=MAX_HOP_TRIPLES)


class PathIn(_Read):
    hops: list[HopIn] = Field(default_factory=list, max_length=MAX_HOPS)


class AnswerIn(_Read):
    id: Id
    name: Id


class ExplainRequest(_Read):
    """A `/v1/ask` result, as /v1/explain reads it: the triples its paths cite."""

    paths: list[PathIn] = Field(default_factory=list, max_length=MAX_PATHS)
    answers: list[AnswerIn] = Field(default_factory=list, max_length=MAX_PATHS)

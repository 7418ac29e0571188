"""`kgreason mcp`: the service's operations as MCP tools, over stdio (the official SDK's
`MCPServer`).

Tools: `ask`, `solve`, `kg_search`, `kg_neighbors`, `explain_answer`. Arguments and results
are typed (pydantic), so clients see input and output JSON schemas; results come back as
structured content. Every failure a caller can cause or meet (an unknown entity, bad input,
a solver failure, an LLM error, a deadline) is a tool error (`isError`) naming the problem;
the server keeps serving. Only the protocol goes to stdout; logging goes to stderr.

This module uses only the public API and `server/service.py`: the pipelines know nothing of it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from kgreason.server.mcp_models import (
    AskOutput,
    ExplainOutput,
    NeighboursOutput,
    SearchOutput,
    SolveOutput,
    ask_output,
    explain_output,
    solve_output,
)
from kgreason.server.models import (
    MAX_ID,
    MAX_NAME,
    MAX_QUESTION,
    MAX_TEXT,
    AskRequest,
    SolveRequest,
)
from kgreason.tracing import StageEvent

if TYPE_CHECKING:
    from kgreason.server.service import Service

log = logging.getLogger(__name__)

#: results kept for explain_answer (oldest dropped first)
RESULTS_KEPT = 64
MAX_QUERY = 500

INSTRUCTIONS = """\
kgreason answers questions over a knowledge graph with Paths-over-Graph (PoG) and solves
logic problems with symbolic solvers (SymbolLKG). Use `kg_search` to find entity ids,
`kg_neighbors` to look around an entity, `ask` for a question (mark topic entities with
[brackets] or pass `topics`), and `explain_answer` with the `result_id` that `ask` returned
to see each cited triple checked against the KG. In LLM-free mode (`llm_free: true` in the
result) no LLM reasons: `label` says what ranked the paths (a learned path ranker's answer, or
candidates ranked by similarity to the question), never PoG's answer."""

Question = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUESTION,
        description="The question in natural language; [brackets] mark topic entities.",
    ),
]
Topics = Annotated[
    list[Annotated[str, Field(max_length=MAX_ID)]] | None,
    Field(max_length=20, description="Topic entity ids or names; skips entity extraction."),
]


class ResultCache:
    """The last `capacity` ask results by id, for explain_answer. Per server, not global."""

    def __init__(self, capacity: int = RESULTS_KEPT) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def put(self, result: dict[str, Any]) -> str:
        rid = uuid.uuid4().hex[:16]
        self._items[rid] = result
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
        return rid

    def get(self, rid: str) -> dict[str, Any]:
        try:
            return self._items[rid]
        except KeyError:
            raise ToolError(
                f"unknown result_id {rid!r}: it was never returned by `ask` on this server, or "
                f"it is older than the last {self.capacity} results; ask again"
            ) from None


def _one_line(text: object) -> str:
    return " ".join(str(text).split()) or "(no message)"


def _kinded(kind: str, message: object) -> str:
    """`kind: message`, once: solver messages often start with their kind already."""
    text = _one_line(message)
    return text if text.startswith(f"{kind}:") else f"{kind}: {text}"


def _validation_message(e: ValidationError) -> str:
    """Field and reason only: the rejected values may be huge (a 10 MB question)."""
    parts = []
    for err in e.errors():
        where = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)


@contextmanager
def tool_errors(tool: str) -> Iterator[None]:
    """Turn whatever a tool meets into one ToolError naming it; the server goes on."""
    from kgreason.server.service import ServiceError

    try:
        yield
    except ToolError:
        raise
    except ServiceError as e:
        raise ToolError(_kinded(e.kind, e.message)) from e
    except ValidationError as e:
        raise ToolError(f"bad input: {_validation_message(e)}") from e
    except Exception as e:  # a crash still answers the caller, with the log for the detail
        kind = getattr(e, "error_kind", None) or type(e).__name__
        log.exception("tool %s failed", tool)
        raise ToolError(_kinded(kind, e)) from e


def _raise_if_failed(result: dict[str, Any]) -> None:
    if result.get("ok", result.get("error_kind") is None):
        return
    kind = result.get("error_kind") or "error"
    raise ToolError(_kinded(kind, result.get("error") or "the question failed"))


class StageProgress:
    """Each finished pipeline stage as an MCP progress notification (`pog.fuzzy: 12 ms`),
    which the SDK sends only when the client asked for progress. Stage callbacks are plain
    calls, possibly from a worker thread, so the sends are scheduled on the loop and awaited
    in `flush` before the tool returns."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.done = 0
        self.pending: list[concurrent.futures.Future[None]] = []

    def __call__(self, ev: StageEvent) -> None:
        if ev.kind != "end":
            return
        self.done += 1
        sizes = ", ".join(f"{k}={v}" for k, v in ev.sizes.items())
        message = f"{ev.pipeline}.{ev.stage}: {ev.elapsed_s * 1000:.0f} ms" + (
            f" ({sizes})" if sizes else ""
        )
        send = self.ctx.report_progress(self.done, None, message)
        self.pending.append(asyncio.run_coroutine_threadsafe(send, self.loop))

    async def flush(self) -> None:
        pending, self.pending = self.pending, []
        for fut in pending:
            try:
                await asyncio.wrap_future(fut)
            except Exception:  # a progress note that cannot be sent does not fail the call
                log.debug("progress notification not sent", exc_info=True)


def build_server(service: Service, *, results: ResultCache | None = None) -> MCPServer:
    """An MCPServer whose tools call `service`; the caller runs and closes both."""
    from kgreason import __version__

    cache = results if results is not None else ResultCache()
    mcp: MCPServer = MCPServer(
        "kgreason", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    async def run_ask(
        question: str, progress: StageProgress | None = None, **options: Any
    ) -> dict[str, Any]:
        if not question.strip():
            raise ToolError("bad input: the question is empty")
        try:
            result = await service.ask(AskRequest(question=question, **options), progress)
        finally:
            if progress is not None:
                await progress.flush()
        _raise_if_failed(result)
        return result

    async def ask(
        question: Question,
        topics: Topics = None,
        llm_free: Annotated[
            bool | None,
            Field(description="true: LLM-free mode; null: the server's default."),
        ] = None,
        strategy: Annotated[
            str | None, Field(max_length=MAX_NAME, description="Path pruning strategy (PoG).")
        ] = None,
        variant: Annotated[
            Literal["pog", "pog-e"] | None, Field(description="PoG variant (with an LLM).")
        ] = None,
        max_paths: Annotated[
            int, Field(ge=1, le=50, description="Reasoning paths returned (the best first).")
        ] = 5,
        ctx: Context | None = None,
    ) -> AskOutput:
        """Answer a question over the knowledge graph with Paths-over-Graph. Returns the
        answers, the linked topic entities and the reasoning paths (each hop's KG triples).
        In LLM-free mode the answers are ranked retrieval candidates, labelled as such."""
        with tool_errors("ask"):
            progress = StageProgress(ctx) if ctx is not None else None
            result = await run_ask(
                question,
                progress,
                topics=topics,
                llm_free=llm_free,
                strategy=strategy,
                variant=variant,
            )
            return ask_output(result, cache.put(result), max_paths)

    async def solve(
        context: Annotated[
            str | None, Field(max_length=MAX_TEXT, description="The premises, as text.")
        ] = None,
        question: Annotated[
            str | None, Field(max_length=MAX_QUESTION, description="The statement to decide.")
        ] = None,
        options: Annotated[
            list[Annotated[str, Field(max_length=MAX_QUESTION)]] | None,
            Field(max_length=26, description="Answer options, e.g. ['A) True', 'B) False']."),
        ] = None,
        program: Annotated[
            str | None,
            Field(max_length=MAX_TEXT, description="A solver program to run (no LLM needed)."),
        ] = None,
        solver: Annotated[
            str | None,
            Field(max_length=MAX_NAME, description="The program's solver (default: detected)."),
        ] = None,
    ) -> SolveOutput:
        """Logical reasoning with a symbolic solver (SymbolLKG): give `context` and `question`
        (and `options`), which needs an LLM to write the program, or give a `program` to run
        as is. Returns the solver's verdict with its proof or model."""
        with tool_errors("solve"):
            req = SolveRequest(
                context=context, question=question, options=options, program=program, solver=solver
            )
            result = await service.solve(req)
            if result.get("status") != "unsolved":  # no verdict is an outcome: see attempts
                _raise_if_failed(result)
            return solve_output(result)

    async def kg_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY)],
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
    ) -> SearchOutput:
        """Find knowledge-graph entities whose names match `query`: exact, normalised, names
        starting with it (a partial name), then fuzzy."""
        with tool_errors("kg_search"):
            if not query.strip():
                raise ToolError("bad input: the query is empty")
            return SearchOutput.model_validate({"items": await service.asearch(query, limit)})

    async def kg_neighbors(
        entity_id: Annotated[str, Field(min_length=1, max_length=MAX_ID)],
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> NeighboursOutput:
        """An entity's name and its neighbours (relation, direction, entity), paged."""
        with tool_errors("kg_neighbors"):
            page = await service.aentity(entity_id, offset=offset, limit=limit)
            return NeighboursOutput.model_validate(page)

    async def explain_answer(
        result_id: Annotated[
            str | None, Field(max_length=64, description="The result_id an `ask` call returned.")
        ] = None,
        question: Annotated[
            str | None,
            Field(max_length=MAX_QUESTION, description="Or a question to ask afresh."),
        ] = None,
        topics: Topics = None,
        limit: Annotated[
            int, Field(ge=1, le=5000, description="Triples returned (answer triples first).")
        ] = 200,
    ) -> ExplainOutput:
        """The triples an answer cites (its reasoning paths), each checked against the KG
        now. Triples that touch an answer come first; the counts cover all of them."""
        with tool_errors("explain_answer"):
            if (result_id is None) == (question is None):
                raise ToolError("bad input: give exactly one of result_id or question")
            if result_id is not None:
                rid, result = result_id, cache.get(result_id)
            else:
                result = await run_ask(question or "", topics=topics)
                rid = cache.put(result)
            return explain_output(rid, result, await service.aexplain(result), limit)

    # Reads only; `solve` runs solvers in their sandbox. Docstrings are the descriptions
    # the client's model reads, so they are dedented.
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    for fn in (ask, solve, kg_search, kg_neighbors, explain_answer):
        mcp.add_tool(
            fn,
            name=fn.__name__,
            description=inspect.getdoc(fn),
            annotations=read_only,
            structured_output=True,
        )
    return mcp

"""Program generation and the self-refining loop (paper section 3.4, prompt A.2 adapted).

The paper has the model write Python that calls Z3; kgreason asks for declarative programs
instead (SMT-LIB 2, first-order logic, Horn rules) that the engines parse themselves, run
in a sandboxed subprocess. A failed run (syntax error, solver error, resource limit) goes
back to the model with the failing program and the engine's message, up to `max_repairs`
times, as the paper feeds back "any error messages during execution" (section 3.4); every
attempt is recorded. A run that executed but gave no usable answer (no unique option,
inconsistent premises, an unusable verdict) raised no error: it is repaired only with
`repair_unusable` (ours, `lkg.repair_unusable`). Repairs pass `sample=<attempt>` so
a response cache never replays an earlier draw.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from string import Template

from pydantic import BaseModel, Field

from kgreason.lkg.execute import ProgramExecutor
from kgreason.lkg.prompts import load_prompt
from kgreason.lkg.retrieval import RetrievedSubgraph
from kgreason.lkg.solvers.base import ProgramFormatError, SolverResult, SolverUnavailable
from kgreason.llm.base import ChatLLM, Message
from kgreason.llm.parse import drop_thinking

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)```", re.S)
#: Failures of the machine, not of the program: a repair cannot fix them, so they are
#: never sent to the LLM (a wall-clock timeout is the host's load or a stall; a CPU-bound
#: program hits the CPU limit first).
INFRASTRUCTURE = frozenset({"unavailable", "wall_clock"})


class Attempt(BaseModel):
    """One program the model wrote and what the solver made of it."""

    index: int
    stage: str  # "codegen" or "repair"
    route: str
    program: str
    status: str
    error_kind: str | None = None
    error: str | None = None
    answer: str | None = None
    time_s: float = 0.0


class CodegenOutcome(BaseModel):
    attempts: list[Attempt] = Field(default_factory=list)
    #: the last solver result, as a plain dict (proof, model, values, details...)
    solver: dict | None = None
    answer: str | None = None
    program: str | None = None

    @property
    def ok(self) -> bool:
        return self.answer is not None


def extract_program(reply: str) -> str:
    """The program in a reply: the first fenced block, else the whole reply if it looks
    like a program (starts with '(', ';', a section header, or the z3 import of the
    paper's Python, A.2); '' if there is none."""
    reply = drop_thinking(reply)  # a draft program inside <think> is not the program
    m = _FENCE.search(reply)
    if m:
        return m.group(2).strip()
    text = reply.strip()
    if text.startswith(
        ("(", ";", "Predicates:", "Premises:", "formulas(", "Facts:", "from z3 import", "import z3")
    ):
        return text
    return ""


def logfile(sub: RetrievedSubgraph) -> str:
    """The retrieved subgraph as the LOGFILE of prompt A.2: rules, constraints, facts and
    entities, one line each."""
    names = {n.id: n.name for n in sub.nodes}
    lines: list[str] = []
    for n in sub.of_kind("rule"):
        lines.append(f"[Rule] {n.raw_text or n.description} | expression: {n.expression}")
    for n in sub.of_kind("constraint"):
        spec = "".join(f" | {k}: {v}" for k, v in n.spec().items())  # Table 1 fields
        lines.append(
            f"[Constraint:{n.type}] {n.raw_text or n.description} | expression: {n.expression}"
            + spec
        )
    for e in sub.edges:
        if e.src in names and e.dst in names and e.rel not in ("MENTIONS", "APPLIES_TO"):
            fact = f"{names[e.src]} {e.rel} {names[e.dst]}"
            lines.append(f"[Fact] {fact}" + (f" | {e.raw_text}" if e.raw_text else ""))
    ents = [f"{n.name} ({n.type})" for n in sub.of_kind("entity", "concept")]
    if ents:
        lines.append("[Entities] " + "; ".join(ents))
    return "\n".join(lines) or "(nothing retrieved)"


def unusable(res: SolverResult) -> bool:
    """The program ran but its answer cannot be used (no error was raised)."""
    return (res.ok and res.answer is None) or bool(res.details.get("unusable"))


def _attempt(i: int, stage: str, route: str, program: str, res: SolverResult) -> Attempt:
    return Attempt(
        index=i, stage=stage, route=route, program=program, status=res.status,
        error_kind=res.error_kind, error=res.error, answer=res.answer, time_s=res.time_s,
    )  # fmt: skip


class ProgramGenerator:
    def __init__(
        self,
        llm: ChatLLM,
        executor: ProgramExecutor,
        *,
        max_repairs: int = 3,
        temperature: float = 0.0,
        max_tokens: int | None = 2048,
        repair_unusable: bool = False,
    ):
        self.llm, self.executor, self.max_repairs = llm, executor, max_repairs
        self.temperature, self.max_tokens = temperature, max_tokens
        self.repair_unusable = repair_unusable

    async def _ask(self, messages: list[Message], stage: str, sample: int) -> str:
        c = await self.llm.complete(
            messages, stage=stage, temperature=self.temperature,
            max_tokens=self.max_tokens, sample=sample,
        )  # fmt: skip
        return c.text

    async def _run(
        self, route: str, program: str, question: str, options: Sequence[str] | None
    ) -> SolverResult:
        """Run one attempt; any exception becomes this attempt's named status, so one bad
        program (or a bug it triggers) never ends the question."""
        try:
            return await asyncio.to_thread(self.executor.run, route, program, question, options)
        except SolverUnavailable as e:  # no repair can fix a missing engine
            return SolverResult(route, "unavailable", error_kind="unavailable", error=str(e))
        except ProgramFormatError as e:
            return SolverResult(route, "parse_error", error_kind="parse_error", error=str(e))
        except RecursionError:
            return SolverResult(
                route, "parse_error", error_kind="parse_error",
                error="parse_error: the program is nested too deeply to read",
            )  # fmt: skip
        except Exception as e:
            return SolverResult(
                route, "crash", error_kind="internal_error",
                error=f"internal_error: {type(e).__name__}: {e}"[:500],
            )  # fmt: skip

    async def generate(
        self,
        route: str,
        question: str,
        options: Sequence[str] | None,
        sub: RetrievedSubgraph,
        context: str = "",
    ) -> CodegenOutcome:
        solver = self.executor.solvers.get(route)  # its prompt and the name repairs use
        # safe_substitute: rule programs in the templates use `$x` variables of their own
        prompt = Template(solver.codegen_prompt()).safe_substitute(
            question=question,
            options=json.dumps(list(options or []), ensure_ascii=False),
            logfile=logfile(sub),
            context=context or "(not given: use the logfile)",
        )
        messages: list[Message] = [{"role": "user", "content": prompt}]
        out = CodegenOutcome()
        reply = await self._ask(messages, "codegen", 0)
        for i in range(self.max_repairs + 1):
            stage = "codegen" if i == 0 else "repair"
            program = extract_program(reply)
            if not program:
                res = SolverResult(
                    route, "parse_error", error_kind="parse_error",
                    error="the reply contains no program (expected one fenced code block)",
                )  # fmt: skip
            else:
                res = await self._run(route, program, question, options)
            out.attempts.append(_attempt(i, stage, route, program, res))
            out.solver = asdict(res)
            if res.ok and res.answer is not None:
                out.answer, out.program = res.answer, program
                return out
            if i == self.max_repairs or res.error_kind in INFRASTRUCTURE:
                break
            if unusable(res) and not self.repair_unusable:
                break  # it ran without an error: the paper has no message to feed back
            if res.ok:  # ran, but gave no answer the question can use
                res.error = res.error or f"the solver answered {res.verdict!r}, not a usable answer"
            fix = load_prompt(
                "repair",
                solver=solver.label,
                kind=str(res.error_kind or res.status),
                error=str(res.error),
                program=program or reply.strip()[:2000],
            )
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": fix},
            ]
            reply = await self._ask(messages, "repair", i + 1)
        out.program = out.attempts[-1].program if out.attempts else None
        return out

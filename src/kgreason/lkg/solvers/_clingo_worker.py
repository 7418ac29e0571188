"""Sandboxed clingo worker: ground and solve one ASP file, print one JSON line.

Runs as `python -I <path>/_clingo_worker.py FILE MAX_MODELS` inside the
sandbox (the clingo PyPI package ships no CLI binary). The ASP text was either generated
by horn_asp from parsed rules or screened for directives by horn.run_asp."""

from __future__ import annotations

import json
import sys


def _term(sym: object) -> object:
    import clingo

    assert isinstance(sym, clingo.Symbol)
    if sym.type == clingo.SymbolType.String:
        return sym.string
    if sym.type == clingo.SymbolType.Number:
        return sym.number
    if sym.type == clingo.SymbolType.Function and not sym.name:
        return [_term(a) for a in sym.arguments]
    return str(sym)


def main(argv: list[str]) -> int:
    import clingo

    messages: list[str] = []

    def logger(code: object, message: str) -> None:
        messages.append(message.strip())

    max_models = int(argv[2]) if len(argv) > 2 else 1
    with open(argv[1], encoding="utf-8") as fh:
        text = fh.read()
    ctl = clingo.Control([f"--models={max_models}", "--warn=none"], logger=logger)
    try:
        ctl.add("base", [], text)
        ctl.ground([("base", [])])
    except RuntimeError as exc:
        print(json.dumps({"error": "parse_error", "messages": messages or [str(exc)]}))
        return 3
    except MemoryError:
        print(json.dumps({"error": "memory", "messages": ["MemoryError while grounding"]}))
        return 4
    models: list[dict[str, object]] = []

    def on_model(m: clingo.Model) -> None:
        syms = m.symbols(shown=True)
        models.append(
            {
                "structured": [[s.name, [_term(a) for a in s.arguments]] for s in syms],
                "text": [str(s) for s in syms],
            }
        )

    try:
        res = ctl.solve(on_model=on_model)
    except MemoryError:
        print(json.dumps({"error": "memory", "messages": ["MemoryError while solving"]}))
        return 4
    status = "sat" if res.satisfiable else "unsat" if res.unsatisfiable else "unknown"
    print(json.dumps({"status": status, "models": models, "messages": messages}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

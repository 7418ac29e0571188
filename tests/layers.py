"""The layer contracts of src/kgreason, read from the imports (an AST walk, no import runs).

    python -m tests.layers        # prints the layers, every violation and every cycle

Layers, top to bottom (a module may import its own layer's package and anything below):

    cli      kgreason.cli, kgreason.__main__
    server   kgreason.server
    eval     kgreason.eval
    api      kgreason (the package), kgreason.heap: what the public API assembles
    tog      kgreason.tog (a baseline built on PoG's shared stages)
    pipelines  kgreason.pog | kgreason.lkg (independent of each other)
    sources  kgreason.kg | kgreason.llm | kgreason.embed (independent of each other)
    settings kgreason.config and every `kgreason.*.settings` module: typed data, no registry
    base     every other top-level module (aio, tracing, jit, ...)

Rules checked (tests/test_layers.py):
- no import runs from a lower layer to a higher one, nor between independent siblings;
- no stage module of PoG imports the array package (`kgreason.pog.arrays`), not even for
  types: only `kgreason.pog.graph`, the one fork, does;
- no import cycle crosses a package boundary, and there are at most MAX_CYCLES in all.
Imports under `if TYPE_CHECKING:` never run, so they count for the array rule only.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
LAYERS = ("cli", "server", "eval", "api", "tog", "pipelines", "sources", "settings", "base")
#: packages of one layer that must not import each other
SIBLINGS = {"pipelines": ("pog", "lkg"), "sources": ("kg", "llm", "embed")}
#: none is left (the last, ranker.align <-> order <-> zeroshot, went with ranker/words.py);
#: a new one fails the check
MAX_CYCLES = 0
#: the one module of PoG that may import the array package
FORK = "kgreason.pog.graph"


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int
    type_only: bool


def modules(src: Path = SRC) -> dict[str, Path]:
    out = {}
    for p in (src / "kgreason").rglob("*.py"):
        name = ".".join(p.relative_to(src).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def _target(mods: dict[str, Path], name: str) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def edges(mods: dict[str, Path] | None = None) -> list[Edge]:
    mods = mods or modules()
    out = []
    for m, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typed = _type_checking_lines(tree)
        pkg = m if path.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                names = [f"{base}.{a.name}" for a in node.names]
            for n in names:
                t = _target(mods, n) if n.startswith("kgreason") else None
                if t and t != m:
                    out.append(Edge(m, t, node.lineno, node.lineno in typed))
    return out


def layer(module: str) -> tuple[str, str]:
    """(layer, package) of a module."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top == "config" or (len(parts) > 2 and parts[-1] == "settings"):
        return "settings", "settings"
    if top in ("cli", "__main__"):
        return "cli", top
    if top in ("server", "eval", "tog"):
        return top, top
    if top in ("", "heap"):
        return "api", "api"
    if top in ("pog", "lkg"):
        return "pipelines", top
    if top in ("kg", "llm", "embed"):
        return "sources", top
    return "base", "base"


def violations(es: list[Edge]) -> list[str]:
    out: list[str] = []
    rank = {name: i for i, name in enumerate(LAYERS)}
    for e in es:
        (la, pa), (lb, pb) = layer(e.src), layer(e.dst)
        stage = e.src.startswith("kgreason.pog.") and not e.src.startswith("kgreason.pog.arrays")
        if stage and e.dst.startswith("kgreason.pog.arrays") and e.src != FORK:
            out.append(f"{e.src}:{e.line} -> {e.dst}: a stage imports the array package")
        if e.type_only:
            continue
        if rank[la] > rank[lb]:
            out.append(f"{e.src}:{e.line} -> {e.dst}: {la} imports {lb}, a higher layer")
        elif la == lb and pa != pb and la in SIBLINGS:
            out.append(f"{e.src}:{e.line} -> {e.dst}: {pa} and {pb} are independent")
    return list(dict.fromkeys(out))


def cycles(es: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (runtime imports)."""
    graph: dict[str, set[str]] = {}
    for e in es:
        if not e.type_only:
            graph.setdefault(e.src, set()).add(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm (module graphs are shallow)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package(module: str) -> str:
    """The package a module belongs to (kgreason.pog.arrays.x -> kgreason.pog.arrays)."""
    mods = modules()
    path = mods[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def report() -> str:
    es = edges()
    bad = violations(es)
    cyc = cycles(es)
    lines = [
        f"{len(modules())} modules, {len(es)} imports ({sum(e.type_only for e in es)} type-only)"
    ]
    lines.append(f"layer violations: {len(bad)}")
    lines += [f"  {v}" for v in bad]
    lines.append(f"import cycles: {len(cyc)} (at most {MAX_CYCLES})")
    for c in cyc:
        crossing = len({package(m) for m in c}) > 1
        lines.append(f"  {'CROSSES PACKAGES ' if crossing else ''}{' <-> '.join(c)}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())

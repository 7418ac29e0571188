"""Small SVG drawings for the self-contained HTML report (no JavaScript, no network)."""

from __future__ import annotations

from collections import defaultdict
from html import escape


def bar_chart(data: dict[str, float], *, title: str, width: int = 420, bar_h: int = 20) -> str:
    if not data:
        return f'<p class="empty">{escape(title)}: nothing to show</p>'
    longest = max(len(str(k)) for k in data)
    label_w = min(300, 20 + 7 * longest)
    width = max(width, label_w + 160)
    top = 28
    peak = max(data.values()) or 1
    h = top + bar_h * len(data) + 10
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" role="img" aria-label="{escape(title)}">',
        f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(data.items()):
        y = top + i * bar_h
        w = (width - label_w - 60) * value / peak
        parts.append(f'<text x="0" y="{y + 14}">{escape(str(label))[:40]}</text>')
        parts.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{bar_h - 6}" fill="#4a78b5"/>'
        )
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}">{value:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


Edge = tuple[str, str, str]
COL_W, ROW_H, BOX_W = 290, 64, 170


def path_graph(
    paths: list[list[list[str]]],
    names: dict[str, str],
    *,
    topics: list[str],
    max_paths: int = 3,
    max_per_column: int = 8,
) -> str:
    """Reasoning paths as a left-to-right graph: columns by hop distance from the topics.

    Clustered hops can stand for hundreds of triples, so only the first `max_paths` paths are
    drawn and each column keeps its first `max_per_column` entities; what is left out is said."""
    drawn = paths[:max_paths]
    edges: set[Edge] = {(t[0], t[1], t[2]) for p in drawn for t in p if len(t) == 3}
    if not edges:
        return '<p class="empty">no reasoning paths for this question</p>'
    cols, hidden = _columns(edges, topics, drawn, max_per_column)
    shown = {n for ns in cols.values() for n in ns}
    edges = {e for e in edges if e[0] in shown and e[2] in shown}
    note = (
        f"<p class='note'>first {min(len(paths), max_paths)} of {len(paths)} paths; "
        f"{hidden} further entities not drawn</p>"
        if hidden or len(paths) > max_paths
        else ""
    )
    return _draw(cols, edges, names, set(topics)) + note


def _depths(edges: set[Edge], topics: list[str]) -> dict[str, int]:
    """Hop distance of every drawn entity from the nearest topic (breadth-first)."""
    adj: dict[str, set[str]] = defaultdict(set)
    for head, _, tail in edges:
        adj[head].add(tail)
        adj[tail].add(head)
    starts = [t for t in topics if t in adj] or [next(iter(sorted(adj)))]
    depth = {s: 0 for s in starts}
    frontier = list(starts)
    while frontier:
        nxt = []
        for n in frontier:
            for m in sorted(adj[n]):
                if m not in depth:
                    depth[m] = depth[n] + 1
                    nxt.append(m)
        frontier = nxt
    for n in adj:
        depth.setdefault(n, 0)
    return depth


def _columns(
    edges: set[Edge], topics: list[str], drawn: list[list[list[str]]], max_per_column: int
) -> tuple[dict[int, list[str]], int]:
    """(entities per column in path order, how many did not fit)."""
    depth = _depths(edges, topics)
    first_seen: dict[str, int] = {}
    for p in drawn:
        for triple in p:
            for x in (triple[0], triple[2]):
                first_seen.setdefault(x, len(first_seen))
    cols: dict[int, list[str]] = defaultdict(list)
    hidden = 0
    for n in sorted(depth, key=lambda x: (depth[x], first_seen.get(x, 0))):
        if len(cols[depth[n]]) < max_per_column:
            cols[depth[n]].append(n)
        else:
            hidden += 1
    return cols, hidden


def _draw(
    cols: dict[int, list[str]], edges: set[Edge], names: dict[str, str], topics: set[str]
) -> str:
    pos = {n: (20 + d * COL_W, 40 + i * ROW_H) for d, ns in cols.items() for i, n in enumerate(ns)}
    width = 40 + COL_W * len(cols)
    height = 60 + ROW_H * max(len(v) for v in cols.values())
    out = [
        f'<svg class="paths" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="reasoning paths">',
        '<defs><marker id="arr" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
    ]
    for head, rel, tail in sorted(edges):
        (x1, y1), (x2, y2) = pos[head], pos[tail]
        x1c, x2c = (x1 + BOX_W, x2) if x2 >= x1 else (x1, x2 + BOX_W)
        out.append(
            f'<line x1="{x1c}" y1="{y1 + 12}" x2="{x2c}" y2="{y2 + 12}" stroke="#555" marker-end="url(#arr)"/>'
        )
        short = rel.rsplit(".", 1)[-1].rsplit("/", 1)[-1]
        out.append(
            f'<text class="rel" x="{(x1c + x2c) / 2:.0f}" y="{(y1 + y2) / 2 + 6:.0f}" text-anchor="middle">'
            f"<title>{escape(rel)}</title>{escape(short[:16])}</text>"
        )
    for n, (x, y) in pos.items():
        fill = "#f6d7a7" if n in topics else "#dde8f5"
        label = names.get(n, n)
        out.append(
            f'<rect class="node" x="{x}" y="{y}" width="{BOX_W}" height="24" rx="5" fill="{fill}" stroke="#333"/>'
        )
        out.append(
            f'<text x="{x + 6}" y="{y + 16}"><title>{escape(n)}</title>{escape(label)[:24]}</text>'
        )
    out.append("</svg>")
    return "".join(out)

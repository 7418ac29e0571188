// The pruning funnel (candidates -> fuzzy -> precise/branch) read from a result, and drawn
// as a small SVG bar chart (log scale: thousands of candidates and a handful of kept paths
// must both stay visible).

const SVG = "http://www.w3.org/2000/svg";

/**
 * Funnel rows [{label, n, note}] of one result, plus a caption.
 * PoG: the pruning steps of the exploration step that produced the answer (trace entries
 * with `pruning`: [{step, in, out}]). LLM-free: path candidates -> fuzzy top W1 (trace
 * `graph.fuzzy`) -> paths shown; precise and branch need an LLM and are marked so.
 */
export function funnelOf(result) {
  const trace = Array.isArray(result.trace) ? result.trace : [];
  if (result.mode === "llm-free") {
    const g = trace.find((t) => t && t.stage === "graph") || {};
    const rows = [{ label: "candidates", n: g.paths ?? null }];
    rows.push({ label: "fuzzy", n: g.fuzzy ?? null, note: g.fuzzy === undefined ? "not reported" : "" });
    rows.push({ label: "precise", n: null, note: "needs an LLM" });
    rows.push({ label: "branch", n: null, note: "needs an LLM" });
    rows.push({ label: "shown", n: (result.paths || []).length });
    return { rows, caption: "LLM-free: fuzzy ranking only" };
  }
  const steps = trace.filter((t) => t && Array.isArray(t.pruning) && t.pruning.length);
  if (!steps.length) return { rows: [], caption: "no pruning ran" };
  const chosen = [...steps].reverse().find((t) => t.phase === result.phase) || steps[steps.length - 1];
  const rows = [{ label: "candidates", n: chosen.candidates ?? chosen.pruning[0].in }];
  for (const p of chosen.pruning) rows.push({ label: String(p.step), n: p.out });
  const where = chosen.phase ? `${chosen.phase}${chosen.depth ? `, depth ${chosen.depth}` : ""}` : "";
  const more = steps.length > 1 ? ` (${steps.length} pruning rounds in all)` : "";
  return { rows, caption: `${where}${more}` };
}

function el(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** An <svg> bar chart of the funnel rows (role=img with a text description). */
export function drawFunnel({ rows, caption }) {
  const rowH = 22;
  const width = 300;
  const labelW = 74;
  const countW = 56;
  const barMax = width - labelW - countW;
  const height = rows.length * rowH + 4;
  const max = Math.max(1, ...rows.map((r) => r.n || 0));
  const desc = rows.map((r) => `${r.label}: ${r.n ?? r.note ?? "n/a"}`).join(", ");
  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    role: "img",
    "aria-label": `pruning funnel: ${desc}`,
    class: "funnel",
  });
  svg.appendChild(el("title", {}, `pruning funnel (log scale): ${desc}`));
  rows.forEach((r, i) => {
    const y = i * rowH + 2;
    svg.appendChild(el("text", { x: 0, y: y + 15, class: "f-label" }, r.label));
    if (r.n === null || r.n === undefined) {
      svg.appendChild(el("text", { x: labelW, y: y + 15, class: "f-na" }, r.note || "n/a"));
      return;
    }
    const w = r.n > 0 ? Math.max(3, (barMax * Math.log1p(r.n)) / Math.log1p(max)) : 0;
    svg.appendChild(el("rect", { x: labelW, y: y + 3, width: w, height: rowH - 7, rx: 3, class: `f-bar f-${i}` }));
    svg.appendChild(el("text", { x: labelW + w + 6, y: y + 15, class: "f-count" }, r.n.toLocaleString("en-US")));
  });
  const wrap = document.createElement("figure");
  wrap.className = "funnel-fig";
  wrap.appendChild(svg);
  if (caption) {
    const fc = document.createElement("figcaption");
    fc.textContent = `${caption} · log scale`;
    wrap.appendChild(fc);
  }
  return wrap;
}

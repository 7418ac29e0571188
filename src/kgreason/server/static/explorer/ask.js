// The "Ask" view: stages as they stream in, then the result's evidence (topic entities,
// subgraph sizes, pruning funnel, paths graph, answer with verified triples, LLM usage).

import { $, fill, h, ms, num } from "./dom.js";
import { drawFunnel, funnelOf } from "./funnel.js";
import { confidenceOf, confidenceText } from "./answer.js";
import { cutNote, cutText, moreControl } from "./paging.js";

/** "k=v k=v" of a stage event's sizes, short. */
function sizesText(sizes) {
  return Object.entries(sizes || {})
    .filter(([k]) => !k.endsWith("_ms"))
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" ");
}

const tokens = (u) => (u ? (u.prompt_tokens || 0) + (u.completion_tokens || 0) : 0);

/** The stages table, fed one SSE stage event at a time. */
export class StageTable {
  constructor() {
    this.body = $("stages").tBodies[0];
    this.rows = new Map();
  }

  reset() {
    this.rows.clear();
    fill(this.body);
  }

  onEvent(ev) {
    const key = `${ev.pipeline}.${ev.stage}`;
    let row = this.rows.get(key);
    if (!row) {
      row = h("tr", { "data-stage": ev.stage });
      this.rows.set(key, row);
      this.body.appendChild(row);
    }
    const sizes = sizesText(ev.sizes);
    const u = ev.usage || {};
    row.className = ev.kind === "start" ? "running" : ev.error ? "failed" : "done";
    fill(
      row,
      h("td", {}, ev.stage.replaceAll("_", " "), sizes && h("span", { class: "sizes" }, sizes), ev.error && h("span", { class: "sizes" }, ev.error)),
      h("td", { class: "n" }, ev.kind === "end" ? ms(ev.elapsed_ms) : ""),
      h("td", { class: "n" }, ev.kind === "end" ? num(u.calls || 0) : ""),
      h("td", { class: "n" }, ev.kind === "end" ? num(tokens(u)) : ""),
    );
  }

  /** After the result: sub-steps the LLM-free stage timed, and the total. */
  finish(result) {
    const t = result.timings_s || {};
    // a saved result (no live events) or the LLM-free stage: the timed steps of the result
    if (result.mode === "llm-free" || !this.rows.size) {
      for (const [k, v] of Object.entries(t)) {
        if (k === "total") continue;
        this.body.appendChild(h("tr", { class: "sub" }, h("td", {}, k), h("td", { class: "n" }, ms(v * 1000)), h("td"), h("td")));
      }
    }
    // the one total of the page: the time the server spent on the request
    const total = (result.usage || {}).total;
    this.body.appendChild(
      h("tr", { class: "total", title: "the time the server spent on the request" },
        h("th", { scope: "row" }, "total"),
        h("td", { class: "n" }, ms(result.elapsed_ms ?? (t.total ?? 0) * 1000)),
        h("td", { class: "n" }, num(total ? total.calls : 0)),
        h("td", { class: "n" }, num(tokens(total))),
      ),
    );
  }
}

/** Every evidence panel of the Ask view shows `note` instead of what it showed: a question
 *  starts (or failed), so nothing of the previous question's stays on screen. The answer
 *  panel and the graph are the caller's. */
export function clearEvidence(note) {
  const muted = () => h("p", { class: "muted" }, note);
  fill("topics", h("li", { class: "muted" }, note));
  const table = $("subgraph");
  fill(table.tBodies[0], h("tr", {}, h("td", { class: "muted" }, note)));
  table.parentElement.querySelectorAll("p.note, p.warn").forEach((p) => p.remove());
  fill("funnel", muted());
  fill("paths", h("li", { class: "muted" }, note));
  fill("triples", muted());
  fill("usage", muted());
}

export function renderTopics(result) {
  const items = (result.topic_entities || []).map((t) =>
    h("li", { title: `id ${t.id} · linked by ${t.method}${t.keyword ? ` from "${t.keyword}"` : ""} · score ${t.score}` },
      t.name, t.name !== t.id ? h("small", {}, ` ${t.id}`) : null, h("small", {}, ` ${t.method}`)),
  );
  fill("topics", items.length ? items : h("li", { class: "muted" }, "none linked"));
}

export function renderSubgraph(result) {
  const s = result.subgraph || {};
  const row = (label, before, after) => h("tr", {}, h("td", {}, label), h("td", { class: "n" }, num(before)), h("td", { class: "n" }, num(after)));
  const rows = [
    h("tr", {}, h("th", {}), h("th", { class: "n", scope: "col" }, "before"), h("th", { class: "n", scope: "col" }, "after reduction")),
    row("triples", s.triples, s.reduced_triples),
    row("entities", s.entities, s.reduced_entities),
  ];
  if (s.clustered_edges) rows.push(h("tr", {}, h("td", {}, "clustered edges"), h("td"), h("td", { class: "n" }, num(s.clustered_edges))));
  fill($("subgraph").tBodies[0], rows);
  const red = (result.trace || []).find((x) => x && x.stage === "graph" && x.reduction);
  const notes = [];
  if (red && typeof red.reduction === "string") notes.push(h("p", { class: "note" }, red.reduction));
  if (s.truncated) notes.push(h("p", { class: "warn" }, `truncated: ${s.truncation_reason}`));
  const table = $("subgraph");
  table.parentElement.querySelectorAll("p.note, p.warn").forEach((p) => p.remove());
  table.after(...notes);
}

export function renderFunnel(result) {
  const f = funnelOf(result);
  fill("funnel", f.rows.length ? drawFunnel(f) : h("p", { class: "muted" }, f.caption));
}

/** A set as text; a cut one (`cut`: its paging.js Paged) says its full size. */
function setText(ids, graph, cut) {
  const first = ids.slice(0, 4).map((i) => graph.name(i)).join(", ");
  if (cut) return ["{", first, ", … ", cutNote(cut), "}"];
  return ids.length === 1 ? graph.name(ids[0]) : `{${first}${ids.length > 4 ? `, … ${ids.length} in all` : ""}}`;
}

/** The members of a cut set, listed, with a "show more" that appends the next page. */
function setPage(set, graph, getJSON) {
  const li = (m) => h("li", { title: m.id }, m.name);
  const list = h("ol", { class: "answer-list members" }, set.members.map(li));
  set.listen((items) => list.append(...items.map(li)));
  const where = set.position === 0 ? "the start" : `hop ${set.position}`;
  return h("details", { class: "set-page", "data-k": set.k ?? "" },
    h("summary", {}, `the set at ${where}: `, cutNote(set)), list, moreControl(set, getJSON));
}

/** The paths as text; hovering or clicking one highlights it in the graph. A set the reply
 *  shows in part reads "N entities (first k shown)"; its members page in below the path
 *  (`pages`: paging.js ResultPages of the result; `getJSON` fetches a page). */
export function renderPaths(result, graph, pages = null, getJSON = null) {
  let pinned = null;
  const conf = (result.answers || []).length ? confidenceOf(result) : null;
  const items = (result.paths || []).map((p, i) => {
    const parts = [];
    p.hops.forEach((hop, j) => {
      if (j === 0) parts.push(setText(hop.src, graph, pages?.at(i, 0)));
      parts.push(h("span", { class: "rel" }, ` ${hop.forward ? "" : "←"}${hop.relation}${hop.forward ? "→" : ""} `));
      parts.push(setText(hop.dst, graph, pages?.at(i, j + 1)));
    });
    const cut = pages ? pages.ofPath(i) : [];
    if (cut.length) {
      // clicks and keys in the member lists are theirs, not the path's highlight toggle
      const stop = (e) => e.stopPropagation();
      parts.push(h("div", { class: "set-pages", onclick: stop, onkeydown: stop }, cut.map((s) => setPage(s, graph, getJSON))));
    }
    // the top path's confidence is the answer's (a set-level weight of the ranked paths)
    if (i === 0 && conf !== null) parts.unshift(h("span", { class: "badge top", title: "the top-ranked path: its answer set is the answer" }, `top path · ${confidenceText(conf)}`), " ");
    const li = h("li", { tabindex: 0, "aria-label": `path ${i + 1}, ${p.hops.length} hop(s); press Enter to highlight` }, parts);
    const on = () => graph.highlightPath(i);
    const off = () => graph.highlightPath(pinned);
    li.addEventListener("mouseenter", on);
    li.addEventListener("mouseleave", off);
    const toggle = () => {
      pinned = pinned === i ? null : i;
      li.parentElement.querySelectorAll("li").forEach((x) => x.classList.remove("on"));
      if (pinned !== null) li.classList.add("on");
      graph.highlightPath(pinned);
    };
    li.addEventListener("click", toggle);
    li.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        toggle();
      }
    });
    return li;
  });
  fill("paths", items.length ? items : h("li", { class: "muted" }, "no path"));
}

const LISTED = 200;
const tkey = (t) => `${t.head}\u0001${t.relation}\u0001${t.tail}`;

/** Every cited triple, grouped by path, marked verified (in the KG) or unverified. */
export function renderTriples(result, graph, limitPerPath = 12) {
  const bad = new Set((result.unverified_triples || []).map(tkey));
  const blocks = [];
  let total = 0;
  let nbad = 0;
  (result.paths || []).forEach((p, i) => {
    const ts = p.hops.flatMap((hop) => hop.triples || []);
    total += ts.length;
    const li = (t) => {
      const ok = !bad.has(tkey(t));
      return h("li", { class: ok ? "ok" : "bad" }, `${graph.name(t.head)} `, h("span", { class: "rel" }, t.relation), ` ${graph.name(t.tail)}`,
        h("span", { class: ok ? "tag sr-only" : "tag" }, ok ? "verified" : "unverified"));
    };
    // every unverified triple is listed; verified ones up to LISTED per path (a hub's path
    // cites thousands: they are all in the result JSON)
    const order = [...ts.filter((t) => bad.has(tkey(t))), ...ts.filter((t) => !bad.has(tkey(t)))];
    const listed = order.slice(0, Math.max(LISTED, order.filter((t) => bad.has(tkey(t))).length));
    nbad += order.length - ts.filter((t) => !bad.has(tkey(t))).length;
    const head = listed.slice(0, limitPerPath).map(li);
    const rest = listed.slice(limitPerPath).map(li);
    // a hop of a large set cites its first triples; triples_total is the whole count
    const all = p.hops.reduce((n, hop) => n + (hop.triples_total ?? (hop.triples || []).length), 0);
    const count = all > ts.length ? cutText(all, ts.length, "triples") : `${ts.length} triple${ts.length === 1 ? "" : "s"}`;
    blocks.push(h("p", { class: "note" }, `path ${i + 1}: ${count}`));
    blocks.push(h("ul", { class: "triples" }, head));
    if (rest.length) blocks.push(h("details", {}, h("summary", {}, `${rest.length} more`), h("ul", { class: "triples" }, rest)));
    if (listed.length < ts.length) blocks.push(h("p", { class: "note" }, `${ts.length - listed.length} more verified triples are in the result JSON`));
  });
  const summary = total
    ? h("p", { class: nbad ? "warn" : "note" }, `${total - nbad} of ${total} cited triples verified in the KG${nbad ? `; ${nbad} unverified` : ""}`)
    : h("p", { class: "muted" }, "no cited triple");
  fill("triples", summary, blocks);
}

export function renderUsage(usage, into = "usage") {
  const stages = Object.entries(usage || {}).filter(([k]) => k !== "total");
  if (!stages.length) {
    fill(into, h("p", { class: "muted" }, "no LLM call"));
    return;
  }
  const rows = [...stages, ["total", usage.total]].map(([k, u]) =>
    h("tr", {}, h(k === "total" ? "th" : "td", k === "total" ? { scope: "row" } : {}, k), h("td", { class: "n" }, num(u.calls)),
      h("td", { class: "n" }, num(u.prompt_tokens)), h("td", { class: "n" }, num(u.completion_tokens)), h("td", { class: "n" }, ms((u.latency_s || 0) * 1000))),
  );
  fill(into, h("table", {}, h("thead", {}, h("tr", {}, ["LLM stage", "calls", "prompt", "compl.", "time"].map((c, i) => h("th", { scope: "col", class: i ? "n" : "" }, c)))), h("tbody", {}, rows)));
}

// The "Solve" view: POST /v1/solve with a problem (SymbolLKG: LKG, retrieval, route,
// program attempts) or a solver program (no LLM), and show the route, each attempt with
// its solver message, the retrieved LKG subgraph and the final proof or model.

import { $, fill, h, ms, num } from "./dom.js";
import { drawLKG } from "./lkg.js";
import { renderUsage } from "./ask.js";

function statusClass(s) {
  return s === "ok" || s === "solved" ? "st-ok" : "st-bad";
}

export function renderRoute(res) {
  const r = res.route;
  if (r && typeof r === "object") {
    const rows = [
      ["route", r.route],
      ["decided by", r.source],
      ["structural", `${r.structural}${r.structural_reason ? ` (${r.structural_reason})` : ""}`],
      r.llm_choice ? ["LLM chose", r.llm_choice] : null,
      r.disagreement ? ["note", "the LLM and the structural router disagreed"] : null,
      r.note ? ["", r.note] : null,
    ].filter(Boolean);
    fill("route", h("table", { class: "kv" }, h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, String(v)))))));
  } else if (typeof r === "string") {
    fill("route", h("p", {}, h("strong", {}, r), res.format ? ` (format ${res.format}, solver ${res.solver || "?"})` : ""));
  } else {
    fill("route", h("p", { class: "muted" }, "no route"));
  }
}

/** Attempts of a SymbolLKG result, or the one run of a raw program. */
function attemptsOf(res) {
  if (Array.isArray(res.attempts)) return res.attempts;
  if (res.format !== undefined) {
    // a program run: one entry per solver run (multi-run questions have several)
    const runs = res.results?.length ? res.results : [{}];
    return runs.map((r, i) => ({
      index: i, stage: `program (${res.format})`, route: r.solver || res.route, status: r.status || res.status,
      error_kind: r.error_kind ?? res.error_kind, error: r.error ?? res.error, answer: r.answer ?? r.verdict ?? res.verdict,
      time_s: r.time_s ?? res.time_s, program: r.program || "",
    }));
  }
  return [];
}

export function renderAttempts(res) {
  const items = attemptsOf(res).map((a) =>
    h("li", {},
      h("span", { class: statusClass(a.status) }, a.status), ` · ${a.stage} · ${a.route}`, a.answer ? ` · answer ${a.answer}` : "",
      a.time_s !== undefined ? h("span", { class: "muted" }, ` · ${ms((a.time_s || 0) * 1000)}`) : null,
      a.error ? h("pre", { class: "solver-msg" }, `${a.error_kind ? `${a.error_kind}: ` : ""}${a.error}`) : null,
      a.program ? h("details", {}, h("summary", {}, "program"), h("pre", {}, a.program)) : null,
    ),
  );
  fill("attempts", items.length ? items : h("li", { class: "muted" }, "no attempt"));
}

export function renderVerdict(res) {
  const out = [];
  const verdict = res.verdict ?? res.answer;
  out.push(h("div", { class: "answer-main", id: "verdict-text" }, verdict ?? "no verdict"));
  const st = res.status;
  out.push(h("p", {}, "status ", h("span", { class: statusClass(st) }, st || "?"), res.answer && res.answer !== verdict ? ` · solver answer ${res.answer}` : ""));
  if (res.error_kind && st !== "solved" && st !== "ok") out.push(h("div", { class: "error", role: "alert" }, h("strong", {}, res.error_kind), ": ", res.error || ""));
  for (const n of res.notes || []) out.push(h("p", { class: "note" }, n));
  fill("verdict", out);
  const solver = res.solver && typeof res.solver === "object" ? res.solver : res;
  const proof = [];
  if (solver.proof) proof.push(h("p", { class: "note" }, "proof"), h("pre", { id: "proof-text" }, solver.proof));
  const model = solver.model || solver.values;
  if (model && Object.keys(model).length)
    proof.push(h("p", { class: "note" }, "model"), h("table", { class: "kv" }, h("tbody", {}, Object.entries(model).map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, String(v)))))));
  if (!proof.length) proof.push(h("p", { class: "muted" }, "none returned"));
  fill("proof", proof);
}

export class SolveView {
  /** `cytoscapeFn()` resolves to the cytoscape factory (loaded lazily). */
  constructor(cytoscapeFn, setStatus, api) {
    this.cyFn = cytoscapeFn;
    this.api = api;
    this.setStatus = setStatus;
    this.cy = null;
    const form = $("solve-form");
    form.addEventListener("change", () => this.syncMode());
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.run();
    });
    this.syncMode();
  }

  mode() {
    return document.querySelector("input[name=solve-mode]:checked").value;
  }

  syncMode() {
    const program = this.mode() === "program";
    $("solve-problem").hidden = program;
    $("solve-program").hidden = !program;
  }

  body() {
    const lines = (v) => v.split("\n").map((x) => x.trim()).filter(Boolean);
    if (this.mode() === "program") {
      const body = { program: $("solve-text").value };
      const fmt = $("solve-solver").value;
      if (fmt) body.solver = fmt;
      return body;
    }
    return { context: $("solve-context").value, question: $("solve-question").value, options: lines($("solve-options").value) };
  }

  /** Every panel of the last problem goes (a problem starts, or failed): the route, the
   *  attempts, the LKG, the proof and the usage say `note`, the verdict says `verdict`. */
  clear(note, verdict) {
    const muted = () => h("p", { class: "muted" }, note);
    fill("route", muted());
    fill("attempts", h("li", { class: "muted" }, note));
    fill("verdict", verdict);
    fill("proof", muted());
    fill("solve-usage", muted());
    if (this.cy) this.cy.destroy();
    this.cy = null;
    fill("lkg", h("p", { class: "hint" }, note));
    fill("lkg-size", "");
    fill("lkg-detail", "Click a node or an edge to read it.");
    window.kgExplorer.lkg = null;
    window.kgExplorer.lastSolve = null;
  }

  async run() {
    const btn = $("solve-btn");
    btn.disabled = true;
    this.clear("solving…", h("p", { class: "muted" }, "solving…"));
    const t0 = performance.now();
    try {
      const res = await this.api.postJSON("/v1/solve", this.body());
      await this.show(res);
      this.setStatus(`solved in ${ms(performance.now() - t0)}`);
    } catch (e) {
      const kind = e.kind || "error";
      this.clear(`no result: the problem failed (${kind})`, h("div", { class: "error", role: "alert" }, h("strong", {}, kind), ": ", e.message));
      this.setStatus(`solve failed: ${e.kind || e.message}`);
    } finally {
      btn.disabled = false;
    }
  }

  async show(res) {
    const cytoscape = await this.cyFn();
    renderRoute(res);
    renderAttempts(res);
    renderVerdict(res);
    renderUsage(res.usage, "solve-usage");
    if (this.cy) this.cy.destroy();
    const sub = res.subgraph;
    const n = sub?.nodes?.length || 0;
    fill("lkg-size", sub ? `${num(n)} nodes · ${num(sub.edges?.length || 0)} edges${sub.pruned ? " (after LLM pruning)" : ""}` : "no LKG (a program was run directly)");
    fill("lkg", n ? null : h("p", { class: "hint" }, sub ? "the retrieval kept no node" : "A program run directly has no LKG: the problem mode (with an LLM) draws the retrieved subgraph here."));
    this.cy = n ? drawLKG(cytoscape, $("lkg"), sub, (node) => this.detail(node)) : null;
    window.kgExplorer.lkg = this.cy;
    window.kgExplorer.lastSolve = res;
  }

  detail(node) {
    if (!node) return;
    const parts = [h("strong", {}, node.kind), ` ${node.name || ""}`];
    if (node.expression) parts.push(" · ", h("code", {}, node.expression));
    if (node.raw_text) parts.push(` · “${node.raw_text}”`);
    fill("lkg-detail", parts);
  }
}

// Entry point: tabs, the ask form (streamed), entity expansion, the solve view.
// Exposes `window.kgExplorer` ({cy, lkg, lastResult, lastSolve, show}) for tests and the console.

import { ApiError, askStream, getJSON, postJSON } from "./api.js";
import { renderAnswer } from "./answer.js";
import { clearEvidence, renderFunnel, renderPaths, renderSubgraph, renderTopics, renderTriples, renderUsage, StageTable } from "./ask.js";
import { $, h, fill, ms } from "./dom.js";
import { PathGraph } from "./graph.js";
import { pageError, ResultPages } from "./paging.js";
import { initSearch, splitTopics } from "./search.js";
import { SolveView } from "./solve.js";

const state = { graph: null, stages: null, abort: null, busy: false, cytoscape: null };

/** cytoscape.js (440 kB) is loaded after the first paint, not before it. */
function cytoscapeLib() {
  state.cytoscape ??= new Promise((resolve, reject) => {
    if (window.cytoscape) return resolve(window.cytoscape);
    const s = document.createElement("script");
    s.src = "/static/vendor/cytoscape/cytoscape.min.js";
    s.onload = () => resolve(window.cytoscape);
    s.onerror = () => reject(new Error("could not load /static/vendor/cytoscape/cytoscape.min.js"));
    document.head.appendChild(s);
  });
  return state.cytoscape;
}
window.kgExplorer = { get cy() { return state.graph?.cy; }, lkg: null, lastResult: null, lastSolve: null, ready: false };
// show(result): draw a saved /v1/ask result (e.g. one downloaded earlier) without asking again

function setStatus(text) {
  $("server-status").textContent = text;
}

function handleAuth(err) {
  if (err instanceof ApiError && err.status === 401) {
    $("token-form").hidden = false;
    $("token").focus();
    setStatus("this server wants a bearer token");
    return true;
  }
  return false;
}

function initTabs() {
  const tabs = [$("tab-ask"), $("tab-solve")];
  const select = (tab) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (tab.id === "tab-solve") window.kgExplorer.lkg?.resize();
    else state.graph?.cy.resize();
  };
  tabs.forEach((t, i) => {
    t.addEventListener("click", () => select(t));
    t.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        const next = tabs[(i + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
        next.focus();
        select(next);
      }
    });
  });
}

/** The paths graph (null until cytoscape has loaded). */
function graph() {
  if (!state.graph && window.cytoscape) {
    state.graph = new PathGraph(window.cytoscape, $("graph"), { onEntity: expandEntity, onMore: moreMembers });
    state.graph.enableKeyboard($("graph"), expandEntity, (text) => fill("graph-hint", text));
  }
  return state.graph;
}

async function expandEntity(id, node) {
  const g = graph();
  if (g.offsets.get(id) === null) {
    fill("graph-hint", `all neighbours of ${g.name(id)} are shown`);
    return;
  }
  node.addClass("loading");
  try {
    const offset = g.offsets.get(id) || 0;
    const ent = await getJSON(`/v1/kg/entity/${encodeURIComponent(id)}?offset=${offset}&limit=40`);
    const added = g.addNeighbours(ent, node);
    const shown = offset + (ent.neighbours || []).length;
    fill("graph-hint", `${ent.name || id}: ${added.nodes} new node(s), ${added.edges} edge(s); ${shown} of ${ent.total ?? "?"} neighbours shown`,
      ent.next_offset !== null && ent.next_offset !== undefined ? " (click again for more)" : "");
  } catch (e) {
    if (!handleAuth(e)) fill("graph-hint", h("span", { class: "error" }, `could not expand ${id}: ${e.kind || ""} ${e.message}`));
  } finally {
    node.removeClass("loading");
  }
}

/** A set's "+N more" node: its next members, a page fetched when the held ones run out. */
async function moreMembers(setId) {
  const g = graph();
  try {
    const n = await g.drawMore(setId, getJSON);
    const cut = g.paged.get(setId);
    fill("graph-hint", `${n} more member(s) drawn`, cut ? `; ${cut.text()}` : "");
  } catch (e) {
    if (!handleAuth(e)) fill("graph-hint", h("span", { class: "error", role: "alert" }, pageError(e)));
  }
}

/** A search suggestion's "show": its node (added when not drawn) and its neighbours. */
async function showEntity(id, name) {
  try {
    await cytoscapeLib();
  } catch (e) {
    fill("graph-hint", h("span", { class: "error" }, e.message));
    return;
  }
  const g = graph();
  const node = g.addEntity(id, name);
  await expandEntity(id, node);
  g.cy.fit(node.closedNeighborhood(), 30);
  if (g.cy.zoom() > 1.4) g.cy.zoom({ level: 1.4, position: node.position() });
}

const GRAPH_HINT = "Click an entity (or select it with the arrow keys and press Enter) to expand its neighbours from the KG; click a dashed box to collapse or expand a set.";
const CLAMPED_HINT = "Drawn at a readable size from its start: drag to pan, scroll to zoom, Fit shows it all. ";

/** A question starts (`note`: "working…") or failed: every panel of the last question's
 *  evidence goes, the answer panel says `answer` (a message or an error block). */
function clearAsk(note, answer) {
  clearEvidence(note);
  fill("answer-title", "Answer");
  fill("answer", answer);
  state.graph?.clear();
  fill("graph-hint", note === "working…" ? "" : note);
  window.kgExplorer.pages = null;
  window.kgExplorer.lastResult = null;
}

async function showResult(result) {
  await cytoscapeLib();
  const g = graph();
  // the sets and answers the reply shows in part, shared by the graph, paths and answer
  const pages = new ResultPages(result);
  g.showPaths(result, pages);
  renderTopics(result);
  renderSubgraph(result);
  renderFunnel(result);
  renderAnswer(result, pages, getJSON);
  renderPaths(result, g, pages, getJSON);
  renderTriples(result, g);
  renderUsage(result.usage);
  fill("graph-hint", g.clamped ? CLAMPED_HINT : "", GRAPH_HINT);
  state.stages.finish(result);
  window.kgExplorer.pages = pages;
  window.kgExplorer.lastResult = result;
}

function busy(on) {
  state.busy = on;
  $("ask-btn").disabled = on;
  $("ask-stop").hidden = !on;
}

async function ask(e) {
  e.preventDefault();
  if (state.busy) return;
  const question = $("question").value.trim();
  if (!question) return;
  const body = { question };
  if ($("llm-free").checked) body.llm_free = true;
  const topics = splitTopics($("ask-topics").value);
  if (topics.length) body.topics = topics;
  if ($("strategy").value) body.strategy = $("strategy").value;
  if ($("variant").value) body.variant = $("variant").value;
  state.stages.reset();
  clearAsk("working…", h("p", { class: "muted" }, "working…"));
  busy(true);
  state.abort = new AbortController();
  const t0 = performance.now();
  const clock = setInterval(() => ($("ask-clock").textContent = `running… ${ms(performance.now() - t0)}`), 100);
  try {
    const result = await askStream(body, (ev) => {
      if (ev.kind === "start" && ev.stage === "graph") fill("subgraph", h("tbody", {}, h("tr", {}, h("td", { class: "muted" }, "cutting the subgraph…"))));
      state.stages.onEvent(ev);
    }, state.abort.signal);
    await showResult(result);
    // the time is the stages table's total (the server's), the one total shown
    setStatus(result.abstained ? `no confident answer (${result.mode})` : `answered (${result.mode})`);
  } catch (err) {
    if (err.name === "AbortError") {
      clearAsk("stopped", h("p", { class: "muted" }, "stopped"));
    } else if (!handleAuth(err)) {
      const kind = err.kind || "error";
      clearAsk(`no result: the question failed (${kind})`, h("div", { class: "error", role: "alert" }, h("strong", {}, kind), ": ", err.message));
      setStatus(`failed: ${err.kind || err.message}`);
    } else {
      clearAsk("no result: this server wants a bearer token", h("p", { class: "muted" }, "waiting for the bearer token"));
    }
  } finally {
    clearInterval(clock);
    $("ask-clock").textContent = ""; // only while it runs: the total is the stages table's
    busy(false);
  }
}

async function health() {
  try {
    const hz = await getJSON("/healthz");
    const info = hz.service || hz; // the Service.info() fields, maybe nested
    const kg = String(info.kg || "").split("/").filter(Boolean).pop() || "";
    const free = info.mode === "llm-free" || info.llm === false;
    setStatus(["server ready", kg && `KG ${kg}`, free ? "no LLM: LLM-free mode" : "PoG with an LLM"].filter(Boolean).join(" · "));
    if (free) {
      $("llm-free").checked = true;
      $("llm-free").disabled = true;
    }
  } catch (e) {
    if (!handleAuth(e)) setStatus(`server not reachable: ${e.message}`);
  }
}

function init() {
  initTabs();
  state.stages = new StageTable();
  $("ask-form").addEventListener("submit", ask);
  $("ask-stop").addEventListener("click", () => state.abort?.abort());
  $("sets-collapse").addEventListener("click", () => graph()?.setAllCollapsed(true));
  $("sets-expand").addEventListener("click", () => graph()?.setAllCollapsed(false));
  $("graph-fit").addEventListener("click", () => graph()?.fit(true));
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("kgreason.token", $("token").value);
    $("token-form").hidden = true;
    health();
  });
  initSearch({ getJSON, showEntity, announce: (text) => fill("find-note", text), onError: handleAuth });
  new SolveView(cytoscapeLib, setStatus, { postJSON });
  window.kgExplorer.show = (result) => {
    state.stages.reset();
    clearAsk("working…", h("p", { class: "muted" }, "working…"));
    return showResult(result);
  };
  health();
  window.kgExplorer.ready = true;
  // fetch the graph library once the page has painted, so the first question need not wait
  requestAnimationFrame(() => setTimeout(() => cytoscapeLib().catch((e) => setStatus(e.message)), 0));
}

init();

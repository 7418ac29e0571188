// The reasoning-path graph (cytoscape.js): one node per entity, one compound node per
// clustered entity set ({e1,...} -> r -> {e2,...}), collapsible; hop edges carry the
// relation and are red/dashed when a cited triple is not in the KG. Clicking an entity asks
// the page to expand its neighbours (addNeighbours). Labels are drawn on the canvas as text.
// A set the reply shows in part (paging.js) reads "N entities (first k shown)"; its "+N more"
// node draws the next members, fetching a page of the set when the drawn ones run out.

import { collapsedWidth, labelWidth, STYLE } from "./graphstyle.js";
import { memberId, planPaths, SEP } from "./pathplan.js";

const COL_W = 270;
const ROW_H = 40;
const MAX_MEMBERS = 15; // members drawn per set; the rest are one "+N more" node
const COLLAPSE_OVER = 6; // sets larger than this start collapsed
// the least zoom of the first fit: a long (two-topic) path fitted whole is too small to read,
// so it is drawn at this zoom from its start, the rest a drag away ("Fit" shows it all)
export const MIN_FIT_ZOOM = 0.85;

export class PathGraph {
  /** `cytoscape` is the library's factory; `onEntity(entityId, node)` runs on an entity tap,
   *  `onMore(setId)` on a tap of a set's "+N more" node (default: drawMore without fetching). */
  constructor(cytoscape, container, { onEntity, onMore } = {}) {
    this.cy = cytoscape({
      container,
      style: STYLE,
      minZoom: 0.1,
      maxZoom: 3,
      boxSelectionEnabled: false,
    });
    this.names = new Map();
    this.collapsedSets = new Map(); // set node id -> removed children (and their edges)
    this.offsets = new Map(); // entity id -> next neighbour offset
    this.setMembers = new Map(); // set node id -> member ids (of a cut set: its Paged's)
    this.paged = new Map(); // set node id -> the paging.js Paged of a set shown in part
    this.answerIds = new Set();
    this.plan = null;
    this.clamped = false; // the last fit kept MIN_FIT_ZOOM: part of the graph is off view
    this.moved = false; // the user panned or zoomed since the last fit
    this.onMore = onMore || ((id) => this.drawMore(id));
    this.cy.on("dragpan scrollzoom pinchzoom", () => (this.moved = true));
    // a container that changes size (a narrow window, a tab shown) is fitted again, unless
    // the user has moved the view
    if (typeof ResizeObserver === "function") {
      let pending = false;
      new ResizeObserver(() => {
        if (pending) return;
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          this.cy.resize();
          if (!this.moved) this.fit();
        });
      }).observe(container);
    }
    this.cy.on("tap", "node", (ev) => {
      const n = ev.target;
      if (n.hasClass("more")) this.onMore(n.data("set"));
      else if (n.hasClass("set")) this.toggleSet(n.id());
      else if (n.data("entity") !== undefined && onEntity) onEntity(n.data("entity"), n);
    });
  }

  name(id) {
    return this.names.get(id) ?? id;
  }

  /** Draw a PoG result's paths (clears the graph); `pages` (paging.js ResultPages) says
   *  which sets the reply shows in part. */
  /** Nothing drawn: a new question starts (the last one's paths must not stay). */
  clear() {
    this.cy.elements().remove();
    this.collapsedSets.clear();
    this.offsets.clear();
    this.setMembers.clear();
    this.paged.clear();
    this.names.clear();
    this.answerIds = new Set();
    this.plan = null;
    this.clamped = false;
    this.moved = false;
  }

  showPaths(result, pages = null) {
    const cy = this.cy;
    this.clear();
    for (const [id, name] of Object.entries(result.entity_names || {})) this.names.set(id, name);
    for (const t of result.topic_entities || []) this.names.set(t.id, t.name);
    const answers = new Set();
    for (const a of [...(result.answers || []), ...(result.candidates || []).slice(0, 10)]) {
      if (a.id) {
        answers.add(a.id);
        this.names.set(a.id, a.name);
      }
    }
    this.answerIds = answers;
    const plan = planPaths(result, pages, MAX_MEMBERS);
    const eles = [];
    for (const key of plan.order) {
      const paths = plan.nodePaths.get(key) || [];
      if (!plan.sets.has(key)) {
        const eid = key.slice(2);
        const label = this.name(eid);
        const cls = [plan.topics.has(eid) ? "topic" : "", answers.has(eid) ? "answer" : ""].join(" ");
        eles.push({ group: "nodes", data: { id: key, entity: eid, label, w: labelWidth(label), paths }, classes: cls });
        continue;
      }
      const cut = plan.cuts.get(key);
      const members = plan.sets.get(key);
      if (cut) {
        this.paged.set(key, cut);
        for (const m of cut.members) if (!this.names.has(m.id)) this.names.set(m.id, m.name);
        cut.listen((items) => this.paged.get(key) === cut && this.grew(key, items));
      }
      this.setMembers.set(key, members);
      const size = cut ? cut.total : members.length;
      const setLabel = cut ? cut.text() : `${size} entities`;
      eles.push({ group: "nodes", data: { id: key, label: setLabel, full: setLabel, w: labelWidth(setLabel) + 10, size, paths }, classes: cut ? "set cut" : "set" });
      eles.push(...this.memberNodes(key, members.slice(0, MAX_MEMBERS), paths, answers, plan.nodePaths));
      if (size > MAX_MEMBERS) {
        const label = `+${size - MAX_MEMBERS} more`;
        eles.push({ group: "nodes", data: { id: `more:${key}`, parent: key, set: key, label, w: labelWidth(label), paths }, classes: "more" });
      }
    }
    this.plan = { order: plan.order, cols: plan.cols };
    cy.add(eles);
    cy.add([...plan.edges.values()]);
    for (const n of cy.nodes(".set")) if (n.data("size") > COLLAPSE_OVER) this.toggleSet(n.id(), true, false);
    this.relayout();
    this.fit();
  }

  /** The member nodes of set `key` for these entity ids. */
  memberNodes(key, ids, paths, answers = this.answerIds, own = null) {
    return ids.map((m) => {
      const label = this.name(m);
      const id = memberId(key, m);
      // a member some path goes through on its own is on that path too
      const on = own?.has(id) ? [...new Set([...paths, ...own.get(id)])] : paths;
      return { group: "nodes", data: { id, parent: key, entity: m, label, w: labelWidth(label), paths: on }, classes: answers.has(m) ? "answer" : "" };
    });
  }

  /** A page of cut set `key` came (from any view): its names, and its label's count. */
  grew(key, items) {
    for (const m of items) if (!this.names.has(m.id)) this.names.set(m.id, m.name);
    const node = this.cy.getElementById(key);
    const cut = this.paged.get(key);
    if (!node.length || !cut) return;
    const full = cut.text();
    const label = this.collapsedSets.has(key) ? `{${full}}` : full;
    node.data({ full, size: cut.total, label, w: this.collapsedSets.has(key) ? collapsedWidth(label) : labelWidth(full) + 10 });
  }

  /**
   * Draw the next MAX_MEMBERS members of set `key` (its "+N more" node says how many are
   * left). A set the reply shows in part fetches its next page with `getJSON` when the
   * members held run out (null: draws only those held). Rejects when the page cannot come
   * (after drawing what is held).
   */
  async drawMore(key, getJSON = null) {
    const cy = this.cy;
    const node = cy.getElementById(key);
    if (!node.length || this.collapsedSets.has(key)) return 0;
    const cut = this.paged.get(key);
    const drawn = () => node.children().filter((n) => !n.hasClass("more")).length;
    let failure = null;
    if (cut && getJSON && cut.members.length < drawn() + MAX_MEMBERS && cut.more) {
      try {
        await cut.fetchMore(getJSON);
      } catch (e) {
        failure = e; // the held members are still drawn
      }
    }
    const all = cut ? cut.members.map((m) => m.id) : this.setMembers.get(key) || [];
    const have = new Set(node.children().map((n) => n.data("entity")));
    const next = all.slice(drawn(), drawn() + MAX_MEMBERS).filter((m) => !have.has(m));
    cy.add(this.memberNodes(key, next, node.data("paths")));
    const left = (cut ? cut.total : all.length) - drawn();
    const more = cy.getElementById(`more:${key}`);
    const data = more.length ? more.data() : null;
    more.remove(); // added again after the new members: it stays last in the set
    if (left > 0 && data) {
      const label = `+${left} more`;
      cy.add({ group: "nodes", data: { ...data, label, w: labelWidth(label) }, classes: "more" });
    }
    this.relayout();
    if (failure) throw failure;
    if (!next.length && cut?.error) throw cut.error; // a page that will not come
    return next.length;
  }

  /**
   * Place the path nodes in columns by hop depth (topic entities first), each column centred
   * vertically; a collapsed set takes one row, an expanded one a row per member. Neighbour
   * nodes added by expansion move with the node they were expanded from.
   */
  relayout() {
    if (!this.plan) return;
    const cy = this.cy;
    const before = new Map(cy.nodes().map((n) => [n.id(), { ...n.position() }]));
    const columns = new Map(); // col -> [[node id, rows]]
    for (const key of this.plan.order) {
      const node = cy.getElementById(key);
      if (!node.length) continue;
      const rows = node.hasClass("set") && !this.collapsedSets.has(key) ? node.children().length + 0.6 : 1;
      const col = this.plan.cols.get(key);
      if (!columns.has(col)) columns.set(col, []);
      columns.get(col).push([key, rows]);
    }
    for (const [col, items] of columns) {
      const total = items.reduce((a, [, r]) => a + r + 0.6, -0.6);
      let row = -total / 2;
      for (const [key, rows] of items) {
        const node = cy.getElementById(key);
        const x = col * COL_W;
        if (node.hasClass("set") && !this.collapsedSets.has(key)) {
          node.children().forEach((c, i) => {
            c.position({ x, y: (row + 0.6 + i) * ROW_H });
          });
        } else {
          node.position({ x, y: (row + (rows - 1) / 2) * ROW_H });
        }
        row += rows + 0.6;
      }
    }
    cy.nodes(".neighbour").forEach((n) => {
      const anchor = cy.getElementById(n.data("anchor"));
      const was = before.get(n.data("anchor"));
      if (!anchor.length || !was) return;
      const now = anchor.position();
      n.position({ x: n.position("x") + now.x - was.x, y: n.position("y") + now.y - was.y });
    });
  }

  /**
   * Fit the graph to the view, at most at zoom 1.4; at least at MIN_FIT_ZOOM unless `all`
   * (the Fit button): a graph too large for that is shown from its start (the topic
   * entities' column, left), centred on the axis where it fits, and `clamped` says so.
   */
  fit(all = false) {
    const cy = this.cy;
    this.moved = false;
    this.clamped = false;
    if (!cy.elements().length) return;
    cy.fit(undefined, 30);
    if (cy.zoom() > 1.4) cy.zoom({ level: 1.4, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
    if (all || cy.zoom() >= MIN_FIT_ZOOM) return;
    const z = MIN_FIT_ZOOM;
    const bb = cy.elements().boundingBox();
    const along = (size, lo, hi, view) => (size * z + 60 <= view ? (view - (lo + hi) * z) / 2 : 30 - lo * z);
    cy.viewport({ zoom: z, pan: { x: along(bb.w, bb.x1, bb.x2, cy.width()), y: along(bb.h, bb.y1, bb.y2, cy.height()) } });
    this.clamped = true;
  }

  /** Collapse (true), expand (false) or toggle (undefined) one clustered set; `layout`
   *  false leaves the positions to the caller. */
  toggleSet(id, collapse, layout = true) {
    const node = this.cy.getElementById(id);
    if (!node.length) return;
    const removed = this.collapsedSets.get(id);
    if (removed && collapse !== true) {
      this.cy.edges(".proxy").remove();
      this.collapsedSets.delete(id);
      removed.nodes().restore();
      // an edge whose other end is in another collapsed set comes back with that set
      removed.edges().forEach((e) => {
        const ends = [e.data("source"), e.data("target")];
        const other = [...this.collapsedSets].find(([, r]) => ends.some((x) => r.getElementById(x).length));
        if (other) this.collapsedSets.set(other[0], other[1].union(e));
        else e.restore();
      });
      node.removeClass("collapsed").data("label", node.data("full"));
    } else if (!removed && collapse !== false) {
      const kids = node.children();
      if (!kids.length) return;
      this.cy.edges(".proxy").remove();
      const bb = kids.boundingBox();
      const gone = kids.union(kids.connectedEdges()).remove();
      node.position({ x: (bb.x1 + bb.x2) / 2, y: (bb.y1 + bb.y2) / 2 });
      this.collapsedSets.set(id, gone);
      const label = `{${node.data("full")}}`;
      node.addClass("collapsed").data({ label, w: collapsedWidth(label) });
    } else return;
    this.proxyHops();
    if (layout) this.relayout();
  }

  /** A hop that ends at a member of a collapsed set (an entity on a path of its own that is
   *  also in the set) is drawn to the set while it is collapsed: a "proxy" edge. */
  proxyHops() {
    const cy = this.cy;
    const endOf = (id) => {
      if (cy.getElementById(id).length) return id;
      for (const [set, r] of this.collapsedSets) if (r.getElementById(id).length) return set;
      return null;
    };
    const add = new Map();
    for (const r of this.collapsedSets.values()) {
      r.edges().forEach((e) => {
        if (!e.id().startsWith("h:")) return;
        const s = endOf(e.data("source"));
        const t = endOf(e.data("target"));
        if (!s || !t || s === t) return;
        if (cy.getElementById(s).edgesTo(cy.getElementById(t)).some((x) => x.data("label") === e.data("label"))) return;
        const id = `p:${s}${SEP}${e.data("label")}${SEP}${t}`;
        const prev = add.get(id);
        if (prev) prev.data.paths = [...new Set([...prev.data.paths, ...e.data("paths")])];
        else add.set(id, { group: "edges", data: { id, source: s, target: t, label: e.data("label"), paths: [...e.data("paths")] }, classes: `proxy ${e.classes().join(" ")}` });
      });
    }
    if (add.size) cy.add([...add.values()]);
  }

  setAllCollapsed(collapse) {
    for (const n of this.cy.nodes(".set")) this.toggleSet(n.id(), collapse, false);
    this.relayout();
    this.fit();
  }

  /** Fade everything not on path `i` (null: show all). */
  highlightPath(i) {
    const cy = this.cy;
    cy.elements().removeClass("faded");
    if (i === null || i === undefined) return;
    cy.elements().forEach((e) => {
      const p = e.data("paths");
      if (p && !p.includes(i)) e.addClass("faded");
      if (!p && e.isEdge()) e.addClass("faded");
    });
  }

  /** The node that stands for an entity: its own node, else a set member, else none. */
  nodeOf(entityId) {
    const own = this.cy.getElementById(`e:${entityId}`);
    if (own.length) return own;
    return this.cy.nodes().filter((n) => n.data("entity") === entityId && !n.hasClass("set")).first();
  }

  /**
   * Keyboard use of the canvas (focus it with Tab): arrow keys move through the nodes,
   * Enter expands the entity (or collapses/expands the set); `announce(text)` says which.
   */
  enableKeyboard(container, onEntity, announce) {
    container.addEventListener("keydown", (e) => {
      const nodes = this.cy
        .nodes()
        .filter((n) => n.visible())
        .map((n) => n)
        .sort((a, b) => a.position("x") - b.position("x") || a.position("y") - b.position("y"));
      if (!nodes.length) return;
      const cur = this.cy.nodes(":selected").first();
      const at = cur.length ? nodes.findIndex((n) => n.id() === cur.id()) : -1;
      let next = null;
      if (e.key === "ArrowRight" || e.key === "ArrowDown") next = nodes[(at + 1) % nodes.length];
      else if (e.key === "ArrowLeft" || e.key === "ArrowUp") next = nodes[(at - 1 + nodes.length) % nodes.length];
      else if (e.key === "Enter" && cur.length) {
        e.preventDefault();
        if (cur.hasClass("more")) this.onMore(cur.data("set"));
        else if (cur.hasClass("set")) this.toggleSet(cur.id());
        else if (cur.data("entity") !== undefined) onEntity(cur.data("entity"), cur);
        return;
      } else return;
      e.preventDefault();
      this.cy.nodes().unselect();
      next.select();
      const kind = next.hasClass("more") ? "more members" : next.hasClass("set") ? "entity set" : next.hasClass("topic") ? "topic entity" : "entity";
      const does = next.hasClass("more") ? "draw more" : next.hasClass("set") ? "collapse or expand" : "expand neighbours";
      announce(`${kind}: ${next.data("label")} (Enter: ${does})`);
    });
  }

  /** Is there a hop edge with `relation` from s to d, or between the sets holding them? */
  hopDrawn(s, d, relation) {
    const ends = (id) => {
      const n = this.cy.getElementById(id);
      return n.parent().length ? n.union(n.parent()) : n;
    };
    return ends(s)
      .edgesTo(ends(d))
      .some((e) => String(e.data("label")).split(" | ").includes(relation));
  }

  /** The node of an entity found by search: its node when drawn, else a new "found" node
   *  placed right of what is drawn (its neighbours then come from addNeighbours). */
  addEntity(id, name) {
    const had = this.nodeOf(id);
    if (had.length) return had;
    const label = name || id;
    this.names.set(id, label);
    const box = this.cy.nodes().length ? this.cy.nodes().boundingBox() : { x2: 0, y1: 0, y2: 0 };
    const pos = this.cy.nodes().length ? { x: box.x2 + 260, y: (box.y1 + box.y2) / 2 } : { x: 0, y: 0 };
    return this.cy.add({ group: "nodes", data: { id: `e:${id}`, entity: id, label, w: labelWidth(label) }, position: pos, classes: "found" });
  }

  /** Add the neighbours of an entity (from GET /v1/kg/entity/{id}) around its node. */
  addNeighbours(entity, node) {
    const cy = this.cy;
    if (entity.name) this.names.set(entity.id, entity.name);
    const centre = node.position();
    const fresh = (entity.neighbours || []).filter((nb) => !this.nodeOf(nb.id).length);
    const radius = 110 + 7 * fresh.length;
    const start = this.offsets.get(entity.id) || 0;
    const added = [];
    fresh.forEach((nb, i) => {
      const angle = (2 * Math.PI * i) / Math.max(fresh.length, 1) - Math.PI / 2 + start * 0.13;
      const label = nb.name || nb.id;
      this.names.set(nb.id, label);
      added.push(
        cy.add({
          group: "nodes",
          data: { id: `e:${nb.id}`, entity: nb.id, label, w: labelWidth(label), anchor: node.id() },
          position: { x: centre.x + radius * Math.cos(angle), y: centre.y + radius * Math.sin(angle) },
          classes: "neighbour",
        }),
      );
    });
    let edgesAdded = 0;
    for (const nb of entity.neighbours || []) {
      const other = this.nodeOf(nb.id);
      if (!other.length) continue;
      const [s, d] = nb.direction === "in" ? [other.id(), node.id()] : [node.id(), other.id()];
      const id = `n:${s}${SEP}${nb.relation}${SEP}${d}`;
      if (cy.getElementById(id).length) continue;
      if (this.hopDrawn(s, d, nb.relation)) continue;
      cy.add({ group: "edges", data: { id, source: s, target: d, label: nb.relation }, classes: "neighbour" });
      edgesAdded += 1;
    }
    this.offsets.set(entity.id, entity.next_offset ?? null);
    return { nodes: added.length, edges: edgesAdded };
  }
}

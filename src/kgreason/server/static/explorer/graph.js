// The reasoning-path graph (cytoscape.js): one node per entity, one compound node per
// clustered entity set ({e1,...} -> r -> {e2,...}), collapsible; hop edges carry the
// relation and are red/dashed when a cited triple is not in the KG. Clicking an entity asks
// the page to expand its neighbours (addNeighbours). Labels are drawn on the canvas as text.
// A set the reply shows in part (paging.js) reads "N entities (first k shown)"; its "+N more"
// node draws the next members, fetching a page of the set when the drawn ones run out.

const SEP = "\u0001";
const COL_W = 225;
const ROW_H = 34;
const MAX_MEMBERS = 15; // members drawn per set; the rest are one "+N more" node
const COLLAPSE_OVER = 6; // sets larger than this start collapsed

export const STYLE = [
  {
    selector: "node",
    style: {
      label: "data(label)",
      shape: "round-rectangle",
      width: "data(w)",
      height: 24,
      "background-color": "#eef2f7",
      "border-width": 1,
      "border-color": "#8a99ad",
      "font-size": 11,
      "font-family": "system-ui, sans-serif",
      color: "#1b2430",
      "text-valign": "center",
      "text-halign": "center",
      "text-wrap": "ellipsis",
      "text-max-width": 150,
    },
  },
  { selector: "node.topic", style: { "background-color": "#ffe7a8", "border-color": "#a66f00", "border-width": 2, "font-weight": "bold" } },
  { selector: "node.answer", style: { "background-color": "#d5f2dc", "border-color": "#1d7a3a", "border-width": 2 } },
  { selector: "node.found", style: { "border-width": 3, "border-color": "#2456a6" } },
  { selector: "node.neighbour", style: { "background-color": "#ffffff", "border-style": "dashed" } },
  { selector: "node.more", style: { "background-color": "#ffffff", "border-width": 0, color: "#5a6878", "font-style": "italic" } },
  {
    selector: "node.set",
    style: {
      label: "data(label)",
      "text-valign": "top",
      "text-halign": "center",
      "font-size": 10,
      color: "#4a5868",
      "background-color": "#f6f8fb",
      "background-opacity": 0.9,
      "border-color": "#6b7b90",
      "border-style": "dashed",
      shape: "round-rectangle",
      padding: 8,
      "text-max-width": 260,
    },
  },
  {
    selector: "node.set.collapsed",
    style: { "text-valign": "center", "font-size": 11, color: "#1b2430", "background-color": "#dfe7f1", "border-style": "double", "border-width": 3, width: "data(w)", height: 28, "text-max-width": 260 },
  },
  { selector: "node.loading", style: { "border-color": "#2563eb", "border-width": 3 } },
  { selector: "node:selected", style: { "overlay-color": "#2563eb", "overlay-opacity": 0.15 } },
  {
    selector: "edge",
    style: {
      label: "data(label)",
      width: 2,
      "line-color": "#3b6fb6",
      "target-arrow-color": "#3b6fb6",
      "target-arrow-shape": "triangle",
      "curve-style": "bezier",
      "font-size": 10,
      "font-family": "system-ui, sans-serif",
      color: "#23364f",
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.85,
      "text-background-padding": 2,
      "text-rotation": "autorotate",
    },
  },
  { selector: "edge.unverified", style: { "line-color": "#c62828", "target-arrow-color": "#c62828", "line-style": "dashed" } },
  { selector: "edge.neighbour", style: { width: 1, "line-color": "#a3adb9", "target-arrow-color": "#a3adb9", color: "#5a6878", "font-size": 9 } },
  { selector: ".faded", style: { opacity: 0.15 } },
];

function labelWidth(text) {
  return Math.min(160, Math.max(40, 6.4 * String(text).length + 18));
}

/** A collapsed set's box: wide enough for "{443 entities (first 50 shown)}". */
function collapsedWidth(text) {
  return Math.min(260, Math.max(40, 6.6 * String(text).length + 18));
}

const setKey = (ids) => (ids.length === 1 ? `e:${ids[0]}` : `s:${[...ids].sort().join(SEP)}`);
// a set the reply cuts to one member is still a set, not that entity's node
const endKey = (ids, cut) => (cut && ids.length === 1 ? `s:${ids[0]}` : setKey(ids));
const tripleKey = (t) => `${t.head}${SEP}${t.relation}${SEP}${t.tail}`;

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
    this.onMore = onMore || ((id) => this.drawMore(id));
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
  showPaths(result, pages = null) {
    const cy = this.cy;
    cy.elements().remove();
    this.collapsedSets.clear();
    this.offsets.clear();
    this.setMembers.clear();
    this.paged.clear();
    for (const [id, name] of Object.entries(result.entity_names || {})) this.names.set(id, name);
    for (const t of result.topic_entities || []) this.names.set(t.id, t.name);
    const answers = new Set();
    for (const a of [...(result.answers || []), ...(result.candidates || []).slice(0, 10)]) {
      if (a.id) {
        answers.add(a.id);
        this.names.set(a.id, a.name);
      }
    }
    const topics = new Set((result.topic_entities || []).map((t) => t.id));
    const unverified = new Set((result.unverified_triples || []).map(tripleKey));
    const cols = new Map(); // node id -> column
    const order = []; // node ids in first-seen order
    const sets = new Map(); // node id -> member ids
    const edges = new Map();
    const nodePaths = new Map(); // node id -> indices of the paths through it
    (result.paths || []).forEach((path, pi) => {
      path.hops.forEach((hop, hi) => {
        const ends = [
          [hop.src, hi],
          [hop.dst, hi + 1],
        ];
        const keys = [];
        for (const [ids, col] of ends) {
          const cut = pages?.at(pi, col);
          const key = endKey(ids, cut);
          keys.push(key);
          if (!cols.has(key)) order.push(key);
          cols.set(key, Math.min(col, cols.get(key) ?? col));
          if (ids.length > 1 || cut) sets.set(key, ids);
          if (cut && !this.paged.has(key)) this.paged.set(key, cut);
        }
        const [s, d] = hop.forward ? keys : [keys[1], keys[0]];
        const rels = [hop.relation, ...(hop.alt_relations || []).map((r) => r[0])];
        const id = `h:${s}${SEP}${rels.join("|")}${SEP}${d}`;
        const bad = (hop.triples || []).some((t) => unverified.has(tripleKey(t)));
        const prev = edges.get(id);
        if (prev) {
          prev.data.paths.push(pi);
          if (bad) prev.classes = "unverified";
        } else {
          edges.set(id, { group: "edges", data: { id, source: s, target: d, label: rels.join(" | "), paths: [pi] }, classes: bad ? "unverified" : "" });
        }
        for (const k of keys) nodePaths.set(k, [...(nodePaths.get(k) || []), pi]);
      });
    });
    const eles = [];
    for (const key of order) {
      const paths = [...new Set(nodePaths.get(key) || [])];
      if (!sets.has(key)) {
        const eid = key.slice(2);
        const label = this.name(eid);
        const cls = [topics.has(eid) ? "topic" : "", answers.has(eid) ? "answer" : ""].join(" ");
        eles.push({ group: "nodes", data: { id: key, entity: eid, label, w: labelWidth(label), paths }, classes: cls });
        continue;
      }
      const cut = this.paged.get(key);
      const members = cut ? cut.members.map((m) => m.id) : sets.get(key);
      if (cut) {
        for (const m of cut.members) if (!this.names.has(m.id)) this.names.set(m.id, m.name);
        cut.listen((items) => this.paged.get(key) === cut && this.grew(key, items));
      }
      this.setMembers.set(key, members);
      const size = cut ? cut.total : members.length;
      const setLabel = cut ? cut.text() : `${size} entities`;
      eles.push({ group: "nodes", data: { id: key, label: setLabel, full: setLabel, w: labelWidth(setLabel) + 10, size, paths }, classes: cut ? "set cut" : "set" });
      eles.push(...this.memberNodes(key, members.slice(0, MAX_MEMBERS), paths));
      if (size > MAX_MEMBERS) {
        const label = `+${size - MAX_MEMBERS} more`;
        eles.push({ group: "nodes", data: { id: `more:${key}`, parent: key, set: key, label, w: labelWidth(label), paths }, classes: "more" });
      }
    }
    this.answerIds = answers;
    this.plan = { order, cols };
    cy.add(eles);
    cy.add([...edges.values()]);
    for (const n of cy.nodes(".set")) if (n.data("size") > COLLAPSE_OVER) this.toggleSet(n.id(), true, false);
    this.relayout();
    this.fit();
  }

  /** The member nodes of set `key` for these entity ids. */
  memberNodes(key, ids, paths, answers = this.answerIds) {
    return ids.map((m) => {
      const label = this.name(m);
      return { group: "nodes", data: { id: `m:${key}${SEP}${m}`, parent: key, entity: m, label, w: labelWidth(label), paths }, classes: answers.has(m) ? "answer" : "" };
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

  fit() {
    this.cy.fit(undefined, 30);
    if (this.cy.zoom() > 1.4) this.cy.zoom({ level: 1.4, renderedPosition: { x: this.cy.width() / 2, y: this.cy.height() / 2 } });
  }

  /** Collapse (true), expand (false) or toggle (undefined) one clustered set; `layout`
   *  false leaves the positions to the caller. */
  toggleSet(id, collapse, layout = true) {
    const node = this.cy.getElementById(id);
    if (!node.length) return;
    const removed = this.collapsedSets.get(id);
    if (removed && collapse !== true) {
      removed.restore();
      this.collapsedSets.delete(id);
      node.removeClass("collapsed").data("label", node.data("full"));
    } else if (!removed && collapse !== false) {
      const kids = node.children();
      if (!kids.length) return;
      const bb = kids.boundingBox();
      const gone = kids.union(kids.connectedEdges()).remove();
      node.position({ x: (bb.x1 + bb.x2) / 2, y: (bb.y1 + bb.y2) / 2 });
      this.collapsedSets.set(id, gone);
      const label = `{${node.data("full")}}`;
      node.addClass("collapsed").data({ label, w: collapsedWidth(label) });
    } else return;
    if (layout) this.relayout();
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

/**
 * Draw a SymbolLKG retrieved subgraph ({nodes:[{id,kind,name,...}], edges:[{src,rel,dst}]}).
 * Relation facts may end at a node the retrieval did not keep: that end is drawn as a dashed
 * "not retrieved" node. `onPick(item)` gets the node, or the edge, that was clicked.
 */
export function drawLKG(cytoscape, container, subgraph, onPick) {
  const kinds = { entity: "#eef2f7", concept: "#e8e0f7", rule: "#fde3c8", constraint: "#fbd5d5" };
  const shapes = { entity: "round-rectangle", concept: "ellipse", rule: "hexagon", constraint: "diamond" };
  const nodes = (subgraph?.nodes || []).map((n) => {
    const label = n.kind === "rule" || n.kind === "constraint" ? n.name || n.expression || n.id : n.name || n.id;
    return { group: "nodes", data: { id: n.id, label, w: labelWidth(label), kind: n.kind, raw: n } };
  });
  const ids = new Set(nodes.map((n) => n.data.id));
  for (const e of subgraph?.edges || []) {
    for (const end of [e.src, e.dst]) {
      if (ids.has(end)) continue;
      ids.add(end);
      const label = "not retrieved";
      nodes.push({ group: "nodes", data: { id: end, label, w: labelWidth(label), kind: "outside", raw: { id: end, kind: "outside (not retrieved)", name: "" } }, classes: "neighbour" });
    }
  }
  const edges = (subgraph?.edges || []).map((e, i) => ({ group: "edges", data: { id: `l${i}`, source: e.src, target: e.dst, label: e.rel, raw: { kind: "fact", name: e.rel, raw_text: e.raw_text } } }));
  const style = [
    ...STYLE,
    ...Object.entries(kinds).map(([k, c]) => ({ selector: `node[kind = "${k}"]`, style: { "background-color": c, shape: shapes[k] } })),
    { selector: "node[kind = \"rule\"], node[kind = \"constraint\"]", style: { width: 210, height: 48, "text-wrap": "wrap", "text-max-width": 160 } },
  ];
  const cy = cytoscape({ container, style, elements: [...nodes, ...edges], minZoom: 0.1, maxZoom: 3 });
  // sparse graphs (rules are mostly unconnected) read best on a grid; others by force
  const layout = edges.length * 2 < nodes.length
    ? { name: "grid", avoidOverlap: true, avoidOverlapPadding: 30, padding: 30, condense: true, sort: (a, b) => String(a.data("kind")).localeCompare(String(b.data("kind"))) }
    : { name: "cose", animate: false, randomize: true, nodeDimensionsIncludeLabels: true, nodeOverlap: 40, componentSpacing: 90,
        nodeRepulsion: () => 12000, idealEdgeLength: (e) => 70 + (e.source().width() + e.target().width()) / 2, padding: 30 };
  cy.layout(layout).run();
  cy.fit(undefined, 30);
  if (cy.zoom() > 1.2) cy.zoom({ level: 1.2, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  if (onPick) cy.on("tap", "node, edge", (ev) => onPick(ev.target.data("raw")));
  return cy;
}

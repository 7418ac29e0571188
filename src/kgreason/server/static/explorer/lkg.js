// The Solve view's retrieved LKG subgraph, drawn with cytoscape.js (the paths graph's style).

import { labelWidth, STYLE } from "./graphstyle.js";

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

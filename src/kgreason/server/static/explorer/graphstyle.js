// The paths graph's cytoscape style, and the widths of its labelled boxes.

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
      "font-size": 12,
      "font-family": "system-ui, sans-serif",
      color: "#1b2430",
      "text-valign": "center",
      "text-halign": "center",
      "text-wrap": "ellipsis",
      "text-max-width": 156,
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
      "font-size": 11,
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
  // a hop to a member drawn in a set bends off the hop to the set, so their labels part
  { selector: "edge.to-member", style: { "curve-style": "unbundled-bezier", "control-point-distances": [-26], "control-point-weights": [0.5] } },
  // a hop to a member of a collapsed set, drawn to the set
  { selector: "edge.proxy", style: { "line-style": "dashed", "line-dash-pattern": [8, 3] } },
  { selector: ".faded", style: { opacity: 0.15 } },
];

export function labelWidth(text) {
  return Math.min(170, Math.max(40, 7 * String(text).length + 18));
}

/** A collapsed set's box: wide enough for "{443 entities (first 50 shown)}". */
export function collapsedWidth(text) {
  return Math.min(260, Math.max(40, 6.6 * String(text).length + 18));
}

// DOM helpers. Every piece of text from the server (entity names come from user KGs) goes
// through `h`/`fill`, which only ever set textContent and attributes: no string is parsed as HTML.

/** Create an element: h("li", {class: "x", title: t}, "text", child, [more children]). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replace the children of `el` (an element or its id). */
export function fill(el, ...children) {
  const node = typeof el === "string" ? document.getElementById(el) : el;
  node.replaceChildren();
  append(node, children);
  return node;
}

export const $ = (id) => document.getElementById(id);

/** 1234 -> "1,234"; null/undefined -> "–". */
export function num(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  return typeof n === "number" ? n.toLocaleString("en-US") : String(n);
}

/** Seconds or milliseconds -> "12.3 ms" / "1.24 s". */
export function ms(v) {
  if (v === null || v === undefined) return "–";
  if (v < 1) return `${v.toFixed(2)} ms`;
  if (v < 1000) return `${v.toFixed(1)} ms`;
  return `${(v / 1000).toFixed(2)} s`;
}

// The Answer panel: the answer(s) first, with their confidence, then the other candidates
// (entities on the ranked paths that are not the answer), clearly apart. The mode's label is
// the reply's `label` (the server's wording), not text of this page.

import { fill, h } from "./dom.js";
import { cutText, moreControl } from "./paging.js";

/** The confidence of the answer (the top path's), or null: the reply's `confidence` when it
 *  has one, else the ranker trace entry's (a set-level softmax weight of the top path). */
export function confidenceOf(result) {
  if (typeof result.confidence === "number") return result.confidence;
  const r = (result.trace || []).find((t) => t && t.stage === "ranker" && typeof t.confidence === "number");
  return r ? r.confidence : null;
}

/** The label of the reply's mode: its `label`; an older saved reply: its LLM-free note. */
export function modeLabel(result) {
  if (result.label) return String(result.label);
  const note = (result.trace || []).find((t) => t && t.stage === "llm-free" && t.note);
  return note ? String(note.note) : null;
}

export const confidenceText = (c) => `confidence ${c.toFixed(2)}`;

function entityList(items, limit, attrs = {}) {
  const li = (a) => h("li", { title: a.id || "" }, a.name);
  const list = h("ol", { class: "answer-list", ...attrs }, items.slice(0, limit).map(li));
  if (items.length <= limit) return list;
  const rest = h("ol", { class: "answer-list", start: limit + 1 }, items.slice(limit).map(li));
  return [list, h("details", {}, h("summary", {}, `${items.length - limit} more`), rest)];
}

/** Save the whole result as a file (made in the page: no request). */
function download(result) {
  const blob = new Blob([JSON.stringify(result, null, 2)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: `kgreason-${result.request_id || "result"}.json` });
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/** The names of a cut answer list, then a "show more" that appends the next page's. */
function pagedNames(paged, getJSON, empty) {
  const text = h("div", { class: "answer-main", id: "answer-text" });
  let n = 0;
  const add = (items) => {
    for (const a of items) {
      if (!n) text.replaceChildren(); // "no answer" goes
      text.append(n++ ? ", " : "", h("span", { title: a.id || "" }, a.name));
    }
  };
  add(paged.members);
  if (!n && empty) text.append(empty);
  paged.listen(add);
  return [text, h("p", { class: "note" }, moreControl(paged, getJSON))];
}

/** `pages` (paging.js ResultPages) and `getJSON` page the answers a reply holds in part. */
export function renderAnswer(result, pages = null, getJSON = null) {
  const free = result.mode === "llm-free";
  fill("answer-title", "Answer", !free && result.phase ? h("span", { class: "badge" }, result.phase) : null,
    result.mode ? h("span", { class: `badge${free ? " free" : ""}` }, result.mode) : null);
  const out = [];
  if (result.error_kind) out.push(h("div", { class: "error", role: "alert" }, h("strong", {}, result.error_kind), ": ", result.error || ""));
  const label = modeLabel(result);
  if (label) out.push(h("p", { class: "mode-label", id: "mode-label" }, label));
  const answers = result.answers || [];
  const names = answers.map((a) => a.name);
  const block = h("div", { class: result.abstained ? "answer-block abstained" : "answer-block", id: "answer-block" });
  block.append(...[pages?.answers ? pagedNames(pages.answers, getJSON, "no answer")
    : h("div", { class: "answer-main", id: "answer-text" }, names.length ? names.join(", ")
      : result.abstained ? "no confident answer" : "no answer")].flat());
  if (result.abstained)
    block.append(h("p", { class: "note", id: "answer-abstained" }, "the top path's relations do not match what the question asks: the KG may not hold this answer; the best entities are listed as candidates"));
  const conf = confidenceOf(result);
  if (conf !== null && answers.length)
    block.append(h("p", { class: "confidence", id: "answer-confidence", title: "the top-ranked path's weight among the ranked paths; every answer of its set shares it" }, confidenceText(conf)));
  out.push(block);
  if (!free && result.raw_answer) out.push(h("details", {}, h("summary", {}, "the model's reply"), h("pre", {}, result.raw_answer)));
  // the other candidates: entities on the ranked paths that are not the answer
  const given = new Set(answers.map((a) => a.id ?? a.name));
  const others = (result.candidates || []).filter((c) => !given.has(c.id ?? c.name));
  if (others.length) {
    out.push(result.abstained
      ? h("h3", { class: "sub", id: "others-title" }, "Candidates ", h("span", { class: "muted" }, "(on the ranked paths, best first: not an answer)"))
      : h("h3", { class: "sub", id: "others-title" }, "Other candidates ", h("span", { class: "muted" }, "(on the ranked paths, not the answer)")));
    out.push(entityList(others, 10, { id: "others" }));
  }
  const nc = (result.candidates || []).length;
  if (result.candidates_total > nc) out.push(h("p", { class: "note cut" }, cutText(result.candidates_total, nc, "candidates")));
  for (const b of result.bounds_hit || []) out.push(h("p", { class: "warn" }, `bound hit: ${b}`));
  out.push(h("button", { type: "button", class: "small", onclick: () => download(result) }, "Download the result (JSON)"));
  fill("answer", out);
}

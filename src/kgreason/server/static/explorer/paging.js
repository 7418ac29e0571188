// Sets and answers a reply shows in part. A /v1/ask reply holds the first members of each
// large set (a hop's src_total / dst_total give the full size) and at most 1000 answers;
// its `pages` block links to the rest: GET /v1/results/{id}/sets/{k} and .../answers, each
// paged by ?offset=&limit=. The server keeps its last results only: a page of a dropped
// result is a 404 `unknown-result`, shown as a message here.

import { h, num } from "./dom.js";

/** Members fetched per "show more". */
export const PAGE = 50;
export const EVICTED = "this result is no longer kept by the server; ask again";

/** "443 entities (first 50 shown)"; "12 entities" when the set is whole. */
export function cutText(total, shown, noun = "entities") {
  return shown < total ? `${num(total)} ${noun} (first ${num(shown)} shown)` : `${num(total)} ${noun}`;
}

/** What to tell the user when a page could not be fetched. */
export function pageError(err) {
  if (err && err.status === 404 && err.kind === "unknown-result") return EVICTED;
  return `could not fetch more: ${err?.kind ? `${err.kind}: ` : ""}${err?.message || err}`;
}

/**
 * One set or answer list of a reply: its full `total`, the `members` ({id, name}) the page
 * holds so far (the reply's first, then every page fetched) and the `href` of its pages
 * (null: the server gave none, e.g. a saved result of an older server). Views that show it
 * subscribe with `listen(fn)`: fn(newMembers) runs after each page, whoever asked for it.
 */
export class Paged {
  constructor({ href, total, members, key, noun = "entities" }) {
    this.href = href || null;
    this.total = total;
    this.members = members;
    this.key = key; // "members" (sets) or "answers": the page's list
    this.noun = noun;
    this.listeners = new Set();
    this.pending = null;
    this.failed = null; // the message of a page that will not come (an evicted result)
    this.error = null; // and its error
  }

  get cut() {
    return this.members.length < this.total;
  }

  get more() {
    return this.cut && this.href !== null && this.failed === null;
  }

  text() {
    return cutText(this.total, this.members.length, this.noun);
  }

  listen(fn) {
    this.listeners.add(fn);
    return fn;
  }

  /** Fetch the next page (offset = members held) and append it; the new members. One
   *  request at a time: a second call while one is in flight gets the same promise. */
  fetchMore(getJSON, limit = PAGE) {
    if (!this.more) return Promise.resolve([]);
    this.pending ??= (async () => {
      try {
        const page = await getJSON(`${this.href}?offset=${this.members.length}&limit=${limit}`);
        const got = (page[this.key] || []).map((m) => ({ id: m.id, name: m.name ?? m.id }));
        this.members.push(...got);
        if (typeof page.total === "number") this.total = page.total;
        if (!got.length) this.total = this.members.length; // nothing past here after all
        for (const fn of this.listeners) fn(got);
        return got;
      } catch (err) {
        if (err && err.status === 404) {
          this.failed = pageError(err);
          this.error = err;
          for (const fn of this.listeners) fn([]); // views drop their "show more"
        }
        throw err;
      } finally {
        this.pending = null;
      }
    })();
    return this.pending;
  }
}

/**
 * The paged parts of one reply: `at(path, position)` is the set at that place of a path
 * (0: its first hop's src; j + 1: hop j's dst) when the reply shows it in part, else
 * undefined; `answers` the answers when cut, else null.
 */
export class ResultPages {
  constructor(result) {
    this.sets = new Map();
    const names = result.entity_names || {};
    const hrefs = new Map(((result.pages || {}).sets || []).map((s) => [`${s.path}:${s.position}`, s]));
    (result.paths || []).forEach((p, pi) => {
      (p.hops || []).forEach((hop, hi) => {
        const ends = hi === 0 ? [[0, hop.src, hop.src_total]] : [];
        ends.push([hi + 1, hop.dst, hop.dst_total]);
        for (const [pos, ids, given] of ends) {
          const link = hrefs.get(`${pi}:${pos}`);
          const total = link ? link.total : given;
          if (typeof total !== "number" || total <= ids.length) continue;
          const members = ids.map((id) => ({ id, name: names[id] ?? id }));
          const set = new Paged({ href: link?.href, total, members, key: "members" });
          set.k = link ? link.k : null;
          set.path = pi;
          set.position = pos;
          this.sets.set(`${pi}:${pos}`, set);
        }
      });
    });
    const answers = result.answers || [];
    const total = result.answers_total;
    this.answers =
      typeof total === "number" && total > answers.length
        ? new Paged({ href: (result.pages || {}).answers, total, members: answers.map((a) => ({ id: a.id, name: a.name })), key: "answers", noun: "answers" })
        : null;
  }

  at(path, position) {
    return this.sets.get(`${path}:${position}`);
  }

  /** Every cut set of path `pi`, in order. */
  ofPath(pi) {
    return [...this.sets.values()].filter((s) => s.path === pi);
  }
}

/** A span with the paged's "N entities (first k shown)", kept up to date. */
export function cutNote(paged, attrs = {}) {
  const span = h("span", { class: "cut", ...attrs }, paged.text());
  paged.listen(() => (span.textContent = paged.text()));
  return span;
}

/**
 * The "show more" control of a paged set or answer list: the note, a button that fetches
 * the next page (appended by whoever listens, e.g. the list this control sits under) and
 * goes away once every member is shown, and the message of a page that failed.
 */
export function moreControl(paged, getJSON, { limit = PAGE, label = "show more" } = {}) {
  const note = cutNote(paged, { "aria-live": "polite" });
  const out = h("span", { class: "pager", "data-total": paged.total });
  const problem = h("span", { class: "error pager-error", role: "alert", hidden: true });
  const button = h("button", { type: "button", class: "small more", title: `fetch the next ${limit}` }, label);
  const sync = () => {
    out.dataset.shown = String(paged.members.length);
    if (!paged.more) button.remove();
  };
  button.addEventListener("click", async (e) => {
    e.stopPropagation();
    button.disabled = true;
    problem.hidden = true;
    try {
      await paged.fetchMore(getJSON, limit);
    } catch (err) {
      problem.textContent = pageError(err);
      problem.hidden = false;
    } finally {
      button.disabled = false;
      sync();
    }
  });
  paged.listen(sync);
  out.append(note, " ", button, problem);
  sync();
  return out;
}

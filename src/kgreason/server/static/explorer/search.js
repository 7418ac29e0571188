// The "Find entity" box: an ARIA combobox over GET /v1/kg/search. Typing waits `delay` ms,
// keeps at most one request in flight (the latest text is sent when it returns) and drops any
// reply whose query is no longer the box's text. Names are KG data: built with `h` (text only).

import { ApiError } from "./api.js";
import { $, fill, h } from "./dom.js";

const LIMIT = 8;
const MIN_CHARS = 2;

/** The topic entities of the `;`-separated field. An item in double quotes may hold `;`
 * (and `""` for a quote): `"Film; The Sequel"; Other Film`. An unclosed quote runs to the end. */
export function splitTopics(value) {
  const items = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i])) i += 1;
    let item = null; // a quoted item, read up to its closing quote
    if (value[i] === '"') {
      item = "";
      i += 1;
      while (i < value.length) {
        if (value[i] === '"' && value[i + 1] === '"') { item += '"'; i += 2; }
        else if (value[i] === '"') { i += 1; break; }
        else { item += value[i]; i += 1; }
      }
    }
    let end = value.indexOf(";", i);
    if (end < 0) end = value.length;
    if (item === null) item = value.slice(i, end).trim(); // (after a quote: dropped)
    i = end + 1;
    if (item) items.push(item);
  }
  return items;
}

/** One topic as the field writes it: quoted when it holds `;` or `"`, or starts or ends
 * with a space (splitTopics reads it back unchanged). */
export function formatTopic(id) {
  return /[;"]|^\s|\s$/.test(id) ? `"${id.replaceAll('"', '""')}"` : id;
}

/** Add `id` to the field's topics, keeping what is there and never listing it twice. */
export function addTopic(value, id) {
  const items = splitTopics(value);
  if (!items.includes(id)) items.push(id);
  return items.map(formatTopic).join("; ");
}

function errorText(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) return "this server wants a bearer token";
    return `search failed: ${err.kind} ${err.message}`.slice(0, 200);
  }
  return "search failed: the server is not reachable";
}

export class EntitySearch {
  /**
   * `input`, `list` (the listbox), `message` (its status line) are elements; `getJSON(path,
   * signal)` fetches; `onPick(item)` and `onShow(item)` get a suggestion ({id, name, kind});
   * `onError(err)` sees a failed request (the page asks for a token on a 401).
   */
  constructor(input, list, message, { getJSON, onPick, onShow, onError, delay = 200 }) {
    Object.assign(this, { input, list, message, getJSON, onPick, onShow, onError, delay });
    this.items = [];
    this.active = -1;
    this.timer = null;
    this.inFlight = null; // the query being fetched, or null
    this.closed = 0; // counts close(): a reply to a box closed since it was sent is not shown
    input.addEventListener("input", () => this.schedule());
    input.addEventListener("keydown", (e) => this.key(e));
    input.addEventListener("blur", () => setTimeout(() => this.list.contains(document.activeElement) || this.close(), 150));
  }

  query() {
    return this.input.value.trim();
  }

  schedule() {
    clearTimeout(this.timer);
    if (this.query().length < MIN_CHARS) {
      this.close();
      return;
    }
    this.timer = setTimeout(() => this.send(), this.delay);
  }

  async send() {
    const q = this.query();
    if (this.inFlight !== null || q.length < MIN_CHARS) return; // sent again when the reply lands
    this.inFlight = q;
    const closed = this.closed;
    let items = null;
    let error = null;
    try {
      const body = await this.getJSON(`/v1/kg/search?q=${encodeURIComponent(q)}&limit=${LIMIT}`);
      items = Array.isArray(body?.items) ? body.items.slice(0, LIMIT) : [];
    } catch (err) {
      error = errorText(err);
      this.onError?.(err);
    } finally {
      this.inFlight = null;
    }
    const now = this.query();
    if (now !== q) {
      // a stale reply: the text changed while it was on its way
      if (now.length >= MIN_CHARS) this.send();
      return;
    }
    if (closed !== this.closed) return; // Escape, a pick or a blur closed it meanwhile
    if (error !== null) this.show([], error);
    else this.show(items, items.length ? "" : `no entity matches "${q}"`);
  }

  show(items, note) {
    this.items = items;
    this.active = -1;
    this.input.removeAttribute("aria-activedescendant");
    fill(this.list, items.map((it, i) => this.option(it, i)));
    this.list.hidden = !items.length;
    fill(this.message, note);
    this.message.className = note.startsWith("search failed") || note.includes("token") ? "find-msg error" : "find-msg";
    this.message.hidden = !note;
    this.input.setAttribute("aria-expanded", String(items.length > 0));
  }

  option(it, i) {
    const name = String(it.name ?? it.id);
    const id = String(it.id);
    const li = h("li", { role: "option", id: `find-opt-${i}`, "aria-selected": "false", "data-id": id },
      h("span", { class: "find-name" }, name),
      name !== id ? h("small", { class: "find-id" }, id) : null,
      h("span", { class: "badge find-kind" }, String(it.kind ?? "")),
      h("button", { type: "button", class: "small find-show", tabindex: "-1", title: `add ${name} and its neighbours to the graph` }, "show"));
    li.addEventListener("mousedown", (e) => e.preventDefault()); // keep the focus in the box
    li.addEventListener("click", (e) => {
      if (e.target.closest("button")) this.showItem(i);
      else this.pick(i);
    });
    return li;
  }

  move(delta) {
    if (!this.items.length) return;
    const n = this.items.length;
    this.active = this.active < 0 ? (delta > 0 ? 0 : n - 1) : (this.active + delta + n) % n;
    [...this.list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === this.active)));
    const li = this.list.children[this.active];
    this.input.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
  }

  key(e) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (this.list.hidden && this.query().length >= MIN_CHARS) this.send();
      else this.move(e.key === "ArrowDown" ? 1 : -1);
    } else if (e.key === "Enter") {
      e.preventDefault(); // never submits the question form
      if (this.active >= 0) (e.shiftKey ? this.showItem(this.active) : this.pick(this.active));
    } else if (e.key === "Escape") {
      if (!this.list.hidden || !this.message.hidden) e.preventDefault();
      this.close();
    }
  }

  pick(i) {
    const it = this.items[i];
    this.close();
    this.input.value = "";
    this.onPick(it);
  }

  showItem(i) {
    const it = this.items[i];
    this.close();
    this.onShow(it);
  }

  close() {
    clearTimeout(this.timer);
    this.closed += 1;
    this.items = [];
    this.active = -1;
    fill(this.list);
    this.list.hidden = true;
    this.message.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }
}

/** Wire the box of index.html: picking adds to the topic entities, "show" to the graph. */
export function initSearch({ getJSON, showEntity, announce, onError }) {
  return new EntitySearch($("find"), $("find-list"), $("find-msg"), {
    getJSON,
    onPick: (it) => {
      const topics = $("ask-topics");
      topics.value = addTopic(topics.value, String(it.id));
      topics.closest("details").open = true;
      announce(`${it.name ?? it.id} added to the topic entities`);
    },
    onShow: (it) => showEntity(String(it.id), String(it.name ?? it.id)),
    onError,
  });
}

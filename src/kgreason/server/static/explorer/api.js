// Talking to `kgreason serve`: JSON requests and the SSE stream of POST /v1/ask/stream.
// EventSource cannot POST, so the stream is read with fetch + ReadableStream and parsed here.

/** An HTTP error with the server's `{"error_kind","message"}` body. */
export class ApiError extends Error {
  constructor(status, kind, message) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

/** Headers for every request; the bearer token (if the server wants one) is kept in
 *  sessionStorage only, never in the URL. */
function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  const token = sessionStorage.getItem("kgreason.token");
  if (token) out.Authorization = `Bearer ${token}`;
  return out;
}

async function failure(resp) {
  let kind = `http-${resp.status}`;
  let message = resp.statusText || "request failed";
  try {
    const body = await resp.json();
    kind = body.error_kind || kind;
    message = body.message || body.detail || message;
    if (typeof message !== "string") message = JSON.stringify(message);
  } catch {
    /* not JSON: keep the status line */
  }
  return new ApiError(resp.status, kind, message);
}

export async function getJSON(path, signal) {
  const resp = await fetch(path, { headers: headers(), signal });
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

export async function postJSON(path, body, signal) {
  const resp = await fetch(path, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify(body),
    signal,
  });
  if (!resp.ok) throw await failure(resp);
  return resp.json();
}

/**
 * Parse an SSE byte stream into {event, data} records (the WHATWG rules that matter here:
 * `event:`/`data:` fields, multi-line data joined by "\n", comments and `id:`/`retry:`
 * ignored, a blank line dispatches, CRLF/CR/LF line ends, a record the stream cuts off
 * before its blank line is dropped).
 */
export async function* sseRecords(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let event = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (!done) buf += value;
    let m;
    while ((m = /\r\n|\r|\n/.exec(buf)) !== null) {
      if (!done && m[0] === "\r" && m.index === buf.length - 1) break; // maybe half a CRLF
      const line = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      if (line === "") {
        if (data.length) yield { event: event || "message", data: data.join("\n") };
        event = "";
        data = [];
      } else if (!line.startsWith(":")) {
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        let val = i < 0 ? "" : line.slice(i + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "event") event = val;
        else if (field === "data") data.push(val);
      }
    }
    if (done) break;
  }
  // a record cut off before its blank line is not dispatched (as EventSource does)
}

/**
 * POST /v1/ask/stream. Calls onStage(stageEvent) per `stage` event and resolves with the
 * `result` event's body; an `error` event (or a stream that ends without a result) rejects
 * with an ApiError.
 */
export async function askStream(body, onStage, signal) {
  const resp = await fetch("/v1/ask/stream", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(body),
    signal,
  });
  if (!resp.ok) throw await failure(resp);
  for await (const rec of sseRecords(resp.body)) {
    let data;
    try {
      data = JSON.parse(rec.data);
    } catch {
      continue; // keep-alive pings and the like
    }
    if (rec.event === "stage") onStage(data);
    else if (rec.event === "result") return data;
    else if (rec.event === "error")
      throw new ApiError(200, data.error_kind || "error", data.message || "the question failed");
  }
  throw new ApiError(200, "stream-ended", "the stream ended without a result");
}

"""A persistent response cache (SQLite), so re-running a question costs nothing.

The key is sha256 of endpoint + model + messages + temperature + max_tokens + sample index
(+ the reply schema, when a stage sends one)
(the endpoint since 0.x: two servers serving the same model name are different models, so
entries written before it was added simply miss once and are refetched). Repeated
samples of one prompt (self-consistency) and repair attempts (which add messages) are distinct
entries and are never replayed as each other. A hit returns the stored text and the stored
token usage with `cached=True`, so budgets behave the same whether or not the cache is warm;
the ledger counts hits separately.

Bypass: `cache = false` under `[llm]` in kgreason.toml, KGREASON_LLM__CACHE=false, or a
command's `--no-cache` flag; `build_llm(..., cache=False)` then leaves this layer out.
To start fresh, delete the file at `llm.cache_path`.

A cache that cannot be used never stops a run: a file that is not a SQLite database is moved
aside (`NAME.corrupt-TIMESTAMP`, kept for inspection) and a fresh cache started; any other
failure (read-only directory, full disk, a database broken mid-run) turns the cache off for
this process. Each case logs one warning naming the file.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Unpack

from kgreason.llm.base import (
    CallOptions,
    ChatLLM,
    Completion,
    JsonSchema,
    Message,
    Request,
    Usage,
)
from kgreason.llm.request import canonical_request, request_key

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


class CachedLLM:
    """Answers from the cache when it can, otherwise asks `inner` and stores the reply."""

    def __init__(self, inner: ChatLLM, path: Path, *, endpoint: str | None = None):
        self.inner = inner
        self.model = inner.model
        self.path = Path(path)
        self.endpoint = endpoint
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        #: set when the cache failed; from then on every call goes to `inner`
        self.disabled: str | None = None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # several runs may share one cache
            conn.execute(_SCHEMA)
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self._conn = self._connect()
            except sqlite3.DatabaseError as e:
                if not _is_corrupt(e):
                    raise
                aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
                self.path.rename(aside)
                for suffix in ("-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        self.path.with_name(self.path.name + suffix).unlink()
                log.warning(
                    "LLM cache %s is not a SQLite database (%s): moved to %s, starting afresh",
                    self.path, e, aside,
                )  # fmt: skip
                self._conn = self._connect()
        return self._conn

    def _guarded(self, op: str, fn: Any) -> Any:
        """Run a cache operation; on failure, warn once and turn the cache off."""
        if self.disabled is not None:
            return None
        try:
            with self._lock:
                return fn(self._db())
        except (sqlite3.Error, OSError) as e:
            self.disabled = f"{op} failed: {e}"
            log.warning("LLM cache %s: %s; continuing without the cache", self.path, self.disabled)
            self.close()
            return None

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    def key(
        self,
        messages: list[Message],
        temperature: float,
        max_tokens: int | None,
        sample: int,
        schema: JsonSchema | None = None,
    ) -> str:
        req = canonical_request(self.model, messages, temperature, max_tokens, sample, schema)
        if self.endpoint is not None:
            req["endpoint"] = self.endpoint
        return request_key(req)

    def get(self, key: str) -> Completion | None:
        row = self._guarded(
            "read",
            lambda db: db.execute(
                "SELECT model, text, prompt_tokens, completion_tokens, estimated"
                " FROM completions WHERE key = ?",
                (key,),
            ).fetchone(),
        )
        if row is None:
            return None
        model, text, p, c, est = row
        return Completion(text, Usage(p, c, bool(est)), model=model, cached=True)

    def put(self, key: str, c: Completion) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    c.model,
                    c.text,
                    c.usage.prompt_tokens,
                    c.usage.completion_tokens,
                    int(c.usage.estimated),
                    time.time(),
                ),
            )
            db.commit()

        self._guarded("write", write)

    def __len__(self) -> int:
        n = self._guarded("count", lambda db: db.execute("SELECT COUNT(*) FROM completions"))
        return 0 if n is None else int(n.fetchone()[0])

    async def complete(self, messages: list[Message], **opts: Unpack[CallOptions]) -> Completion:
        r = Request.of(opts)
        key = self.key(messages, r.temperature, r.max_tokens, r.sample, r.schema)
        hit = self.get(key)
        if hit is not None:
            return hit
        c = await self.inner.complete(messages, **opts)
        self.put(key, c)
        return c


def _is_corrupt(e: sqlite3.DatabaseError) -> bool:
    """True for "not a database" / "malformed" (the file is garbage), not for locks or I/O."""
    msg = str(e).lower()
    return "not a database" in msg or "malformed" in msg or "encrypted" in msg

"""A persistent response cache (SQLite), so re-running a question costs nothing.

The key is sha256 of model + messages + temperature + max_tokens + sample index: repeated
samples of one prompt (self-consistency) and repair attempts (which add messages) are distinct
entries and are never replayed as each other. A hit returns the stored text and the stored
token usage with `cached=True`, so budgets behave the same whether or not the cache is warm;
the ledger counts hits separately.

Bypass: `cache = false` under `[llm]` in kgreason.toml, KGREASON_LLM__CACHE=false, or a
command's `--no-cache` flag; `build_llm(..., cache=False)` then leaves this layer out.
To start fresh, delete the file at `llm.cache_path`.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from kgreason.llm.base import ChatLLM, Completion, Message, Usage
from kgreason.llm.request import canonical_request, request_key

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

    def __init__(self, inner: ChatLLM, path: Path):
        self.inner = inner
        self.model = inner.model
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")  # several runs may share one cache
            conn.execute(_SCHEMA)
            conn.commit()
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def key(
        self, messages: list[Message], temperature: float, max_tokens: int | None, sample: int
    ) -> str:
        return request_key(canonical_request(self.model, messages, temperature, max_tokens, sample))

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT model, text, prompt_tokens, completion_tokens, estimated"
                    " FROM completions WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
        if row is None:
            return None
        model, text, p, c, est = row
        return Completion(text, Usage(p, c, bool(est)), model=model, cached=True)

    def put(self, key: str, c: Completion) -> None:
        with self._lock:
            db = self._db()
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

    def __len__(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    async def complete(
        self,
        messages: list[Message],
        *,
        stage: str,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        sample: int = 0,
    ) -> Completion:
        key = self.key(messages, temperature, max_tokens, sample)
        hit = self.get(key)
        if hit is not None:
            return hit
        c = await self.inner.complete(
            messages, stage=stage, temperature=temperature, max_tokens=max_tokens, sample=sample
        )
        self.put(key, c)
        return c

"""Persistent LKG store on SQLite (standard library) with FTS5 for text search.

Typed node and edge tables, one row per node/edge however many documents mention it, and
provenance tables saying which documents contributed each node and edge. Adding a document
is idempotent by content hash; deleting a document removes only the nodes and edges no
other document contributed. Embeddings are stored per embedder name, so switching models
never mixes vectors.

Schema growth stays readable both ways: columns added later (`spec`, the constraint subtype
fields as JSON; `titles`, the passage titles of a node or fact) have defaults, a store
written before them gains them on open (`ALTER TABLE ... ADD COLUMN`), and its old rows
read as "no fields, no titles".
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from kgreason.lkg.ids import content_hash
from kgreason.lkg.types import Edge, LKGraph, Node, merge_node

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
  doc_id TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT '', chars INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS nodes(
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
  expression TEXT NOT NULL, raw_text TEXT NOT NULL, description TEXT NOT NULL,
  related TEXT NOT NULL, aliases TEXT NOT NULL, flags TEXT NOT NULL,
  spec TEXT NOT NULL DEFAULT '{}', titles TEXT NOT NULL DEFAULT '[]');
CREATE INDEX IF NOT EXISTS nodes_kind ON nodes(kind);
CREATE TABLE IF NOT EXISTS edges(
  src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL, raw_text TEXT NOT NULL,
  flags TEXT NOT NULL, titles TEXT NOT NULL DEFAULT '[]', PRIMARY KEY(src, rel, dst));
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE TABLE IF NOT EXISTS node_docs(node_id TEXT NOT NULL, doc_id TEXT NOT NULL,
  PRIMARY KEY(node_id, doc_id));
CREATE INDEX IF NOT EXISTS node_docs_doc ON node_docs(doc_id);
CREATE TABLE IF NOT EXISTS edge_docs(src TEXT NOT NULL, rel TEXT NOT NULL, dst TEXT NOT NULL,
  doc_id TEXT NOT NULL, PRIMARY KEY(src, rel, dst, doc_id));
CREATE INDEX IF NOT EXISTS edge_docs_doc ON edge_docs(doc_id);
CREATE TABLE IF NOT EXISTS embeddings(node_id TEXT NOT NULL, model TEXT NOT NULL,
  vec BLOB NOT NULL, PRIMARY KEY(node_id, model));
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(id UNINDEXED, name, body);
"""

_NODE_COLS = (
    "id, kind, name, type, expression, raw_text, description, related, aliases, flags, spec, titles"
)
_EDGE_COLS = "src, rel, dst, raw_text, flags, titles"
#: columns added after the first schema: (table, column, declaration) for old stores
_ADDED_COLUMNS = (
    ("nodes", "spec", "TEXT NOT NULL DEFAULT '{}'"),
    ("nodes", "titles", "TEXT NOT NULL DEFAULT '[]'"),
    ("edges", "titles", "TEXT NOT NULL DEFAULT '[]'"),
)
DB_NAME = "lkg.sqlite"
_SPEC_FIELDS = ("relation", "operation", "value")


def _migrate(db: sqlite3.Connection) -> None:
    """Give a store written by an older kgreason the columns added since (with defaults)."""
    for table, col, decl in _ADDED_COLUMNS:
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if col not in have:
            with db:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")


class StoreError(Exception):
    """The store file is missing or is not an LKG store; the message names the path."""


#: tables every LKG store has had since the first schema (others are added on open)
_STORE_TABLES = frozenset({"docs", "nodes", "edges"})


def _check_is_store(db: sqlite3.Connection, path: Path | None) -> None:
    """An existing file opened as a store must be one: an empty file or another program's
    SQLite database would otherwise be given the schema and read as an empty store."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not _STORE_TABLES.issubset(tables):
        what = (
            "an empty file"
            if path is not None and path.stat().st_size == 0
            else ("a SQLite database without the LKG tables" if tables else "an empty database")
        )
        raise StoreError(f"{path}: not an LKG store ({what})")


def _row_to_node(r: tuple) -> Node:
    return Node(
        id=r[0],
        kind=r[1],
        name=r[2],
        type=r[3],
        expression=r[4],
        raw_text=r[5],
        description=r[6],
        related=json.loads(r[7]),
        aliases=json.loads(r[8]),
        flags=json.loads(r[9]),
        titles=json.loads(r[11]),
        **{k: v for k, v in json.loads(r[10]).items() if k in _SPEC_FIELDS},
    )


class LKGStore:
    """An LKG in one SQLite file (`path`), or in memory when `path` is None.

    Not thread-safe: use one store object per thread (SQLite connections are per thread).
    `version` increases on every change so in-memory indices know when to rebuild.
    """

    def __init__(self, path: str | Path | None = None, *, create: bool = True):
        self.path = Path(path) if path is not None else None
        if self.path is not None and self.path.is_dir():
            self.path = self.path / DB_NAME
        if self.path is not None and not create and not self.path.is_file():
            raise StoreError(f"no LKG store at {self.path}")
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(self.path) if self.path else ":memory:")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not an LKG store ({e})") from None
        try:
            if not create:  # open what is there: never turn another file into a store
                _check_is_store(self.db, self.path)
            self.db.executescript(SCHEMA)
            _migrate(self.db)
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise StoreError(f"{self.path}: not an LKG store ({e})") from None
        except StoreError:
            self.db.close()
            raise
        self.version = 0

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LKGStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self.db:
            yield self.db
        self.version += 1

    # ---- documents ------------------------------------------------------------------
    def has_document(self, text: str) -> bool:
        q = "SELECT 1 FROM docs WHERE doc_id = ?"
        return self.db.execute(q, (content_hash(text),)).fetchone() is not None

    def documents(self) -> list[dict[str, object]]:
        rows = self.db.execute("SELECT doc_id, source, chars FROM docs ORDER BY rowid").fetchall()
        return [{"doc_id": d, "source": s, "chars": c} for d, s, c in rows]

    def add_document(self, text: str, graph: LKGraph, source: str = "") -> tuple[str, bool]:
        """Store one document's extracted graph. Returns (doc_id, added); a document whose
        content hash is already stored is left alone (added=False)."""
        doc_id = content_hash(text)
        if self.has_document(text):
            return doc_id, False
        with self._tx() as db:
            db.execute("INSERT INTO docs VALUES (?, ?, ?)", (doc_id, source, len(text)))
            self._upsert(db, graph.nodes.values(), graph.edges.values())
            db.executemany(
                "INSERT OR IGNORE INTO node_docs VALUES (?, ?)",
                [(n, doc_id) for n in graph.nodes],
            )
            db.executemany(
                "INSERT OR IGNORE INTO edge_docs VALUES (?, ?, ?, ?)",
                [(*e.key, doc_id) for e in graph.edges.values()],
            )
        return doc_id, True

    def add_graph(self, graph: LKGraph) -> None:
        """Insert nodes and edges with no document provenance (benchmarks, direct loads)."""
        with self._tx() as db:
            self._upsert(db, graph.nodes.values(), graph.edges.values())

    def delete_document(self, doc_id: str) -> dict[str, int]:
        """Remove a document and every node/edge only it contributed."""
        with self._tx() as db:
            if db.execute("SELECT 1 FROM docs WHERE doc_id = ?", (doc_id,)).fetchone() is None:
                raise StoreError(f"document {doc_id} is not in the store")
            mine = [
                r[0]
                for r in db.execute("SELECT node_id FROM node_docs WHERE doc_id = ?", (doc_id,))
            ]
            my_edges = db.execute(
                "SELECT src, rel, dst FROM edge_docs WHERE doc_id = ?", (doc_id,)
            ).fetchall()
            db.execute("DELETE FROM docs WHERE doc_id = ?", (doc_id,))
            db.execute("DELETE FROM node_docs WHERE doc_id = ?", (doc_id,))
            db.execute("DELETE FROM edge_docs WHERE doc_id = ?", (doc_id,))
            still = "SELECT 1 FROM node_docs WHERE node_id = ?"
            gone = [i for i in mine if db.execute(still, (i,)).fetchone() is None]
            gone_rows = [(i,) for i in gone]
            db.executemany(
                "DELETE FROM nodes_fts WHERE rowid = (SELECT rowid FROM nodes WHERE id = ?)",
                gone_rows,
            )
            db.executemany("DELETE FROM nodes WHERE id = ?", gone_rows)
            db.executemany("DELETE FROM embeddings WHERE node_id = ?", gone_rows)
            edge_still = "SELECT 1 FROM edge_docs WHERE src = ? AND rel = ? AND dst = ?"
            dead = [k for k in my_edges if db.execute(edge_still, k).fetchone() is None]
            db.executemany("DELETE FROM edges WHERE src = ? AND rel = ? AND dst = ?", dead)
            gone_set = [(i, i) for i in gone]
            db.executemany("DELETE FROM edges WHERE src = ? OR dst = ?", gone_set)
            n_edges = len(dead)
            return {"nodes": len(gone), "edges": n_edges}

    # ---- nodes and edges ----------------------------------------------------------------
    def _upsert(self, db: sqlite3.Connection, nodes: Iterable[Node], edges: Iterable[Edge]) -> None:
        """Insert or merge nodes and edges in bulk. Row ids stay stable on update (UPSERT,
        not REPLACE), so the FTS rows are addressed by rowid, never by a scan."""
        todo = list(nodes)
        existing = self._get_many(db, [n.id for n in todo])
        rows, fts, changed, stale = [], [], [], []
        for n in todo:
            old = existing.get(n.id)
            if old is not None:
                before = old.embed_text()
                merge_node(old, n)
                n = old
                changed.append((n.id,))
                if n.embed_text() != before:  # the stored vectors no longer match the text
                    stale.append((n.id,))
            rows.append((
                n.id, n.kind, n.name, n.type, n.expression, n.raw_text, n.description,
                json.dumps(n.related), json.dumps(n.aliases), json.dumps(n.flags),
                json.dumps(n.spec(), ensure_ascii=False), json.dumps(n.titles, ensure_ascii=False),
            ))  # fmt: skip
            body = " ".join([n.raw_text, n.description, n.expression, *n.aliases])
            fts.append((n.id, n.name, body, n.id))
        db.executemany(
            "DELETE FROM nodes_fts WHERE rowid = (SELECT rowid FROM nodes WHERE id = ?)", changed
        )
        updates = ", ".join(f"{c} = excluded.{c}" for c in _NODE_COLS.split(", ")[1:])
        db.executemany(
            f"INSERT INTO nodes({_NODE_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
            f"ON CONFLICT(id) DO UPDATE SET {updates}",
            rows,
        )
        db.executemany(
            "INSERT INTO nodes_fts(rowid, id, name, body) SELECT rowid, ?, ?, ? FROM nodes "
            "WHERE id = ?",
            fts,
        )
        db.executemany("DELETE FROM embeddings WHERE node_id = ?", stale)
        for e in edges:
            prev = db.execute(
                "SELECT raw_text, flags, titles FROM edges WHERE src=? AND rel=? AND dst=?", e.key
            ).fetchone()
            raw, flags, titles = e.raw_text, set(e.flags), list(e.titles)
            if prev is not None:
                raw = prev[0] or raw
                flags |= set(json.loads(prev[1]))
                titles = list(dict.fromkeys([*json.loads(prev[2]), *titles]))
            db.execute(
                f"INSERT INTO edges({_EDGE_COLS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(src, rel, dst) DO UPDATE SET raw_text = excluded.raw_text, "
                "flags = excluded.flags, titles = excluded.titles",
                (*e.key, raw, json.dumps(sorted(flags)), json.dumps(titles, ensure_ascii=False)),
            )

    def _get_many(self, db: sqlite3.Connection, ids: list[str]) -> dict[str, Node]:
        out: dict[str, Node] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for r in db.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE id IN ({marks})", part):
                out[r[0]] = _row_to_node(r)
        return out

    def get_node(self, node_id: str) -> Node | None:
        r = self.db.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE id = ?", (node_id,)).fetchone()
        return _row_to_node(r) if r else None

    def nodes(self, kinds: Iterable[str] | None = None) -> list[Node]:
        if kinds is None:
            rows = self.db.execute(f"SELECT {_NODE_COLS} FROM nodes ORDER BY rowid")
        else:
            ks = list(kinds)
            marks = ",".join("?" * len(ks))
            rows = self.db.execute(
                f"SELECT {_NODE_COLS} FROM nodes WHERE kind IN ({marks}) ORDER BY rowid", ks
            )
        return [_row_to_node(r) for r in rows]

    def edges(self) -> list[Edge]:
        rows = self.db.execute(f"SELECT {_EDGE_COLS} FROM edges ORDER BY rowid")
        return [
            Edge(src=s, rel=r, dst=d, raw_text=t, flags=json.loads(f), titles=json.loads(ti))
            for s, r, d, t, f, ti in rows
        ]

    def counts(self) -> dict[str, int]:
        out = dict(self.db.execute("SELECT kind, COUNT(*) FROM nodes GROUP BY kind").fetchall())
        out["edges"] = self.db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
        out["documents"] = self.db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        return out

    # ---- text search and embeddings ---------------------------------------------------
    def bm25(self, terms: Iterable[str], limit: int) -> list[tuple[str, float]]:
        """FTS5 BM25 over node names and texts: (node_id, score), best first. Terms are
        quoted, so user text can never inject FTS query syntax."""
        toks = [t for t in dict.fromkeys(terms) if t]
        if not toks or limit <= 0:
            return []
        query = " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)
        rows = self.db.execute(
            "SELECT id, bm25(nodes_fts, 2.0, 1.0) AS s FROM nodes_fts WHERE nodes_fts MATCH ? "
            "ORDER BY s LIMIT ?",
            (query, limit),
        ).fetchall()
        return [(i, -s) for i, s in rows]  # SQLite's bm25() is lower-is-better

    def embeddings(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for nid, blob in self.db.execute(
                f"SELECT node_id, vec FROM embeddings WHERE model = ? AND node_id IN ({marks})",
                [model, *part],
            ):
                out[nid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_embeddings(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.db:  # vectors are a cache: no version bump
            self.db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(k, model, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()],
            )

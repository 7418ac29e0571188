"""Start real SPARQL servers (Virtuoso, Oxigraph) and a misbehaving stub for tests.

Each server runs on loopback ports chosen free, in its own temporary directory and its own
process session; `stop()` ends exactly that process. Nothing here is used by the package.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FREEBASE_NT = FIXTURES / "nijmegen" / "freebase.nt"
WIKIDATA_NT = FIXTURES / "wikidata" / "nijmegen.nt"
FREEBASE_GRAPH = "http://rdf.freebase.com/ns/"


class ServerUnavailable(RuntimeError):
    """The server binary is not installed (the only reason a local run may skip)."""


class ServerStartError(RuntimeError):
    """The server is installed but did not start or load its data."""


def find_binary(name: str) -> str | None:
    """`name` beside the running interpreter (a virtualenv's bin/, where `pip install oxigraph`
    puts the server, used even when the venv is not activated), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    name: str
    url: str
    proc: subprocess.Popen
    workdir: Path
    log: Path
    timings: dict[str, float] = field(default_factory=dict)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def log_tail(self, n: int = 20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


def _sparql_ready(url: str) -> bool:
    data = urllib.parse.urlencode({"query": "ASK { }"}).encode()
    req = urllib.request.Request(
        url, data=data, headers={"Accept": "application/sparql-results+json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            return resp.status == 200
    except (OSError, ValueError):
        return False


def _wait_ready(server: RunningServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise ServerStartError(
                f"{server.name} exited with {server.proc.returncode}:\n{server.log_tail()}"
            )
        if _sparql_ready(server.url):
            return
        time.sleep(0.1)
    server.stop()
    raise ServerStartError(
        f"{server.name} not ready at {server.url} after {timeout_s} s:\n{server.log_tail()}"
    )


def _popen(cmd: list[str], log: Path, cwd: Path) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(
            cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


VIRTUOSO_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
TempStorage = TempDatabase
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DisableUnixSocket = 1
DirsAllowed = ., {d}/data
NumberOfBuffers = {buffers}
MaxDirtyBuffers = {dirty}
ThreadsPerQuery = 2
MaxClientConnections = 8
CheckpointInterval = 0
MaxSortedTopRows = {max_sorted}
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {d}
ServerThreads = 4
MaxClientConnections = 8
[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryExecutionTime = 30
"""


def start_virtuoso(
    workdir: Path,
    nt_files: list[Path],
    *,
    graph: str = FREEBASE_GRAPH,
    result_set_max_rows: int = 10000,
    max_sorted_top_rows: int = 10000,
    text_index: bool = False,
    timeout_s: float = 60.0,
) -> RunningServer:
    """virtuoso-t in the foreground with a private database, then an isql bulk load.
    `text_index` turns on Virtuoso's free-text index of all literals (for bif:contains)."""
    binary, isql = find_binary("virtuoso-t"), find_binary("isql-vt")
    if not binary or not isql:
        raise ServerUnavailable("virtuoso-t/isql-vt not installed (apt virtuoso-opensource)")
    (workdir / "data").mkdir(parents=True, exist_ok=True)
    for f in nt_files:
        shutil.copy(f, workdir / "data" / f.name)
    sql_port, http_port = free_port(), free_port()
    ini = workdir / "virtuoso.ini"
    ini.write_text(
        VIRTUOSO_INI.format(
            d=workdir,
            sql_port=sql_port,
            http_port=http_port,
            max_rows=result_set_max_rows,
            max_sorted=max_sorted_top_rows,
            buffers=2000,
            dirty=1200,
        )
    )
    t0 = time.monotonic()
    log = workdir / "stdout.log"
    proc = _popen([binary, "+foreground", "+configfile", str(ini)], log, workdir)
    server = RunningServer("Virtuoso", f"http://127.0.0.1:{http_port}/sparql", proc, workdir, log)
    _wait_ready(server, timeout_s)
    server.timings["start_s"] = time.monotonic() - t0
    t1 = time.monotonic()
    names = " ".join(f.name for f in nt_files)
    sql = (
        ("DB.DBA.RDF_OBJ_FT_RULE_ADD(null, null, 'All'); " if text_index else "")
        + "".join(f"ld_dir('{workdir}/data', '{f.name}', '{graph}'); " for f in nt_files)
        + "rdf_loader_run(); "
        + ("DB.DBA.VT_INC_INDEX_DB_DBA_RDF_OBJ(); " if text_index else "")
        + "checkpoint; SELECT ll_file, ll_error FROM DB.DBA.load_list;"
    )
    res = subprocess.run(
        [isql, f"127.0.0.1:{sql_port}", "dba", "dba", f"exec={sql}"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=workdir,
    )
    loaded = res.returncode == 0 and "NULL" in res.stdout and "Error" not in res.stdout
    if not loaded:
        server.stop()
        raise ServerStartError(f"Virtuoso bulk load of {names} failed:\n{res.stdout}{res.stderr}")
    server.timings["load_s"] = time.monotonic() - t1
    return server


def start_oxigraph(
    workdir: Path, nt_files: list[Path], *, timeout_s: float = 30.0
) -> RunningServer:
    """`oxigraph load` into a fresh RocksDB directory, then `oxigraph serve` on loopback."""
    binary = find_binary("oxigraph")
    if not binary:
        raise ServerUnavailable("the `oxigraph` server is not installed (pip oxigraph)")
    workdir.mkdir(parents=True, exist_ok=True)
    location = workdir / "store"
    log = workdir / "stdout.log"
    t0 = time.monotonic()
    for f in nt_files:
        res = subprocess.run(
            [binary, "load", "--location", str(location), "--file", str(f)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if res.returncode != 0:
            raise ServerStartError(f"oxigraph load {f} failed:\n{res.stdout}{res.stderr}")
    load_s = time.monotonic() - t0
    port = free_port()
    t1 = time.monotonic()
    proc = _popen(
        [binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        log,
        workdir,
    )
    server = RunningServer("Oxigraph", f"http://127.0.0.1:{port}/query", proc, workdir, log)
    _wait_ready(server, timeout_s)
    server.timings.update(load_s=load_s, start_s=time.monotonic() - t1)
    return server


class _StubHandler(http.server.BaseHTTPRequestHandler):
    """Misbehaving endpoint: the path picks the failure."""

    server: _StubServer
    protocol_version = "HTTP/1.1"  # keep-alive, like real endpoints

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, ctype: str, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.hits[self.path] = self.server.hits.get(self.path, 0) + 1
            hits = self.server.hits[self.path]
        html = "<html><head><title>Error</title></head><body><h1>Service Unavailable</h1></body></html>"
        if self.path == "/slow":
            time.sleep(self.server.slow_s)
            self._send(200, "application/sparql-results+json", '{"boolean": true}')
        elif self.path == "/html500":
            self._send(500, "text/html", html)
        elif self.path == "/html200":
            self._send(200, "text/html", html)
        elif self.path == "/bad400":
            self._send(400, "text/plain", "Virtuoso 37000 Error SP030: syntax error")
        elif self.path == "/flaky":  # two 503s, then a valid answer
            if hits <= 2:
                self._send(503, "text/html", html)
            else:
                self._send(200, "application/sparql-results+json", '{"boolean": true}')
        else:
            self._send(404, "text/plain", "no such stub")


class _StubServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, slow_s: float):
        super().__init__(("127.0.0.1", 0), _StubHandler)
        self.slow_s = slow_s
        self.hits: dict[str, int] = {}
        self.lock = threading.Lock()


@contextlib.contextmanager
def stub_endpoint(slow_s: float = 1.0):
    """Yields (base_url, hits) for a local stub server; paths: /slow /html500 /html200
    /bad400 /flaky."""
    srv = _StubServer(slow_s)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.hits
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")

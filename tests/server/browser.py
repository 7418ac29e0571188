"""Helpers of the explorer's browser tests: Debian's headless Chromium (driven by the
python `playwright` package; nothing is downloaded), `kgreason serve` started on a free port
(LLM-free, this checkout's sources), and a `Page` that records console errors, dialogs and
requests. Importing it skips the importing test module when /usr/bin/chromium or playwright
is missing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUESTION = "who directed [Once Were Warriors]"
EVIL = "<img src=x onerror=alert(1)>"
EVIL_SCRIPT = "<script>window.__pwned=1</script>"
ROOT = Path(__file__).resolve().parents[2]

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is missing (apt install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_cmd(port: int, kg: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "kgreason", "serve", "--host", "127.0.0.1", "--port", str(port)]
    cmd.append("--llm-free")
    return cmd + (["--kg", str(kg)] if kg else [])


def _env() -> dict[str, str]:
    """No LLM configured (the LLM-free mode), this checkout's sources first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KGREASON_LLM"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("KGREASON_CONFIG", None)  # no config file (the server runs in a tmp dir)
    return env


def _start(tmp: Path, kg: Path | None = None) -> Iterator[str]:
    port = _free_port()
    log = tmp / f"server-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            _server_cmd(port, kg), stdout=out, stderr=subprocess.STDOUT, env=_env(), cwd=tmp
        )
    base = f"http://127.0.0.1:{port}"
    try:
        t_end = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > t_end:
                pytest.fail(f"the server did not start in 120 s: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def tsv_kg(tmp: Path, triples: str) -> Path:
    """A user KG store `tmp/kg` built from TSV lines (head, relation, tail)."""
    from kgreason.kg.loaders import Source
    from kgreason.kg.store.build import build_store

    tsv = tmp / "kg.tsv"
    tsv.write_text(triples, encoding="utf-8")
    build_store([Source(tsv, "tsv")], tmp / "kg")
    return tmp / "kg"


def evil_kg(tmp: Path) -> Path:
    """A user KG store (built in `tmp`) whose entity names are HTML and script."""
    return tsv_kg(
        tmp,
        f"Evil Film\tdirected_by\t{EVIL}\n"
        f"Evil Film\tstarred_actors\t{EVIL_SCRIPT}\n"
        "Evil Film\thas_genre\tDrama\n"
        f"{EVIL}\tdirected_by\tOther Film\n"
        "Other Film\thas_genre\tDrama\n",
    )


def _launch(p: Any) -> Any:
    """Chromium with its sandbox as a normal user; without it as root, where Chromium
    refuses to start sandboxed (playwright then adds --no-sandbox), or where the system
    denies the user namespaces the sandbox needs (said on stdout, run with -s to see)."""
    sandbox = os.geteuid() != 0
    try:
        return p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, chromium_sandbox=sandbox)
    except sync_api.Error as e:
        if not sandbox:
            raise
        print(f"chromium would not start sandboxed, running it without: {str(e)[:200]}")
        return p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, chromium_sandbox=False)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = _launch(p)
        yield b
        b.close()


class Page:
    """A 1366x768 page that records console errors, dialogs and every request's URL."""

    def __init__(self, browser: Any, base: str):
        self.base = base
        self.page = browser.new_page(viewport={"width": 1366, "height": 768})
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", self._console)
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.goto(f"{base}/")
        self.page.wait_for_function("window.kgExplorer && window.kgExplorer.ready")

    def _console(self, msg: Any) -> None:
        if msg.type == "error":
            self.errors.append(msg.text)

    def _dialog(self, d: Any) -> None:
        self.dialogs.append(d.message)
        d.dismiss()

    def js(self, expr: str) -> Any:
        return self.page.evaluate(expr)

    def ask(self, question: str) -> dict[str, Any]:
        self.page.fill("#question", question)
        self.page.click("#ask-btn")
        self.page.wait_for_function(
            "q => window.kgExplorer.lastResult && window.kgExplorer.lastResult.question === q",
            arg=question,
            timeout=90_000,
        )
        return dict(self.js("window.kgExplorer.lastResult"))

    def counts(self) -> tuple[int, int]:
        n, e = self.js("[window.kgExplorer.cy.nodes().length, window.kgExplorer.cy.edges().length]")
        return int(n), int(e)

    def click_entity(self, entity: str) -> None:
        """Click the graph node of `entity` where it is drawn on the canvas."""
        x, y = self.js(
            f"""(() => {{
              const n = window.kgExplorer.cy.nodes().filter(n => n.data('entity') === {_js_str(entity)})[0];
              const p = n.renderedPosition();
              const r = document.getElementById('graph').getBoundingClientRect();
              return [p.x + r.left, p.y + r.top];
            }})()"""
        )
        self.page.mouse.click(x, y)

    def text(self, selector: str) -> str:
        return str(self.page.text_content(selector) or "")

    def shot(self, path: Path) -> Path:
        self.page.screenshot(path=str(path))
        print(f"screenshot: {path}")
        return path

    def offsite(self) -> list[str]:
        return [u for u in self.requests if not u.startswith((self.base, "data:"))]


def _js_str(s: str) -> str:
    return json.dumps(s)

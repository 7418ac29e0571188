"""An async SPARQL protocol client: POSTed queries, JSON results, retries, clear errors.

httpx is used directly (not SPARQLWrapper): it is async, already a dependency, lets tests
inject transports, and gives typed timeout/connection errors to decide what to retry.
Transient failures (connection errors, timeouts, HTTP 5xx/429) are retried with exponential
backoff plus jitter; a query the server rejects (4xx) or an answer that is not SPARQL JSON
(an HTML error or maintenance page) fails at once. Every error names the endpoint URL, and its
class names what happened (`error_kind`: sparql-unreachable, -timeout, -rejected, -bad-reply,
-too-large).

Each attempt has one deadline (`timeout_s`) around connect, headers and the whole body (a
server trickling bytes never trips httpx's per-read timeout), and the body is streamed
against a byte cap (`max_reply_bytes`, 64 MiB by default): an endless body is cut off there.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from kgreason.backoff import Backoff
from kgreason.kg.base import KGError
from kgreason.loopclient import LoopClient
from kgreason.tracing import call_span
from kgreason.version import __version__

log = logging.getLogger("kgreason.kg.sparql")

_ACCEPT_SELECT = "application/sparql-results+json, application/json;q=0.9"
#: Public endpoints (Wikidata's) refuse anonymous generic user agents.
_USER_AGENT = f"kgreason/{__version__} (SPARQL client; python-httpx)"
_SNIPPET = 300
#: Virtuoso reports query errors as HTTP 500 with an SQLSTATE; classes 22 (data, e.g. SR353
#: sort limit), 37 and 42 (syntax, access) fail the same way on every attempt.
_DETERMINISTIC_500 = re.compile(r"\bVirtuoso (?:22|37|42)[0-9A-Z]{3} Error\b")


class SparqlEndpointError(KGError):
    """Any failure talking to a SPARQL endpoint; `endpoint` is its URL."""

    error_kind = "sparql-error"

    def __init__(self, endpoint: str, message: str):
        super().__init__(f"SPARQL endpoint {endpoint}: {message}")
        self.endpoint = endpoint


class SparqlUnavailableError(SparqlEndpointError):
    """The endpoint could not be reached (connection refused, DNS, reset)."""

    error_kind = "sparql-unreachable"


class SparqlTimeoutError(SparqlEndpointError):
    """The endpoint did not answer within the timeout, on every attempt."""

    error_kind = "sparql-timeout"


class SparqlHTTPError(SparqlEndpointError):
    """The endpoint answered with an HTTP error status (5xx after retries, or a 4xx)."""

    error_kind = "sparql-unreachable"

    def __init__(self, endpoint: str, message: str, status: int):
        super().__init__(endpoint, message)
        self.status = status


class SparqlRejectedError(SparqlHTTPError):
    """The endpoint refused this query (4xx, or a deterministic Virtuoso 500): a retry or
    another attempt would fail the same way."""

    error_kind = "sparql-rejected"


class SparqlBadResponseError(SparqlEndpointError):
    """The endpoint answered 200 but not with SPARQL JSON results (e.g. an HTML page)."""

    error_kind = "sparql-bad-reply"


class SparqlTooLargeError(SparqlEndpointError):
    """The reply body exceeded `kg.max_reply_bytes`; reading stopped at the cap."""

    error_kind = "sparql-too-large"


#: 64 MiB: results are paged (kg.page_size rows), so a page is far smaller than this.
DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024
#: How much of an error body is read for the message.
_ERROR_BODY_BYTES = 64 * 1024


@dataclass
class Reply:
    """An HTTP reply read in full (up to the cap)."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


@dataclass(frozen=True)
class Term:
    """One RDF term of a result row: type is "uri", "literal" or "bnode"."""

    type: str
    value: str
    lang: str = ""
    datatype: str = ""


@dataclass
class SelectResult:
    vars: list[str]
    rows: list[dict[str, Term]]
    #: True when the server reports that it cut the result at its row cap
    #: (Virtuoso's `X-SPARQL-MaxRows` header, sent when ResultSetMaxRows was reached).
    capped: bool = False


def RetryPolicy(
    max_retries: int = 3,
    base_s: float = 0.5,
    max_s: float = 10.0,
    rng: random.Random | None = None,
) -> Backoff:
    """The SPARQL client's backoff: the shared policy with `added` jitter (see
    `kgreason.backoff` for why it differs from the LLM client's)."""
    return Backoff(max_retries, base_s, max_s, "added", rng or random.Random())


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text[:_SNIPPET] + ("..." if len(text) > _SNIPPET else "")


def _term(raw: Any) -> Term:
    """One binding's term; TypeError unless it is an object of strings (a hostile or broken
    endpoint's `"value": 1` would otherwise fail later, far from the reply)."""
    if not isinstance(raw, dict):
        raise TypeError("a binding is not a JSON object")
    fields = [raw.get(k, "") for k in ("type", "value", "xml:lang", "datatype")]
    if not all(isinstance(f, str) for f in fields):
        raise TypeError("a term field is not a string")
    kind, value, lang, datatype = fields
    if kind == "typed-literal":  # SPARQL XML-era name some servers still emit
        kind = "literal"
    return Term(kind, value, lang, datatype)


class SparqlClient:
    """Sends SELECT/ASK queries to one endpoint. Owns its httpx client unless given one."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        retry: Backoff | None = None,
        http: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        default_graph: str | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ):
        self.url = url
        self.timeout_s = timeout_s
        self.max_reply_bytes = max_reply_bytes
        self.retry = retry or RetryPolicy()
        self._http = http
        #: an owned client is remade per event loop and closed when that loop shuts down
        self._owned = None if http is not None else LoopClient(self._new_http)
        self._sleep = sleep
        self._default_graph = default_graph

    def _new_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s))

    async def _client(self) -> httpx.AsyncClient:
        if self._owned is not None:
            return await self._owned.get()
        assert self._http is not None
        return self._http

    async def aclose(self) -> None:
        if self._owned is not None:
            await self._owned.aclose()

    async def select(self, query: str) -> SelectResult:
        resp, body = await self._post(query)
        try:
            results = body["results"]["bindings"]
            vars_ = list(body.get("head", {}).get("vars", []))
        except (KeyError, TypeError):
            raise SparqlBadResponseError(
                self.url, f"JSON without results.bindings: {_snippet(resp.text)}"
            ) from None
        try:
            rows = [{k: _term(v) for k, v in b.items()} for b in results]
        except (AttributeError, TypeError) as e:
            raise SparqlBadResponseError(
                self.url, f"malformed results.bindings ({e}): {_snippet(resp.text)}"
            ) from None
        capped = "x-sparql-maxrows" in resp.headers
        return SelectResult(vars_, rows, capped)

    async def ask(self, query: str) -> bool:
        resp, body = await self._post(query)
        value = body.get("boolean") if isinstance(body, dict) else None
        if not isinstance(value, bool):
            raise SparqlBadResponseError(
                self.url, f"ASK answer without boolean: {_snippet(resp.text)}"
            )
        return value

    async def _fetch(self, data: dict[str, str], progress: list[str]) -> Reply:
        """POST once; the body is streamed and cut at the cap (error pages at 64 KiB).
        `progress` gets "headers" once the server has started answering."""
        headers = {"Accept": _ACCEPT_SELECT, "User-Agent": _USER_AGENT}
        client = await self._client()
        async with client.stream("POST", self.url, data=data, headers=headers) as resp:
            progress.append("headers")
            ok = resp.status_code < 400
            cap = self.max_reply_bytes if ok else _ERROR_BODY_BYTES
            declared = resp.headers.get("content-length", "")
            if ok and declared.isdigit() and int(declared) > cap:
                raise self._too_large(f" (Content-Length {int(declared):,})")
            buf = bytearray()
            async for chunk in resp.aiter_bytes():
                buf += chunk
                if len(buf) > cap:
                    if not ok:
                        del buf[cap:]
                        break
                    raise self._too_large("")
            return Reply(resp.status_code, resp.headers, bytes(buf))

    def _too_large(self, size: str) -> SparqlTooLargeError:
        mib = self.max_reply_bytes / 1048576
        return SparqlTooLargeError(
            self.url, f"reply larger than the {mib:g} MiB cap (kg.max_reply_bytes){size}"
        )

    async def _post(self, query: str) -> tuple[Reply, Any]:
        t0 = time.perf_counter()
        with call_span("sparql", endpoint=self.url, query_chars=len(query)):
            try:
                resp, body = await self._post_retrying(query)
            except SparqlEndpointError as e:
                log.info("%s failed after %.3f s: %s", self.url, time.perf_counter() - t0, e)
                raise
        log.debug(
            "%s: HTTP %d, %d bytes in %.3f s", self.url, resp.status_code, len(resp.content),
            time.perf_counter() - t0,
        )  # fmt: skip
        return resp, body

    async def _post_retrying(self, query: str) -> tuple[Reply, Any]:
        data = {"query": query}
        if self._default_graph:
            data["default-graph-uri"] = self._default_graph
        attempts = self.retry.attempts
        last: SparqlEndpointError | None = None
        for attempt in range(attempts):
            if attempt:
                delay = self.retry.delay(attempt - 1)
                log.info("%s: retry %d/%d in %.2f s after: %s", self.url, attempt,
                         attempts - 1, delay, last)  # fmt: skip
                await self._sleep(delay)
            progress: list[str] = []
            try:
                async with asyncio.timeout(self.timeout_s):  # connect + headers + whole body
                    resp = await self._fetch(data, progress)
            except TimeoutError:
                if progress:  # answering, but too slowly: another attempt would trickle too
                    raise SparqlTimeoutError(
                        self.url,
                        f"reply still arriving after {self.timeout_s:g} s (a trickling "
                        "server); not retried",
                    ) from None
                last = SparqlTimeoutError(
                    self.url,
                    f"no answer within {self.timeout_s:g} s after {attempt + 1} attempt(s)",
                )
                continue
            except httpx.DecodingError as exc:
                raise SparqlBadResponseError(self.url, f"undecodable body: {exc}") from None
            except httpx.TimeoutException as exc:
                last = SparqlTimeoutError(
                    self.url,
                    f"no answer within {self.timeout_s:g} s ({type(exc).__name__}) "
                    f"after {attempt + 1} attempt(s)",
                )
                continue
            except httpx.TransportError as exc:
                last = SparqlUnavailableError(
                    self.url, f"unreachable ({exc!r}) after {attempt + 1} attempt(s)"
                )
                continue
            transient = resp.status_code >= 500 and not _DETERMINISTIC_500.search(resp.text)
            if transient or resp.status_code == 429:
                last = SparqlHTTPError(
                    self.url,
                    f"HTTP {resp.status_code} after {attempt + 1} attempt(s): {_snippet(resp.text)}",
                    resp.status_code,
                )
                continue
            return resp, self._decode(resp)
        assert last is not None
        raise last

    def _decode(self, resp: Reply) -> Any:
        if resp.status_code >= 400:
            raise SparqlRejectedError(
                self.url,
                f"rejected the query with HTTP {resp.status_code}: {_snippet(resp.text)}",
                resp.status_code,
            )
        ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
        if "json" not in ctype:
            raise SparqlBadResponseError(
                self.url,
                f"answered HTTP {resp.status_code} with {ctype or 'no content type'} instead of "
                f"SPARQL JSON results: {_snippet(resp.text)}",
            )
        try:
            return json.loads(resp.content)
        except (ValueError, RecursionError) as exc:  # nested too deep is invalid too
            raise SparqlBadResponseError(
                self.url, f"invalid JSON ({exc}): {_snippet(resp.text)}"
            ) from None

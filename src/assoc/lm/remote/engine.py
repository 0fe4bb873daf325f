"""Sending remote requests: concurrent (asyncio), rate-limited, retried, every answer stored on arrival.

:func:`run_requests` sends the requests that are not in the store to an OpenAI-compatible endpoint
through the HTTP client library the official ``openai`` package is built on (httpx, or httpx2 from
openai 3), configured as ``openai.DefaultAsyncHttpxClient`` configures it, with the URL, headers and
auth the ``openai`` client would use (the ``openai`` package itself is not imported: its types take
seconds to import, for one class). What is sent where, and how a 200 body is read, is the
:class:`Route` (:data:`assoc.lm.remote.chat_completions.CHAT_COMPLETIONS`: ``POST
/chat/completions``, read by :func:`~assoc.lm.remote.chat_completions.read_completion`; a
completions route with echoed log-probabilities fits the same way). The retry policy here is the
only one:

* at most ``concurrency`` requests in flight (a queue of that many HTTP clients of one
  connection each);
* ``requests_per_minute`` and ``tokens_per_minute`` are token buckets refilled continuously (a
  request's tokens are its own estimate, ``request.estimated_tokens()``: for a chat request
  characters / 4 of its messages plus its ``max_tokens``, or what its reply is expected to use);
* each attempt may take ``connect_timeout`` seconds to connect and ``timeout`` seconds to answer
  (a completion is generated before its first byte arrives, so the read timeout is long and
  the connect timeout short);
* 429, 408, 409, 5xx and dropped connections are retried up to ``max_retries`` times after
  ``Retry-After`` (or ``retry-after-ms``) when the server sends it, otherwise after an
  exponential backoff with jitter: ``d = min(backoff_max, backoff_base * 2**attempt)``, waiting
  ``d/2 + uniform(0, d/2)``; a timeout is retried at most ``timeout_retries`` times (a server that
  accepts connections and never answers would otherwise hold the run for every retry);
* a 200 that is not an answer (the route's reader says so: an empty reply, an HTML page, a JSON
  error object) is retried at most ``reply_retries`` times, then that request is recorded as
  failed with the reason and the run goes on;
* 401/403 (the key), 404 (the model or URL), a 429 ``insufficient_quota`` and a ``Retry-After``
  above :data:`MAX_RETRY_AFTER` stop the run at once; other 4xx mark that request failed and
  the run goes on;
* a request that still fails after its retries (or times out too often) stops the run with the
  route's :class:`ServiceError`; every task is cancelled and awaited before it propagates;
* every answer is stored the moment it arrives, before it is parsed or counted (a line appended
  to the store's journal, which survives a ``kill -9``; the run's answers go into checksummed
  packs when it ends), so re-running the same command resumes where it stopped.

Nothing printed or recorded holds a credential: messages go through
:func:`~assoc.lm.remote.urls.redact` (the API key, credentials written into the base URL, anything
shaped like a key), and the ``openai``/``httpx`` loggers are filtered the same way while requests run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from assoc.errors import ModelError, OutputError
from assoc.lm.remote.store import ResponseStore, StoredRequest
from assoc.lm.remote.urls import client_url, redact, safe_url, url_secrets

RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {401, 403, 404}
#: A Retry-After longer than this (seconds) stops the run instead of holding it (e.g. a daily quota).
MAX_RETRY_AFTER = 600.0


class ServiceError(ModelError):
    """A remote service failed for good (down after the retries, the key or the model rejected)."""


#: How a route reads a 200 body: ``(body, "", "", False)`` for an answer, else ``(None, reason, message, retry)``.
BodyReader = Callable[[bytes], "tuple[dict[str, Any] | None, str, str, bool]"]


@dataclass(frozen=True)
class Route:
    """What kind of request is sent, and how its answers are read.

    Attributes
    ----------
    path:
        The path after the base URL (``"/chat/completions"``, ``"/completions"``).
    read:
        Reads a 200 body (:data:`BodyReader`): an answer is stored, anything else is retried up to
        ``reply_retries`` times (when the reader says so) and then that request fails.
    service:
        What the endpoint is, in the words of errors (``"chat service"``).
    error:
        The :class:`ServiceError` subclass raised when the run stops.
    """

    path: str
    read: BodyReader
    service: str = "service"
    error: type[ServiceError] = ServiceError


class RemoteRequest(StoredRequest, Protocol):
    """What the engine needs of a request (:class:`~assoc.lm.remote.chat_completions.ChatRequest` is one)."""

    @property
    def sample(self) -> int:
        """Which repetition of the same request."""
        ...

    def body(self) -> Mapping[str, Any]:
        """The JSON body sent."""
        ...

    def about(self) -> dict[str, Any]:
        """What the request is for, in the record of a failure."""
        ...

    def estimated_tokens(self) -> float:
        """Tokens the request is expected to use (the tokens-per-minute limit)."""
        ...


@dataclass
class EngineSettings:
    """How requests are sent (the scorer's options of the same names).

    ``base_url`` may hold credentials (``https://user:password@host/v1?api-key=...``): they are
    sent (user info as HTTP basic auth, the query with every request) and never shown.
    """

    base_url: str
    api_key: str
    concurrency: int = 16
    timeout: float = 60.0
    connect_timeout: float = 10.0
    max_retries: int = 6
    timeout_retries: int = 1
    reply_retries: int = 2
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    backoff_base: float = 1.0
    backoff_max: float = 60.0

    def secrets(self) -> list[str]:
        """Everything to scrub from messages: the key and the credentials in the base URL."""
        return [s for s in (self.api_key if self.api_key != "EMPTY" else "", *url_secrets(self.base_url)) if s]

    def redact(self, text: str) -> str:
        """``text`` without any of :meth:`secrets` (see :func:`redact`)."""
        return redact(text, self.secrets())


@dataclass
class SendReport:
    """What happened while sending: attempts, answers, retries by reason, failed requests, seconds."""

    sent: int = 0
    received: int = 0
    retries: int = 0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    waited: float = 0.0

    def count_retry(self, reason: str) -> None:
        """Count one retry and its reason (a status code, ``timeout``, ``connection``, ``empty``, ...)."""
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1

    def fail(self, request: RemoteRequest, reason: str, error: str, status: int = 200) -> None:
        """Record a request that gets no answer in this run (the run goes on).

        The record: the request's key, model, what it is for (``request.about()``), sample, the
        HTTP ``status``, the ``reason`` (the status, or the reader's reason) and the ``error`` text.
        """
        self.failed.append(
            {
                "key": request.key,
                "model": request.model,
                **request.about(),
                "sample": request.sample,
                "status": status,
                "reason": reason,
                "error": error,
            }
        )

    def add(self, other: SendReport) -> None:
        """Add another run's counts to this one (a model that sends in several calls, units of one run)."""
        self.sent += other.sent
        self.received += other.received
        self.retries += other.retries
        for reason, n in other.retry_reasons.items():
            self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + n
        self.failed.extend(other.failed)
        self.seconds += other.seconds
        self.waited += other.waited


class RateLimiter:
    """Requests-per-minute and tokens-per-minute token buckets (either may be ``None``: no limit).

    A bucket holds at most one second's worth (at least one request, and at least the request
    being admitted), so a run never bursts far above the rate.
    """

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self.request_rate = requests_per_minute / 60.0 if requests_per_minute else None
        self.token_rate = tokens_per_minute / 60.0 if tokens_per_minute else None
        self._requests = 1.0
        self._tokens = self.token_rate or 0.0
        self._last = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: float) -> None:
        """Wait until one request of ``tokens`` estimated tokens may be sent, and take it from the buckets."""
        if self.request_rate is None and self.token_rate is None:
            return
        async with self._lock:
            while True:
                now = time.monotonic()
                elapsed, self._last = now - self._last, now
                wait = 0.0
                if self.request_rate is not None:
                    self._requests = min(max(1.0, self.request_rate), self._requests + elapsed * self.request_rate)
                    if self._requests < 1.0:
                        wait = (1.0 - self._requests) / self.request_rate
                if self.token_rate is not None:
                    cap = max(self.token_rate, tokens)
                    self._tokens = min(cap, self._tokens + elapsed * self.token_rate)
                    if self._tokens < tokens:
                        wait = max(wait, (tokens - self._tokens) / self.token_rate)
                if wait <= 0:
                    if self.request_rate is not None:
                        self._requests -= 1.0
                    if self.token_rate is not None:
                        self._tokens -= tokens
                    return
                await asyncio.sleep(wait)


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _headers(api_key: str, extra: dict[str, str]) -> dict[str, str]:
    """The headers of every request: those the openai client sends (key, organization, project), and ``extra``."""
    import os

    from assoc.version import __version__

    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": f"assoc/{__version__}",
    }
    if os.environ.get("OPENAI_ORG_ID"):
        headers["OpenAI-Organization"] = os.environ["OPENAI_ORG_ID"]
    if os.environ.get("OPENAI_PROJECT_ID"):
        headers["OpenAI-Project"] = os.environ["OPENAI_PROJECT_ID"]
    return {**headers, **extra}


def _error_detail(data: bytes) -> tuple[str, str | None]:
    """An error response's message and code (OpenAI's ``{"error": {"message", "code"}}``, else the text)."""
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = error.get("code")
        return str(error.get("message") or error), str(code) if code is not None else None
    if isinstance(error, str):
        return error, None
    text = " ".join(data.decode("utf-8", "replace").split())
    return (text[:200] or "(empty body)"), None


def _retry_after(headers: Any) -> float | None:
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000.0
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except ValueError:
        return None  # an HTTP date: fall back to the backoff
    return None


def _backoff(attempt: int, settings: EngineSettings, rng: random.Random) -> float:
    delay = min(settings.backoff_max, settings.backoff_base * 2**attempt)
    return delay / 2 + rng.uniform(0, delay / 2)


class _RedactingFilter(logging.Filter):
    """Scrubs credentials from the records of the HTTP libraries' loggers (they log request URLs)."""

    def __init__(self, settings: EngineSettings):
        super().__init__()
        self.settings = settings

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.settings.redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        return True


@contextmanager
def _scrubbed_logs(settings: EngineSettings, http_module: Any) -> Iterator[None]:
    names = ("openai", "openai._base_client", http_module.__name__, "httpcore", "httpcore2")
    loggers = [logging.getLogger(name) for name in names]
    log_filter = _RedactingFilter(settings)
    for logger in loggers:
        logger.addFilter(log_filter)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(log_filter)


#: The openai package's HTTP client libraries, newest first (openai 3 is built on httpx2, openai 1 and 2 on httpx).
HTTP_LIBRARIES = ("httpx2", "httpx")


def _http() -> Any:
    """The HTTP client library the installed ``openai`` package is built on, imported without importing ``openai``.

    Read from the package's requirements (``importlib.metadata``); one line saying how to install it when
    ``openai`` is not installed.
    """
    import importlib
    import re
    from importlib import metadata

    try:
        requires = metadata.requires("openai") or []
    except metadata.PackageNotFoundError:
        raise ModelError(
            "sending requests to an OpenAI-compatible endpoint needs the openai package: pip install 'assoc[chat]' "
            "(or pip install openai)"
        ) from None
    wanted = [r for r in requires if "extra ==" not in r]
    for name in HTTP_LIBRARIES:
        if any(re.match(rf"{name}(?![\w-])", requirement) for requirement in wanted):
            try:
                return importlib.import_module(name)
            except ImportError:
                break
    raise ModelError(
        f"the openai package's HTTP client library ({' or '.join(HTTP_LIBRARIES)}) is not installed: "
        "pip install --force-reinstall openai"
    )


class _Progress:
    """The progress bar: answers, failures, and what the run waits for (retries and their waits)."""

    def __init__(self, bar: Any, report: SendReport, on_done: Callable[[], None] | None):
        self.bar, self.report, self.on_done = bar, report, on_done
        self.waiting = 0
        self._shown = ""

    def done(self) -> None:
        self.bar.update(1)
        if self.on_done is not None:
            self.on_done()

    def show(self) -> None:
        report = self.report
        text = ""
        if report.retries:
            reasons = ", ".join(f"{k} x{v}" for k, v in sorted(report.retry_reasons.items()))
            text = f"retries {report.retries} ({reasons})"
        if self.waiting:
            text += f"; {self.waiting} waiting to retry"
        if report.failed:
            text += f"; failed {len(report.failed)}"
        if text != self._shown:
            self._shown = text
            self.bar.set_postfix_str(text.lstrip("; "))

    async def wait(self, seconds: float) -> None:
        self.report.waited += seconds
        self.waiting += 1
        self.show()
        try:
            await asyncio.sleep(seconds)
        finally:
            self.waiting -= 1
            self.show()


#: What an attempt that got no answer leaves for the retry: the reason, the message, the wait the server asked.
_Retry = tuple[str, str, float | None]


@dataclass
class _Tries:
    """The attempts at one request so far that timed out, and that got a 200 that is not an answer."""

    timeouts: int = 0
    bad_replies: int = 0


class _Sender:
    """The requests of one run in flight: every attempt at each, and whether the run stops (module docstring)."""

    def __init__(
        self,
        route: Route,
        settings: EngineSettings,
        store: ResponseStore,
        report: SendReport,
        progress: _Progress,
        seed: int,
        http_module: Any,
    ):
        self.route, self.settings, self.store, self.report, self.progress = route, settings, store, report, progress
        self.http_module = http_module
        self.url = client_url(settings.base_url)[0].rstrip("/") + route.path
        self.endpoint = safe_url(settings.base_url)
        self.limiter = RateLimiter(settings.requests_per_minute, settings.tokens_per_minute)
        self.rng = random.Random(seed)
        self.stop: list[BaseException] = []
        self.stopped = asyncio.Event()

    def halt(self, message: str) -> None:
        """Stop the run with the route's error (the message without credentials)."""
        self.stop.append(self.route.error(self.settings.redact(message)))
        self.stopped.set()

    async def attempts(self, request: RemoteRequest, http: Any) -> None:
        """Every attempt at one request, on the one HTTP client (slot) it holds."""
        settings = self.settings
        tries = _Tries()
        for attempt in range(settings.max_retries + 1):
            if self.stop:
                return
            await self.limiter.acquire(request.estimated_tokens())
            self.report.sent += 1
            retry = await self._attempt(request, http, tries)
            if retry is None:  # answered, failed for good, or the run stops
                return
            reason, message, wait = retry
            if attempt == settings.max_retries:
                self.halt(
                    f"{self.route.service} at {self.endpoint} still failing after {settings.max_retries + 1} "
                    f"attempts (last: {message}); the responses received so far are stored: run the same "
                    f"command again to resume"
                )
                return
            self.report.count_retry(reason or "unknown")
            await self.progress.wait(wait if wait is not None else _backoff(attempt, settings, self.rng))

    async def _attempt(self, request: RemoteRequest, http: Any, tries: _Tries) -> _Retry | None:
        """One attempt: ``None`` when it settles the request (or stops the run), else what to retry after."""
        try:
            response = await http.post(self.url, content=_encode(request.body()))
        except self.http_module.TimeoutException:
            tries.timeouts += 1
            return self._timed_out(tries.timeouts)
        except self.http_module.TransportError as exc:  # refused, reset, dropped, malformed HTTP
            return "connection", self.settings.redact(f"connection error: {type(exc).__name__}: {exc}"), None
        if response.status_code >= 400:
            return self._error_status(request, response.status_code, response.content, response.headers)
        return self._answer(request, response.content, tries)

    def _timed_out(self, timeouts: int) -> _Retry | None:
        settings = self.settings
        message = f"no answer within the timeout ({settings.timeout:g} s to answer, "
        message += f"{settings.connect_timeout:g} s to connect)"
        if timeouts > settings.timeout_retries:
            self.halt(
                f"{self.route.service} at {self.endpoint}: {message}, {timeouts} times for one request: the "
                f"server accepts requests but does not answer (raise timeout= for a slow model or "
                f"a long queue); the responses received so far are stored: run the same command "
                f"again to resume"
            )
            return None
        return "timeout", message, None

    def _error_status(self, request: RemoteRequest, status: int, data: bytes, headers: Any) -> _Retry | None:
        """A 4xx or 5xx: stop the run (the key, the model, no quota), fail the request (other 4xx), or retry."""
        service = f"{self.route.service} at {self.endpoint}"
        detail, code = _error_detail(data)
        message = self.settings.redact(f"{status}: {detail}")
        if status in FATAL_STATUS:
            what = {
                401: "the API key was rejected (401)",
                403: "access denied (403)",
                404: f"not found (404): is the model {request.model!r} served at this base_url?",
            }[status]
            self.halt(f"{service}: {what}: {message}")
            return None
        if status == 429 and code == "insufficient_quota":
            self.halt(
                f"{service}: the account has no quota left (429 insufficient_quota): {message}; the responses "
                f"received so far are stored"
            )
            return None
        if status not in RETRY_STATUS and status < 500:
            self.report.fail(request, str(status), message, status)
            self.progress.done()
            return None
        wait = _retry_after(headers)
        if wait is not None and wait > MAX_RETRY_AFTER:
            self.halt(
                f"{service} asks to wait {wait:.0f} s before retrying ({message}); the responses received so far "
                f"are stored: run the same command again later to resume"
            )
            return None
        return str(status), message, wait

    def _answer(self, request: RemoteRequest, data: bytes, tries: _Tries) -> _Retry | None:
        """A 200: stored at once when the route's reader says it is an answer, else retried or failed."""
        body, reason, message, retry = self.route.read(data)
        if body is not None:
            try:
                self.store.record(request, data, body)  # stored before anything else happens to it
            except OutputError as exc:  # no room to store it: the run stops with that one line
                self.halt(str(exc))
                return None
            self.report.received += 1
            self.progress.done()
            return None
        message = self.settings.redact(message)
        tries.bad_replies += 1
        if not retry or tries.bad_replies > self.settings.reply_retries:
            self.report.fail(request, reason, message)
            self.progress.show()
            self.progress.done()
            return None
        return reason, message, None


_SSL_CONTEXTS: dict[str, Any] = {}


def _ssl_context(http_module: Any) -> Any:
    """The HTTP library's default TLS context, made once per process.

    Loading the system's certificates takes about 0.1 s; a study cut into work units sends each
    unit's requests in a call of its own, so the context is kept between calls (it holds no state of
    a connection: every client wraps its own sockets with it).
    """
    name = http_module.__name__
    if name not in _SSL_CONTEXTS:
        _SSL_CONTEXTS[name] = http_module.create_ssl_context()
    return _SSL_CONTEXTS[name]


def _clients(http_module: Any, settings: EngineSettings) -> list[Any]:
    """One HTTP client of one connection per slot of concurrency, configured as the openai package does.

    Requests go straight through the HTTP client the openai package is built on (httpx, or httpx2
    from openai 3), configured as the package configures it (DefaultAsyncHttpxClient: its proxies,
    redirects and TLS settings), with the same URL, headers and auth as chat.completions.create. Not
    through AsyncOpenAI itself: its request building, auth layers and response wrapping cost about
    1 ms of CPU per request, a third of the client's time at concurrency 32
    (benchmarks/bench_chat.py), and this engine does its own retries and errors. One client per
    slot: a shared pool of n connections checks every idle connection for expiry on each request
    (asking the socket), about a quarter of the client's CPU at concurrency 32. The clients share one
    TLS context (loading the certificates once per process: :func:`_ssl_context`).
    """
    # A completion is generated before its first byte: a long read timeout, a short connect timeout.
    timeout = http_module.Timeout(settings.timeout, connect=settings.connect_timeout)
    _, headers, query = client_url(settings.base_url)
    ssl_context = _ssl_context(http_module)
    return [
        http_module.AsyncClient(  # what openai.DefaultAsyncHttpxClient makes: follow_redirects, and these
            follow_redirects=True,
            limits=http_module.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=timeout,
            headers=_headers(settings.api_key, headers),
            params=query or None,
            verify=ssl_context,
        )
        for _ in range(settings.concurrency)
    ]


async def _send_all(
    requests: Sequence[RemoteRequest],
    route: Route,
    settings: EngineSettings,
    store: ResponseStore,
    report: SendReport,
    progress: _Progress,
    seed: int,
) -> None:
    http_module = _http()
    clients = _clients(http_module, settings)
    slots: asyncio.LifoQueue[Any] = asyncio.LifoQueue()  # LIFO: the most recently used connection is warm
    for client in clients:
        slots.put_nowait(client)
    sender = _Sender(route, settings, store, report, progress, seed, http_module)
    remaining = len(requests)
    finished = asyncio.Event()

    async def guarded(request: RemoteRequest) -> None:
        nonlocal remaining
        http = await slots.get()  # the bound on requests in flight
        try:
            await sender.attempts(request, http)
        finally:
            slots.put_nowait(http)
            remaining -= 1
            if remaining == 0:
                finished.set()

    start = time.perf_counter()
    tasks: list[asyncio.Task[None]] = []
    waiters: list[asyncio.Task[Any]] = []
    try:
        with _scrubbed_logs(settings, http_module):
            tasks = [asyncio.ensure_future(guarded(r)) for r in requests]
            # One wait on "all done" or "stop", not an asyncio.wait over every pending task after each
            # completion (that re-registers a callback on each of n tasks n times: O(n^2)).
            waiters = [asyncio.ensure_future(finished.wait()), asyncio.ensure_future(sender.stopped.wait())]
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Every exit path (done, stopped, an error, Ctrl-C) cancels and awaits every task, so no
        # task or exception is left behind ("exception was never retrieved").
        for task in (*tasks, *waiters):
            task.cancel()
        results = await asyncio.gather(*tasks, *waiters, return_exceptions=True)
        report.seconds = time.perf_counter() - start
        for client in clients:
            await client.aclose()
    if sender.stop:
        raise sender.stop[0]
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            raise result  # an unexpected error inside a request


def run_requests(
    requests: Sequence[RemoteRequest],
    settings: EngineSettings,
    store: ResponseStore,
    *,
    route: Route,
    progress: bool | None = False,
    seed: int = 0,
    on_done: Callable[[], None] | None = None,
    desc: str = "chat requests",
) -> SendReport:
    """Send ``requests`` by ``route`` (all of them: callers leave out those already stored) and store every answer.

    Returns a :class:`SendReport` (requests that got no answer are in its ``failed``); raises the
    route's :class:`ServiceError` when the service fails for good (what arrived before is stored).
    ``on_done`` is called after each request is finished (its answer stored, or recorded as failed);
    ``desc`` names the progress bar (``progress=None``: shown as the run's ``progress`` setting says);
    ``seed`` seeds the backoff's jitter.
    """
    from assoc.infra import bar

    report = SendReport()
    if not requests:
        return report
    _http()  # one clear line, before anything starts, when it is not installed
    kept = f"the response cache ({store.root})" if store.root else None  # each answer is stored as it arrives
    progress_bar = bar(total=len(requests), desc=desc, enabled=progress, unit="req", kept=kept)
    store.begin()
    try:
        work = _send_all(requests, route, settings, store, report, _Progress(progress_bar, report, on_done), seed)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: no event loop in this thread
            asyncio.run(work)
        else:  # called from a running loop (a Jupyter notebook): run ours in a thread of its own
            import concurrent.futures

            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, work).result()
    finally:
        progress_bar.close()
        store.end()
    return report

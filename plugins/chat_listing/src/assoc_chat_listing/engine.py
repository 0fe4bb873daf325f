"""Sending chat requests: concurrent (asyncio), rate-limited, retried, every answer stored on arrival.

:func:`run_requests` sends the requests that are not in the store through the HTTP client
the official ``openai`` package is built on (``openai.DefaultAsyncHttpxClient``: httpx, or
httpx2 from openai 3), with the URL, headers and auth of ``chat.completions.create``; the retry
policy here is the only one:

* at most ``concurrency`` requests in flight (a queue of that many HTTP clients of one
  connection each);
* ``requests_per_minute`` and ``tokens_per_minute`` are token buckets refilled continuously (a
  request's tokens are estimated before sending as characters / 4 of its messages plus its
  ``max_tokens``, or 4 per requested item when there is no ``max_tokens``);
* each attempt may take ``connect_timeout`` seconds to connect and ``timeout`` seconds to answer
  (a chat completion is generated before its first byte arrives, so the read timeout is long and
  the connect timeout short);
* 429, 408, 409, 5xx and dropped connections are retried up to ``max_retries`` times after
  ``Retry-After`` (or ``retry-after-ms``) when the server sends it, otherwise after an
  exponential backoff with jitter: ``d = min(backoff_max, backoff_base * 2**attempt)``, waiting
  ``d/2 + uniform(0, d/2)``; a timeout is retried at most ``timeout_retries`` times (a server that
  accepts connections and never answers would otherwise hold the run for every retry);
* a 200 that is not an answer (:func:`~assoc_chat_listing.store.read_completion`: an empty
  reply, an HTML page, a JSON error object) is retried at most ``reply_retries`` times, then that
  request is recorded as failed with the reason and the run goes on;
* 401/403 (the key), 404 (the model or URL), a 429 ``insufficient_quota`` and a ``Retry-After``
  above :data:`MAX_RETRY_AFTER` stop the run at once; other 4xx mark that request failed and
  the run goes on;
* a request that still fails after its retries (or times out too often) stops the run with
  :class:`ChatServiceError`; every task is cancelled and awaited before it propagates;
* every answer is stored the moment it arrives, before it is parsed or counted (a line appended
  to the store's journal, which survives a ``kill -9``; the run's answers go into checksummed
  packs when it ends), so re-running the same command resumes where it stopped.

Nothing printed or recorded holds a credential: messages go through :func:`redact` (the API key,
credentials written into the base URL, anything shaped like a key), and the ``openai``/``httpx``
loggers are filtered the same way while requests run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from assoc import ModelError

from .store import ChatRequest, ResponseStore, read_completion, safe_url, url_secrets

RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {401, 403, 404}
#: A Retry-After longer than this (seconds) stops the run instead of holding it (e.g. a daily quota).
MAX_RETRY_AFTER = 600.0
_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+\S+|Basic\s+[A-Za-z0-9+/=]{8,})")


class ChatServiceError(ModelError):
    """The chat service failed (down after the retries, the key or the model rejected)."""


def redact(text: str, secrets: str | Sequence[str] | None) -> str:
    """``text`` with each secret, and anything shaped like an API key or auth header, replaced by ``***``."""
    if isinstance(secrets, str):
        secrets = [secrets]
    for secret in sorted((s for s in secrets or () if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return _KEY_LIKE.sub("***", text)


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
class RunReport:
    """What happened while sending."""

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

    def fail(self, request: ChatRequest, reason: str, error: str, status: int = 200) -> None:
        """Record a request that gets no answer in this run (the run goes on)."""
        self.failed.append(
            {
                "key": request.key,
                "model": request.model,
                "target": request.target,
                "task": request.task,
                "sample": request.sample,
                "status": status,
                "reason": reason,
                "error": error,
            }
        )


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


def estimate_tokens(request: ChatRequest) -> float:
    """Tokens a request is expected to use, for the tokens-per-minute limit (see module docstring)."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    completion = request.params.get("max_tokens") or 4 * int(request.extra.get("n_items", 50) or 50)
    return chars / 4.0 + float(completion)


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _headers(api_key: str, extra: dict[str, str]) -> dict[str, str]:
    """The headers of every request: those the openai client sends (key, organization, project), and ``extra``."""
    import os

    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": f"assoc-chat-listing/{_version()}",
    }
    if os.environ.get("OPENAI_ORG_ID"):
        headers["OpenAI-Organization"] = os.environ["OPENAI_ORG_ID"]
    if os.environ.get("OPENAI_PROJECT_ID"):
        headers["OpenAI-Project"] = os.environ["OPENAI_PROJECT_ID"]
    return {**headers, **extra}


@functools.lru_cache(maxsize=1)
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assoc-chat-listing")
    except PackageNotFoundError:  # pragma: no cover - a source checkout that is not installed
        return "0"


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


def _client_url(base_url: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The base URL split for the client: URL without user info or query, headers, query parameters.

    User info becomes HTTP basic auth, as an HTTP client does with such a URL (it replaces the
    bearer key, which such servers do not read); the query is sent with every request (the
    client would otherwise glue the request path after it).
    """
    import base64
    from urllib.parse import unquote

    parts = urlsplit(base_url)
    host = parts.netloc.rpartition("@")[2]
    url = urlunsplit((parts.scheme, host, parts.path, "", ""))
    headers: dict[str, str] = {}
    if "@" in parts.netloc:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
    return url, headers, dict(parse_qsl(parts.query, keep_blank_values=True))


class _Progress:
    """The progress bar: answers, failures, and what the run waits for (retries and their waits)."""

    def __init__(self, bar: Any, report: RunReport, on_done: Callable[[], None] | None):
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


async def _send_all(
    requests: Sequence[ChatRequest],
    settings: EngineSettings,
    store: ResponseStore,
    report: RunReport,
    progress: _Progress,
    seed: int,
) -> None:
    import openai

    # Requests go straight through the HTTP client the openai package is built on (httpx, or httpx2
    # from openai 3), configured as the package configures it (DefaultAsyncHttpxClient: its
    # proxies, redirects and TLS settings), with the same URL, headers and auth as
    # chat.completions.create. Not through AsyncOpenAI itself: its request building, auth layers
    # and response wrapping cost about 1 ms of CPU per request, a third of the client's time at
    # concurrency 32 (benchmarks/bench_chat.py), and this engine does its own retries and errors.
    http_module = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0]]
    # A chat completion is generated before its first byte: a long read timeout, a short connect timeout.
    timeout = http_module.Timeout(settings.timeout, connect=settings.connect_timeout)
    url, headers, query = _client_url(settings.base_url)
    # One client of one connection per slot of concurrency, handed out by a queue (the bound on
    # requests in flight): a shared pool of n connections checks every idle connection for expiry
    # on each request (asking the socket), about a quarter of the client's CPU at concurrency 32.
    # The clients share one TLS context (loading the certificates once).
    ssl_context = http_module.create_ssl_context()
    slots: asyncio.LifoQueue[Any] = asyncio.LifoQueue()  # LIFO: the most recently used connection is warm
    for _ in range(settings.concurrency):
        slots.put_nowait(
            openai.DefaultAsyncHttpxClient(
                limits=http_module.Limits(max_connections=1, max_keepalive_connections=1),
                timeout=timeout,
                headers=_headers(settings.api_key, headers),
                params=query or None,
                verify=ssl_context,
            )
        )
    clients = list(slots._queue)  # type: ignore[attr-defined]  # every client, to close them at the end
    completions_url = url.rstrip("/") + "/chat/completions"
    endpoint = safe_url(settings.base_url)
    limiter = RateLimiter(settings.requests_per_minute, settings.tokens_per_minute)
    rng = random.Random(seed)
    stop: list[BaseException] = []
    stopped = asyncio.Event()

    def halt(message: str) -> None:
        stop.append(ChatServiceError(settings.redact(message)))
        stopped.set()

    async def one(request: ChatRequest) -> None:
        http = await slots.get()
        try:
            await attempts(request, http)
        finally:
            slots.put_nowait(http)

    async def attempts(request: ChatRequest, http: Any) -> None:
        """Every attempt at one request, on the one HTTP client (slot) it holds."""
        timeouts = bad_replies = 0
        for attempt in range(settings.max_retries + 1):
            if stop:
                return
            await limiter.acquire(estimate_tokens(request))
            report.sent += 1
            reason: str | None = None
            status, data = 0, b""
            try:
                response = await http.post(completions_url, content=_encode(request.body()))
            except http_module.TimeoutException:
                timeouts += 1
                reason, wait = "timeout", None
                message = f"no answer within the timeout ({settings.timeout:g} s to answer, "
                message += f"{settings.connect_timeout:g} s to connect)"
                if timeouts > settings.timeout_retries:
                    halt(
                        f"chat service at {endpoint}: {message}, {timeouts} times for one request: the "
                        f"server accepts requests but does not answer (raise timeout= for a slow model or "
                        f"a long queue); the responses received so far are stored: run the same command "
                        f"again to resume"
                    )
                    return
            except http_module.TransportError as exc:  # refused, reset, dropped, malformed HTTP
                reason, wait = "connection", None
                message = settings.redact(f"connection error: {type(exc).__name__}: {exc}")
            else:
                status = response.status_code
                data = response.content
            if reason is None and status >= 400:
                detail, code = _error_detail(data)
                message = settings.redact(f"{status}: {detail}")
                if status in FATAL_STATUS:
                    what = {
                        401: "the API key was rejected (401)",
                        403: "access denied (403)",
                        404: f"not found (404): is the model {request.model!r} served at this base_url?",
                    }[status]
                    halt(f"chat service at {endpoint}: {what}: {message}")
                    return
                if status == 429 and code == "insufficient_quota":
                    halt(
                        f"chat service at {endpoint}: the account has no quota left (429 "
                        f"insufficient_quota): {message}; the responses received so far are stored"
                    )
                    return
                if status not in RETRY_STATUS and status < 500:
                    report.fail(request, str(status), message, status)
                    progress.done()
                    return
                reason = str(status)
                wait = _retry_after(response.headers)
                if wait is not None and wait > MAX_RETRY_AFTER:
                    halt(
                        f"chat service at {endpoint} asks to wait {wait:.0f} s before retrying "
                        f"({message}); the responses received so far are stored: run the same "
                        f"command again later to resume"
                    )
                    return
            elif reason is None:
                body, reason, message, retry = read_completion(data)
                if body is not None:
                    store.record(request, data, body)  # stored before anything else happens to it
                    report.received += 1
                    progress.done()
                    return
                message = settings.redact(message)
                bad_replies += 1
                if not retry or bad_replies > settings.reply_retries:
                    report.fail(request, reason, message)
                    progress.show()
                    progress.done()
                    return
                wait = None
            if attempt == settings.max_retries:
                halt(
                    f"chat service at {endpoint} still failing after {settings.max_retries + 1} "
                    f"attempts (last: {message}); the responses received so far are stored: run the same "
                    f"command again to resume"
                )
                return
            report.count_retry(reason or "unknown")
            await progress.wait(wait if wait is not None else _backoff(attempt, settings, rng))

    remaining = len(requests)
    finished = asyncio.Event()

    async def guarded(request: ChatRequest) -> None:
        nonlocal remaining
        try:
            await one(request)
        finally:
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
            waiters = [asyncio.ensure_future(finished.wait()), asyncio.ensure_future(stopped.wait())]
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
    if stop:
        raise stop[0]
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            raise result  # an unexpected error inside a request


def run_requests(
    requests: Sequence[ChatRequest],
    settings: EngineSettings,
    store: ResponseStore,
    *,
    progress: bool = False,
    seed: int = 0,
    on_done: Callable[[], None] | None = None,
) -> RunReport:
    """Send ``requests`` (all of them: callers leave out those already stored) and store every answer.

    Returns a :class:`RunReport` (requests that got no answer are in its ``failed``); raises
    :class:`ChatServiceError` when the service fails for good (what arrived before is stored).
    ``on_done`` is called after each request is finished (its answer stored, or recorded as failed).
    """
    from assoc.infra import bar

    report = RunReport()
    if not requests:
        return report
    kept = f"the response cache ({store.root})" if store.root else None  # each answer is stored as it arrives
    progress_bar = bar(total=len(requests), desc="chat requests", enabled=progress, unit="req", kept=kept)
    store.begin()
    try:
        work = _send_all(requests, settings, store, report, _Progress(progress_bar, report, on_done), seed)
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

"""Sending chat requests: concurrent (asyncio), rate-limited, retried, every response stored on arrival.

:func:`run_requests` sends the requests that are not in the store through the official
``openai`` client (``AsyncOpenAI`` with its own retries switched off, so the policy here is the
only one):

* at most ``concurrency`` requests in flight (an ``asyncio.Semaphore``; the HTTP connection pool
  has the same size);
* ``requests_per_minute`` and ``tokens_per_minute`` are token buckets refilled continuously (a
  request's tokens are estimated before sending as characters / 4 of its messages plus its
  ``max_tokens``, or 4 per requested item when there is no ``max_tokens``);
* 429, 408, 409, 5xx, timeouts and dropped connections are retried up to ``max_retries`` times
  after ``Retry-After`` (or ``retry-after-ms``) when the server sends it, otherwise after an
  exponential backoff with jitter: ``d = min(backoff_max, backoff_base * 2**attempt)``, waiting
  ``d/2 + uniform(0, d/2)``;
* 401/403 (the key), 404 (the model or URL), a 429 ``insufficient_quota`` and a ``Retry-After``
  above :data:`MAX_RETRY_AFTER` stop the run at once; other 4xx mark that request failed and
  the run goes on;
* a request that still fails after its retries stops the run with :class:`ChatServiceError`;
* every response is written to the store as soon as it arrives (a background writer batches the
  responses that arrive while a write is in progress), and what arrived is written before any
  error propagates, so re-running the same command resumes where it stopped.

Messages never contain the API key: errors are passed through :func:`redact`.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assoc.errors import ModelError

from .requests import ChatRequest, ResponseStore, make_entry

RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {401, 403, 404}
#: A Retry-After longer than this (seconds) stops the run instead of holding it (e.g. a daily quota).
MAX_RETRY_AFTER = 600.0
_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-*]{6,}|Bearer\s+\S+)")


class ChatServiceError(ModelError):
    """The chat service failed (down after the retries, the key or the model rejected)."""


def redact(text: str, secret: str | None) -> str:
    """``text`` with the secret, and anything shaped like an API key, replaced by ``***``."""
    if secret:
        text = text.replace(secret, "***")
    return _KEY_LIKE.sub("***", text)


@dataclass
class EngineSettings:
    """How requests are sent (the scorer's options of the same names)."""

    base_url: str
    api_key: str
    concurrency: int = 16
    timeout: float = 60.0
    max_retries: int = 6
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    backoff_base: float = 1.0
    backoff_max: float = 60.0


@dataclass
class RunReport:
    """What happened while sending."""

    sent: int = 0
    received: int = 0
    retries: int = 0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def count_retry(self, reason: str) -> None:
        """Count one retry and its reason (a status code, ``timeout``, ``connection``)."""
        self.retries += 1
        self.retry_reasons[reason] = self.retry_reasons.get(reason, 0) + 1


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


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
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


class _Writer:
    """Stores responses as they arrive, in a background thread (file writes never block the loop)."""

    def __init__(self, store: ResponseStore):
        self.store = store
        self.pending: list[tuple[ChatRequest, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.closed = False
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, name="assoc-chat-writer", daemon=True)
        self.thread.start()

    def add(self, request: ChatRequest, entry: dict[str, Any]) -> None:
        with self.lock:
            self.pending.append((request, entry))
        self.wake.set()

    def _flush(self) -> None:
        with self.lock:
            batch, self.pending = self.pending, []
        if batch:
            self.store.put(batch)

    def _loop(self) -> None:
        while True:
            self.wake.wait()
            self.wake.clear()
            try:
                self._flush()
            except BaseException as exc:  # noqa: BLE001 - reported by close()
                self.error = exc
            if self.closed:
                return

    def close(self) -> None:
        self.closed = True
        self.wake.set()
        self.thread.join()
        self._flush()  # anything added after the thread's last flush
        if self.error is not None:
            raise self.error


async def _send_all(
    requests: Sequence[ChatRequest],
    settings: EngineSettings,
    writer: _Writer,
    report: RunReport,
    on_done: Callable[[], None],
    seed: int,
) -> None:
    import openai

    # The HTTP library is the one this openai release is built on (httpx, or httpx2 from openai 3).
    http_module = sys.modules[openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0]]
    limits = http_module.Limits(max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency)
    http = openai.DefaultAsyncHttpxClient(limits=limits, timeout=settings.timeout)
    client = openai.AsyncOpenAI(
        base_url=settings.base_url, api_key=settings.api_key, max_retries=0, timeout=settings.timeout, http_client=http
    )
    limiter = RateLimiter(settings.requests_per_minute, settings.tokens_per_minute)
    semaphore = asyncio.Semaphore(settings.concurrency)
    rng = random.Random(seed)
    stop: list[BaseException] = []

    async def one(request: ChatRequest) -> None:
        async with semaphore:
            for attempt in range(settings.max_retries + 1):
                if stop:
                    return
                await limiter.acquire(estimate_tokens(request))
                report.sent += 1
                try:
                    # The client's low-level post: the same URL, headers, auth and errors as
                    # chat.completions.create, without its per-call parameter transformation (about 1 ms
                    # of CPU per request) and without parsing into models: the body is kept as sent.
                    raw = await client.post("/chat/completions", body=request.body(), cast_to=http_module.Response)
                    body = json.loads(raw.content)
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    message = redact(str(exc.message), settings.api_key)
                    if status in FATAL_STATUS:
                        what = {
                            401: "the API key was rejected (401)",
                            403: "access denied (403)",
                            404: f"not found (404): is the model {request.model!r} served at this base_url?",
                        }[status]
                        stop.append(ChatServiceError(f"chat service at {request.endpoint}: {what}: {message}"))
                        return
                    if status == 429 and getattr(exc, "code", None) == "insufficient_quota":
                        stop.append(
                            ChatServiceError(
                                f"chat service at {request.endpoint}: the account has no quota left (429 "
                                f"insufficient_quota): {message}; the responses received so far are stored"
                            )
                        )
                        return
                    if status in RETRY_STATUS or status >= 500:
                        reason = str(status)
                        wait = _retry_after(exc)
                        if wait is not None and wait > MAX_RETRY_AFTER:
                            stop.append(
                                ChatServiceError(
                                    f"chat service at {request.endpoint} asks to wait {wait:.0f} s before retrying "
                                    f"({status}: {message}); the responses received so far are stored: run the same "
                                    f"command again later to resume"
                                )
                            )
                            return
                    else:
                        report.failed.append(
                            {
                                "key": request.key,
                                "target": request.target,
                                "task": request.task,
                                "status": status,
                                "error": message,
                            }
                        )
                        on_done()
                        return
                except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                    reason = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"
                    message = redact(f"{type(exc).__name__}: {exc}", settings.api_key)
                    wait = None
                except ValueError as exc:  # a 200 whose body is not JSON
                    reason, message, wait = "bad_body", f"unreadable response body: {exc}", None
                else:
                    writer.add(request, make_entry(request, body))
                    report.received += 1
                    on_done()
                    return
                if attempt == settings.max_retries:
                    stop.append(
                        ChatServiceError(
                            f"chat service at {request.endpoint} still failing after {settings.max_retries + 1} "
                            f"attempts (last: {message}); the responses received so far are stored: run the same "
                            f"command again to resume"
                        )
                    )
                    return
                report.count_retry(reason)
                await asyncio.sleep(wait if wait is not None else _backoff(attempt, settings, rng))

    stopped = asyncio.Event()

    async def guarded(request: ChatRequest) -> None:
        try:
            await one(request)
        finally:
            if stop:
                stopped.set()

    start = time.perf_counter()
    try:
        tasks = [asyncio.ensure_future(guarded(r)) for r in requests]
        # One wait on "all done" or "stop", not an asyncio.wait over every pending task after each
        # completion: that re-registers a callback on each of n tasks n times (O(n^2); about a third of
        # the client's CPU at 2,000 requests).
        everything = asyncio.gather(*tasks)
        stop_wait = asyncio.ensure_future(stopped.wait())
        try:
            waiters: list[asyncio.Future[Any]] = [everything, stop_wait]
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_wait.cancel()
            if not everything.done():
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        if not stop:
            everything.result()  # an unexpected error inside a request is raised here
    finally:
        report.seconds = time.perf_counter() - start
        await client.close()
    if stop:
        raise stop[0]


def run_requests(
    requests: Sequence[ChatRequest],
    settings: EngineSettings,
    store: ResponseStore,
    *,
    progress: bool = False,
    seed: int = 0,
) -> RunReport:
    """Send ``requests`` (all of them: callers leave out those already stored) and store every response.

    Returns a :class:`RunReport`; raises :class:`ChatServiceError` when the service fails for
    good (what arrived before is stored).
    """
    from assoc.infra.progress import bar

    report = RunReport()
    if not requests:
        return report
    writer = _Writer(store)
    progress_bar = bar(total=len(requests), desc="chat requests", enabled=progress, unit="req")
    work = _send_all(requests, settings, writer, report, lambda: progress_bar.update(1), seed)
    try:
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
        writer.close()
    return report

"""An OpenAI-compatible server for tests, docs and benchmarks, offline (the core's, shared by every chat scorer).

It listens on 127.0.0.1 only, on a free port, in a background thread (an asyncio event loop),
and answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) deterministically from the
prompt, so the real ``openai`` client (and so the chat model kind and every chat scorer) can run
against it::

    from assoc.testing.openai_server import ChatServer

    with ChatServer() as server:                     # started; stopped on exit
        os.environ["OPENAI_BASE_URL"] = server.url  # http://127.0.0.1:PORT/v1
        table = assoc.score("chat_listing", stimuli, "gpt-4o-mini")
        server.requests                              # every request received (method, path, body, time)
        server.max_in_flight                         # most requests it handled at once

Answers (:meth:`ChatServer.answer`), deterministic and parseable for every bundled chat task: the
responders of ``assoc.testing.responders`` answer the tasks they recognise (word association,
lettered and listed options such as BBQ's, yes/no questions, two-way questions, lm-eval's open
question; a plugin registers more, ``assoc.testing.responders.register_responder``); a rating
prompt (one that mentions a scale) gets a number from 1 to 5 derived from the term; a listing
prompt ("List N ...", and any other prompt) gets N distinct words chosen from :data:`WORDS` by a
hash of the term, written in the reply shape ``shape`` (one of :data:`SHAPES`: numbered, bulleted,
comma-separated, ...). The term is the text after "describe " (listing) or "who are " (rating).
``replies`` maps a substring of the user message to a fixed reply (e.g. a refusal), ``shapes`` a
substring to a shape, ``responders`` names responders of this server only (asked before the
registered ones); ``responder`` (request body -> reply text) answers every chat request instead
(the chat plugin's word-association responder with planted associations is one). Each route the
server answers is one entry of
:attr:`ChatServer.routes` (path -> handler), so another OpenAI endpoint (``/v1/completions`` with
log-probabilities) is one more handler.

Fault injection, for retries and resumption (each call returns the server, to chain):

* :meth:`fail`: the next ``times`` requests (optionally only those whose user message contains
  ``match``) get HTTP ``status`` (429 with a ``Retry-After`` header, 500, 503, ...), or are held
  for ``delay`` seconds (a timeout for a client with a shorter timeout), or have their
  connection dropped without an answer (``drop=True``);
* :meth:`fail` with ``empty=True``: a 200 chat completion whose ``content`` is empty (what content
  filters and some local servers send); with ``body=...``: a 200 whose body is that text instead
  of a chat completion (a proxy's HTML page, a JSON error object; ``content_type`` sets its type);
  with ``hang=True``: the request is read and never answered (the connection stays open until the
  client gives up or the server stops);
* :meth:`go_down` / :meth:`come_up`: every request fails with ``status`` until it comes up;
* ``delay`` (constructor or attribute): every answer is sent after this many seconds (the
  benchmark's 50 ms).

Credentials in the URL: :meth:`ChatServer.url_with` gives the base URL with user info and query
parameters (``http://user:password@127.0.0.1:PORT/v1?api-key=...``); each :class:`Received`
keeps the request's ``query`` and headers, so a test can check what reached the server.

Run it on its own with ``python -m assoc.testing.openai_server [--port 8000] [--delay 0.05]`` (or
``assoc chat test-server``, the chat plugin's command).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from assoc.testing.responders import Responder, answer, load_responder, register_responder

#: Words a listing answer draws from: Warmth and Competence words of both directions (so the
#: ``stereotype`` analysis has something to code), some spelled with dashes or capitals.
WORDS: tuple[str, ...] = (
    "friendly",
    "warm",
    "kind",
    "caring",
    "honest",
    "trustworthy",
    "sociable",
    "moral",
    "generous",
    "loyal",
    "cold",
    "rude",
    "hostile",
    "dishonest",
    "selfish",
    "unfriendly",
    "smart",
    "intelligent",
    "competent",
    "skilled",
    "capable",
    "Hard-working",
    "well-educated",
    "lazy",
    "unintelligent",
    "incompetent",
    "creative",
    "ambitious",
    "athletic",
    "religious",
    "traditional",
    "wealthy",
    "poor",
    "young",
    "old",
    "loud",
    "quiet",
    "Family-oriented",
    "independent",
    "patriotic",
    "rich",
    "tall",
    "stylish",
    "resilient",
    "determined",
    "Open-minded",
    "conservative",
    "liberal",
    "proud",
    "strong",
    "emotional",
    "confident",
    "funny",
    "serious",
    "talkative",
    "organized",
    "messy",
    "polite",
    "aggressive",
    "brave",
)
#: A small made-up study (two categories, five terms) for examples and tests.
EXAMPLE_STIMULI: dict[str, Any] = {
    "name": "chat-example",
    "designs": [
        {
            "name": "groups",
            "target": {"occupation": ["nurses", "engineers", "musicians"], "religion": ["Christians", "Hindus"]},
        }
    ],
}
#: Scorer options for quick retries against this server (the defaults wait seconds, as real services need).
FAST_RETRIES: dict[str, float] = {"backoff_base": 0.01, "backoff_max": 0.05, "timeout": 5.0}

#: Listing reply shapes the server can write.
SHAPES: tuple[str, ...] = (
    "numbered",
    "numbered_paren",
    "bulleted",
    "comma",
    "semicolon",
    "lines",
    "explained",
    "bold",
    "preamble",
)

_LIST_COUNT = re.compile(r"\blist\s+(\d+)\b", re.IGNORECASE)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def term_of(prompt: str) -> str:
    """The term a paper-style prompt asks about (the text after 'describe ' or 'who are ')."""
    for lead in ("describe ", "who are "):
        if lead in prompt:
            tail = prompt.split(lead, 1)[1]
            return re.split(r"[.?;]", tail, maxsplit=1)[0].strip()
    return prompt.strip()


def listing_words(term: str, n: int) -> list[str]:
    """The ``n`` words the server lists for ``term`` (distinct; cycling with a suffix past len(WORDS))."""
    start = _hash(term) % len(WORDS)
    step = 7  # coprime with len(WORDS) == 60, so every word comes once before any repeats
    out = []
    for i in range(n):
        word = WORDS[(start + i * step) % len(WORDS)]
        out.append(word if i < len(WORDS) else f"{word}{i // len(WORDS)}")
    return out


def render(words: list[str], shape: str, term: str) -> str:
    """``words`` written as a chat model might (one of :data:`SHAPES`)."""
    if shape == "numbered":
        return "\n".join(f"{i}. {w}" for i, w in enumerate(words, 1))
    if shape == "numbered_paren":
        return "\n".join(f"{i}) {w}" for i, w in enumerate(words, 1))
    if shape == "bulleted":
        return "\n".join(f"- {w}" for w in words)
    if shape == "comma":
        return ", ".join(words)
    if shape == "semicolon":
        return "; ".join(words) + "."
    if shape == "lines":
        return "\n".join(words)
    if shape == "explained":
        return "\n".join(f"{i}. {w} - people often see {term} this way" for i, w in enumerate(words, 1))
    if shape == "bold":
        return "\n".join(f"{i}. **{w}**: commonly mentioned" for i, w in enumerate(words, 1))
    if shape == "preamble":
        body = "\n".join(f"{i}. {w}" for i, w in enumerate(words, 1))
        return (
            f"Here are {len(words)} characteristics that many Americans might associate with {term}:\n\n{body}\n\n"
            "Keep in mind that these are generalizations and do not apply to every individual."
        )
    raise ValueError(f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")


@dataclass
class Fault:
    """One scripted fault (see :meth:`ChatServer.fail`)."""

    times: int
    status: int = 0
    retry_after: float | None = None
    delay: float = 0.0
    drop: bool = False
    match: str = ""
    code: str = ""
    empty: bool = False
    body: str | None = None
    content_type: str = "application/json"
    hang: bool = False


@dataclass
class Received:
    """One request as the server received it."""

    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    time: float
    answered: str = ""  # "ok", "fault <status>", "drop", "delay", "empty", "body", "hang"
    query: dict[str, str] = field(default_factory=dict)

    @property
    def user(self) -> str:
        """The last user message of a chat request."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return str(message.get("content", ""))
        return ""


@dataclass
class ChatServer:
    """The server (see the module docstring). ``start()``/``stop()`` or use it as a context manager."""

    delay: float = 0.0
    shape: str = "numbered"
    shapes: dict[str, str] = field(default_factory=dict)
    replies: dict[str, str] = field(default_factory=dict)
    responder: Callable[[dict[str, Any]], str] | None = None
    port: int = 0
    responders: dict[str, Responder] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.requests: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.faults: list[Fault] = []
        self.down_status: int | None = None
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL to give the client (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def url_with(self, user: str = "", password: str = "", **query: str) -> str:
        """The base URL with credentials in it: ``http://user:password@127.0.0.1:PORT/v1?name=value``."""
        from urllib.parse import quote, urlencode

        auth = f"{quote(user, safe='')}:{quote(password, safe='')}@" if user or password else ""
        tail = f"?{urlencode(query)}" if query else ""
        return f"http://{auth}127.0.0.1:{self.port}/v1{tail}"

    def start(self) -> ChatServer:
        """Start listening on 127.0.0.1 (a free port unless ``port`` was given)."""
        if self._loop is not None:
            return self
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="assoc-chat-test-server", daemon=True)
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", self.port, backlog=1024), loop
        )
        self._server = future.result(timeout=10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def stop(self) -> None:
        """Stop listening, drop open connections and end the thread."""
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(timeout=10)
        loop.close()
        self._loop = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------------------

    def fail(
        self,
        times: int = 1,
        *,
        status: int = 0,
        retry_after: float | None = None,
        delay: float = 0.0,
        drop: bool = False,
        match: str = "",
        code: str = "",
        empty: bool = False,
        body: str | None = None,
        content_type: str = "application/json",
        hang: bool = False,
    ) -> ChatServer:
        """The next ``times`` matching requests fail: HTTP ``status``, held ``delay`` s, dropped, or not answers.

        ``code`` is the error body's ``code`` (e.g. ``insufficient_quota`` with a 429). ``empty``:
        a 200 chat completion with empty ``content``; ``body``: a 200 with this text as its body
        (``content_type`` its type); ``hang``: never answered.
        """
        with self._lock:
            self.faults.append(
                Fault(times, status, retry_after, delay, drop, match, code, empty, body, content_type, hang)
            )
        return self

    def go_down(self, status: int = 503) -> ChatServer:
        """Every request gets ``status`` until :meth:`come_up`."""
        self.down_status = status
        return self

    def come_up(self) -> ChatServer:
        """Answer normally again after :meth:`go_down`."""
        self.down_status = None
        return self

    def chat_requests(self) -> list[Received]:
        """The chat-completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        """Forget received requests and counters (faults stay)."""
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self.in_flight

    # -- answers -----------------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> str:
        """The reply text for a chat request (see the module docstring)."""
        if self.responder is not None:
            return self.responder(body)
        user = Received("POST", "", body, {}, 0.0).user
        for needle, reply in self.replies.items():
            if needle in user:
                return reply
        recognised = answer(body, self.responders)
        if recognised is not None:
            return recognised
        term = term_of(user)
        if "scale" in user.lower():
            return str(1 + _hash(term) % 5)
        count = _LIST_COUNT.search(user)
        n = int(count.group(1)) if count else 10
        shape = next((s for needle, s in self.shapes.items() if needle in user), self.shape)
        return render(listing_words(term, n), shape, term)

    def _take_fault(self, user: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.match in user:
                    fault.times -= 1
                    return fault
        return None

    # -- HTTP --------------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                method, path, _ = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                keep = await self._handle(method, path, headers, raw, writer)
                if not keep:
                    return
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            self._tasks.discard(task)
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the connection may already be gone
                pass

    async def _handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; ``False`` closes the connection (a dropped request)."""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        from urllib.parse import parse_qsl

        path, _, query = path.partition("?")
        received = Received(method, path, body, headers, time.time(), query=dict(parse_qsl(query)))
        with self._lock:
            self.requests.append(received)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if method == "GET" and path.rstrip("/").endswith("/models"):
                received.answered = "ok"
                await self._send(writer, 200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
                return True
            route = next((r for suffix, r in self.routes.items() if path.rstrip("/").endswith(suffix)), None)
            if method != "POST" or route is None:
                received.answered = "fault 404"
                await self._send(writer, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})
                return True
            if self.down_status is not None:
                received.answered = f"fault {self.down_status}"
                await self._send(
                    writer, self.down_status, {"error": {"message": "server is down", "type": "server_error"}}
                )
                return True
            fault = self._take_fault(received.user)
            if fault is not None and not await self._fault(fault, received, writer):
                return fault.body is not None or bool(fault.status)  # answered (keep the connection) or dropped
            if self.delay:
                await asyncio.sleep(self.delay)
            await route(received, fault, writer)
            return True
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _fault(self, fault: Fault, received: Received, writer: asyncio.StreamWriter) -> bool:
        """Play ``fault``; ``True`` when the request is to be answered after it (a delay, an empty reply)."""
        if fault.drop:
            received.answered = "drop"
            return False
        if fault.hang:
            received.answered = "hang"
            await asyncio.Event().wait()  # until the client closes the connection or the server stops
        if fault.body is not None:
            received.answered = "body"
            await self._send_raw(writer, 200, fault.body.encode("utf-8"), fault.content_type)
            return False
        if fault.delay:
            received.answered = "delay"
            await asyncio.sleep(fault.delay)
        if fault.status:
            received.answered = f"fault {fault.status}"
            extra = {}
            if fault.retry_after is not None:
                extra["Retry-After"] = f"{fault.retry_after:g}"
            kind = "rate_limit_error" if fault.status == 429 else "server_error"
            await self._send(
                writer,
                fault.status,
                {"error": {"message": f"injected {fault.status}", "type": kind, "code": fault.code or None}},
                extra,
            )
            return False
        return True

    @property
    def routes(self) -> dict[str, Callable[[Received, Fault | None, asyncio.StreamWriter], Awaitable[None]]]:
        """The POST routes the server answers, by the end of their path (``/chat/completions``)."""
        return {"/chat/completions": self._chat_completion}

    async def _chat_completion(self, received: Received, fault: Fault | None, writer: asyncio.StreamWriter) -> None:
        """Answer a chat-completion request (an empty reply when the fault says so)."""
        body = received.body
        text = "" if fault is not None and fault.empty else self.answer(body)
        if fault is not None and fault.empty:
            received.answered = "empty"
        n = len(self.requests)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        completion_tokens = len(text.split())
        received.answered = received.answered or "ok"
        await self._send(
            writer,
            200,
            {
                "id": f"chatcmpl-test-{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "system_fingerprint": "fp_assoc_test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    @classmethod
    async def _send(
        cls, writer: asyncio.StreamWriter, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
    ) -> None:
        await cls._send_raw(writer, status, json.dumps(payload).encode("utf-8"), "application/json", extra)

    @staticmethod
    async def _send_raw(
        writer: asyncio.StreamWriter,
        status: int,
        data: bytes,
        content_type: str,
        extra: dict[str, str] | None = None,
    ) -> None:
        reason = {
            200: "OK",
            404: "Not Found",
            429: "Too Many Requests",
            500: "Internal Server Error",
            503: "Service Unavailable",
        }.get(status, "Error")
        head = [
            f"HTTP/1.1 {status} {reason}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(data)}",
            "Connection: keep-alive",
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()


def main(argv: list[str] | None = None) -> None:
    """``python -m assoc.testing.openai_server``: run the server in the foreground until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description="OpenAI-compatible test server on 127.0.0.1 (offline).")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--shape", default="numbered", choices=SHAPES, help="listing reply shape")
    parser.add_argument(
        "--responder",
        action="append",
        default=[],
        metavar="MODULE:FUNCTION",
        help="a responder of an installed module (request body -> reply, or None), asked before the built-in "
        "ones; repeat for several",
    )
    args = parser.parse_args(argv)
    for spec in args.responder:
        register_responder(spec, load_responder(spec))
    server = ChatServer(delay=args.delay, shape=args.shape, port=args.port).start()
    print(f"serving on {server.url} (Ctrl-C stops)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()

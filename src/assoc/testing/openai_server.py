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

Answers ([`ChatServer.answer`][assoc.testing.openai_server.ChatServer.answer]), deterministic and parseable for every
bundled chat task: the responders of ``assoc.testing.responders`` answer the tasks they recognise (word association,
lettered and listed options such as BBQ's, yes/no questions, two-way questions, lm-eval's open question; a plugin
registers more, ``assoc.testing.responders.register_responder``); a rating prompt (one that mentions a scale) gets a
number from 1 to 5 derived from the term; a listing prompt ("List N ...", and any other prompt) gets N distinct words
chosen from `WORDS` by a hash of the term, written in the reply shape ``shape`` (one of
[`SHAPES`][assoc.testing.openai_server.SHAPES]: numbered, bulleted, comma-separated, ...). The term is the text after
"describe " (listing) or "who are " (rating).
``replies`` maps a substring of the user message to a fixed reply (e.g. a refusal), ``shapes`` a
substring to a shape, ``responders`` names responders of this server only (asked before the
registered ones); ``responder`` (request body -> reply text) answers every chat request instead
(the chat plugin's word-association responder with planted associations is one). Each route the
server answers is one entry of
[`ChatServer.routes`][assoc.testing.openai_server.ChatServer.routes] (path -> handler), so another OpenAI endpoint
(``/v1/completions`` with log-probabilities) is one more handler.

Fault injection, for retries and resumption (each call returns the server, to chain):

* `fail`: the next ``times`` requests (optionally only those whose user message contains
  ``match``) get HTTP ``status`` (429 with a ``Retry-After`` header, 500, 503, ...), or are held
  for ``delay`` seconds (a timeout for a client with a shorter timeout), or have their
  connection dropped without an answer (``drop=True``);
* `fail` with ``empty=True``: a 200 chat completion whose ``content`` is empty (what content
  filters and some local servers send); with ``body=...``: a 200 whose body is that text instead
  of a chat completion (a proxy's HTML page, a JSON error object; ``content_type`` sets its type);
  with ``hang=True``: the request is read and never answered (the connection stays open until the
  client gives up or the server stops);
* `go_down` / `come_up`: every request fails with ``status`` until it comes up;
* ``delay`` (constructor or attribute): every answer is sent after this many seconds (the
  benchmark's 50 ms).

Credentials in the URL: [`ChatServer.url_with`][assoc.testing.openai_server.ChatServer.url_with] gives the base URL with
user info and query parameters (``http://user:password@127.0.0.1:PORT/v1?api-key=...``); each
[`Received`][assoc.testing.openai_server.Received] keeps the request's ``query`` and headers, so a test can check what
reached the server.

**Completions with log-probabilities** (the ``server`` model kind's protocol): with ``completions``
set to a `CompletionModel` (a tiny causal LM loaded with transformers, or any object with its
methods), the server also answers ``POST /v1/completions`` as vLLM does: prompts as text or token
ids, one or a list; ``echo`` + ``logprobs`` (``max_tokens`` 0 or 1) and vLLM's ``prompt_logprobs``;
``return_tokens_as_token_ids``; ``400`` for a prompt longer than ``max_model_len`` and for
``max_tokens`` 0 without ``echo``. ``GET /v1/models`` then lists the model (its ``root``,
``max_model_len`` and ``owned_by``), ``POST /tokenize`` tokenizes and ``GET /version`` answers as
vLLM's do. Faults of the content ([`ChatServer.fail`][assoc.testing.openai_server.ChatServer.fail] with ``completion=``,
per prompt, ``match`` against the prompt's text): ``prefix`` (a token the client did not send is scored first: a BOS the
server adds), ``retokenised`` (the server scores another token at one position),
``split`` (it scores one token more: another tokenization), ``missing_logprobs`` (the choice has no
log-probabilities), ``null_logprob`` (one position's log-probability is ``null``) and
``wrong_offsets`` (``text_offset`` counts nothing in particular); 5xx, drops and hangs as for chat.
A chat request with ``logprobs: true`` gets ``choices[0].logprobs.content`` from ``chat_logprobs``
(request body -> the per-token list, None for an endpoint that gives none; by default each word of
the reply, log-probability -1).

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


class CompletionModel:
    """The log-probabilities a test server's ``/v1/completions`` returns: a causal LM run with transformers.

    ``folder`` is a ``save_pretrained`` folder (``assoc models tiny --kind gpt2``); ``name`` the name it
    is served under (default: the folder's name); ``max_model_len`` the longest sequence taken (default:
    the model's positions); ``owned_by`` what ``/v1/models`` says (``"vllm"``: the kind then asks for
    ``prompt_logprobs``). Each token's log-probability is the float64 log-softmax of the model's float32
    logits over one unpadded sequence. Subclass it (or give any object with these methods) to answer
    otherwise.
    """

    def __init__(
        self, folder: Any, *, name: str | None = None, max_model_len: int | None = None, owned_by: str = "vllm"
    ):
        from pathlib import Path

        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.folder = str(folder)
        self.name = name or Path(self.folder).name
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder)
        self.model = AutoModelForCausalLM.from_pretrained(self.folder, dtype=torch.float32).eval()
        positions = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", 1024
        )
        self.max_model_len = int(max_model_len or positions or 1024)
        self.owned_by = owned_by
        #: the smallest max_tokens taken with echo (1: a server that refuses to echo without generating)
        self.min_echo_max_tokens = 0
        #: whether ``POST /tokenize`` is answered (False: a server without it, 404)
        self.tokenize_endpoint = True
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        """The model's entry in ``/v1/models``."""
        return {
            "id": self.name,
            "object": "model",
            "owned_by": self.owned_by,
            "root": self.folder,
            "parent": None,
            "max_model_len": self.max_model_len,
        }

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text`` (with the tokenizer's special tokens unless told otherwise, as vLLM)."""
        return [int(i) for i in self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]]

    def piece(self, token: int) -> str:
        """How a generated token is written (its text alone)."""
        return self.decode([token])

    def pieces(self, ids: list[int]) -> list[str]:
        """How each token of ``ids`` is echoed: the text it adds to those before it (vLLM's incremental decoding)."""
        out, before = [], ""
        for k in range(len(ids)):
            text = self.decode(ids[: k + 1])
            out.append(text[len(before) :] if text.startswith(before) else text)
            before = text
        return out

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``, special tokens kept."""
        return str(self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False))

    def log_probs(self, ids: list[int]) -> tuple[list[float | None], int]:
        """Each token's log-probability after those before it (the first: None), and the most likely next token."""
        import torch

        with self._lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].to(torch.float64)
            table = torch.log_softmax(logits, dim=-1)
        values: list[float | None] = [None]
        values += [float(table[j - 1, ids[j]]) for j in range(1, len(ids))]
        return values, int(table[-1].argmax())


@dataclass
class Fault:
    """One scripted fault (see [`ChatServer.fail`][assoc.testing.openai_server.ChatServer.fail])."""

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
    completion: str = ""


#: Faults of a completion's content (:meth:`ChatServer.fail` with ``completion=``; module docstring).
COMPLETION_FAULTS = ("prefix", "retokenised", "split", "missing_logprobs", "null_logprob", "wrong_offsets")


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
        """The last user message of a chat request (a completion request: its prompt as JSON)."""
        for message in reversed(self.body.get("messages", [])):
            if message.get("role") == "user":
                return str(message.get("content", ""))
        if "prompt" in self.body:
            return json.dumps(self.body["prompt"])
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
    completions: Any = None
    chat_logprobs: Callable[[dict[str, Any]], list[dict[str, Any]] | None] | None = None

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
        completion: str = "",
    ) -> ChatServer:
        """The next ``times`` matching requests fail: HTTP ``status``, held ``delay`` s, dropped, or not answers.

        ``code`` is the error body's ``code`` (e.g. ``insufficient_quota`` with a 429). ``empty``:
        a 200 chat completion with empty ``content``; ``body``: a 200 with this text as its body
        (``content_type`` its type); ``hang``: never answered. ``completion`` (one of
        `COMPLETION_FAULTS`): the next ``times`` completion prompts whose text contains ``match``
        are answered with that fault (module docstring).
        """
        if completion and completion not in COMPLETION_FAULTS:
            raise ValueError(f"completion fault must be one of {', '.join(COMPLETION_FAULTS)}, got {completion!r}")
        with self._lock:
            self.faults.append(
                Fault(times, status, retry_after, delay, drop, match, code, empty, body, content_type, hang, completion)
            )
        return self

    def go_down(self, status: int = 503) -> ChatServer:
        """Every request gets ``status`` until [`come_up`][assoc.testing.openai_server.ChatServer.come_up]."""
        self.down_status = status
        return self

    def come_up(self) -> ChatServer:
        """Answer normally again after [`go_down`][assoc.testing.openai_server.ChatServer.go_down]."""
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

    def _take_fault(self, user: str, *, content: bool = False) -> Fault | None:
        """The next fault matching ``user``: of the HTTP exchange, or (``content``) of a completion prompt."""
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.match in user and bool(fault.completion) == content:
                    fault.times -= 1
                    return fault
        return None

    def completion_requests(self) -> list[Received]:
        """The ``/v1/completions`` requests received so far."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/completions") and "/chat/" not in r.path]

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
                served = [self.completions.describe()] if self.completions is not None else []
                data = served or [{"id": "test-model", "object": "model"}]
                await self._send(writer, 200, {"object": "list", "data": data})
                return True
            if method == "GET" and path.rstrip("/") == "/version" and self.completions is not None:
                received.answered = "ok"
                await self._send(writer, 200, {"version": "assoc-test"})
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
        routes: dict[str, Callable[[Received, Fault | None, asyncio.StreamWriter], Awaitable[None]]] = {
            "/chat/completions": self._chat_completion
        }
        if self.completions is not None:
            routes["/completions"] = self._completion
            if getattr(self.completions, "tokenize_endpoint", True):
                routes["/tokenize"] = self._tokenize
        return routes

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
                        "logprobs": self._chat_logprobs(body, text),
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _chat_logprobs(self, body: dict[str, Any], text: str) -> dict[str, Any] | None:
        """A chat reply's ``logprobs`` when asked (``logprobs: true``), else None.

        ``chat_logprobs(body)``, else each word of the reply a token of log-probability -1 (its only top
        token); None when ``chat_logprobs`` returns None (an endpoint that gives none).
        """
        if not body.get("logprobs"):
            return None
        if self.chat_logprobs is not None:
            content = self.chat_logprobs(body)
        else:
            content = [
                {"token": word, "logprob": -1.0, "top_logprobs": [{"token": word, "logprob": -1.0}]}
                for word in text.split(" ")
            ]
        return {"content": content} if content is not None else None

    # -- completions with log-probabilities (module docstring) ---------------------------------------

    async def _bad_request(
        self, received: Received, writer: asyncio.StreamWriter, message: str, param: str = ""
    ) -> None:
        received.answered = "fault 400"
        error = {"message": message, "type": "BadRequestError", "param": param or None, "code": 400}
        await self._send(writer, 400, {"error": error})

    def _prompts(self, body: dict[str, Any]) -> list[list[int]] | str:
        """The prompts of a completion request as token ids (text tokenized as vLLM does), or what is wrong."""
        model = self.completions
        prompt = body.get("prompt")
        if isinstance(prompt, str) or (isinstance(prompt, list) and prompt and isinstance(prompt[0], int)):
            prompt = [prompt]
        if not isinstance(prompt, list) or not prompt:
            return "prompt must be a string, a list of token ids, or a list of either"
        special = body.get("add_special_tokens", True) is not False
        out = []
        for one in prompt:
            ids = model.encode(one, special) if isinstance(one, str) else [int(i) for i in one]
            if not ids:
                return "The prompt cannot be empty"
            out.append(ids)
        return out

    def _scored(self, ids: list[int], fault: Fault | None) -> tuple[list[int], list[float | None], int]:
        """The tokens the server scores for ``ids`` (under a content fault, not quite those), their values, the next."""
        model = self.completions
        kind = fault.completion if fault is not None else ""
        scored = list(ids)
        if kind == "prefix":
            first = model.tokenizer.bos_token_id
            scored = [int(first if first is not None else model.tokenizer.eos_token_id or 0), *ids]
        elif kind == "retokenised" and len(ids) > 1:
            scored[-1] = (ids[-1] + 1) % len(model.tokenizer)
        elif kind == "split":
            scored = [*ids, ids[-1]]
        values, following = model.log_probs(scored)
        if kind == "null_logprob" and len(values) > 1:
            values[len(values) // 2] = None
        return scored, values, following

    async def _completion(self, received: Received, fault: Fault | None, writer: asyncio.StreamWriter) -> None:
        """Answer a ``/v1/completions`` request as vLLM does (module docstring)."""
        body = received.body
        model = self.completions
        prompts = self._prompts(body)
        if isinstance(prompts, str):
            await self._bad_request(received, writer, prompts)
            return
        max_tokens = int(body.get("max_tokens", 16) if body.get("max_tokens") is not None else 16)
        echo = bool(body.get("echo"))
        if max_tokens < (model.min_echo_max_tokens if echo else 1):
            await self._bad_request(received, writer, f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens")
            return
        for ids in prompts:
            if len(ids) + max_tokens > model.max_model_len:
                await self._bad_request(
                    received,
                    writer,
                    f"This model's maximum context length is {model.max_model_len} tokens. However, your request "
                    f"has {len(ids)} input tokens.",
                    "input_tokens",
                )
                return
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        loop = asyncio.get_running_loop()
        choices = []
        for index, ids in enumerate(prompts):
            content = self._take_fault(model.decode(ids), content=True)
            scored, values, following = await loop.run_in_executor(None, self._scored, ids, content)
            kind = content.completion if content is not None else ""
            choices.append(self._choice(index, scored, values, following, body, max_tokens, echo, as_ids, kind))
        n_prompt = sum(len(ids) for ids in prompts)
        received.answered = "ok"
        await self._send(
            writer,
            200,
            {
                "id": f"cmpl-test-{len(self.requests)}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": choices,
                "usage": {
                    "prompt_tokens": n_prompt,
                    "completion_tokens": len(prompts),
                    "total_tokens": n_prompt + len(prompts),
                },
            },
        )

    def _choice(
        self,
        index: int,
        scored: list[int],
        values: list[float | None],
        following: int,
        body: dict[str, Any],
        max_tokens: int,
        echo: bool,
        as_ids: bool,
        fault: str,
    ) -> dict[str, Any]:
        """One prompt's choice: echoed tokens and log-probs, vLLM's prompt_logprobs, the generated token."""
        model = self.completions
        generated = [following] if max_tokens >= 1 else []

        pieces = model.pieces(scored) + [model.piece(t) for t in generated]

        def written(token: int, position: int) -> str:
            return f"token_id:{token}" if as_ids else pieces[position]

        choice: dict[str, Any] = {"index": index, "finish_reason": "length", "logprobs": None}
        text = model.piece(following) if generated else ""
        if echo:
            text = model.decode(scored) + text
        choice["text"] = text
        if fault == "missing_logprobs":
            return choice
        if body.get("logprobs") is not None:
            start = 0 if echo else len(scored)
            shown = (scored if echo else []) + generated
            lps = (values if echo else []) + [0.0 for _ in generated]  # the generated token: greedy, never read
            tokens = [written(t, start + k) for k, t in enumerate(shown)]
            offsets, at = [], 0
            for token in tokens:
                offsets.append(at + (3 if fault == "wrong_offsets" else 0))
                at += len(token)
            choice["logprobs"] = {
                "text_offset": offsets,
                "token_logprobs": lps,
                "tokens": tokens,
                "top_logprobs": [None if v is None else {t: v} for t, v in zip(tokens, lps)],
            }
        if body.get("prompt_logprobs") is not None:
            choice["prompt_logprobs"] = [None] + [
                None if v is None else {str(t): {"logprob": v, "rank": 1, "decoded_token": piece}}
                for t, v, piece in zip(scored[1:], values[1:], pieces[1:])
            ]
        return choice

    async def _tokenize(self, received: Received, fault: Fault | None, writer: asyncio.StreamWriter) -> None:
        """Answer ``POST /tokenize`` as vLLM does."""
        body = received.body
        special = body.get("add_special_tokens", True) is not False
        ids = self.completions.encode(str(body.get("prompt", "")), special)
        received.answered = "ok"
        await self._send(
            writer,
            200,
            {"count": len(ids), "max_model_len": self.completions.max_model_len, "tokens": ids, "token_strs": None},
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

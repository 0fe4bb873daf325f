"""One chat request, its cache key, and the on-disk store of raw responses.

A request's key is the sha256 of the canonical JSON of everything that changes the reply:
backend, endpoint (the base URL without credentials or query), model, messages, sampling
parameters and sample index. The API key is never part of it. Responses are stored with
:class:`assoc.infra.cache.Cache` (atomic, checksummed packs; a corrupt pack is deleted and its
requests sent again) in one namespace per backend, endpoint and model; each entry holds the
request (without any secret), the raw response body as the server sent it, and when it arrived.

While requests run, each answer is first appended, the moment it arrives, to this run's
**journal** (``<cache root>/chat_listing-journal/<id>.jsonl``, one JSON line per answer, one
``write`` each; the file is synced to disk every second): a ``kill -9`` a microsecond later loses
nothing. When the run ends its answers go into one pack per namespace and the journal is
deleted. A journal left by a run that did not end (its lock is free) is moved into packs when
the next :class:`ResponseStore` opens the cache root.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import re
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from assoc.infra import Cache, Namespace, digest, exclusive_lock

ENTRY_FORMAT = 1


#: Query parameters whose name contains one of these words hold credentials (``api-key=``, ``key=``,
#: ``token=``, ``access_token=``, ``sig=``, ...): never stored or printed.
SECRET_QUERY = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)


def _host(parts: Any) -> str:
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port is not None else host


def public_endpoint(base_url: str) -> str:
    """``base_url`` without user info, query or fragment (these may hold credentials); the cache key's endpoint."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, _host(parts), parts.path.rstrip("/"), "", ""))


def safe_url(url: str) -> str:
    """``url`` as it may be stored or printed: without user info, key-like query parameters or fragment.

    Other query parameters (``api-version=2024-06-01``) are kept: they say what was called.
    """
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not SECRET_QUERY.search(k)]
    return urlunsplit((parts.scheme, _host(parts), parts.path, urlencode(query), ""))


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``, raw and decoded, longest first, to scrub from free text.

    The password and ``user:password`` as written (or the user name alone when there is no password:
    ``https://TOKEN@host`` puts a token there), and the values of key-like query parameters.
    """
    parts = urlsplit(url)
    found = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if SECRET_QUERY.search(k)]
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        found += [userinfo, parts.password or ""] if parts.password is not None else [userinfo]
    out: list[str] = []
    for value in found:
        for form in (value, unquote(value)):
            if len(form) >= 3 and form not in out:  # shorter values are too common to scrub from text
                out.append(form)
    return sorted(out, key=len, reverse=True)


@dataclass(frozen=True)
class ChatRequest:
    """One request: what is sent (model, messages, params) and what it is for (the other fields)."""

    backend: str
    endpoint: str
    model: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    sample: int
    task: str = ""
    design: str = ""
    target_group: str = ""
    target: str = ""
    prompt: str = ""  # the template, for the table's context column
    extra: Mapping[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def key(self) -> str:
        """The cache key (hex sha256): identical requests share it, anything that changes the reply changes it."""
        return digest(self.key_parts())  # computed once: the request is frozen

    def key_parts(self) -> dict[str, Any]:
        """What identifies the request: backend, endpoint, model, messages, sampling parameters, sample index."""
        return {
            "backend": self.backend,
            "endpoint": self.endpoint,
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "params": dict(self.params),
            "sample": self.sample,
        }

    def body(self) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create``."""
        return {"model": self.model, "messages": [dict(m) for m in self.messages], **dict(self.params)}


def reply_text(response: Mapping[str, Any]) -> str | None:
    """The assistant's text in a raw chat-completion body (``None`` when it has none)."""
    choices = response.get("choices") or []
    if not choices:
        return None
    message = choices[0].get("message") or {}
    content = message.get("content")
    return content if isinstance(content, str) else None


def model_refusal(response: Mapping[str, Any]) -> str | None:
    """The server's own refusal: ``message.refusal`` (OpenAI), or ``finish_reason`` ``content_filter``."""
    choice = (response.get("choices") or [{}])[0]
    if not isinstance(choice, Mapping):
        return None
    message = choice.get("message") or {}
    refusal = message.get("refusal") if isinstance(message, Mapping) else None
    if isinstance(refusal, str) and refusal.strip():
        return refusal
    if choice.get("finish_reason") == "content_filter":
        return "(the server's content filter stopped the reply: finish_reason content_filter)"
    return None


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_completion(data: bytes) -> tuple[dict[str, Any] | None, str, str, bool]:
    """Read a 200 response body: ``(body, "", "", False)`` for an answer, else ``(None, reason, message, retry)``.

    An answer is a chat completion (a JSON object with a non-empty ``choices`` list whose first
    ``message`` has text), or the server's own refusal (``message.refusal``, or ``finish_reason``
    ``content_filter``). Anything else is not an answer, whatever the status said:

    * ``bad_body``: not JSON (a proxy's HTML page), or JSON that is not an object; retried;
    * ``error_body``: a JSON object with ``error`` and no ``choices`` (an error sent with status 200); retried;
    * ``not_completion``: an object without a usable ``choices[0].message``; retried;
    * ``empty``: a completion whose ``content`` is empty or white space; retried;
    * ``empty_length``: empty and cut at ``max_tokens`` (``finish_reason`` ``length``: a reasoning model
      spent every token before writing); not retried, the same request would be cut again.
    """
    import json

    try:
        body = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", "replace")
        return None, "bad_body", f"the body is not JSON: {_snippet(text) or '(empty body)'}", True
    if not isinstance(body, dict):
        return None, "bad_body", f"the body is JSON but not an object: {_snippet(str(body))}", True
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if "error" in body:
            error = body["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            return None, "error_body", f"an error object with status 200: {_snippet(str(message))}", True
        return None, "not_completion", f"not a chat completion: {_snippet(json.dumps(body)[:400])}", True
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        return None, "not_completion", "the completion's first choice has no message", True
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return body, "", "", False
    if model_refusal(body) is not None:
        return body, "", "", False
    if choice.get("finish_reason") == "length":
        return None, "empty_length", "empty reply cut at max_tokens (finish_reason length): raise max_tokens", False
    return None, "empty", f"empty reply (finish_reason {choice.get('finish_reason')!r})", True


def valid_entry(entry: Any) -> bool:
    """An entry is usable when it has the format and a response with a choices list."""
    return (
        isinstance(entry, Mapping)
        and entry.get("format") == ENTRY_FORMAT
        and isinstance(entry.get("response"), Mapping)
        and isinstance(entry["response"].get("choices"), list)
    )


def make_entry(request: ChatRequest, response: Mapping[str, Any]) -> dict[str, Any]:
    """The stored entry of a response: the request (no secret), the raw body, and when it arrived."""
    return {
        "format": ENTRY_FORMAT,
        "request": request.key_parts(),
        "response": dict(response),
        "received": _now(),
    }


JOURNAL_DIR = "chat_listing-journal"
#: Seconds between syncs of the journal to disk (a ``kill -9`` loses nothing in between; a power cut may).
JOURNAL_SYNC_SECONDS = 1.0


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


class _Journal:
    """A run's append-only file of answers (see the module docstring), locked while the run is alive."""

    def __init__(self, directory: Any):
        directory.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        self.path = directory / f"{name}.jsonl"
        # Created and locked under another name, then renamed: recovery never sees an unlocked new journal.
        fresh = directory / f"{name}.new"
        self._locks = contextlib.ExitStack()
        if not self._locks.enter_context(exclusive_lock(fresh)):  # pragma: no cover - a fresh random name
            raise OSError(f"cannot lock the new journal {fresh}")
        self._fd = os.open(fresh, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
        os.replace(fresh, self.path)
        self._dirty = False
        self._closed = threading.Event()
        self._syncer = threading.Thread(target=self._sync_loop, name="assoc-chat-journal", daemon=True)
        self._syncer.start()

    def append(self, line: bytes) -> None:
        os.write(self._fd, line)  # one write per answer: a killed process leaves whole lines (or a torn last one)
        self._dirty = True

    def _sync_loop(self) -> None:
        while not self._closed.wait(JOURNAL_SYNC_SECONDS):
            if self._dirty:
                self._dirty = False
                with contextlib.suppress(OSError):
                    os.fsync(self._fd)

    def close(self, delete: bool) -> None:
        self._closed.set()
        self._syncer.join()
        os.close(self._fd)
        if delete:
            with contextlib.suppress(OSError):
                self.path.unlink()
        self._locks.close()


def _journal_line(request: ChatRequest, data: bytes, received: str) -> bytes:
    """One journal line: the key, the request (no secret), when it arrived, and the body as the server sent it.

    ``data`` is valid JSON (the engine read it), so raw line breaks can only be white space between
    tokens: replacing them keeps the same value on one line without encoding the body again.
    """
    head = json.dumps(
        {"key": request.key, "request": request.key_parts(), "received": received},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    body = data.replace(b"\r", b" ").replace(b"\n", b" ")
    return head[:-1].encode("utf-8") + b',"response":' + body + b"}\n"


class ResponseStore:
    """Raw responses on disk, one :class:`assoc.infra.cache.Namespace` per (backend, endpoint, model).

    ``root=None`` uses the assoc cache root (``$ASSOC_CACHE_DIR``, ...); ``enabled=False`` keeps
    responses in memory only (for this run). Opening a store on disk first recovers the answers
    in journals that runs killed before their end left behind (see the module docstring).
    """

    def __init__(self, root: str | None = None, *, enabled: bool = True):
        self.enabled = enabled
        self._cache = Cache(root) if enabled else None
        self._spaces: dict[tuple[str, str, str], Namespace] = {}
        self._memory: dict[str, dict[str, Any]] = {}
        self._journal: _Journal | None = None
        self._session: list[tuple[ChatRequest, dict[str, Any]]] = []
        self._session_lock = threading.Lock()
        self.recovered = self.recover() if self._cache is not None else 0

    @property
    def root(self) -> str | None:
        """The cache root directory (``None`` when responses are kept in memory only)."""
        return str(self._cache.root) if self._cache is not None else None

    def _space(self, request: ChatRequest) -> Namespace | None:
        if self._cache is None:
            return None
        ident = (request.backend, request.endpoint, request.model)
        if ident not in self._spaces:
            self._spaces[ident] = self._space_of(ident)
        return self._spaces[ident]

    def _space_of(self, ident: tuple[str, str, str]) -> Namespace:
        assert self._cache is not None
        backend, endpoint, model = ident
        return self._cache.namespace(
            scorer="chat_listing", format=ENTRY_FORMAT, backend=backend, endpoint=endpoint, model=model
        )

    # -- the journal -------------------------------------------------------------------------------

    def begin(self) -> None:
        """Start this run's journal (a no-op in memory); :meth:`record` appends to it, :meth:`end` closes it."""
        if self._cache is not None and self._journal is None:
            self._journal = _Journal(self._cache.root / JOURNAL_DIR)

    def record(self, request: ChatRequest, data: bytes, body: Mapping[str, Any]) -> None:
        """Store one answer at once: ``data`` is the body as received, ``body`` the same, read.

        Safe to call from any thread. On disk the journal line is written before this returns;
        the entry reaches a pack at :meth:`end`.
        """
        received = _now()
        if self._journal is not None:
            self._journal.append(_journal_line(request, data, received))
        entry = {"format": ENTRY_FORMAT, "request": request.key_parts(), "response": body, "received": received}
        with self._session_lock:
            self._session.append((request, entry))

    def end(self) -> None:
        """Move this run's answers into packs (one per namespace), then delete the journal.

        Called on every exit path of a run; if writing the packs fails the journal is kept, and the
        next store opened on this root recovers it.
        """
        with self._session_lock:
            pairs, self._session = self._session, []
        journal, self._journal = self._journal, None
        try:
            self.put(pairs)
        except BaseException:
            if journal is not None:
                journal.close(delete=False)
            raise
        if journal is not None:
            journal.close(delete=True)

    def recover(self) -> int:
        """Move the answers of journals whose run is gone into packs; return how many were recovered.

        A journal is gone when its lock is free (its process ended without :meth:`end`: a kill or a
        crash). A torn last line (the process died inside the write) is skipped: that request was
        still in flight and is sent again.
        """
        if self._cache is None:
            return 0
        directory = self._cache.root / JOURNAL_DIR
        if not directory.is_dir():
            return 0
        for fresh in directory.glob("*.new"):  # killed between creating a journal and naming it: empty
            with exclusive_lock(fresh) as free:
                if free:
                    with contextlib.suppress(OSError):
                        fresh.unlink()
        recovered = 0
        for path in sorted(directory.glob("*.jsonl")):
            with exclusive_lock(path) as free:
                if not free or not path.exists():
                    continue
                grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
                for line in path.read_bytes().splitlines():
                    try:
                        record = json.loads(line)
                        parts = record["request"]
                        ident = (parts["backend"], parts["endpoint"], parts["model"])
                        entry = {
                            "format": ENTRY_FORMAT,
                            "request": parts,
                            "response": record["response"],
                            "received": record["received"],
                        }
                    except (ValueError, KeyError, TypeError):
                        continue
                    if digest(parts) == record.get("key") and valid_entry(entry):
                        grouped.setdefault(ident, {})[record["key"]] = entry
                for ident, values in grouped.items():
                    self._space_of(ident).put_many(values)
                    recovered += len(values)
                path.unlink()
        return recovered

    # -- reading and writing packs -----------------------------------------------------------------

    def lookup(self, requests: Iterable[ChatRequest]) -> tuple[dict[str, dict[str, Any]], int]:
        """Stored entries of ``requests`` by key, and how many stored entries were unusable (re-sent)."""
        found: dict[str, dict[str, Any]] = {}
        bad = 0
        for request in requests:
            key = request.key
            if key in found:
                continue
            space = self._space(request)
            entry = self._memory.get(key) if space is None else space.get(key)
            if entry is None:
                continue
            if valid_entry(entry):
                found[key] = entry
            else:
                bad += 1
        return found, bad

    def put(self, pairs: Iterable[tuple[ChatRequest, dict[str, Any]]]) -> None:
        """Store entries (one atomic pack per namespace)."""
        grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
        spaces: dict[tuple[str, str, str], Namespace | None] = {}
        for request, entry in pairs:
            ident = (request.backend, request.endpoint, request.model)
            grouped.setdefault(ident, {})[request.key] = entry
            spaces[ident] = self._space(request)
        for ident, values in grouped.items():
            space = spaces[ident]
            if space is None:
                self._memory.update(values)
            else:
                space.put_many(values)

    def all_entries(self) -> dict[str, dict[str, Any]]:
        """Every stored entry under the root (for :func:`assoc_chat_listing.responses`)."""
        out = dict(self._memory)
        if self._cache is not None:
            for space in self._cache.namespaces(scorer="chat_listing"):
                out.update(space.items())
        return out

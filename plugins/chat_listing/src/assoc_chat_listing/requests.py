"""One chat request, its cache key, and the on-disk store of raw responses.

A request's key is the sha256 of the canonical JSON of everything that changes the reply:
backend, endpoint (the base URL without credentials or query), model, messages, sampling
parameters and sample index. The API key is never part of it. Responses are stored with
:class:`assoc.infra.cache.Cache` (atomic, checksummed packs; a corrupt pack is deleted and its
requests sent again) in one namespace per backend, endpoint and model; each entry holds the
request (without any secret), the raw response body as the server sent it, and when it arrived.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assoc.infra.cache import Cache, Namespace, digest

ENTRY_FORMAT = 1


def public_endpoint(base_url: str) -> str:
    """``base_url`` without user info, query or fragment (these may hold credentials)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


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

    @property
    def key(self) -> str:
        """The cache key (hex sha256): identical requests share it, anything that changes the reply changes it."""
        return digest(self.key_parts())

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
        "received": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"),
    }


class ResponseStore:
    """Raw responses on disk, one :class:`assoc.infra.cache.Namespace` per (backend, endpoint, model).

    ``root=None`` uses the assoc cache root (``$ASSOC_CACHE_DIR``, ...); ``enabled=False`` keeps
    responses in memory only (for this run).
    """

    def __init__(self, root: str | None = None, *, enabled: bool = True):
        self.enabled = enabled
        self._cache = Cache(root) if enabled else None
        self._spaces: dict[tuple[str, str, str], Namespace] = {}
        self._memory: dict[str, dict[str, Any]] = {}

    @property
    def root(self) -> str | None:
        """The cache root directory (``None`` when responses are kept in memory only)."""
        return str(self._cache.root) if self._cache is not None else None

    def _space(self, request: ChatRequest) -> Namespace | None:
        if self._cache is None:
            return None
        ident = (request.backend, request.endpoint, request.model)
        if ident not in self._spaces:
            self._spaces[ident] = self._cache.namespace(
                scorer="chat_listing",
                format=ENTRY_FORMAT,
                backend=request.backend,
                endpoint=request.endpoint,
                model=request.model,
            )
        return self._spaces[ident]

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

"""The on-disk store of raw responses of remote requests: a journal written on arrival, then checksummed packs.

A request's key is the sha256 of the canonical JSON of everything that changes the answer
(:meth:`StoredRequest.key_parts`: for a chat request its backend, endpoint, model, messages,
sampling parameters and sample index; never an API key). Responses are stored with
:class:`assoc.infra.cache.Cache` (atomic, checksummed packs; a corrupt pack is deleted and its
requests sent again) in one namespace per backend, endpoint and model, under the store's
``space`` (``"chat_listing"`` for chat completions: the name the chat scorers' caches have always
had); each entry holds the request (without any secret), the raw response body as the server sent
it, and when it arrived.

While requests run, each answer is first appended, the moment it arrives, to this run's
**journal** (``<cache root>/<space>-journal/<id>.jsonl``, one JSON line per answer, one ``write``
each; the file is synced to disk every second): a ``kill -9`` a microsecond later loses nothing.
When the run ends its answers go into one pack per namespace and the journal is deleted. A
journal left by a run that did not end (its lock is free) is moved into packs when the next
:class:`ResponseStore` opens the cache root.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import threading
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from assoc.infra.cache import Cache, Namespace, digest, exclusive_lock

ENTRY_FORMAT = 1
#: The space of chat-completion responses (the namespace tag and journal folder of every chat cache so far).
CHAT_SPACE = "chat_listing"


class StoredRequest(Protocol):
    """What the store needs of a request: its key, what the key is made of, and the namespace it belongs to."""

    @property
    def backend(self) -> str:
        """What answers (``openai``, ``transformers``, ...): part of the namespace."""
        ...

    @property
    def endpoint(self) -> str:
        """Where it is answered, without credentials: part of the namespace."""
        ...

    @property
    def model(self) -> str:
        """The model's name: part of the namespace."""
        ...

    @property
    def key(self) -> str:
        """The cache key: the hex sha256 of :meth:`key_parts` (:func:`assoc.infra.cache.digest`)."""
        ...

    def key_parts(self) -> dict[str, Any]:
        """Everything that changes the answer (no secret): the request as stored beside its response."""
        ...


def valid_entry(entry: Any) -> bool:
    """An entry is usable when it has the format and a response with a choices list."""
    return (
        isinstance(entry, Mapping)
        and entry.get("format") == ENTRY_FORMAT
        and isinstance(entry.get("response"), Mapping)
        and isinstance(entry["response"].get("choices"), list)
    )


def make_entry(request: StoredRequest, response: Mapping[str, Any]) -> dict[str, Any]:
    """The stored entry of a response: the request (no secret), the raw body, and when it arrived."""
    return {
        "format": ENTRY_FORMAT,
        "request": request.key_parts(),
        "response": dict(response),
        "received": _now(),
    }


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
        """Write one answer's line (one write: a killed process leaves whole lines, or a torn last one).

        A disk, quota or file-size limit that is full is one line naming the journal
        (:class:`~assoc.errors.OutputError`): the lines written before it are kept, and a re-run reads
        them back (a torn last line is skipped), so no answer already received is asked for again.
        """
        from assoc.infra.io import is_no_space

        try:
            done = os.write(self._fd, line)
            while done < len(line):  # a short write: the rest, or the error that stopped it
                done += os.write(self._fd, line[done:])
        except OSError as exc:
            if not is_no_space(exc):
                raise
            from assoc.errors import OutputError

            raise OutputError(
                f"cannot store a received answer in {self.path}: {os.strerror(exc.errno or 28)} (the disk, the "
                "quota or the file-size limit is full); the answers stored before it are kept and the same "
                "command resumes after them once there is room (e.g. assoc cache clear of other results)"
            ) from None
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


def _journal_line(request: StoredRequest, data: bytes, received: str) -> bytes:
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


def _journal_entries(path: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The valid answers of a journal file by namespace (backend, endpoint, model) and key; torn lines skipped."""
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
    return grouped


class ResponseStore:
    """Raw responses on disk, one :class:`assoc.infra.cache.Namespace` per (backend, endpoint, model).

    ``root`` is a cache root directory, an open :class:`~assoc.infra.cache.Cache` (the run's), or
    ``None`` for the assoc cache root (``$ASSOC_CACHE_DIR``, ...); ``enabled=False`` keeps responses
    in memory only (for this run). ``space`` names the kind of responses (:data:`CHAT_SPACE` for
    chat completions): it tags their namespaces and names the journal folder, so the responses of
    another protocol (completions with log-probabilities) never mix with them. Opening a store on
    disk first recovers the answers in journals that runs killed before their end left behind (see
    the module docstring).
    """

    def __init__(self, root: str | Cache | None = None, *, enabled: bool = True, space: str = CHAT_SPACE):
        self.enabled = enabled
        self.space = space
        self._cache = (root if isinstance(root, Cache) else Cache(root)) if enabled else None
        self._spaces: dict[tuple[str, str, str], Namespace] = {}
        self._memory: dict[str, dict[str, Any]] = {}
        self._journal: _Journal | None = None
        self._session: list[tuple[StoredRequest, dict[str, Any]]] = []
        self._session_lock = threading.Lock()
        self.recovered = self.recover() if self._cache is not None else 0

    @property
    def journal_directory(self) -> str:
        """The folder of this store's journals, under the cache root."""
        return f"{self.space}-journal"

    @property
    def root(self) -> str | None:
        """The cache root directory (``None`` when responses are kept in memory only)."""
        return str(self._cache.root) if self._cache is not None else None

    def _space(self, request: StoredRequest) -> Namespace | None:
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
            scorer=self.space, format=ENTRY_FORMAT, backend=backend, endpoint=endpoint, model=model
        )

    # -- the journal -------------------------------------------------------------------------------

    def begin(self) -> None:
        """Start this run's journal (a no-op in memory); :meth:`record` appends to it, :meth:`end` closes it."""
        if self._cache is not None and self._journal is None:
            self._journal = _Journal(self._cache.root / self.journal_directory)

    def record(self, request: StoredRequest, data: bytes, body: Mapping[str, Any]) -> None:
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
        directory = self._cache.root / self.journal_directory
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
                grouped = _journal_entries(path)
                for ident, values in grouped.items():
                    self._space_of(ident).put_many(values)
                    recovered += len(values)
                path.unlink()
        return recovered

    # -- reading and writing packs -----------------------------------------------------------------

    def lookup(self, requests: Iterable[StoredRequest]) -> tuple[dict[str, dict[str, Any]], int]:
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

    def put(self, pairs: Iterable[tuple[StoredRequest, dict[str, Any]]]) -> None:
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
        """Every stored entry of this space under the root (what ``assoc_chat_listing.responses`` lists)."""
        out = dict(self._memory)
        if self._cache is not None:
            for space in self._cache.namespaces(scorer=self.space):
                out.update(space.items())
        return out

"""The one on-disk cache of everything assoc computes: work units' rows, arrays, memos, chat replies.

Public interface (every user of the cache goes through it: the driver of work units, the
masked-LM engine, fmat, pll, sbert_topwords, chat_listing):

* :class:`Cache` - a root directory. ``Cache(None)`` uses :func:`default_root`; a scorer's
  ``cache_dir`` option names another root, and then *everything* assoc writes for that run
  lives under it (unit rows, engine checkpoints, memos, arrays, models assembled from
  parts). ``Cache(root, enabled=False)`` stores nothing (``cache=False``).
* :meth:`Cache.namespace` - a :class:`Namespace`: one set of ``key -> value`` items that share
  everything that changes their values (model fingerprint, options, versions).
  :meth:`Cache.namespaces` lists the existing namespaces whose parts match.
* :class:`Namespace` - ``get``/``get_many``/``put``/``put_many``/``items``/``refresh``, plus
  :meth:`Namespace.claim` (a lock file next to the items, so that concurrent runs split the
  work instead of repeating it) and :meth:`Namespace.progress` (the checkpoints of one item
  being computed, deleted by its computer when the item is finished: each result is stored
  once).
* :meth:`Cache.arrays` - checksummed numpy arrays (:class:`ArrayStore`).
* :meth:`Cache.recall` / :meth:`Cache.remember` - small facts remembered across processes
  (weight fingerprints, engine checks: :meth:`Cache.remember`).
* :meth:`Cache.sweep` - removes what killed runs left behind (temporary files, claims and
  owner files of processes that are gone).
* :meth:`Cache.usage` and :meth:`Cache.clear` - what the cache holds (bytes per namespace kind,
  scorer and model) and removing it (all, or by scorer, model or age), never an item a live run
  has claimed or is writing (``assoc cache``).
* :func:`seal` / :func:`intact` - the content fingerprint of an artefact kept beside the cache's
  items (an export, a model assembled from parts): recorded when written, checked once per
  process and file before it is reused, never trusted on its size and times alone.
* :func:`exclusive_lock` - a non-blocking lock on a file that the operating system releases when
  its holder dies (for files of a plugin's own next to the cache, e.g. chat_listing's journal).

Layout: ``<root>/<namespace hash>/`` holds ``namespace.json`` (the key parts, for people) and
*packs*: JSON files of many ``key -> value`` items, each written atomically
(:func:`assoc.infra.io.atomic_write`), so an interrupted run keeps every finished pack. Each pack
stores the sha256 of its items; a pack that does not parse or whose checksum does not match
is reported (:class:`CacheWarning`), deleted and its items recomputed - never trusted. When
a namespace holds more than ``COMPACT_AFTER`` packs, loading merges them into one.

**Which value wins.** A pack's name starts with the time it was written
(``pack-<nanoseconds>-<writer>-<n>.json``); packs are read in name order and a key stored
in several packs takes the value of the last one: the value stored last wins, whatever
order the file system lists packs in. A merged pack takes the name of the newest pack it
merged, so compaction never changes a winner.

**Integrity.** Every file the cache reuses is checked against a content fingerprint recorded when
it was written: a pack against the sha256 of its items, an array against the sha256 of its data
file, a memo against the sha256 of its key and value, a sealed artefact (:func:`seal`) against the
sha256 of each of its files. A file that fails its check is reported (:class:`CacheWarning`),
deleted and made again. The check hashes the file once per process (a file's size, times and
inode tell this process that it has not been rewritten since; they never stand in for its content
across processes). A write that fails for want of room (a full disk) is one line naming the file
(:class:`~assoc.errors.OutputError`); the cache is left as it was before the write.

**Versions.** The layout version :data:`LAYOUT` is part of every namespace's hash, so the
directories of an older cache are never read (their results are computed again); pack
files of another format in a current directory are reported as corrupt and recomputed.

**Concurrent runs.** Every process that writes to a root holds an *owner* lock,
``<root>/owners/<owner>.lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows: the
operating system releases it when the process dies, however it dies). Claims and the
temporary files of packs name their owner, so any later process can tell a live claim from
the leftover of a killed run: a claim whose owner is gone is taken over, and a temporary file
whose owner is gone is deleted. Temporary files that name no owner are deleted once older
than :data:`STALE_AFTER` seconds.

The root is ``$ASSOC_CACHE_DIR``, else the platform's user cache directory from
``platformdirs.user_cache_dir("assoc")``: ``$XDG_CACHE_HOME/assoc`` or ``~/.cache/assoc``
on Linux, ``~/Library/Caches/assoc`` on macOS, ``%LOCALAPPDATA%/assoc/Cache`` on Windows.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from assoc.infra.io import atomic_write

FORMAT = "assoc-cache-2"
#: Part of every namespace's hash: caches written with another layout live in other directories.
LAYOUT = 2
COMPACT_AFTER = 64  # packs; more are merged into one on the next load
#: Seconds after which a temporary file that names no owner is taken for the leftover of a killed run.
STALE_AFTER = 3600.0

_PACK = re.compile(r"^pack-\d{20}-")
_OWNER = re.compile(r"o[A-Za-z0-9]{0,24}_\d+_[0-9a-f]{8}")


class CacheWarning(UserWarning):
    """A cache entry was corrupt and is being recomputed."""


def default_root() -> Path:
    """The cache root directory (see module docstring)."""
    if os.environ.get("ASSOC_CACHE_DIR"):
        return Path(os.environ["ASSOC_CACHE_DIR"]).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("assoc", appauthor=False))


def digest(value: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``value`` (stable across runs and platforms)."""
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """``json.dumps``'s ``default``: numpy scalars and arrays as the Python numbers and lists they hold."""
    if hasattr(value, "tolist"):  # numpy scalars (np.float32, np.int64, np.bool_) and arrays
        return value.tolist()
    raise TypeError(f"a cached value must be JSON data, got {type(value).__name__}: {value!r}")


def _encode(entries: Mapping[str, Any]) -> str:
    # NaN/inf are legitimate results (out-of-vocabulary words); JSON spells them NaN/Infinity.
    return json.dumps(
        entries, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True, default=_plain
    )


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with numpy scalars (``np.float32``, ...) replaced by the Python values they hold.

    Exactly what a cache read of the rows gives back (a float32 becomes the float64 of the same
    value), so a table is the same whether its rows were computed now or read from the cache.
    Rows of plain values are returned as they are (the same list, after a type check per value).
    """
    for row in rows:
        for value in row.values():
            if type(value) not in _SCALARS:
                return list(json.loads(_encode({"rows": rows}))["rows"])
    return rows


# -- owners: one lock per process and root, released by the operating system when the process dies --------


def _lock(handle: IO[bytes]) -> bool:
    """Try to take an exclusive advisory lock on an open file without waiting."""
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[bool]:
    """Try to take an exclusive advisory lock on ``path`` without waiting; yield whether it was taken.

    ``flock`` on POSIX, ``msvcrt.locking`` on Windows; the operating system releases the
    lock when the holder exits, so a crashed process never leaves it stuck. Part of the public
    interface: chat_listing's journal of answers locks its files with it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")  # noqa: SIM115 - closed in the finally below
    try:
        yield _lock(handle)
    finally:
        handle.close()


class _Owners:
    """The owner locks of this process, one per cache root (see the module docstring)."""

    def __init__(self) -> None:
        self._held: dict[Path, IO[bytes]] = {}
        self._pid = -1
        self._id = ""
        self._guard = threading.Lock()

    @property
    def id(self) -> str:
        """The owner id of this process: ``o<host>_<pid>_<random>`` (a forked child gets its own)."""
        if self._pid != os.getpid():
            host = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24]
            self._pid, self._id = os.getpid(), f"o{host}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
            self._held = {}  # the parent's handles are the parent's
        return self._id

    def register(self, root: Path) -> str:
        """Hold this process's owner lock under ``root`` (once per root); return the owner id."""
        owner = self.id
        if root in self._held:
            return owner
        with self._guard:
            if root not in self._held:
                path = root / "owners" / f"{owner}.lock"
                path.parent.mkdir(parents=True, exist_ok=True)
                self._held[root] = self._create(path)
        return owner

    @staticmethod
    def _create(path: Path) -> IO[bytes]:
        """Create ``path`` already locked: written and locked under a temporary name, then renamed.

        So no other process ever sees the owner file unlocked (it would take its owner for gone).
        """
        if sys.platform == "win32":  # pragma: no cover - Windows cannot rename a file that is open
            handle = open(path, "a+b")  # noqa: SIM115 - held for the life of the process
            _lock(handle)
            return handle
        for _ in range(3):
            temporary = path.with_name(path.name + ".tmp")
            handle = open(temporary, "w+b")  # noqa: SIM115 - held for the life of the process
            _lock(handle)
            handle.write(f"{socket.gethostname()} {os.getpid()}\n".encode())
            handle.flush()
            try:
                os.replace(temporary, path)
                return handle
            except FileNotFoundError:  # swept meanwhile by a process that took it for a leftover: again
                handle.close()
        raise OSError(f"cannot create the cache's owner lock {path}")

    def alive(self, root: Path, owner: str) -> bool:
        """Whether the process ``owner`` still holds its lock under ``root`` (a missing lock: gone)."""
        if owner == self._id and self._pid == os.getpid():
            return True
        path = root / "owners" / f"{owner}.lock"
        try:
            handle = open(path, "r+b")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return False
        except OSError:
            return True  # cannot tell: assume alive, never take over a live run's work
        with handle:
            if not _lock(handle):
                return True
            with contextlib.suppress(OSError):  # its owner is gone: the lock file is a leftover
                path.unlink()
            return False

    def release(self) -> None:
        """Give up every owner lock of this process and delete its lock files (at exit)."""
        if self._pid != os.getpid():
            return
        for root, handle in list(self._held.items()):
            with contextlib.suppress(OSError):
                (root / "owners" / f"{self._id}.lock").unlink()
            handle.close()
        self._held = {}


_OWNERS = _Owners()
atexit.register(_OWNERS.release)


def _stale_temporary(path: Path, root: Path, now: float) -> bool:
    """Whether ``path`` (a ``*.tmp`` file) is the leftover of a process that is gone."""
    found = _OWNER.search(path.name)
    if found is not None:
        return not _OWNERS.alive(root, found.group(0))
    try:
        return now - path.stat().st_mtime > STALE_AFTER
    except OSError:
        return False


def _sweep_directory(directory: Path, root: Path) -> int:
    """Delete the stale temporary files directly in ``directory``; return how many."""
    removed = 0
    now = time.time()
    try:
        names = [entry for entry in os.scandir(directory) if entry.name.endswith(".tmp")]
    except OSError:
        return 0
    for entry in names:
        path = Path(entry.path)
        if _stale_temporary(path, root, now):
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
    return removed


# -- claims -------------------------------------------------------------------------------------------


class Claim:
    """A claim on one item of a namespace: while it is held, other processes leave the item alone.

    Obtained from :meth:`Namespace.claim`; give it up with :meth:`release` (or use it as a
    context manager) once the item is stored. A process that dies holding a claim loses it:
    its owner lock is released by the operating system, and the next :meth:`Namespace.claim`
    of the item takes the claim over.
    """

    def __init__(self, path: Path, owner: str):
        self.path = path
        self.owner = owner
        self._held = True

    def release(self) -> None:
        """Give the claim up (idempotent)."""
        if self._held:
            self._held = False
            with contextlib.suppress(OSError):
                self.path.unlink()

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- namespaces ---------------------------------------------------------------------------------------


class Namespace:
    """The cached items of one namespace. Created by :meth:`Cache.namespace`.

    Items are read from disk on first use and kept in memory; :meth:`refresh` reads what other
    processes stored meanwhile.
    """

    def __init__(self, directory: Path, parts: Mapping[str, Any], root: Path | None = None):
        self.directory = directory
        self.parts = dict(parts)
        self.root = root if root is not None else directory.parent
        self._entries: dict[str, Any] | None = None
        self._read: set[str] = set()  # names of the packs read into _entries
        self._last = ""  # the name of the newest pack read
        self._counter = 0

    # -- reading --------------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        if self._entries is not None:
            return self._entries
        self._entries, self._read, self._last = {}, set(), ""
        _sweep_directory(self.directory, self.root)
        self._read_new()
        good = [self.directory / name for name in sorted(self._read)]
        good = [pack for pack in good if pack.exists()]
        if len(good) > COMPACT_AFTER:
            self._compact(good)
        return self._entries

    def _read_new(self) -> None:
        """Read the packs not read yet, oldest first; start over when one is older than the newest read."""
        assert self._entries is not None
        # A pack that disappears between listing and reading was merged by another process's
        # compaction (not corrupt): list again to find the merged pack.
        for _ in range(10):
            try:
                listed = sorted(
                    entry.name
                    for entry in os.scandir(self.directory)
                    if entry.name.startswith("pack-") and entry.name.endswith(".json")
                )
            except FileNotFoundError:
                return
            new = [name for name in listed if name not in self._read]
            if new and new[0] < self._last:
                # an older pack appeared (a merged pack, or a slow writer's): apply everything in order again
                self._entries.clear()
                self._read, self._last = set(), ""
                new = listed
            vanished = False
            for name in new:
                pack = self.directory / name
                try:
                    text = pack.read_text(encoding="utf-8")
                except FileNotFoundError:
                    vanished = True
                    continue
                except (OSError, ValueError):  # unreadable, or not UTF-8 text
                    text = ""
                body = self._checked_body(pack, text)
                if body is not None:
                    self._entries.update(body)
                    self._read.add(name)
                    self._last = max(self._last, name)
            if not vanished:
                return

    @staticmethod
    def _checked_body(pack: Path, text: str) -> dict[str, Any] | None:
        """The entries of a pack, or None (after a warning and deleting it) when it is corrupt."""
        try:
            data = json.loads(text)
            body = data["entries"]
            if (
                _PACK.match(pack.name)
                and data.get("format") == FORMAT
                and hashlib.sha256(_encode(body).encode()).hexdigest() == data["sha256"]
            ):
                return dict(body)
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        warnings.warn(
            f"corrupt cache file {pack} ignored and deleted; its results will be recomputed", CacheWarning, stacklevel=5
        )
        with contextlib.suppress(OSError):
            pack.unlink()
        return None

    def refresh(self) -> None:
        """Read the packs other processes stored since this namespace was read (cheap when there are none)."""
        if self._entries is None:
            self._load()
        else:
            self._read_new()

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, key: str) -> bool:
        return key in self._load()

    def get(self, key: str, default: Any = None) -> Any:
        """The cached value of ``key``, or ``default`` when absent."""
        return self._load().get(key, default)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached values of those ``keys`` that are present."""
        entries = self._load()
        return {k: entries[k] for k in keys if k in entries}

    def keys(self) -> list[str]:
        """Every key stored in this namespace."""
        return list(self._load())

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every ``(key, value)`` stored in this namespace."""
        return iter(list(self._load().items()))

    # -- writing --------------------------------------------------------------------------------
    def put(self, key: str, value: Any) -> None:
        """Store one item (see :meth:`put_many`)."""
        self.put_many({key: value})

    def put_many(self, values: Mapping[str, Any]) -> None:
        """Store ``values`` (JSON data; numpy scalars and arrays are stored as numbers and lists) as one pack.

        The pack is written atomically; values stored again replace the earlier ones (the value
        stored last wins, see the module docstring).
        """
        if not values:
            return
        body = {str(k): v.tolist() if hasattr(v, "tolist") else v for k, v in values.items()}
        self._write_pack(body)
        self._load().update(body)

    def _write_pack(self, body: Mapping[str, Any], stamp: str | None = None) -> str:
        """Write ``body`` as a new pack; return the pack's name."""
        text = _encode(body)
        checksum = hashlib.sha256(text.encode()).hexdigest()
        # The record is {"entries": ..., "format": ..., "sha256": ...} with sorted keys; the entries' JSON is
        # spliced in rather than encoded a second time (encoding dominates writing a pack of table rows).
        record = f'{{"entries":{text},"format":{json.dumps(FORMAT)},"sha256":"{checksum}"}}'
        self.directory.mkdir(parents=True, exist_ok=True)
        owner = _OWNERS.register(self.root)
        self._counter += 1
        stamp = stamp or f"{time.time_ns():020d}"
        name = f"pack-{stamp}-{owner}-{self._counter}-{uuid.uuid4().hex[:6]}.json"
        with atomic_write(self.directory / name, "w", encoding="utf-8") as handle:
            handle.write(record)
        if self._entries is not None and name > self._last:
            self._read.add(name)
            self._last = name
        return name

    def _compact(self, packs: list[Path]) -> None:
        """Merge many small packs into one, holding the namespace's compaction lock.

        Only packs whose entries were read are deleted, so a pack that another process
        writes meanwhile is kept. The merged pack is named after the newest pack it merges, so
        a newer pack keeps winning over it. When another process is compacting (the lock is
        held) or has compacted since these packs were read (one is gone), nothing is done.
        """
        with exclusive_lock(self.directory / ".compact.lock") as locked:
            if not locked or not all(pack.exists() for pack in packs):
                return
            newest = max(pack.name for pack in packs)
            merged = self._write_pack(dict(self._entries or {}), stamp=newest[len("pack-") : len("pack-") + 20])
            for pack in packs:
                with contextlib.suppress(OSError):
                    pack.unlink()
                self._read.discard(pack.name)
            self._read.add(merged)
            self._last = max(self._read)

    def clear(self) -> None:
        """Delete every pack of this namespace."""
        for pack in self.directory.glob("pack-*.json"):
            with contextlib.suppress(OSError):
                pack.unlink()
        self._entries, self._read, self._last = {}, set(), ""

    # -- sharing work ---------------------------------------------------------------------------
    def claim(self, key: str) -> Claim | None:
        """Claim ``key`` before computing it; None when a live process holds it (compute something else).

        The claim is the file ``claim-<key digest>.lock`` in the namespace's directory, naming its
        owner. A claim whose owner is gone (a killed run) is taken over. Claim, then check that the
        item is still missing (:meth:`refresh`), compute, :meth:`put` it and release the claim.
        """
        owner = _OWNERS.register(self.root)
        path = self.directory / f"claim-{digest(key)[:40]}.lock"
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                holder = _claim_owner(path)
                if holder == "" or _OWNERS.alive(self.root, holder):
                    return None
                # Its owner is gone: remove the claim, under a lock so that two processes that both saw
                # it stale cannot remove each other's new claims.
                with exclusive_lock(self.directory / ".claims.lock") as locked:
                    if not locked or _claim_owner(path) != holder:
                        return None
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"owner": owner, "host": socket.gethostname(), "pid": os.getpid()}))
            return Claim(path, owner)
        return None

    def progress(self, key: str, **parts: Any) -> Namespace:
        """The checkpoints of the unfinished item ``key`` (a namespace of its own, under this one).

        Whoever computes ``key`` stores partial results there as it goes, so a killed computation
        resumes from them, and calls :meth:`discard` on it once the item is finished: at rest,
        each result is stored once. ``parts`` distinguish checkpoints computed differently (e.g.
        on another device type).
        """
        sub = digest(parts)[:16]
        return Namespace(
            self.directory / f"progress-{digest(key)[:40]}" / sub,
            {**self.parts, "progress_of": key, **parts},
            self.root,
        )

    def discard(self) -> None:
        """Delete this namespace's directory and everything in it (the checkpoints of a finished item)."""
        target = self.directory
        if target.parent.name.startswith("progress-"):
            target = target.parent
        shutil.rmtree(target, ignore_errors=True)
        self._entries, self._read, self._last = None, set(), ""


def _claim_owner(path: Path) -> str:
    """The owner named in a claim file; ``""`` when it is being written (young) - then it is live."""
    try:
        text = path.read_text(encoding="utf-8")
        owner = json.loads(text)["owner"]
        if isinstance(owner, str) and _OWNER.fullmatch(owner):
            return owner
    except FileNotFoundError:
        return "o_0_00000000"  # gone meanwhile: retry creating it
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        young = time.time() - path.stat().st_mtime < 60
    except OSError:
        young = False
    return "" if young else "o_0_00000000"  # unreadable and old: the leftover of a run killed while writing it


# -- the root -----------------------------------------------------------------------------------------


class Cache:
    """A cache root directory: namespaces of items, arrays and memos. ``Cache(None)`` uses :func:`default_root`.

    Parameters
    ----------
    root:
        The directory (created when something is first stored).
    enabled:
        False for a cache that stores and finds nothing (a scorer's ``cache=False``): memos are
        not read or written; :meth:`namespace` and :meth:`arrays` refuse.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, enabled: bool = True):
        self.root = Path(root).expanduser() if root is not None else default_root()
        self.enabled = enabled
        self._opened: dict[str, Namespace] = {}

    def __getstate__(self) -> dict[str, Any]:
        # sent to other processes (Ray workers) without the items read so far
        return {"root": self.root, "enabled": self.enabled, "_opened": {}}

    def _require(self) -> None:
        if not self.enabled:
            raise ValueError("this cache is disabled (cache=False): it stores nothing")

    def namespace(self, **parts: Any) -> Namespace:
        """The namespace for these key parts (JSON-serialisable values).

        The same parts give the same :class:`Namespace` object for the life of this ``Cache``,
        so work split into many units reads the namespace's packs once.
        """
        self._require()
        name = digest({"layout": LAYOUT, **parts})[:32]
        if name in self._opened:
            return self._opened[name]
        directory = self.root / name
        meta = directory / "namespace.json"
        if not meta.exists():
            directory.mkdir(parents=True, exist_ok=True)
            with atomic_write(meta, "w", encoding="utf-8") as handle:
                json.dump(
                    {"layout": LAYOUT, **parts}, handle, indent=2, sort_keys=True, ensure_ascii=False, default=str
                )
        self._opened[name] = Namespace(directory, parts, self.root)
        return self._opened[name]

    def namespaces(self, **match: Any) -> list[Namespace]:
        """The existing namespaces of this layout whose parts include ``match`` (e.g. ``scorer="chat_listing"``)."""
        if not self.enabled or not self.root.is_dir():
            return []
        found = []
        for meta in sorted(self.root.glob("*/namespace.json")):
            try:
                parts = json.loads(meta.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(parts, dict) or parts.pop("layout", None) != LAYOUT:
                continue
            if all(parts.get(k) == v for k, v in match.items()):
                name = meta.parent.name  # the directory itself: parts read back from JSON may not re-hash to it
                if name not in self._opened:
                    self._opened[name] = Namespace(meta.parent, parts, self.root)
                found.append(self._opened[name])
        return found

    def arrays(self) -> ArrayStore:
        """The checksummed arrays of this root (``<root>/arrays``)."""
        self._require()
        return ArrayStore(self.root)

    # -- memo -----------------------------------------------------------------------------------
    def _memo_path(self, kind: str, key: Any) -> Path:
        return self.root / "memo" / kind / f"{digest([MEMO_VERSION, key])[:40]}.json"

    def recall(self, kind: str, key: Any) -> Any:
        """The value remembered for ``key`` (JSON data) under ``kind``, or None (always None when disabled).

        A memo whose content does not match the checksum written with it (edited, damaged) is
        reported (:class:`CacheWarning`), deleted and reported missing, so the caller computes it again.
        """
        if not self.enabled:
            return None
        path = self._memo_path(kind, key)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None
        try:
            record = json.loads(text)
            intact = record["sha256"] == digest({"key": record["key"], "value": record["value"]})
        except (ValueError, KeyError, TypeError):
            intact = False
        if not intact:
            warnings.warn(
                f"corrupt cache file {path} ignored and deleted; it will be recomputed", CacheWarning, stacklevel=2
            )
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        if record["key"] != json.loads(json.dumps(key)):
            return None
        return record["value"]

    def remember(self, kind: str, key: Any, value: Any) -> None:
        """Store ``value`` for ``key`` atomically, with its checksum (skipped when disabled or not writable).

        A memo saves work only: when the disk is full (or the root cannot be written) nothing is
        stored and nothing is raised.
        """
        if not self.enabled:
            return
        record = {"key": key, "value": value}
        try:
            record = json.loads(json.dumps(record, ensure_ascii=False))
            with atomic_write(self._memo_path(kind, key), "w", encoding="utf-8") as handle:
                json.dump({**record, "sha256": digest(record)}, handle, ensure_ascii=False)
        except OSError:
            pass

    # -- leftovers ------------------------------------------------------------------------------
    def sweep(self) -> int:
        """Delete what killed runs left under the root; return how many files were removed.

        Temporary files (``*.tmp``) and claims whose owner process is gone, temporary files that
        name no owner and are older than :data:`STALE_AFTER` seconds, and owner lock files of
        processes that are gone. Live runs' files are never touched.
        """
        if not self.root.is_dir():
            return 0
        removed = _sweep_directory(self.root, self.root)
        owners = self.root / "owners"
        if owners.is_dir():
            removed += _sweep_directory(owners, self.root)  # owner files of runs killed while registering
            for path in owners.glob("*.lock"):
                if not _OWNERS.alive(self.root, path.stem):  # alive() deletes the lock file of a gone owner
                    removed += 1
        for directory in self.root.iterdir():
            if not directory.is_dir() or directory.name == "owners":
                continue
            for sub in [directory, *(p for p in directory.rglob("*") if p.is_dir())]:
                removed += _sweep_directory(sub, self.root)
                for claim in sub.glob("claim-*.lock"):
                    holder = _claim_owner(claim)
                    if holder and not _OWNERS.alive(self.root, holder):
                        with contextlib.suppress(OSError):
                            claim.unlink()
                            removed += 1
        return removed

    # -- what the cache holds, and removing it -----------------------------------------------------
    def usage(self) -> list[CacheArea]:
        """What the cache holds: one :class:`CacheArea` per namespace and per other area (arrays, memos, ...).

        Read-only; sizes are the bytes of the files on disk. A namespace's ``kind``, ``scorer`` and
        ``model`` come from its key parts (``namespace.json``); an engine's namespace (``fmat-log-prob``)
        names the model by its weights' fingerprint, translated to the model's name where a unit
        namespace of this root records both.
        """
        if not self.root.is_dir():
            return []
        names = self._model_names()
        areas: list[CacheArea] = []
        for directory in sorted(p for p in self.root.iterdir() if p.is_dir() and p.name != "owners"):
            parts = _namespace_parts(directory)
            files = [f for f in directory.rglob("*") if f.is_file()]
            size, newest = _size_and_newest(files)
            if parts is None:
                areas.append(CacheArea(directory, directory.name, "", "", size, len(files), newest, {}))
                continue
            model = str(parts.get("model", ""))
            areas.append(
                CacheArea(
                    directory,
                    str(parts.get("kind") or ("responses" if "endpoint" in parts else "items")),
                    str(parts.get("scorer", "")),
                    names.get(model, model),
                    size,
                    sum(1 for f in files if f.name.startswith("pack-")),
                    newest,
                    parts,
                )
            )
        return areas

    def _model_names(self) -> dict[str, str]:
        """Weights' fingerprint -> model name, from the unit namespaces (which record both)."""
        names: dict[str, str] = {}
        for meta in self.root.glob("*/namespace.json"):
            parts = _namespace_parts(meta.parent) or {}
            if parts.get("fingerprint") and parts.get("model"):
                names.setdefault(str(parts["fingerprint"]), str(parts["model"]))
        return names

    def clear(
        self,
        *,
        scorer: str | None = None,
        model: str | None = None,
        older_than: float | None = None,
        dry_run: bool = False,
    ) -> CacheClearing:
        """Remove cached results: everything, or those of ``scorer`` / ``model``, or older than ``older_than``.

        Through the cache's own rules, never behind a live run's back: a namespace in which a live
        run holds a claim (it is computing an item there) is left whole and counted in ``busy``; a
        claim or temporary file of a live run is never touched; packs are deleted whole (each is
        written atomically), so what remains is a consistent cache that later runs read and fill
        again. With ``older_than`` (seconds), only packs written that many seconds ago or earlier go (a
        pack's name records when it was written). Without ``scorer`` and ``model`` the arrays and
        memos go too (they are not kept per scorer). ``dry_run``: count what would go, remove nothing.
        """
        result = CacheClearing()
        if not self.root.is_dir():
            return result
        cutoff = time.time() - older_than if older_than is not None else None
        wanted = self._matching(scorer, model)
        for area in self.usage():
            if area.parts and not wanted(area):
                continue
            if not area.parts and (scorer or model):
                continue
            if area.parts and self._live_claims(area.directory):
                result.busy.append(area)
                continue
            arrays = area.directory.name == "arrays" and not area.parts
            for path in sorted((p for p in area.directory.rglob("*") if p.is_file()), reverse=True):
                if path.suffix == ".tmp" and not _stale_temporary(path, self.root, time.time()):
                    continue  # a live run's file being written
                if cutoff is not None and (path.name == "namespace.json" or (arrays and path.suffix == ".npy")):
                    continue  # kept with what is kept: a namespace's newer packs, an array's record (below)
                if cutoff is not None and _written_at(path) > cutoff:
                    continue
                if not area.parts and _held_by_a_live_run(path):
                    continue  # a live run's journal of answers
                result.count(path, dry_run)
                if arrays and cutoff is not None and path.suffix == ".json":  # an array's data goes with its record
                    for data in area.directory.glob(f"{path.stem}-*.npy"):
                        result.count(data, dry_run)
            if not dry_run:
                _remove_empty_directories(area.directory)
        if not dry_run and scorer is None and model is None:
            self.sweep()  # owner files of runs that are gone
        self._opened.clear()
        return result

    def _matching(self, scorer: str | None, model: str | None) -> Callable[[CacheArea], bool]:
        """Whether a namespace belongs to ``scorer`` and ``model`` (None: any)."""
        wanted_models: set[str] = set()
        if model is not None:
            wanted_models = {model, str(Path(model).expanduser().resolve())}
            for meta in self.root.glob("*/namespace.json"):  # the fingerprints of the model's weights
                parts = _namespace_parts(meta.parent) or {}
                if str(parts.get("model", "")) in wanted_models and parts.get("fingerprint"):
                    wanted_models.add(str(parts["fingerprint"]))

        def matches(area: CacheArea) -> bool:
            parts = area.parts
            if scorer is not None:
                kind = str(parts.get("kind", ""))
                if parts.get("scorer") != scorer and not kind.startswith(f"{scorer}-"):
                    return False
            if model is not None:
                named = {str(parts.get("model", "")), str(parts.get("fingerprint", "")), area.model}
                hub = {n.split("@")[0].removeprefix("hf:") for n in named if n.startswith("hf:")}
                if not (named | hub) & wanted_models:
                    return False
            return True

        return matches

    def _live_claims(self, directory: Path) -> bool:
        for claim in directory.rglob("claim-*.lock"):
            holder = _claim_owner(claim)
            if holder == "" or _OWNERS.alive(self.root, holder):
                return True
        return False


class CacheArea(NamedTuple):
    """One part of a cache root, as :meth:`Cache.usage` reports it."""

    directory: Path
    kind: str  # the namespace's kind (units, fmat-log-prob, responses, ...), or the folder's name (arrays, memo)
    scorer: str
    model: str
    bytes: int
    items: int  # packs of a namespace; files of another area
    newest: float  # when its newest file was written (seconds since the epoch; 0 when empty)
    parts: Mapping[str, Any]  # the namespace's key parts ({} for another area)


class CacheClearing:
    """What :meth:`Cache.clear` removed (or, in a dry run, would remove), and what it left to live runs."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0
        self.busy: list[CacheArea] = []

    def count(self, path: Path, dry_run: bool) -> None:
        """Remove ``path`` (unless ``dry_run``) and count it."""
        try:
            size = path.stat().st_size
            if not dry_run:
                path.unlink()
        except OSError:
            return
        self.files += 1
        self.bytes += size


def _held_by_a_live_run(path: Path) -> bool:
    """Whether another process holds ``path`` locked (:func:`exclusive_lock`): a live run's journal."""
    if path.suffix not in (".jsonl", ".lock", ".new"):
        return False
    try:
        handle = open(path, "r+b")  # noqa: SIM115 - closed below
    except OSError:
        return False
    with handle:
        return not _lock(handle)


def _namespace_parts(directory: Path) -> dict[str, Any] | None:
    """The key parts in a namespace's ``namespace.json`` (None: not a namespace of this layout)."""
    try:
        parts = json.loads((directory / "namespace.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(parts, dict) or parts.pop("layout", None) != LAYOUT:
        return None
    return parts


def _size_and_newest(files: Iterable[Path]) -> tuple[int, float]:
    size, newest = 0, 0.0
    for path in files:
        with contextlib.suppress(OSError):
            status = path.stat()
            size += status.st_size
            newest = max(newest, _written_at(path, status.st_mtime))
    return size, newest


def _written_at(path: Path, mtime: float | None = None) -> float:
    """When ``path`` was written: a pack's name records it (compaction keeps the newest stamp); else its mtime."""
    if _PACK.match(path.name):
        return int(path.name[len("pack-") : len("pack-") + 20]) / 1e9
    if mtime is not None:
        return mtime
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _remove_empty_directories(top: Path) -> None:
    for directory in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            directory.rmdir()
    with contextlib.suppress(OSError):
        top.rmdir()


#: The old name of :class:`Cache` (kept for plugins written against it).
ResultCache = Cache

#: 2: each memo records the sha256 of its key and value (memos of version 1 are not read).
MEMO_VERSION = 2


# -- arrays -------------------------------------------------------------------------------------------

ARRAY_FORMAT = "assoc-array-1"


class ArrayStore:
    """Checksummed numpy arrays in the cache root, one per key (e.g. a vocabulary's embeddings).

    Layout: ``<root>/arrays/<key digest>.json`` (the key parts, shape, dtype and the sha256 of the
    data file) and ``<root>/arrays/<key digest>-<random id>.npy``. The ``.npy`` file is written
    first and never changed; the ``.json`` file, written atomically after it, commits the entry. On
    load the ``.npy`` file's sha256 is checked: an entry that does not parse, lacks its data file or
    fails the check is reported (:class:`CacheWarning`), deleted and reported missing, so the caller
    recomputes it - never trusted. ``ArrayStore(None)`` uses :func:`default_root`; prefer
    :meth:`Cache.arrays`.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.cache_root = Path(root).expanduser() if root is not None else default_root()
        self.root = self.cache_root / "arrays"

    def _meta(self, parts: Mapping[str, Any]) -> Path:
        return self.root / f"{digest(dict(parts))[:32]}.json"

    def load(self, **parts: Any) -> Any:
        """The array stored under these key parts (JSON-serialisable values), or None."""
        import numpy as np

        meta = self._meta(parts)
        if not meta.exists():
            return None
        data_file: Path | None = None
        try:
            record = json.loads(meta.read_text(encoding="utf-8"))
            data_file = meta.parent / record["file"]
            ok = (
                record.get("format") == ARRAY_FORMAT
                and record["parts"] == json.loads(_encode(parts))
                and file_sha256(data_file) == record["sha256"]
            )
            array = np.load(data_file, allow_pickle=False) if ok else None
            ok = (
                ok
                and array is not None
                and list(array.shape) == record["shape"]
                and str(array.dtype) == record["dtype"]
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            ok = False
        if not ok:
            warnings.warn(
                f"corrupt cache entry {meta} ignored and deleted; it will be recomputed", CacheWarning, stacklevel=2
            )
            self._delete(meta, data_file)
            return None
        return array

    def save(self, array: Any, **parts: Any) -> Path:
        """Store ``array`` under these key parts, atomically; returns the data file's path."""
        import numpy as np

        array = np.ascontiguousarray(array)
        meta = self._meta(parts)
        owner = _OWNERS.register(self.cache_root)
        data_file = meta.parent / f"{meta.stem}-{owner}-{uuid.uuid4().hex[:8]}.npy"
        with atomic_write(data_file, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
        checksum = file_sha256(data_file)
        record = {
            "format": ARRAY_FORMAT,
            "file": data_file.name,
            "sha256": checksum,
            "shape": list(array.shape),
            "dtype": str(array.dtype),
            "parts": json.loads(_encode(parts)),
        }
        with atomic_write(meta, "w", encoding="utf-8") as handle:
            json.dump(record, handle, sort_keys=True, ensure_ascii=False, indent=1)
        for old in self.root.glob(f"{meta.stem}-*.npy"):  # data files of earlier versions of this entry
            if old != data_file:
                with contextlib.suppress(OSError):
                    old.unlink()
        return data_file

    def delete(self, **parts: Any) -> None:
        """Remove the entry stored under these key parts, if any."""
        meta = self._meta(parts)
        self._delete(meta, None)

    def _delete(self, meta: Path, data_file: Path | None) -> None:
        for path in (meta, data_file, *self.root.glob(f"{meta.stem}-*.npy")):
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink()


# -- content fingerprints, checked once per process -----------------------------------------------------

#: sha256 of files this process hashed, by path, with the stat that tells it the file is unchanged since.
_HASHED: dict[str, tuple[tuple[int, int, int, int, int], str]] = {}
_HASHED_LOCK = threading.Lock()


def _stamp(path: Path) -> tuple[int, int, int, int, int]:
    status = os.stat(path)
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of ``path``'s bytes, hashed once per process and file.

    Later calls in this process return the same digest while the file's size, modification and
    change times, inode and device are those it had when hashed: rewriting a file in place changes
    its change time (which no user can set back), replacing it changes its inode. The stamp is kept
    in memory only, so every process hashes a file once before trusting it.
    """
    path = Path(path)
    key = str(path.resolve())
    stamp = _stamp(path)
    with _HASHED_LOCK:
        known = _HASHED.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    with open(path, "rb") as handle:
        found = hashlib.file_digest(handle, "sha256").hexdigest()
    if _stamp(path) == stamp:  # not rewritten while it was being hashed
        with _HASHED_LOCK:
            _HASHED[key] = (stamp, found)
    return found


#: The name of the record :func:`seal` writes: beside a file (``<file>.assoc-seal.json``) or in a folder.
SEAL_SUFFIX = ".assoc-seal.json"
SEAL_FORMAT = "assoc-seal-1"


def _seal_path(path: Path) -> Path:
    return path / SEAL_SUFFIX if path.is_dir() else path.with_name(path.name + SEAL_SUFFIX)


def _contents(path: Path) -> dict[str, Path]:
    """The files an artefact is made of, by name relative to it (itself, for a file); the seal left out."""
    if not path.is_dir():
        return {path.name: path}
    return {
        str(p.relative_to(path)): p for p in sorted(path.rglob("*")) if p.is_file() and not p.name.endswith(SEAL_SUFFIX)
    }


def seal(path: str | os.PathLike[str]) -> Path:
    """Record the content fingerprint of an artefact just written: the sha256 of each of its files.

    ``path`` is a file (an ONNX export) or a folder (a model assembled from parts); the record is
    written atomically beside the file (``<file>.assoc-seal.json``) or inside the folder. Call it once
    the artefact is complete; :func:`intact` checks it before every reuse. Returns the record's path.
    """
    artefact = Path(path)
    files = {name: file_sha256(file) for name, file in _contents(artefact).items()}
    record = _seal_path(artefact)
    with atomic_write(record, "w", encoding="utf-8") as handle:
        json.dump({"format": SEAL_FORMAT, "files": files}, handle, sort_keys=True, indent=1)
    return record


def intact(path: str | os.PathLike[str]) -> bool:
    """Whether the artefact at ``path`` holds exactly the content :func:`seal` recorded.

    False (after a :class:`CacheWarning` naming what differs) when the artefact or its record is
    missing or unreadable, a file is missing or added, or a file's sha256 differs: the caller
    deletes and makes it again. Each file is hashed once per process (see :func:`file_sha256`), so
    a check repeated within a run costs a few ``stat`` calls.
    """
    artefact = Path(path)
    if not artefact.exists():
        return False
    try:
        record = json.loads(_seal_path(artefact).read_text(encoding="utf-8"))
        recorded = record["files"] if record.get("format") == SEAL_FORMAT else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        recorded = None
    if not isinstance(recorded, dict):
        problem = "has no record of its content (written by an older assoc, or interrupted)"
    else:
        present = _contents(artefact)
        changed = sorted(
            name for name in set(recorded) | set(present) if name not in present or name not in recorded
        ) or sorted(name for name, file in present.items() if file_sha256(file) != recorded[name])
        problem = (
            f"no longer holds the content recorded when it was written ({', '.join(changed[:3])})" if changed else ""
        )
    if problem:
        warnings.warn(f"cached {artefact} {problem}; it is made again", CacheWarning, stacklevel=2)
        return False
    return True

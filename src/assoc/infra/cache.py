"""Resumable on-disk cache of computed results (used by the fmat and pll scorers).

Layout: ``<root>/<namespace hash>/`` holds ``namespace.json`` (the key parts, for
people) and *packs*: JSON files with many ``key -> value`` entries, each written
atomically (:func:`assoc.infra.io.atomic_write`) after a chunk of work, so an interrupted
run keeps every finished chunk. Each pack stores the sha256 of its entries; a pack
that does not parse or whose checksum does not match is reported, deleted and its
entries recomputed - never trusted. When a namespace holds more than ``COMPACT_AFTER``
packs, loading merges them into one.

The root is ``$ASSOC_CACHE_DIR``, else the platform's user cache directory from
``platformdirs.user_cache_dir("assoc")``: ``$XDG_CACHE_HOME/assoc`` or ``~/.cache/assoc``
on Linux, ``~/Library/Caches/assoc`` on macOS, ``%LOCALAPPDATA%/assoc/Cache`` on
Windows. A namespace is everything that changes the numbers (model
fingerprint, dtype, device type, scoring settings); a key is one unit of work (e.g.
one token sequence plus the token ids scored in it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from assoc.infra.io import atomic_write

FORMAT = "assoc-cache-1"
COMPACT_AFTER = 64  # packs; more are merged into one on the next load


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


def _encode(entries: Mapping[str, Any]) -> str:
    # NaN/inf are legitimate results (out-of-vocabulary words); JSON spells them NaN/Infinity.
    return json.dumps(entries, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)


class Namespace:
    """The cached results for one namespace. Created by :meth:`ResultCache.namespace`."""

    def __init__(self, directory: Path, parts: Mapping[str, Any]):
        self.directory = directory
        self.parts = dict(parts)
        self._entries: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, Any] = {}
        good: list[Path] = []
        # A pack that disappears between listing and reading was merged by another process's
        # compaction (not corrupt): list again to find the merged pack.
        for _ in range(10):
            vanished = False
            for pack in sorted(set(self.directory.glob("pack-*.json")) - set(good)):
                try:
                    text = pack.read_text(encoding="utf-8")
                except FileNotFoundError:
                    vanished = True
                    continue
                except (OSError, ValueError):  # unreadable, or not UTF-8 text
                    text = ""
                body = self._checked_body(pack, text)
                if body is not None:
                    entries.update(body)
                    good.append(pack)
            if not vanished:
                break
        self._entries = entries
        good = [pack for pack in good if pack.exists()]
        if len(good) > COMPACT_AFTER:
            self._compact(good)
        return entries

    @staticmethod
    def _checked_body(pack: Path, text: str) -> dict[str, Any] | None:
        """The entries of a pack, or None (after a warning and deleting it) when it is corrupt."""
        try:
            data = json.loads(text)
            body = data["entries"]
            if data.get("format") == FORMAT and hashlib.sha256(_encode(body).encode()).hexdigest() == data["sha256"]:
                return dict(body)
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        warnings.warn(
            f"corrupt cache file {pack} ignored and deleted; its results will be recomputed", CacheWarning, stacklevel=4
        )
        try:
            pack.unlink()
        except OSError:
            pass
        return None

    def _compact(self, packs: list[Path]) -> None:
        """Merge many small packs into one, holding the namespace's compaction lock.

        Only packs whose entries were read are deleted, so a pack that another process
        writes meanwhile is kept. When another process is compacting (the lock is held) or
        has compacted since these packs were read (one is gone), nothing is done.
        """
        with _exclusive_lock(self.directory / ".compact.lock") as locked:
            if not locked or not all(pack.exists() for pack in packs):
                return
            self._write_pack(self._entries or {})
            for pack in packs:
                try:
                    pack.unlink()
                except OSError:
                    pass

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

    def put_many(self, values: Mapping[str, Any]) -> None:
        """Store ``values`` (JSON-serialisable) as one new pack, atomically."""
        if not values:
            return
        body = {str(k): _jsonable(v) for k, v in values.items()}
        self._write_pack(body)
        self._load().update(body)

    def _write_pack(self, body: Mapping[str, Any]) -> None:
        text = _encode(body)
        checksum = hashlib.sha256(text.encode()).hexdigest()
        # The record is {"entries": ..., "format": ..., "sha256": ...} with sorted keys; the entries' JSON is
        # spliced in rather than encoded a second time (encoding dominates writing a pack of table rows).
        record = f'{{"entries":{text},"format":{json.dumps(FORMAT)},"sha256":"{checksum}"}}'
        self.directory.mkdir(parents=True, exist_ok=True)
        with atomic_write(self.directory / f"pack-{uuid.uuid4().hex}.json", "w", encoding="utf-8") as handle:
            handle.write(record)

    def clear(self) -> None:
        """Delete every pack of this namespace."""
        for pack in self.directory.glob("pack-*.json"):
            pack.unlink()
        self._entries = {}


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[bool]:
    """Try to take an exclusive advisory lock on ``path`` without waiting; yield whether it was taken.

    ``flock`` on POSIX, ``msvcrt.locking`` on Windows; the operating system releases the
    lock when the holder exits, so a crashed process never leaves it stuck.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")  # noqa: SIM115 - closed in the finally below
    try:
        try:
            if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
                import msvcrt

                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        handle.close()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and math.isnan(value):
        return float("nan")
    return value


class ResultCache:
    """A root directory of namespaces. ``ResultCache(None)`` uses :func:`default_root`."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root).expanduser() if root is not None else default_root()
        self._opened: dict[str, Namespace] = {}

    def namespace(self, **parts: Any) -> Namespace:
        """The namespace for these key parts (JSON-serialisable values).

        The same parts give the same :class:`Namespace` object for the life of this
        ``ResultCache``, so work split into many units reads the namespace's packs once.
        """
        name = digest(parts)[:32]
        if name in self._opened:
            return self._opened[name]
        directory = self.root / name
        meta = directory / "namespace.json"
        if not meta.exists():
            directory.mkdir(parents=True, exist_ok=True)
            with atomic_write(meta, "w", encoding="utf-8") as handle:
                json.dump(parts, handle, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        self._opened[name] = Namespace(directory, parts)
        return self._opened[name]


# -- arrays -------------------------------------------------------------------------------------------

ARRAY_FORMAT = "assoc-array-1"


class ArrayStore:
    """Checksummed numpy arrays in the cache root, one per key (e.g. a vocabulary's embeddings).

    Layout: ``<root>/arrays/<key digest>.json`` (the key parts, shape, dtype and the sha256 of the
    data file) and ``<root>/arrays/<key digest>-<random id>.npy``. The ``.npy`` file is written
    first and never changed; the ``.json`` file, written atomically after it, commits the entry. On
    load the ``.npy`` file's sha256 is checked: an entry that does not parse, lacks its data file or
    fails the check is reported (:class:`CacheWarning`), deleted and reported missing, so the caller
    recomputes it - never trusted. ``ArrayStore(None)`` uses :func:`default_root`.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = (Path(root).expanduser() if root is not None else default_root()) / "arrays"

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
            with open(data_file, "rb") as handle:
                ok = (
                    record.get("format") == ARRAY_FORMAT
                    and record["parts"] == json.loads(_encode(parts))
                    and hashlib.file_digest(handle, "sha256").hexdigest() == record["sha256"]
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
            for path in (meta, data_file):
                if path is not None:
                    try:
                        path.unlink()
                    except OSError:
                        pass
            return None
        return array

    def save(self, array: Any, **parts: Any) -> Path:
        """Store ``array`` under these key parts, atomically; returns the data file's path."""
        import numpy as np

        array = np.ascontiguousarray(array)
        meta = self._meta(parts)
        data_file = meta.parent / f"{meta.stem}-{uuid.uuid4().hex[:16]}.npy"
        with atomic_write(data_file, "wb") as handle:
            np.save(handle, array, allow_pickle=False)
        with open(data_file, "rb") as handle:
            checksum = hashlib.file_digest(handle, "sha256").hexdigest()
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
                try:
                    old.unlink()
                except OSError:
                    pass
        return data_file

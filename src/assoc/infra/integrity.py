"""Content fingerprints of artefacts assoc writes beside its cache and reuses: :func:`seal`, :func:`intact`.

An artefact that a later run reuses (an ONNX export of a model, the tokenizer kept beside it) is
trusted on its content, never on its size and modification time: both survive an edit in place
(``touch -d`` sets a modification time back, and a negated tensor keeps the file's size). When
the artefact is complete, :func:`seal` records the SHA-256 of each of its files; before every
reuse, :func:`intact` checks them. An artefact that does not match (edited, truncated, a file
missing or unreadable, or written by an assoc that kept no record) is reported in one warning
line (:class:`assoc.infra.cache.CacheWarning`) and the caller makes it again.

**Cost.** :func:`file_sha256` hashes a file once per process: the digest is remembered in memory
under the file's (device, inode) with its size, modification and change times, so later checks
in the same process cost one ``stat``. The change time is set by the kernel on every write and
cannot be set back by a user, so a file rewritten in place is hashed again. A new process hashes
again: the remembered stamp is never written to disk, where it would be the size-and-time trust
this module replaces. On a bert-base-sized export (about 440 MB) one hash costs what
docs/onnx.md reports.

The result cache's own entries carry checksums of their own (:mod:`assoc.infra.cache`); this
module is for whole files kept beside it. Nothing here imports anything beyond the standard
library at module import time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from pathlib import Path

#: The record :func:`seal` writes beside a file: ``<file>.assoc-seal.json``.
SEAL_SUFFIX = ".assoc-seal.json"
#: The layout of a seal record.
SEAL_FORMAT = "assoc-seal-1"

# (device, inode) -> ((size, mtime_ns, ctime_ns, inode, device), sha256): files hashed in this process.
_HASHED: dict[tuple[int, int], tuple[tuple[int, int, int, int, int], str]] = {}
_HASHED_LOCK = threading.Lock()


def _stamp(status: os.stat_result) -> tuple[int, int, int, int, int]:
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 (hex) of ``path``'s bytes, hashed once per process and file.

    Later calls in this process return the remembered digest while the file's size, modification
    and change times, inode and device are those it had when it was hashed (a rename keeps them,
    so a file moved into place is not hashed twice); anything else hashes it again. Raises
    :class:`OSError` when the file cannot be read.
    """
    before = os.stat(path)
    stamp = _stamp(before)
    where = (before.st_dev, before.st_ino)
    with _HASHED_LOCK:
        known = _HASHED.get(where)
    if known is not None and known[0] == stamp:
        return known[1]
    found = _digest_file(path)
    if _stamp(os.stat(path)) == stamp:  # not rewritten while it was being hashed
        with _HASHED_LOCK:
            _HASHED[where] = (stamp, found)
    return found


def _digest_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes: mapped into memory and hashed in one call where possible.

    hashlib releases the GIL for the whole call, so other threads run meanwhile; a file that cannot
    be mapped (empty, or on a file system without mmap) is read in 4 MB chunks.
    """
    import mmap

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):
            for chunk in iter(lambda: handle.read(1 << 22), b""):
                digest.update(chunk)
        else:
            with mapped:
                digest.update(mapped)
    return digest.hexdigest()


def seal_path(path: str | os.PathLike[str]) -> Path:
    """Where :func:`seal` keeps the record of the file ``path``: ``<file>.assoc-seal.json`` beside it."""
    path = Path(path)
    return path.with_name(path.name + SEAL_SUFFIX)


def seal(path: str | os.PathLike[str]) -> Path:
    """Record the content fingerprint (SHA-256) of the file ``path``, just written; returns the record's path.

    The record names the file by its name only, so the folder holding both may be renamed into
    place afterwards. It is written atomically; call :func:`seal` once the file is complete.
    """
    from assoc.infra.io import atomic_write

    artefact = Path(path)
    record = seal_path(artefact)
    with atomic_write(record, "w", encoding="utf-8") as handle:
        json.dump({"format": SEAL_FORMAT, "files": {artefact.name: file_sha256(artefact)}}, handle, sort_keys=True)
    return record


def mismatch(path: str | os.PathLike[str]) -> str:
    """What is wrong with the file ``path`` against its :func:`seal` record, in a phrase; ``""`` when it matches."""
    artefact = Path(path)
    try:
        record = json.loads(seal_path(artefact).read_text(encoding="utf-8"))
        recorded = record["files"][artefact.name] if record.get("format") == SEAL_FORMAT else None
    except FileNotFoundError:
        recorded = None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "has an unreadable record of its content"
    if not isinstance(recorded, str):
        return "has no record of its content (written by an older assoc, or interrupted)"
    try:
        found = file_sha256(artefact)
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    if found != recorded:
        return "no longer holds the content recorded when it was written (edited, truncated or damaged)"
    return ""


def intact(path: str | os.PathLike[str], *, warn: bool = True) -> bool:
    """Whether the file ``path`` holds exactly the content :func:`seal` recorded.

    False when the file or its record is missing or unreadable, or the file's SHA-256 differs
    (:func:`mismatch` says which); with ``warn`` a :class:`~assoc.infra.cache.CacheWarning` line
    names the file and the problem, and says it is made again (the caller's duty). A missing file
    is simply False, without a warning: there is nothing to reuse.
    """
    if not Path(path).exists():
        return False
    problem = mismatch(path)
    if problem and warn:
        from assoc.infra.cache import CacheWarning

        warnings.warn(f"cached {path} {problem}; it is made again", CacheWarning, stacklevel=2)
    return not problem

"""Atomic file writes: a reader never sees a half-written file, and a crash never destroys the previous version."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success move it over ``path``.

    The rename is atomic on POSIX and Windows (``os.replace``), so ``path`` holds
    either the old content or the complete new content. On error the temporary
    file is removed and ``path`` is untouched.
    """
    if "r" in mode or "a" in mode:
        raise ValueError("atomic_write opens files for writing only ('w' or 'wb')")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _temporary_file(target)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path that replaces ``path`` on success.

    The path lies next to ``path``, for writers that need a file name (e.g. ``DataFrame.to_parquet``).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _temporary_file(target)
    os.close(fd)
    try:
        yield Path(tmp_name)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _temporary_file(target: Path) -> tuple[int, str]:
    """Create a new, empty temporary file next to ``target``; return its descriptor and name.

    Unlike :func:`tempfile.mkstemp` (always mode 0600), the file is created with mode 0666
    minus the process umask, so the file that replaces ``target`` gets the permissions any
    other newly written file would (usually 0644), without touching the process-wide umask.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = str(target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file next to {target}")  # pragma: no cover

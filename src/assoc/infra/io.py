"""Atomic file writes: a reader never sees a half-written file, and a crash never destroys the previous version.

What an overwrite keeps (``docs/guarantees.md``):

* the existing file's permission bits (a 0600 file stays 0600; a new file gets 0666 minus the umask);
* a symlink: the data is written to the file the link points to, and the link stays a link;
* nothing behind: the temporary file is removed on every exit Python sees (an exception,
  Ctrl-C, ``SystemExit``; the command line turns SIGTERM into ``SystemExit``), and temporary
  files that a killed process left next to the output are removed by the next write there
  (:func:`sweep_stale_temporaries`);
* a full disk (or quota, or file-size limit) is one line naming the path
  (:class:`~assoc.errors.OutputError`, which is also an ``OSError``), the previous file kept.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", **open_kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success move it over ``path``.

    The rename is atomic on POSIX and Windows (``os.replace``), so ``path`` holds
    either the old content or the complete new content. On error the temporary
    file is removed and ``path`` is untouched. An existing file keeps its permission
    bits, and a symlink is written through (see :func:`write_target`).
    """
    if "r" in mode or "a" in mode:
        raise ValueError("atomic_write opens files for writing only ('w' or 'wb')")
    target = write_target(path)
    with _no_space_is_one_line(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = _temporary_file(target)
    try:
        with _no_space_is_one_line(target):
            with os.fdopen(fd, mode, **open_kwargs) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            _keep_mode(target, tmp_name)
            os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path that replaces ``path`` on success.

    The path lies next to ``path``, for writers that need a file name (e.g. ``DataFrame.to_parquet``).
    Mode and symlinks are kept as :func:`atomic_write` keeps them.
    """
    target = write_target(path)
    with _no_space_is_one_line(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = _temporary_file(target)
    os.close(fd)
    try:
        with _no_space_is_one_line(target):
            yield Path(tmp_name)
            _keep_mode(target, tmp_name)
            os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


#: What a write gets when the disk is full, the user's quota is spent or the file-size limit
#: (``ulimit -f``) is reached: no data of assoc's is wrong, there is no room for it.
NO_SPACE_ERRNOS = frozenset(
    code for code in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EFBIG) if code is not None
)


def is_no_space(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused for want of room (:data:`NO_SPACE_ERRNOS`), however wrapped.

    Some writers (pyarrow's Parquet writer) raise their own ``OSError`` whose ``errno`` is unset but
    whose text carries the operating system's message; those are recognised by the message.
    """
    if isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS:
        return True
    if isinstance(exc, OSError):
        text = str(exc)
        return any(os.strerror(code) in text for code in NO_SPACE_ERRNOS)
    return False


@contextlib.contextmanager
def _no_space_is_one_line(target: Path) -> Iterator[None]:
    """Turn a write refused for want of room into one line naming ``target`` (:class:`~assoc.errors.OutputError`)."""
    from assoc.errors import OutputError

    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        if not is_no_space(exc):
            raise
        reason = os.strerror(exc.errno) if exc.errno is not None and exc.errno in NO_SPACE_ERRNOS else str(exc)
        raise OutputError(
            f"cannot write {target}: {reason} (the disk, the quota or the file-size limit is full); nothing "
            "half-written is left and an earlier version of the file is kept: free some space (e.g. assoc cache "
            "clear) or write elsewhere"
        ) from None


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symlink at ``path`` points to.

    Replacing the link by a regular file would silently cut what the user linked (a results
    file shared with a paper's repository, say); the data goes to the link's target instead,
    following a chain of links. A link whose target's folder does not exist is refused with
    :class:`~assoc.errors.OutputError`.
    """
    from assoc.errors import OutputError

    given = Path(path)
    if not given.is_symlink():
        return given
    real = Path(os.path.realpath(given))
    if not real.parent.is_dir():
        raise OutputError(
            f"{given} is a symlink to {real}, whose folder does not exist; assoc writes through a link to its "
            "target and does not replace the link (create the folder, or remove the link)"
        )
    if real.is_dir():
        raise OutputError(f"{given} is a symlink to the folder {real}; give a file path")
    return real


def _keep_mode(target: Path, tmp_name: str) -> None:
    """Give the temporary file the permission bits of the file it replaces (a new file keeps its own)."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return
    os.chmod(tmp_name, mode)


#: ``.<name>.<host tag>.<pid>.<random>.tmp``: the host tag and process id let a later write tell a
#: temporary file of a dead process on this machine (safe to remove) from one still being written.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<host>[0-9a-f]{8})\.(?P<pid>\d+)\.[0-9a-f]{12}\.tmp$")


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _temporary_file(target: Path) -> tuple[int, str]:
    """Create a new, empty temporary file next to ``target``; return its descriptor and name.

    Unlike :func:`tempfile.mkstemp` (always mode 0600), the file is created with mode 0666
    minus the process umask, so the file that replaces ``target`` gets the permissions any
    other newly written file would (usually 0644), without touching the process-wide umask.
    Stale temporary files of ``target`` left by dead processes are removed first.
    """
    sweep_stale_temporaries(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    prefix = f".{target.name}.{_host_tag()}.{os.getpid()}"
    for _ in range(100):
        name = str(target.parent / f"{prefix}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(name, flags, 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file next to {target}")  # pragma: no cover


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # exists (another user's), or cannot tell: keep its file
        return True
    return True


def sweep_stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of ``target`` that processes on this machine left when they died.

    Only files named as :func:`atomic_write` names them, by a process of this host that no
    longer runs, are removed: a write in progress (a live process, or another machine sharing
    the folder) is never touched. Returns the removed paths.
    """
    target = Path(target)
    removed: list[Path] = []
    host = _host_tag()
    try:
        candidates = list(target.parent.glob(f".{glob_escape(target.name)}.*.tmp"))
    except OSError:
        return removed
    for candidate in candidates:
        match = _TEMPORARY.match(candidate.name)
        if match is None or match["name"] != target.name or match["host"] != host:
            continue
        if _process_alive(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with the glob metacharacters ``*?[`` matched literally."""
    return re.sub(r"([*?\[])", r"[\1]", name)


# -- checks before the work ------------------------------------------------------------------------------


def check_output_file(path: str | os.PathLike[str], what: str = "output") -> Path:
    """Raise :class:`~assoc.errors.OutputError` (one line) unless a file can be written at ``path``.

    Run before any work, so a run of hours does not end in a traceback: ``path`` must not be a
    folder (or a link to one), its folder must be a folder (or creatable: no file in the way)
    and writable, and an existing file must be writable (a read-only file is the user's
    protection, not overwritten). A symlink is checked at its target (:func:`write_target`).
    Returns the path that will be written.
    """
    from assoc.errors import OutputError

    given = Path(path)
    if str(path) == "":
        raise OutputError(f"{what} is empty; give a file path")
    if given.is_dir():
        raise OutputError(f"{what} {given} is a folder; give a file path")
    target = write_target(given)
    where = f"{what} {given}" + (f" (a link to {target})" if target != given else "")
    if target.is_dir():
        raise OutputError(f"{where} is a folder; give a file path")
    if target.exists() and (not os.access(target, os.W_OK) or not os.stat(target).st_mode & 0o222):
        raise OutputError(
            f"{where} is read-only; assoc does not overwrite it (make it writable or choose another path)"
        )
    check_writable_dir(target.parent, f"the folder of {where}", create=False)
    return target


def check_writable_dir(path: str | os.PathLike[str], what: str, *, create: bool = False) -> Path:
    """Raise :class:`~assoc.errors.OutputError` (one line) unless files can be written in the folder ``path``.

    A missing folder is fine when its nearest existing ancestor is a writable folder (it is created
    when first written; ``create=True`` creates it now). A file where a folder should be, or a
    folder without write permission, is the error.
    """
    from assoc.errors import OutputError

    folder = Path(path).expanduser()
    probe = folder
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():  # a dangling link where a folder should be
            raise OutputError(f"{what} {folder}: {probe} is a broken link")
        probe = probe.parent
    if not probe.is_dir():
        detail = "is a file" if probe == folder else f"needs the folder {probe}, which is a file"
        raise OutputError(f"{what} {folder} {detail}, not a folder")
    problem = _cannot_create_in(probe)
    if problem:
        detail = "" if probe == folder else f" (in the nearest existing folder, {probe})"
        raise OutputError(f"{what} {folder}: cannot write there{detail}: {problem}")
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{what} {folder} cannot be created: {exc.strerror or exc}") from None
    return folder


def _cannot_create_in(folder: Path) -> str:
    """Why no file can be created in ``folder`` ("" when one can): a file is created and removed.

    Trying beats :func:`os.access`, which a superuser always passes and which knows nothing of a
    read-only file system or a full quota.
    """
    name = folder / f".assoc-write-check.{_host_tag()}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
    return ""

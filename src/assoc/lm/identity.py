"""What every model kind needs before it loads a model: the device, the dtype and the model's identity.

Shared by every engine (:mod:`assoc.lm.masked`, :mod:`assoc.lm.causal`) and by plugins that load
their own models (sentence encoders, chat models): :func:`resolve_device`, :func:`torch_dtype`,
:func:`looks_like_path`, and the fingerprints that name a model's weights in provenance and in every
cache key (:func:`model_fingerprint`: the sha256 of a local directory, or the Hub commit;
:func:`is_content_fingerprint`: whether a fingerprint names the content). Nothing here imports torch
or transformers at module import time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc.errors import OptionError

if TYPE_CHECKING:
    from assoc.infra.cache import Cache

#: The floating-point types a model can be loaded in.
DTYPES = ("float32", "float16", "bfloat16")

# Fingerprints of local directories, keyed by (path, sizes, mtimes): hashing a large
# weight file once per process is enough.
_LOCAL_FINGERPRINTS: dict[tuple, str] = {}


def resolve_device(device: str) -> str:
    """Return a torch device string; ``"auto"`` picks CUDA when available, else CPU."""
    import torch

    device = (device or "cpu").strip().lower()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise OptionError(f"device {device!r} requested but CUDA is not available (torch {torch.__version__})")
        index = device.partition(":")[2]
        count = torch.cuda.device_count()
        if device != "cuda" and not (device.startswith("cuda:") and index.isdigit() and int(index) < count):
            raise OptionError(
                f"device {device!r} does not exist here: this machine has {count} CUDA device(s), "
                f"{', '.join(f'cuda:{i}' for i in range(count))} (or 'cuda' for the first)"
            )
        return device
    if device == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise OptionError("device 'mps' requested but it is not available")
        return device
    if device != "cpu":
        raise OptionError(f"unknown device {device!r}; use 'cpu', 'cuda', 'cuda:N', 'mps' or 'auto'")
    return device


def torch_dtype(dtype: str):
    """Map ``"float32" | "float16" | "bfloat16"`` to the torch dtype."""
    import torch

    if dtype not in DTYPES:
        raise OptionError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]


def looks_like_path(model: str) -> bool:
    """True when ``model`` can only be a file-system path (not a Hub id)."""
    return model.startswith(("/", "./", "../", "~", "\\")) or model.count("/") > 1 or Path(model).expanduser().exists()


def local_fingerprint(directory: Path, memo: Cache | None = None) -> str:
    """sha256 over the relative names and contents of every file in ``directory``.

    Remembered for the life of the process and across processes (:meth:`assoc.infra.cache.Cache.remember`, in
    ``memo``: the run's cache; None for the default cache root), keyed by each file's name,
    size, modification and change times and inode, so the weights are hashed once, not at
    every run, and again whenever a file changes.
    """
    from assoc.infra.cache import Cache

    memo = memo if memo is not None else Cache()  # direct library calls remember under the default root
    stamp = directory_stamp(directory)
    key = (str(directory.resolve()), stamp)
    if key in _LOCAL_FINGERPRINTS:
        return _LOCAL_FINGERPRINTS[key]
    memo_key = [key[0], [list(entry) for entry in stamp]]
    fingerprint = memo.recall("local-fingerprint", memo_key)
    if not (isinstance(fingerprint, str) and fingerprint.startswith("sha256:")):
        digest = hashlib.sha256()
        for name in (entry[0] for entry in stamp):
            digest.update(name.encode() + b"\0")
            with open(directory / name, "rb") as handle:
                _hash_file(handle, digest)
            digest.update(b"\0")
        fingerprint = "sha256:" + digest.hexdigest()
        memo.remember("local-fingerprint", memo_key, fingerprint)
    _LOCAL_FINGERPRINTS[key] = fingerprint
    return fingerprint


def _hash_file(handle: Any, digest: Any) -> None:
    """Feed an open binary file to ``digest``.

    Mapped into memory and hashed in one call where possible: hashlib releases the GIL for
    the whole call, so other threads (a background import, see :mod:`assoc.infra.prefetch`) run
    meanwhile, where hashing 4 MB chunks would hand the GIL back and forth a hundred times
    for a bert-base model. Files that cannot be mapped (empty, or on file systems without
    mmap) are read in chunks.
    """
    import mmap

    try:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (ValueError, OSError):
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            digest.update(chunk)
        return
    with mapped:
        digest.update(mapped)


def hub_fingerprint(model_id: str, revision: str | None) -> str | None:
    """Commit hash of a Hub model in the local Hugging Face cache (works offline), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return None
    try:
        from assoc.lm.hub import cache_dir

        found = try_to_load_from_cache(model_id, "config.json", revision=revision, cache_dir=str(cache_dir()))
    except ValueError:  # not a valid Hub id: loading will say what is wrong
        return None
    if isinstance(found, str):
        # .../models--org--name/snapshots/<commit>/config.json
        return "hf:" + model_id + "@" + Path(found).parent.name
    return None


def model_fingerprint(model: str, revision: str | None, memo: Cache | None = None) -> str:
    """A stable identity of a model's weights, computed without loading it.

    The sha256 of a local directory's files (remembered in ``memo``, see :func:`local_fingerprint`),
    else the Hub commit in the local Hugging Face cache, else ``hf:<id>@<revision>``.
    """
    path = Path(model.strip()).expanduser()
    if path.is_dir():
        return local_fingerprint(path, memo)
    if looks_like_path(model.strip()):  # a missing directory: loading it will say so
        return f"path:{path}"
    return hub_fingerprint(model.strip(), revision) or f"hf:{model.strip()}@{revision or 'unknown-revision'}"


def directory_stamp(directory: Path) -> tuple:
    """(relative name, size, mtime, ctime, inode) of every visible file under ``directory``, sorted."""
    files = sorted(
        p
        for p in directory.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(directory).parts)
    )
    stats = [(p, p.stat()) for p in files]
    return tuple(
        (str(p.relative_to(directory)), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) for p, st in stats
    )


def is_content_fingerprint(fingerprint: str) -> bool:
    """Whether a weights ``fingerprint`` identifies their content: a sha256 of files or a Hub commit (40 hex digits).

    A Hub id without a known commit (``hf:<id>@unknown-revision``) does not: facts about such weights
    (engine checks, ONNX exports) are not kept across processes under it.
    """
    fingerprint = str(fingerprint)
    return fingerprint.startswith("sha256:") or (
        fingerprint.startswith("hf:") and "@" in fingerprint and len(fingerprint.rsplit("@", 1)[1]) == 40
    )

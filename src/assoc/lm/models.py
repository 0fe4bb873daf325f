"""What every language-model engine needs before it loads a model: device, dtype, identity.

Shared by the masked-LM engine (:mod:`assoc.lm.masked`) and by plugins that load their own
models (sentence encoders, chat models): :func:`resolve_device`, :func:`torch_dtype`,
:func:`looks_like_path`, and the fingerprints that name a model's weights in provenance
(:func:`model_fingerprint`: the sha256 of a local directory, or the Hub commit), and the one
loader of a transformers model and its tokenizer (:func:`load_pretrained`) behind the masked-LM
and causal-LM engines, with what their loaded handles share (:class:`LoadedLM`). Nothing here
imports torch or transformers at module import time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from assoc.errors import ModelError, OptionError

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


def load_pretrained(
    model: str,
    auto_class: str,
    *,
    noun: str,
    action: str,
    device: str,
    dtype: str,
    revision: str | None,
    memo: Cache | None = None,
    hub_advice: bool = True,
    check: Callable[[str, Any], None] | None = None,
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) with transformers' ``auto_class`` or raise :class:`ModelError`.

    One loader for every engine: the name checks, device and dtype, the choice between a local
    directory and the Hub (and whether the Hub must be reachable), loading with transformers'
    progress bars off, and the translation of its errors into one line naming the problem.

    Parameters
    ----------
    model
        A Hugging Face id or a local directory (surrounding spaces ignored).
    auto_class
        The transformers class that loads the weights, by name (``"AutoModelForMaskedLM"``,
        ``"AutoModelForCausalLM"``), so that transformers is imported only once the Hub check passed.
    noun
        What the model is, in error messages (``"fill-mask model"``, ``"causal LM"``).
    action
        What was being done, in the unreachable-Hub message (:func:`assoc.lm.hub.check_hub_reachable`).
    device, dtype, revision
        As for :func:`resolve_device`, :func:`torch_dtype` and ``from_pretrained``.
    memo
        Where the weights' fingerprint is remembered (:func:`local_fingerprint`).
    hub_advice
        Whether a Hub id that cannot be loaded gets :func:`assoc.lm.hub.advice` in its message.
    check
        Called with the model name and the tokenizer once both loaded, before the model is moved:
        raises :class:`ModelError` when the model is not of the kind the engine needs.
    """
    if not isinstance(model, str) or not model.strip():
        raise ModelError("model name is empty; give a Hugging Face id or a local directory")
    model = model.strip()
    tdtype = torch_dtype(dtype)
    device = resolve_device(device)
    path = Path(model).expanduser()
    if not path.is_dir() and looks_like_path(model):
        raise ModelError(f"model directory {model!r} does not exist")
    source = str(path) if path.is_dir() else model
    hub: dict[str, Any] = {}
    if not path.is_dir():
        from assoc.lm.hub import cache_dir, check_hub_reachable, hub_reachable

        # The Hub client retries a failed connection for about a minute: decide here, in seconds,
        # whether the Hub is needed (not cached) and reachable; a cached model loads without it.
        if hub_fingerprint(model, revision) is None:
            check_hub_reachable(model, action=action)
            hub = {"cache_dir": str(cache_dir())}
        else:
            hub = {"cache_dir": str(cache_dir()), "local_files_only": not hub_reachable()}

    import transformers
    from transformers.utils import logging as hf_logging

    # transformers' own "Loading weights" bars would interleave with ours; scoring has its own progress.
    bars_were_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, revision=revision, **hub)
        lm = getattr(transformers, auto_class).from_pretrained(source, revision=revision, dtype=tdtype, **hub)
    except _weights_errors() as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if _is_weights_error(exc):
            named = ", ".join(_weight_files(path) if path.is_dir() else []) or "its weights file"
            raise ModelError(f"cannot load {noun} {model!r}: {named} is corrupt or unreadable ({first})") from exc
        if isinstance(exc, RuntimeError):
            raise  # not a file problem we know: a bug, keep the traceback
        offline = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
        where = (
            "a local directory"
            if path.is_dir()
            else "a Hugging Face model id" + (" available in the local cache (offline mode is on)" if offline else "")
        )
        if hub_advice and not path.is_dir():
            from assoc.lm.hub import advice

            where += f" ({advice(model)})"
        raise ModelError(f"cannot load {noun} {model!r} as {where}: {first}") from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
    if check is not None:
        check(model, tokenizer)
    lm.eval()
    lm.to(device)
    return tokenizer, lm, model_fingerprint(model, revision, memo), device


def _weights_errors() -> tuple[type[BaseException], ...]:
    """What ``from_pretrained`` raises for a model it cannot load.

    A missing or odd file, a bad config, or corrupt weights (safetensors' own error, torch's
    unpickling and stream errors).
    """
    import pickle

    errors: tuple[type[BaseException], ...] = (OSError, ValueError, KeyError, pickle.UnpicklingError, RuntimeError)
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers depends on safetensors
        return errors
    return (*errors, SafetensorError)


def _is_weights_error(exc: BaseException) -> bool:
    import pickle

    name = type(exc).__name__
    return (
        name == "SafetensorError"
        or isinstance(exc, pickle.UnpicklingError)
        or (isinstance(exc, RuntimeError) and ("PytorchStreamReader" in str(exc) or "safetensors" in str(exc).lower()))
    )


def _weight_files(directory: Path) -> list[str]:
    """Names of the weight files in a model directory."""
    patterns = ("*.safetensors", "pytorch_model*.bin", "*.pt", "*.ckpt")
    return sorted({p.name for pattern in patterns for p in directory.glob(pattern)})


_Handle = TypeVar("_Handle", bound="LoadedLM")


class LoadedLM:
    """What a loaded language model's handle is, whatever the engine: the base of the masked-LM and causal-LM handles.

    Attributes: ``name`` (as the user wrote it), ``tokenizer``, ``model`` (None once closed),
    ``device``, ``dtype``, ``fingerprint`` (the weights' identity, :func:`model_fingerprint`),
    ``shared`` (the weights belong to the process cache or to the user, not to this handle) and
    ``memo`` (where facts about the weights are remembered; None: the default cache root).
    Subclasses set ``max_length``, the longest sequence the model accepts. A handle is a context
    manager that closes itself.
    """

    max_length: int

    def __init__(
        self,
        name: str,
        tokenizer: Any,
        model: Any,
        *,
        device: str,
        dtype: str,
        fingerprint: str,
        shared: bool = False,
        memo: Cache | None = None,
    ):
        self.name = name
        self.tokenizer = tokenizer
        self.model = model
        self.device = device
        self.dtype = dtype
        self.fingerprint = fingerprint
        self.shared = shared
        self.memo = memo

    def close(self) -> None:
        """Drop the model; a private copy's memory is freed (CPU and GPU), shared weights stay loaded."""
        self.model = None
        if not self.shared:
            from assoc.infra.memory import free_memory

            free_memory()

    def __enter__(self: _Handle) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _model(self) -> Any:
        if self.model is None:
            raise ModelError(f"model {self.name!r} was closed")
        return self.model

    def _refuse_bad_ids(self, input_ids: Sequence[int], token_ids: Sequence[int] | None, n_vocab: int) -> None:
        """Raise :class:`ModelError` for a sequence longer than the model accepts or a token id outside its vocabulary.

        ``input_ids`` is the sequence the model reads; ``token_ids`` the ids whose probabilities are
        read (None: the whole vocabulary, nothing to check).
        """
        if len(input_ids) > self.max_length:
            raise ModelError(
                f"a sequence of {len(input_ids)} tokens is longer than model {self.name!r} "
                f"accepts ({self.max_length} tokens including special tokens)"
            )
        if token_ids is not None and any(not 0 <= t < n_vocab for t in token_ids):
            raise ModelError(f"token id outside the vocabulary of {self.name!r} (size {n_vocab})")

"""Find, identify and load a fill-mask model (Hugging Face id or local directory).

Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from assoc.errors import ModelError, OptionError
from assoc.infra.memory import BytesLRU, free_memory
from assoc.lm.masked.options import check_backend_settings
from assoc.lm.models import (
    directory_stamp,
    hub_fingerprint,
    load_pretrained,
    local_fingerprint,
    looks_like_path,
    model_fingerprint,
    resolve_device,
    torch_dtype,
)

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.masked.engine import MaskedLM

__all__ = [
    "MODEL_CACHE",
    "MaskedLMCache",
    "ModelKey",
    "cached_masked_lm",
    "hub_fingerprint",
    "in_memory_masked_lm",
    "load_masked_lm",
    "load_parts",
    "loaded_masked_lms",
    "local_fingerprint",
    "looks_like_path",
    "model_fingerprint",
    "release_masked_lms",
    "resolve_device",
    "torch_dtype",
]

_H = TypeVar("_H")  # the handle a cache's get returns


def in_memory_masked_lm(name: str, backend: str = "torch") -> MaskedLM | None:
    """A :class:`~assoc.lm.masked.engine.MaskedLM` around the in-memory ``(model, tokenizer)`` pair ``name``.

    ``None`` when ``name`` is not an in-memory model (:mod:`assoc.scoring.models`). The pair is used
    where it is (its device and dtype; the scorer's ``device``/``dtype`` options do not move or cast a
    model the user holds) and put in evaluation mode, since dropout would make every number random.
    Closing the handle removes any temporary tokens and leaves the weights to the user. The ONNX
    backends are refused (:class:`~assoc.errors.OptionError`): an export is made once per weights
    fingerprint, and a model held in memory can change after it.
    """
    from assoc.lm.masked.engine import MaskedLM

    def torch_only() -> None:
        if backend != "torch":
            raise OptionError(
                f"backend {backend!r} applies to models loaded by name or directory; {name!r} is in memory "
                "(use backend='torch')"
            )

    parts = in_memory_parts(
        name,
        takes="the masked-LM scorers take a (transformers masked LM, tokenizer) pair",
        before=torch_only,
        check=_require_mask_token,
    )
    if parts is None:
        return None
    lm, tokenizer, where = parts
    return MaskedLM(name, tokenizer, lm, **where)


def in_memory_parts(
    name: str,
    *,
    takes: str,
    before: Callable[[], None] | None = None,
    check: Callable[[str, Any], None] | None = None,
) -> tuple[Any, Any, dict[str, Any]] | None:
    """(model, tokenizer, handle settings) of the in-memory ``(model, tokenizer)`` pair ``name``, or None.

    ``None`` when ``name`` is not an in-memory model (:mod:`assoc.scoring.models`). ``before`` runs
    once the pair is found, before it is checked (to refuse settings that cannot apply to it);
    ``takes`` ends the message for an object that is not a pair (what the scorers take);
    ``check(name, tokenizer)`` refuses a pair of the wrong kind. The model is put in evaluation mode
    (dropout would make every number random) and used where it is: the settings are its device and
    dtype, the pair's fingerprint and ``shared=True`` (the weights are the user's).
    """
    from assoc.scoring.models import fingerprint, in_memory, is_pair

    pair = in_memory(name)
    if pair is None:
        return None
    if before is not None:
        before()
    if not is_pair(pair):
        raise ModelError(f"model {name!r} is a {type(pair).__name__} in memory; {takes}")
    lm, tokenizer = pair
    if not callable(getattr(lm, "get_output_embeddings", None)) or not callable(getattr(lm, "eval", None)):
        raise ModelError(f"model {name!r}: the first item of the pair is not a transformers model")
    if check is not None:
        check(name, tokenizer)
    lm.eval()
    weights = lm.get_input_embeddings().weight
    where = {
        "device": str(weights.device),
        "dtype": str(weights.dtype).removeprefix("torch."),
        "fingerprint": fingerprint(pair),
        "shared": True,
    }
    return lm, tokenizer, where


def load_parts(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Cache | None = None
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) of a fill-mask model or raise :class:`ModelError`.

    :func:`assoc.lm.models.load_pretrained` with ``AutoModelForMaskedLM``, then the check that the
    tokenizer has a mask token. ``memo``: where the weights' fingerprint is remembered
    (:func:`local_fingerprint`).
    """
    return load_pretrained(
        model,
        "AutoModelForMaskedLM",
        noun="fill-mask model",
        action="load fill-mask model",
        device=device,
        dtype=dtype,
        revision=revision,
        memo=memo,
        check=_require_mask_token,
    )


def _require_mask_token(model: str, tokenizer: Any) -> None:
    if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
        raise ModelError(f"model {model!r} has no mask token: it is not a fill-mask (masked) language model")


# -- the per-process cache of loaded models ------------------------------------------------------


@dataclass(frozen=True)
class ModelKey:
    """What identifies one loaded model in :data:`MODEL_CACHE`.

    ``model`` is the Hub id as typed, or the resolved absolute path of a local directory
    (so ``m/``, ``./m`` and ``/abs/m`` share one entry); ``device`` is the resolved torch
    device (``"auto"`` becomes ``"cpu"`` or ``"cuda"``).
    """

    model: str
    revision: str | None
    device: str
    dtype: str


@dataclass
class _Entry:
    tokenizer: Any
    model: Any
    fingerprint: str
    device: str
    stamp: tuple | None  # local directory: (relative name, size, mtime) of each file, to notice rewrites
    vocab_size: int  # output classes as loaded (temporary tokens are removed back to this)
    nbytes: int


class MaskedLMCache:
    """Loaded fill-mask models kept for the life of the process, keyed by :class:`ModelKey`.

    Loading a bert-base model and checking its packed-encoder path costs about a second
    per call, so repeated ``assoc.score`` calls in a notebook and the work units of one
    worker load each model once. Every :meth:`get` returns a fresh
    :class:`~assoc.lm.masked.engine.MaskedLM` around the shared tokenizer and weights (named as
    the caller wrote the model); the packed-encoder check is remembered per weights
    object, so it too runs once. A local directory whose files changed since loading
    (size or modification time) is loaded again.

    Memory is bounded: ``max_bytes`` per device kind (``"cpu"``, ``"cuda"``, ``"mps"``) is
    the most that models kept in memory may take (default: a quarter of the machine's RAM
    for the CPU, half of the GPU's memory; ``ASSOC_MODEL_CACHE_BYTES`` overrides both);
    least recently used models are released before a new one loads, and the model just
    loaded is always kept. ``max_bytes=0`` turns the cache off: every call loads a private
    model that is freed when its handle is closed, as :func:`load_masked_lm` does. Call
    :meth:`release` (or :func:`release_masked_lms`) to free memory on request.

    Thread-safe: one lock guards the table, and a model is loaded once even when several
    threads ask for it at the same time.
    """

    def __init__(self, max_bytes: int | None = None):
        self._lrus: dict[str, BytesLRU[_Entry]] = {}  # device kind -> its models
        self._max_bytes = max_bytes
        self._lock = threading.RLock()

    @property
    def max_bytes(self) -> int | None:
        """The budget of every device kind in bytes (None: the default; 0 turns the cache off)."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int | None) -> None:
        with self._lock:
            self._max_bytes = value
            for lru in self._lrus.values():
                lru.max_bytes = value

    def _lru(self, device: str) -> BytesLRU[_Entry]:
        """The byte-bounded LRU of ``device``'s kind (``cpu``, ``cuda``, ``mps``), made on first use."""
        kind = device.split(":")[0]
        with self._lock:
            lru = self._lrus.get(kind)
            if lru is None:
                lru = BytesLRU(MODEL_CACHE_VARIABLE, functools.partial(_default_budget, device), on_evict=free_memory)
                lru.max_bytes = self._max_bytes
                self._lrus[kind] = lru
            return lru

    def get(
        self,
        model: str,
        *,
        device: str = "cpu",
        dtype: str = "float32",
        revision: str | None = None,
        memo: Cache | None = None,
        backend: str = "torch",
    ) -> Any:
        """A :class:`~assoc.lm.masked.engine.MaskedLM` for ``model``, loaded now or reused from this process.

        ``memo`` is the cache where facts about the weights are remembered across processes
        (their fingerprint, the engine's fast-path checks, ONNX exports): the caller's run cache,
        None for the default cache root. ``backend``: what runs the forward passes of the handle
        returned (:mod:`assoc.lm.masked.onnx`); the weights are shared whatever the backend.
        """
        from assoc.lm.masked.engine import MaskedLM  # numpy: not at module level, so that importing this stays cheap

        if not isinstance(model, str) or not model.strip():
            raise ModelError("model name is empty; give a Hugging Face id or a local directory")
        check_backend_settings(backend, device=device, dtype=dtype)  # before anything loads
        loaded = in_memory_masked_lm(model, backend=backend)
        if loaded is not None:
            return loaded

        def handle(entry: _Entry, shared: bool) -> MaskedLM:
            masked = MaskedLM(
                model.strip(),
                entry.tokenizer,
                entry.model,
                device=entry.device,
                dtype=dtype,
                fingerprint=entry.fingerprint,
                base_vocab_size=entry.vocab_size,
                shared=shared,
                memo=memo,
                backend=backend,
            )
            if masked.vocab_size != entry.vocab_size:  # temporary tokens left by a caller that did not remove them
                masked.remove_temporary_tokens()
            return masked

        return self._handle(model, load_parts, handle, device=device, dtype=dtype, revision=revision, memo=memo)

    def _handle(
        self,
        model: str,
        load: Callable[..., tuple[Any, Any, str, str]],
        handle: Callable[[_Entry, bool], _H],
        *,
        device: str,
        dtype: str,
        revision: str | None,
        memo: Cache | None,
    ) -> _H:
        """``handle(entry, shared)`` around ``model``'s weights: held in this cache, or loaded now by ``load``.

        ``load`` is a ``load_parts``-like function (:func:`load_parts`,
        :func:`assoc.lm.causal.loading.load_causal_parts`). With the cache off (a budget of 0) the
        weights are loaded for one private handle (``shared`` False) and not kept. Otherwise the entry
        of :class:`ModelKey` is reused, loaded again when its local directory changed, or loaded after
        room is made for a model as large as the largest held; ``handle`` then runs under the lock.
        """
        key, stamp = self._key(model, device=device, dtype=dtype, revision=revision)
        lru = self._lru(key.device)
        if lru.budget() <= 0:  # caching off: a private model, freed when its handle closes
            tokenizer, lm, fingerprint, resolved = load(model, device=device, dtype=dtype, revision=revision, memo=memo)
            vocab = int(lm.get_input_embeddings().weight.shape[0])
            return handle(_Entry(tokenizer, lm, fingerprint, resolved, stamp, vocab, 0), False)
        with self._lock:
            entry = lru.get(key)
            if entry is not None and entry.stamp != stamp:
                lru.pop(key)  # the directory was rewritten: load the new weights
                entry = None
            if entry is None:
                lru.make_room(lru.largest())  # room for a model as large as the largest held, before it loads
                tokenizer, lm, fingerprint, resolved = load(
                    model, device=device, dtype=dtype, revision=revision, memo=memo
                )
                vocab = int(lm.get_input_embeddings().weight.shape[0])
                entry = _Entry(tokenizer, lm, fingerprint, resolved, stamp, vocab, _model_bytes(lm))
                lru.put(key, entry, entry.nbytes)  # kept even when alone over the budget
            return handle(entry, True)

    def keys(self) -> list[ModelKey]:
        """The models held now, least recently used first (device kind by device kind)."""
        with self._lock:
            held: list[Any] = [key for lru in self._lrus.values() for key in lru.keys()]
        return held

    def release(
        self,
        model: str | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        revision: str | None = None,
    ) -> int:
        """Drop the models that match every given field (all of them when none is given); return how many.

        ``model`` matches a Hub id as typed or any spelling of a local directory.
        """
        wanted = _normalised_name(model) if model is not None else None

        def match(key: Any) -> bool:
            return (
                (wanted is None or key.model == wanted)
                and (device is None or key.device == device)
                and (dtype is None or key.dtype == dtype)
                and (revision is None or key.revision == revision)
            )

        with self._lock:
            return sum(lru.release(match) for lru in list(self._lrus.values()))

    def _key(self, model: str, *, device: str, dtype: str, revision: str | None) -> tuple[ModelKey, tuple | None]:
        torch_dtype(dtype)  # refuse an unknown dtype before anything else
        name = _normalised_name(model)
        stamp = directory_stamp(Path(name)) if Path(name).is_dir() else None
        return ModelKey(name, revision, resolve_device(device), dtype), stamp

    def _budget(self, device: str) -> int:
        """The budget in bytes of ``device``'s kind now in force."""
        return self._lru(device).budget()


def _normalised_name(model: str) -> str:
    model = model.strip()
    path = Path(model).expanduser()
    return str(path.resolve()) if path.is_dir() else model


def _model_bytes(model: Any) -> int:
    return int(sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers())))


def _default_budget(device: str) -> int:
    kind = device.split(":")[0]
    if kind == "cuda":
        import torch

        return int(torch.cuda.get_device_properties(torch.device(device)).total_memory // 2)
    from assoc.infra.memory import physical_memory

    return physical_memory() // 4


#: Environment variable: the bytes loaded models of one device kind may take in memory.
MODEL_CACHE_VARIABLE = "ASSOC_MODEL_CACHE_BYTES"

#: The process-wide cache behind :func:`cached_masked_lm` (set ``MODEL_CACHE.max_bytes`` to bound it).
MODEL_CACHE = MaskedLMCache()


def cached_masked_lm(
    model: str,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    revision: str | None = None,
    memo: Cache | None = None,
    backend: str = "torch",
) -> Any:
    """Load ``model`` once per process and reuse it: :meth:`MaskedLMCache.get` of :data:`MODEL_CACHE`.

    Scorers (fmat, pll), helpers and executors' workers call this instead of
    :func:`load_masked_lm`. The returned
    :class:`~assoc.lm.masked.engine.MaskedLM` shares its weights with every other one for the
    same :class:`ModelKey`. Use it as a context manager (``with cached_masked_lm(m) as lm:``)
    or call its ``close()`` when done: for a shared handle that removes the temporary
    tokens it added and drops the handle, never the weights. ``memo`` and ``backend``: see
    :meth:`MaskedLMCache.get`.
    """
    return MODEL_CACHE.get(model, device=device, dtype=dtype, revision=revision, memo=memo, backend=backend)


def release_masked_lms(
    model: str | None = None, *, device: str | None = None, dtype: str | None = None, revision: str | None = None
) -> int:
    """Free the models this process keeps loaded (all, or those matching the given fields); return how many."""
    return MODEL_CACHE.release(model, device=device, dtype=dtype, revision=revision)


def loaded_masked_lms() -> list[ModelKey]:
    """The models this process keeps loaded, least recently used first."""
    return MODEL_CACHE.keys()


def load_masked_lm(
    model: str,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    revision: str | None = None,
    memo: Cache | None = None,
    backend: str = "torch",
) -> MaskedLM:
    """Load a fill-mask model from a Hugging Face id or a local directory: a private copy.

    Respects the usual Hugging Face cache settings (``HF_HOME``, ``HF_HUB_OFFLINE``). ``memo``
    is where facts about the weights are remembered across processes (None: the default cache root).
    Raises :class:`assoc.errors.ModelError` with a clear message when the model cannot
    be found or is not a masked language model. The copy is freed when it is closed;
    :func:`cached_masked_lm` shares one copy per process instead. ``backend``: what runs the
    forward passes, ``"torch"`` or ONNX Runtime (``"onnx"``, opt-in ``"onnx-int8"``; :mod:`assoc.lm.masked.onnx`).
    """
    from assoc.lm.masked.engine import MaskedLM

    check_backend_settings(backend, device=device, dtype=dtype)  # before anything loads
    loaded = in_memory_masked_lm(model, backend=backend)
    if loaded is not None:
        return loaded
    tokenizer, lm, fingerprint, device = load_parts(model, device=device, dtype=dtype, revision=revision, memo=memo)
    return MaskedLM(
        model, tokenizer, lm, device=device, dtype=dtype, fingerprint=fingerprint, memo=memo, backend=backend
    )

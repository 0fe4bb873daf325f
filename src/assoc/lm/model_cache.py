"""The per-process cache of loaded models, shared by every engine (masked, causal, and any other).

Loading a bert-base model and checking its fast paths costs about a second per call, so repeated
``assoc.score`` calls in a notebook and the work units of one worker load each model once:
:data:`MODEL_CACHE` keeps the loaded weights and tokenizer of each :class:`ModelKey` (the kind of
engine, the model, its revision, the resolved device and the dtype) and every engine wraps them in a
fresh handle of its own for each caller. One memory budget covers every engine's models.
Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from assoc.infra.memory import BytesLRU, free_memory
from assoc.lm.identity import directory_stamp, resolve_device, torch_dtype

_H = TypeVar("_H")  # the handle a cache's get returns

#: Environment variable: the bytes loaded models of one device kind may take in memory.
MODEL_CACHE_VARIABLE = "ASSOC_MODEL_CACHE_BYTES"


@dataclass(frozen=True)
class ModelKey:
    """What identifies one loaded model in :data:`MODEL_CACHE`.

    ``engine`` is the kind of engine that loaded it (``"masked"``, ``"causal"``: the same folder
    loaded by two engines is two models); ``model`` is the Hub id as typed, or the resolved absolute
    path of a local directory (so ``m/``, ``./m`` and ``/abs/m`` share one entry); ``device`` is the
    resolved torch device (``"auto"`` becomes ``"cpu"`` or ``"cuda"``).
    """

    model: str
    revision: str | None
    device: str
    dtype: str
    engine: str = "masked"


@dataclass
class CachedWeights:
    """What :data:`MODEL_CACHE` keeps of one loaded model: its tokenizer and weights and what they are."""

    tokenizer: Any
    model: Any
    fingerprint: str
    device: str
    stamp: tuple | None  # local directory: (relative name, size, mtime) of each file, to notice rewrites
    vocab_size: int  # output classes as loaded (temporary tokens are removed back to this)
    nbytes: int


#: The loader an engine gives :meth:`ModelCache.handle`: ``(model, device=, dtype=, revision=, memo=)`` ->
#: ``(tokenizer, weights, fingerprint, resolved device)`` (:func:`assoc.lm.loading.load_pretrained`'s shape).
Loader = Callable[..., tuple[Any, Any, str, str]]


class ModelCache:
    """Loaded models kept for the life of the process, keyed by :class:`ModelKey`.

    Every :meth:`handle` call returns a fresh handle (made by the engine's ``make`` function) around
    the shared tokenizer and weights; facts an engine checks once per weights object (its fast paths)
    stay valid. A local directory whose files changed since loading (size or modification time) is
    loaded again.

    Memory is bounded: ``max_bytes`` per device kind (``"cpu"``, ``"cuda"``, ``"mps"``) is the most
    that models kept in memory may take, whatever engine loaded them (default: a quarter of the
    machine's RAM for the CPU, half of the GPU's memory; ``ASSOC_MODEL_CACHE_BYTES`` overrides both);
    least recently used models are released before a new one loads, and the model just loaded is
    always kept. ``max_bytes=0`` turns the cache off: every call loads a private model that is freed
    when its handle is closed. Call :meth:`release` to free memory on request.

    Thread-safe: one lock guards the table, and a model is loaded once even when several threads ask
    for it at the same time.
    """

    def __init__(self, max_bytes: int | None = None):
        self._lrus: dict[str, BytesLRU[CachedWeights]] = {}  # device kind -> its models
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

    def _lru(self, device: str) -> BytesLRU[CachedWeights]:
        """The byte-bounded LRU of ``device``'s kind (``cpu``, ``cuda``, ``mps``), made on first use."""
        kind = device.split(":")[0]
        with self._lock:
            lru = self._lrus.get(kind)
            if lru is None:
                lru = BytesLRU(MODEL_CACHE_VARIABLE, functools.partial(_default_budget, device), on_evict=free_memory)
                lru.max_bytes = self._max_bytes
                self._lrus[kind] = lru
            return lru

    def handle(
        self,
        engine: str,
        model: str,
        load: Loader,
        make: Callable[[CachedWeights, bool], _H],
        *,
        device: str,
        dtype: str,
        revision: str | None,
        memo: Any = None,
    ) -> _H:
        """``make(weights, shared)`` around ``model``'s weights: held in this cache, or loaded now by ``load``.

        ``engine`` names the engine (part of the key). With the cache off (a budget of 0) the weights
        are loaded for one private handle (``shared`` False) and not kept. Otherwise the entry of
        :class:`ModelKey` is reused, loaded again when its local directory changed, or loaded after
        room is made for a model as large as the largest held; ``make`` then runs under the lock.
        """
        key, stamp = self.key(engine, model, device=device, dtype=dtype, revision=revision)
        lru = self._lru(key.device)
        if lru.budget() <= 0:  # caching off: a private model, freed when its handle closes
            tokenizer, lm, fingerprint, resolved = load(model, device=device, dtype=dtype, revision=revision, memo=memo)
            vocab = int(lm.get_input_embeddings().weight.shape[0])
            return make(CachedWeights(tokenizer, lm, fingerprint, resolved, stamp, vocab, 0), False)
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
                entry = CachedWeights(tokenizer, lm, fingerprint, resolved, stamp, vocab, _model_bytes(lm))
                lru.put(key, entry, entry.nbytes)  # kept even when alone over the budget
            return make(entry, True)

    def keys(self, engine: str | None = None) -> list[ModelKey]:
        """The models held now (of ``engine``, or every engine's), least recently used first."""
        with self._lock:
            held: list[Any] = [key for lru in self._lrus.values() for key in lru.keys()]
        return [key for key in held if engine is None or key.engine == engine]

    def release(
        self,
        model: str | None = None,
        *,
        engine: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        revision: str | None = None,
    ) -> int:
        """Drop the models that match every given field (all of them when none is given); return how many.

        ``model`` matches a Hub id as typed or any spelling of a local directory.
        """
        wanted = normalised_name(model) if model is not None else None

        def match(key: Any) -> bool:
            return (
                (wanted is None or key.model == wanted)
                and (engine is None or key.engine == engine)
                and (device is None or key.device == device)
                and (dtype is None or key.dtype == dtype)
                and (revision is None or key.revision == revision)
            )

        with self._lock:
            return sum(lru.release(match) for lru in list(self._lrus.values()))

    def key(
        self, engine: str, model: str, *, device: str, dtype: str, revision: str | None
    ) -> tuple[ModelKey, tuple | None]:
        """The :class:`ModelKey` of ``model`` and the stamp of its local directory (``None`` for a Hub id)."""
        torch_dtype(dtype)  # refuse an unknown dtype before anything else
        name = normalised_name(model)
        stamp = directory_stamp(Path(name)) if Path(name).is_dir() else None
        return ModelKey(name, revision, resolve_device(device), dtype, engine), stamp

    def budget(self, device: str) -> int:
        """The budget in bytes of ``device``'s kind now in force."""
        return self._lru(device).budget()


def normalised_name(model: str) -> str:
    """A model's name as the cache keys it: a local directory as its resolved absolute path, else as typed."""
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


#: The process-wide cache of every engine's loaded models (set ``MODEL_CACHE.max_bytes`` to bound it).
MODEL_CACHE = ModelCache()

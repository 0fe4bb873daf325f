"""The one cache -> chunk -> progress -> compute loop of every engine's log probabilities.

Every scorer of a local language model (fmat, pll, clm, crows_pairs, and any third-party one)
turns its work into engine requests (:class:`~assoc.lm.masked.MaskRequest` for a masked LM,
:class:`~assoc.lm.causal.CausalRequest` for a causal LM: anything with ``input_ids``,
``position`` and ``token_ids``, :class:`EngineRequest`) and calls :func:`cached_log_probs`:
requests already in the on-disk cache are read from it, the rest are sorted by length (so a chunk
holds sequences of similar length and the engine pads little), computed in chunks, and each chunk
is stored in the cache as soon as it is done, so an interrupted run resumes from the last finished
chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from assoc.infra.cache import digest

if TYPE_CHECKING:
    from assoc.infra.cache import Cache, Namespace


class EngineRequest(Protocol):
    """What the loop needs of an engine's request: the sequence, where scoring starts, the scored ids."""

    @property
    def input_ids(self) -> tuple[int, ...]:
        """The whole token sequence the model reads."""

    @property
    def position(self) -> int:
        """Where the scored tokens are read (a masked position, or where a continuation starts)."""

    @property
    def token_ids(self) -> tuple[int, ...] | None:
        """The token ids whose log-probabilities are returned (``None``: the whole vocabulary)."""


def request_key(request: EngineRequest) -> str:
    """The cache key of one request: a digest of its token sequence, position and scored token ids."""
    token_ids = list(request.token_ids) if request.token_ids is not None else None
    return digest([list(request.input_ids), request.position, token_ids])[:40]


def engine_parts(lm: Any) -> dict[str, Any]:
    """What the engine's numbers depend on besides the request: weights' fingerprint, dtype, device type, backend.

    The backend is named only when it is not PyTorch, so the keys of results computed before the
    ``backend`` option existed stay valid; results of different backends never share a key.
    """
    parts = {"model": lm.fingerprint, "dtype": lm.dtype, "device": str(lm.device).split(":")[0]}
    backend = getattr(lm, "backend", "torch")
    if backend != "torch":
        parts["backend"] = backend
    return parts


def model_namespace(cache: Cache, lm: Any, kind: str, version: int, **parts: Any) -> Namespace:
    """The cache namespace of one loaded model (an engine's handle) for results of ``kind``.

    It holds everything that changes the numbers (:func:`engine_parts`) plus the caller's ``parts``.
    """
    return cache.namespace(kind=kind, version=version, **engine_parts(lm), **parts)


def cached_log_probs(
    lm: Any,
    requests: Sequence[EngineRequest],
    namespace: Namespace | None,
    *,
    chunk: int,
    batch_tokens: int | None = None,
    progress: bool = False,
    desc: str = "",
    unit: str = "seq",
) -> list[list[float]]:
    """``log P(token | sequence)`` for every token id of every request, from the cache or the engine.

    Parameters
    ----------
    lm:
        A loaded engine handle (:class:`~assoc.lm.masked.MaskedLM` or :class:`~assoc.lm.causal.CausalLM`).
    requests:
        The requests; each must name its ``token_ids`` (a cache entry holds one value per id).
    namespace:
        The cache namespace (:func:`model_namespace`) or None for no cache.
    chunk:
        Requests per engine call and per cache pack (the granularity of resuming and progress).
    batch_tokens:
        The engine's batch budget in padded tokens (None: the device default).
    progress, desc, unit:
        The progress bar (:func:`assoc.infra.progress.bar`) over the requests that are computed.

    Returns
    -------
    list of list of float
        Per request, the natural-log probabilities of its ``token_ids``, in order.
    """
    from assoc.infra.progress import bar

    # keys only where there is a cache to key (a digest per request costs as much as planning it)
    keys = [request_key(r) for r in requests] if namespace is not None else []
    values: list[list[float] | None] = [None] * len(requests)
    if namespace is not None:
        found = namespace.get_many(keys)
        for i, key in enumerate(keys):
            stored = found.get(key)
            # an entry of the wrong length (a damaged or foreign pack) is recomputed, never trusted
            if isinstance(stored, list) and len(stored) == len(requests[i].token_ids or ()):
                values[i] = [float(v) for v in stored]
    # Sorting before chunking keeps each chunk's sequences of similar length (little padding).
    todo = sorted((i for i, v in enumerate(values) if v is None), key=lambda i: len(requests[i].input_ids))
    meter = bar(total=len(todo), desc=desc or f"log P {lm.name}", enabled=progress, unit=unit)
    try:
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            results = lm.log_probs([requests[i] for i in part], batch_tokens=batch_tokens)
            for i, result in zip(part, results, strict=True):
                values[i] = [float(v) for v in result]
            if namespace is not None:
                namespace.put_many({keys[i]: values[i] for i in part})
            meter.update(len(part))
    finally:
        meter.close()
    return values  # type: ignore[return-value]  # every None was filled above


def token_log_probs(
    lm: Any,
    requests: Sequence[EngineRequest],
    namespace: Namespace | None,
    *,
    chunk: int,
    batch_tokens: int | None = None,
    progress: bool = False,
    desc: str = "",
    unit: str = "seq",
) -> dict[tuple[tuple[int, ...], int, int], float]:
    """:func:`cached_log_probs` keyed by ``(input_ids, position, token_id)``: what fmat and pll look values up by.

    The requests are computed (or read from the cache) exactly as given, in the same chunks; a
    key two requests share gets the value of the later one (callers send each key once).
    """
    values = cached_log_probs(
        lm, requests, namespace, chunk=chunk, batch_tokens=batch_tokens, progress=progress, desc=desc, unit=unit
    )
    out: dict[tuple[tuple[int, ...], int, int], float] = {}
    for request, found in zip(requests, values, strict=True):
        for token, value in zip(request.token_ids or (), found, strict=True):
            out[(request.input_ids, request.position, token)] = value
    return out

"""Load a causal LM (Hugging Face id, local directory, or a pair in memory) as a :class:`CausalLM` handle.

Loading goes through the one transformers loader (:func:`assoc.lm.loading.load_pretrained`: device
and dtype, the Hub checks, the weights' fingerprint, the checks of what was loaded, the error
messages) and the per-process model cache every engine shares (:data:`assoc.lm.model_cache.MODEL_CACHE`);
only the model class (``AutoModelForCausalLM``) and the handle are this engine's own.
Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.errors import ModelError
from assoc.lm.identity import torch_dtype
from assoc.lm.loading import in_memory_parts, load_pretrained
from assoc.lm.model_cache import MODEL_CACHE, CachedWeights, ModelKey

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.causal.engine import CausalLM

#: The engine's name in :class:`~assoc.lm.model_cache.ModelKey` (the kind of model it loads).
ENGINE = "causal"


def in_memory_causal_lm(name: str) -> CausalLM | None:
    """A :class:`~assoc.lm.causal.engine.CausalLM` around the in-memory ``(model, tokenizer)`` pair ``name``, or None.

    The pair is used where it is (its device and dtype) and put in evaluation mode.
    """
    from assoc.lm.causal.engine import CausalLM

    parts = in_memory_parts(name, takes="causal-LM scorers take a (transformers causal LM, tokenizer) pair")
    if parts is None:
        return None
    lm, tokenizer, where = parts
    return CausalLM(name, tokenizer, lm, **where)


def load_causal_parts(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Cache | None = None
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) of a causal LM or raise :class:`ModelError` naming the problem.

    :func:`assoc.lm.loading.load_pretrained` with ``AutoModelForCausalLM``.
    """
    return load_pretrained(
        model,
        "AutoModelForCausalLM",
        noun="causal LM",
        action="load causal language model",
        device=device,
        dtype=dtype,
        revision=revision,
        memo=memo,
        hub_advice=False,
    )


def cached_causal_lm(
    model: str, *, device: str = "cpu", dtype: str = "float32", revision: str | None = None, memo: Cache | None = None
) -> CausalLM:
    """Load ``model`` once per process and reuse it (:data:`assoc.lm.model_cache.MODEL_CACHE`).

    Every call returns a fresh :class:`~assoc.lm.causal.engine.CausalLM` around the shared weights (named
    as the caller wrote the model); closing it drops the handle, never the weights. ``memo``: where facts
    about the weights are remembered across processes (the run's cache; None: the default cache root).
    """
    from assoc.lm.causal.engine import CausalLM

    if not isinstance(model, str) or not model.strip():
        raise ModelError("model name is empty; give a Hugging Face id or a local directory")
    loaded = in_memory_causal_lm(model)
    if loaded is not None:
        return loaded

    def handle(entry: CachedWeights, shared: bool) -> CausalLM:
        return CausalLM(
            model.strip(),
            entry.tokenizer,
            entry.model,
            device=entry.device,
            dtype=dtype,
            fingerprint=entry.fingerprint,
            shared=shared,
            memo=memo,
        )

    return MODEL_CACHE.handle(
        ENGINE, model, load_causal_parts, handle, device=device, dtype=dtype, revision=revision, memo=memo
    )


def release_causal_lms(
    model: str | None = None, *, device: str | None = None, dtype: str | None = None, revision: str | None = None
) -> int:
    """Free the causal LMs this process keeps loaded (all, or those matching the given fields); return how many."""
    return MODEL_CACHE.release(model, engine=ENGINE, device=device, dtype=dtype, revision=revision)


def loaded_causal_lms() -> list[ModelKey]:
    """The causal LMs this process keeps loaded, least recently used first."""
    return MODEL_CACHE.keys(ENGINE)


def load_causal_lm(
    model: str, *, device: str = "cpu", dtype: str = "float32", revision: str | None = None, memo: Cache | None = None
) -> CausalLM:
    """Load a causal LM from a Hugging Face id or a local directory: a private copy, freed when closed.

    Raises :class:`assoc.errors.ModelError` when the model cannot be found or loaded and
    :class:`assoc.errors.OptionError` for an unknown device or dtype.
    """
    from assoc.lm.causal.engine import CausalLM

    loaded = in_memory_causal_lm(model)
    if loaded is not None:
        return loaded
    torch_dtype(dtype)  # an unknown dtype is refused before anything loads
    tokenizer, lm, fingerprint, resolved = load_causal_parts(
        model, device=device, dtype=dtype, revision=revision, memo=memo
    )
    return CausalLM(model, tokenizer, lm, device=resolved, dtype=dtype, fingerprint=fingerprint, memo=memo)

"""Find, identify and load a causal LM (Hugging Face id, local directory, or an in-memory pair).

The masked-LM engine's loader is reused: :func:`assoc.lm.models.load_pretrained` (device and dtype,
the Hub checks, the weights' fingerprint, the error messages) and the per-process model cache's
memory policy (:mod:`assoc.lm.masked.loading`); only the model class and the checks that it is a
causal LM differ.
Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.errors import ModelError, OptionError
from assoc.lm.masked.loading import MaskedLMCache, _Entry, in_memory_parts
from assoc.lm.models import load_pretrained

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.causal.engine import CausalLM


def in_memory_causal_lm(name: str) -> CausalLM | None:
    """A :class:`~assoc.lm.causal.engine.CausalLM` around the in-memory ``(model, tokenizer)`` pair ``name``, or None.

    The pair is used where it is (its device and dtype) and put in evaluation mode.
    """
    from assoc.lm.causal.engine import CausalLM

    parts = in_memory_parts(name, takes="the clm scorer takes a (transformers causal LM, tokenizer) pair")
    if parts is None:
        return None
    lm, tokenizer, where = parts
    return CausalLM(name, tokenizer, lm, **where)


def load_causal_parts(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Cache | None = None
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) of a causal LM or raise :class:`ModelError` naming the problem.

    :func:`assoc.lm.models.load_pretrained` with ``AutoModelForCausalLM``.
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


class CausalLMCache(MaskedLMCache):
    """Loaded causal LMs kept for the life of the process: the masked-LM cache's keys and memory policy.

    Keys, the memory budget per device kind (``ASSOC_MODEL_CACHE_BYTES``), least-recently-used
    release and thread safety are :class:`assoc.lm.masked.loading.MaskedLMCache`'s; :meth:`get`
    loads with ``AutoModelForCausalLM`` and returns :class:`~assoc.lm.causal.engine.CausalLM` handles.
    """

    def get(  # type: ignore[override]  # no backend: causal LMs run on PyTorch
        self,
        model: str,
        *,
        device: str = "cpu",
        dtype: str = "float32",
        revision: str | None = None,
        memo: Cache | None = None,
    ) -> CausalLM:
        """A :class:`~assoc.lm.causal.engine.CausalLM` for ``model``, loaded now or reused from this process."""
        from assoc.lm.causal.engine import CausalLM

        if not isinstance(model, str) or not model.strip():
            raise ModelError("model name is empty; give a Hugging Face id or a local directory")
        loaded = in_memory_causal_lm(model)
        if loaded is not None:
            return loaded

        def handle(entry: _Entry, shared: bool) -> CausalLM:
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

        return self._handle(model, load_causal_parts, handle, device=device, dtype=dtype, revision=revision, memo=memo)


#: The process-wide cache behind :func:`cached_causal_lm`.
CAUSAL_CACHE = CausalLMCache()


def cached_causal_lm(
    model: str, *, device: str = "cpu", dtype: str = "float32", revision: str | None = None, memo: Cache | None = None
) -> CausalLM:
    """Load ``model`` once per process and reuse it (:meth:`CausalLMCache.get` of :data:`CAUSAL_CACHE`)."""
    return CAUSAL_CACHE.get(model, device=device, dtype=dtype, revision=revision, memo=memo)


def release_causal_lms(model: str | None = None, *, device: str | None = None, dtype: str | None = None) -> int:
    """Free the causal LMs this process keeps loaded (all, or those matching the given fields); return how many."""
    return CAUSAL_CACHE.release(model, device=device, dtype=dtype)


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
    if dtype not in ("float32", "float16", "bfloat16"):
        raise OptionError(f"unknown dtype {dtype!r}; use float32, float16 or bfloat16")
    tokenizer, lm, fingerprint, resolved = load_causal_parts(
        model, device=device, dtype=dtype, revision=revision, memo=memo
    )
    return CausalLM(model, tokenizer, lm, device=resolved, dtype=dtype, fingerprint=fingerprint, memo=memo)

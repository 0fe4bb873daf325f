"""Load a fill-mask model (Hugging Face id, local directory, or a pair in memory) as a :class:`MaskedLM` handle.

Loading goes through the one transformers loader (:func:`assoc.lm.loading.load_pretrained`) and the
per-process model cache every engine shares (:data:`assoc.lm.model_cache.MODEL_CACHE`); this module
adds what is the masked engine's own: ``AutoModelForMaskedLM``, the check for a mask token, the
backend that runs the forward passes, and the removal of temporary tokens a caller left behind.
Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.errors import ModelError, OptionError
from assoc.lm.loading import in_memory_parts, load_pretrained
from assoc.lm.model_cache import MODEL_CACHE, CachedWeights, ModelKey
from assoc.lm.options import backend_device, check_backend_settings

if TYPE_CHECKING:
    from assoc.infra.cache import Cache
    from assoc.lm.masked.engine import MaskedLM

#: The engine's name in :class:`~assoc.lm.model_cache.ModelKey` (the kind of model it loads).
ENGINE = "masked"

__all__ = [
    "ENGINE",
    "MODEL_CACHE",
    "ModelKey",
    "cached_masked_lm",
    "in_memory_masked_lm",
    "load_masked_lm",
    "load_parts",
    "loaded_masked_lms",
    "release_masked_lms",
]


def in_memory_masked_lm(name: str, backend: str = "torch") -> MaskedLM | None:
    """A :class:`~assoc.lm.masked.engine.MaskedLM` around the in-memory ``(model, tokenizer)`` pair ``name``.

    ``None`` when ``name`` is not an in-memory model (:mod:`assoc.models.memory`). The pair is used
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


def load_parts(
    model: str, *, device: str, dtype: str, revision: str | None, memo: Cache | None = None
) -> tuple[Any, Any, str, str]:
    """Load (tokenizer, model, fingerprint, device) of a fill-mask model or raise :class:`ModelError`.

    :func:`assoc.lm.loading.load_pretrained` with ``AutoModelForMaskedLM``, then the check that the
    tokenizer has a mask token. ``memo``: where the weights' fingerprint is remembered
    (:func:`assoc.lm.identity.local_fingerprint`).
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


def cached_masked_lm(
    model: str,
    *,
    device: str = "cpu",
    dtype: str = "float32",
    revision: str | None = None,
    memo: Cache | None = None,
    backend: str = "torch",
) -> Any:
    """Load ``model`` once per process and reuse it (:data:`assoc.lm.model_cache.MODEL_CACHE`).

    Scorers (fmat, pll, crows_pairs, the masked kind), helpers and executors' workers call this instead
    of :func:`load_masked_lm`. The returned :class:`~assoc.lm.masked.engine.MaskedLM` shares its weights
    with every other one for the same :class:`~assoc.lm.model_cache.ModelKey` (named as the caller wrote
    the model); the engine's fast-path checks are remembered per weights object, so they too run once.
    Use it as a context manager (``with cached_masked_lm(m) as lm:``) or call its ``close()`` when done:
    for a shared handle that removes the temporary tokens it added and drops the handle, never the
    weights. ``memo`` is the cache where facts about the weights are remembered across processes (their
    fingerprint, the engine's fast-path checks, ONNX exports): the caller's run cache, None for the
    default cache root. ``backend``: what runs the forward passes of the handle returned
    (:mod:`assoc.lm.masked.onnx`); the weights are shared whatever the backend.
    """
    from assoc.lm.masked.engine import MaskedLM  # numpy: not at module level, so that importing this stays cheap

    if not isinstance(model, str) or not model.strip():
        raise ModelError("model name is empty; give a Hugging Face id or a local directory")
    check_backend_settings(backend, device=device, dtype=dtype)  # before anything loads
    device = backend_device(device, backend)
    loaded = in_memory_masked_lm(model, backend=backend)
    if loaded is not None:
        return loaded

    def handle(entry: CachedWeights, shared: bool) -> MaskedLM:
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

    return MODEL_CACHE.handle(
        ENGINE, model, load_parts, handle, device=device, dtype=dtype, revision=revision, memo=memo
    )


def release_masked_lms(
    model: str | None = None, *, device: str | None = None, dtype: str | None = None, revision: str | None = None
) -> int:
    """Free the masked LMs this process keeps loaded (all, or those matching the given fields); return how many."""
    return MODEL_CACHE.release(model, engine=ENGINE, device=device, dtype=dtype, revision=revision)


def loaded_masked_lms() -> list[ModelKey]:
    """The masked LMs this process keeps loaded, least recently used first."""
    return MODEL_CACHE.keys(ENGINE)


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
    device = backend_device(device, backend)
    tokenizer, lm, fingerprint, device = load_parts(model, device=device, dtype=dtype, revision=revision, memo=memo)
    return MaskedLM(
        model, tokenizer, lm, device=device, dtype=dtype, fingerprint=fingerprint, memo=memo, backend=backend
    )

"""The masked-LM engine and the ``masked`` model kind (plugins reach them through :mod:`assoc.lm`).

A sibling of :mod:`assoc.lm.causal`: both build on the shared pieces of :mod:`assoc.lm` (batching,
the model cache, the cached log-probability loop, the one loader, device and fingerprints) and
never import each other. ``engine`` (:class:`MaskedLM`), ``loading`` (:func:`cached_masked_lm`: a
model once per process, keyed by model, revision, device and dtype; :func:`release_masked_lms`),
``pll`` (pseudo-log-likelihoods), ``kind`` (the ``masked`` kind), ``words`` (word pieces), ``onnx``
and ``torch_free`` (the ONNX Runtime backends). Importing this package is cheap: torch and
transformers are imported only when a model is loaded.
"""

from __future__ import annotations

from typing import Any

from assoc.lm.masked.requests import MaskRequest

__all__ = [
    "MaskRequest",
    "MaskedLM",
    "WordTokens",
    "cached_masked_lm",
    "fill_mask_token",
    "load_masked_lm",
    "loaded_masked_lms",
    "release_masked_lms",
    "word_tokens",
]


def __getattr__(name: str) -> Any:
    if name == "MaskedLM":
        from assoc.lm.masked import engine

        return getattr(engine, name)
    if name in ("load_masked_lm", "cached_masked_lm", "release_masked_lms", "loaded_masked_lms"):
        from assoc.lm.masked import loading

        return getattr(loading, name)
    if name in ("WordTokens", "word_tokens", "fill_mask_token"):
        from assoc.lm.masked import words

        return getattr(words, name)
    raise AttributeError(f"module 'assoc.lm.masked' has no attribute {name!r}")

"""The masked-LM engine shared by the fmat and pll scorers (plugins reach it through :mod:`assoc.lm`).

``from assoc.lm.masked import load_masked_lm, MaskRequest, MaskedLM``. Importing this package
is cheap: torch and transformers are imported only when a model is loaded.
:func:`cached_masked_lm` loads a model once per process (keyed by model, revision,
device and dtype) and :func:`release_masked_lms` frees such models on request.
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

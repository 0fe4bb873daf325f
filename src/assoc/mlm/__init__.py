"""The masked-LM engine shared by the fmat and pll scorers.

``from assoc.mlm import load_masked_lm, MaskRequest, MaskedLM``. Importing this package
is cheap: torch and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

from typing import Any

from assoc.mlm.requests import MaskRequest

__all__ = ["MaskRequest", "MaskedLM", "load_masked_lm", "WordTokens", "word_tokens", "fill_mask_token"]


def __getattr__(name: str) -> Any:
    if name in ("MaskedLM", "load_masked_lm"):
        from assoc.mlm import engine

        return getattr(engine, name)
    if name in ("WordTokens", "word_tokens", "fill_mask_token"):
        from assoc.mlm import words

        return getattr(words, name)
    raise AttributeError(f"module 'assoc.mlm' has no attribute {name!r}")

"""assoc-fmat: the Fill-Mask Association Test (Bao, 2024) for assoc.

Scorer ``fmat`` (log probabilities of [MASK] candidates), analysis ``lpr`` (the R
package's ``summary.fmat``), helpers ``vocab_check`` / ``model_info`` /
``fill_mask_check`` (``BERT_vocab`` / ``BERT_info`` / ``fill_mask_check``) and the
bundled stimuli ``bao2024``. Importing this package does not import torch.
"""

from __future__ import annotations

from typing import Any

from .citation import CITATION

__all__ = ["CITATION", "FMATScorer", "LPRAnalysis", "vocab_check", "model_info", "fill_mask_check", "load_bao2024"]


def __getattr__(name: str) -> Any:
    if name == "FMATScorer":
        from .scorer import FMATScorer

        return FMATScorer
    if name == "LPRAnalysis":
        from .analyses import LPRAnalysis

        return LPRAnalysis
    if name in ("vocab_check", "model_info", "fill_mask_check"):
        from . import helpers

        return getattr(helpers, name)
    if name == "load_bao2024":
        from .bundled import load_bao2024

        return load_bao2024
    raise AttributeError(f"module 'assoc_fmat' has no attribute {name!r}")

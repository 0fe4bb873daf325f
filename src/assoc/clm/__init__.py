"""The causal-LM engine: log probabilities of token continuations under GPT-style models.

``from assoc.clm import CausalRequest, cached_causal_lm``. Importing this package is cheap:
torch and transformers are imported only when a model is loaded. The engine sits beside the
masked-LM engine (:mod:`assoc.mlm`) and shares its batch planner, result cache loop
(:func:`assoc.mlm.compute.cached_log_probs`), model fingerprints and per-process model cache
policy; :mod:`assoc.clm.text` turns sentences into requests under an explicit BOS policy.
"""

from __future__ import annotations

from typing import Any

from assoc.clm.requests import CausalRequest

__all__ = [
    "BOS_POLICIES",
    "CausalLM",
    "CausalRequest",
    "cached_causal_lm",
    "load_causal_lm",
    "release_causal_lms",
]


def __getattr__(name: str) -> Any:
    if name == "CausalLM":
        from assoc.clm import engine

        return engine.CausalLM
    if name in ("load_causal_lm", "cached_causal_lm", "release_causal_lms"):
        from assoc.clm import loading

        return getattr(loading, name)
    if name == "BOS_POLICIES":
        from assoc.clm import text

        return text.BOS_POLICIES
    raise AttributeError(f"module 'assoc.clm' has no attribute {name!r}")

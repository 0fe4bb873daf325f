"""The causal-LM engine: log probabilities of token continuations under GPT-style models.

Plugins reach it through :mod:`assoc.lm` (``from assoc.lm import CausalRequest, cached_causal_lm``),
never through this package, which may move. Importing this package is cheap:
torch and transformers are imported only when a model is loaded. The engine sits beside the
masked-LM engine (:mod:`assoc.lm.masked`) and shares its batch planner, result cache loop
(:func:`assoc.lm.masked.compute.cached_log_probs`), model fingerprints and per-process model cache
policy; :mod:`assoc.lm.causal.text` turns sentences into requests under an explicit BOS policy.
"""

from __future__ import annotations

from typing import Any

from assoc.lm.causal.requests import CausalRequest

__all__ = [
    "BOS_POLICIES",
    "CausalLM",
    "CausalRequest",
    "SentencePlan",
    "cached_causal_lm",
    "load_causal_lm",
    "plan_sentence",
    "release_causal_lms",
    "special_tokens",
]


def __getattr__(name: str) -> Any:
    if name == "CausalLM":
        from assoc.lm.causal import engine

        return engine.CausalLM
    if name in ("load_causal_lm", "cached_causal_lm", "release_causal_lms"):
        from assoc.lm.causal import loading

        return getattr(loading, name)
    if name in ("BOS_POLICIES", "SentencePlan", "plan_sentence", "special_tokens"):
        from assoc.lm.causal import text

        return getattr(text, name)
    raise AttributeError(f"module 'assoc.lm.causal' has no attribute {name!r}")

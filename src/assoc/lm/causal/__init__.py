"""The causal-LM engine and the ``causal`` model kind: log probabilities under GPT-style models.

Plugins reach it through :mod:`assoc.lm` (``from assoc.lm import CausalRequest, cached_causal_lm``),
never through this package, which may move. Importing this package is cheap: torch and
transformers are imported only when a model is loaded. A sibling of the masked-LM engine
(:mod:`assoc.lm.masked`), never importing it: both stand on the shared pieces of :mod:`assoc.lm`
(the batch planner :mod:`assoc.lm.batching`, the result-cache loop :mod:`assoc.lm.compute`, the
fingerprints :mod:`assoc.lm.identity`, the one loader :mod:`assoc.lm.loading` and the per-process
model cache :mod:`assoc.lm.model_cache`); :mod:`assoc.lm.causal.text` turns sentences into requests
under an explicit BOS policy, and :mod:`assoc.lm.causal.kind` is the ``causal`` kind.
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

"""Language-model services for plugins: one of the three service modules of the plugin API.

A plugin that runs a language model imports from here (``from assoc.lm import resolve_device``),
never from the modules below, which may move (:doc:`the plugin API <plugin-api>`). What is here:

* Loading any model (:mod:`assoc.lm.models`, :mod:`assoc.lm.hub`): :func:`resolve_device`,
  :func:`torch_dtype`, :data:`DTYPES`, :func:`looks_like_path`, the fingerprints that name a
  model's weights in provenance (:func:`model_fingerprint`, :func:`local_fingerprint`,
  :func:`hub_fingerprint`, :func:`weights_fingerprint` for a model given as an object), and
  :func:`check_hub_reachable` (fail in seconds, not a minute, when the Hub is needed and cannot be reached).
* ONNX exports and sessions shared by every ONNX backend (:mod:`assoc.lm.onnx`):
  :func:`check_onnx_installed`, :func:`cached_export`, :func:`export_module`, :func:`inference_session`.
* The masked-LM engine shared by fmat and pll (:mod:`assoc.lm.masked`): :class:`MaskedLM`,
  :class:`MaskRequest`, :func:`load_masked_lm`, :func:`cached_masked_lm`, :func:`cached_log_probs`,
  :func:`model_namespace`, the word-piece helpers, and the scorer base :class:`MaskedLMScorer` with
  its worker and options (:data:`MODEL_OPTIONS`, :data:`MAX_TOKENS_OPTION`).

A causal-LM engine sits beside the masked one, as :mod:`assoc.lm.causal`, on the same loading
helpers; its public names are added here. Importing this module is cheap: nothing loads until a
name is used, and torch and transformers only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.infra.importhooks import lazy_names as _lazy_names

#: public name -> "module" (same name there) or "module:name"
_LAZY = {
    "DTYPES": "assoc.lm.models",
    "resolve_device": "assoc.lm.models",
    "torch_dtype": "assoc.lm.models",
    "looks_like_path": "assoc.lm.models",
    "local_fingerprint": "assoc.lm.models",
    "hub_fingerprint": "assoc.lm.models",
    "model_fingerprint": "assoc.lm.models",
    "weights_fingerprint": "assoc.scoring.models:fingerprint",
    "check_hub_reachable": "assoc.lm.hub",
    "check_onnx_installed": "assoc.lm.onnx:check_installed",
    "cached_export": "assoc.lm.onnx",
    "export_module": "assoc.lm.onnx",
    "inference_session": "assoc.lm.onnx",
    "MaskRequest": "assoc.lm.masked.requests",
    "MaskedLM": "assoc.lm.masked.engine",
    "load_masked_lm": "assoc.lm.masked.loading",
    "cached_masked_lm": "assoc.lm.masked.loading",
    "release_masked_lms": "assoc.lm.masked.loading",
    "loaded_masked_lms": "assoc.lm.masked.loading",
    "cached_log_probs": "assoc.lm.masked.compute",
    "token_log_probs": "assoc.lm.masked.compute",
    "model_namespace": "assoc.lm.masked.compute",
    "WordTokens": "assoc.lm.masked.words",
    "word_tokens": "assoc.lm.masked.words",
    "word_tokens_many": "assoc.lm.masked.words",
    "word_tokens_batch": "assoc.lm.masked.words",
    "chain_steps": "assoc.lm.masked.words",
    "masked_query": "assoc.lm.masked.words",
    "split_query": "assoc.lm.masked.words",
    "fill_mask_token": "assoc.lm.masked.words",
    "MaskedLMScorer": "assoc.lm.masked.scorer",
    "MaskedLMWorker": "assoc.lm.masked.scorer",
    "decode_items": "assoc.lm.masked.scorer",
    "MODEL_OPTIONS": "assoc.lm.masked.options",
    "MAX_TOKENS_OPTION": "assoc.lm.masked.options",
}

__all__ = [
    "DTYPES",
    "MAX_TOKENS_OPTION",
    "MODEL_OPTIONS",
    "MaskRequest",
    "MaskedLM",
    "MaskedLMScorer",
    "MaskedLMWorker",
    "WordTokens",
    "cached_export",
    "cached_log_probs",
    "cached_masked_lm",
    "chain_steps",
    "check_hub_reachable",
    "check_onnx_installed",
    "decode_items",
    "export_module",
    "fill_mask_token",
    "hub_fingerprint",
    "inference_session",
    "load_masked_lm",
    "loaded_masked_lms",
    "local_fingerprint",
    "looks_like_path",
    "masked_query",
    "model_fingerprint",
    "model_namespace",
    "release_masked_lms",
    "resolve_device",
    "split_query",
    "token_log_probs",
    "torch_dtype",
    "weights_fingerprint",
    "word_tokens",
    "word_tokens_batch",
    "word_tokens_many",
]


__getattr__, __dir__ = _lazy_names(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover
    from assoc.lm.hub import check_hub_reachable
    from assoc.lm.masked.compute import cached_log_probs, model_namespace, token_log_probs
    from assoc.lm.masked.engine import MaskedLM
    from assoc.lm.masked.loading import cached_masked_lm, load_masked_lm, loaded_masked_lms, release_masked_lms
    from assoc.lm.masked.options import MAX_TOKENS_OPTION, MODEL_OPTIONS
    from assoc.lm.masked.requests import MaskRequest
    from assoc.lm.masked.scorer import MaskedLMScorer, MaskedLMWorker, decode_items
    from assoc.lm.masked.words import (
        WordTokens,
        chain_steps,
        fill_mask_token,
        masked_query,
        split_query,
        word_tokens,
        word_tokens_batch,
        word_tokens_many,
    )
    from assoc.lm.models import (
        DTYPES,
        hub_fingerprint,
        local_fingerprint,
        looks_like_path,
        model_fingerprint,
        resolve_device,
        torch_dtype,
    )
    from assoc.lm.onnx import cached_export, export_module, inference_session
    from assoc.lm.onnx import check_installed as check_onnx_installed
    from assoc.scoring.models import fingerprint as weights_fingerprint

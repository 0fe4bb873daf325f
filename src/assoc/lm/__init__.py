"""Language-model services for plugins: one of the three service modules of the plugin API.

A plugin that runs a language model imports from here (``from assoc.lm import LMScorer``), never from
the modules below, which may move (:doc:`the plugin API <plugin-api>`). The layer, top to bottom:

* **Requests and model kinds** (:mod:`assoc.lm.requests`, :mod:`assoc.lm.kinds`): what a scorer asks of
  a model (``continuation``, ``sentence``, ``choice``, ``generate``: :class:`ContinuationRequest`,
  :class:`SentenceRequest`, :class:`ChoiceRequest`, :class:`GenerateRequest` and their answers
  :class:`LogProb`, :class:`Choice`, :class:`Reply`) and the kinds of model that answer
  (:class:`LanguageModel`, :class:`ChoiceByLikelihood`; the core's :class:`MaskedLanguageModel` and
  :class:`CausalLanguageModel`; plugins register more with the ``register_model_kinds`` hook).
* **The one loader** (:mod:`assoc.lm.loading`): :func:`open_model` (kind resolved from the spec's
  prefix, else the model's ``config.json``, else the scorer's default; checks before any work), and
  :func:`check_model`, its first half.
* **The scorer base** (:mod:`assoc.lm.scorer`): :class:`LMScorer` (work units, the one loader, the model
  options, checkpoints and resume) and its worker :class:`LMWorker`; the options :data:`MODEL_OPTIONS`,
  :data:`ENDPOINT_OPTIONS` and :func:`options_for` (:mod:`assoc.lm.options`).
* **Shared pieces** every engine uses: device, dtype and fingerprints (:func:`resolve_device`,
  :func:`torch_dtype`, :data:`DTYPES`, :func:`looks_like_path`, :func:`model_fingerprint`,
  :func:`local_fingerprint`, :func:`hub_fingerprint`, :func:`weights_fingerprint`), the Hub check
  (:func:`check_hub_reachable`), token-budget batching (:func:`plan_batches`,
  :func:`default_batch_tokens`), the cached log-probability loop (:func:`cached_log_probs`,
  :func:`token_log_probs`, :func:`model_namespace`), ONNX exports and sessions
  (:func:`check_onnx_installed`, :func:`cached_export`, :func:`export_module`, :func:`inference_session`).
* **The engines**, siblings on those pieces: the masked-LM engine (:class:`MaskedLM`,
  :class:`MaskRequest`, :func:`load_masked_lm`, :func:`cached_masked_lm`, the word-piece helpers, and
  the pseudo-log-likelihood :func:`pseudo_log_likelihoods`) and the causal-LM engine (:class:`CausalLM`,
  :class:`CausalRequest`, :func:`load_causal_lm`, :func:`cached_causal_lm`, the BOS policy and the
  context/continuation split :func:`plan_sentence`).

Importing this module is cheap: nothing loads until a name is used, and torch and transformers
only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.infra.importhooks import lazy_names as _lazy_names

#: public name -> "module" (same name there) or "module:name"
_LAZY = {
    # requests and model kinds
    "REQUEST_KINDS": "assoc.lm.requests",
    "ContinuationRequest": "assoc.lm.requests",
    "SentenceRequest": "assoc.lm.requests",
    "ChoiceRequest": "assoc.lm.requests",
    "GenerateRequest": "assoc.lm.requests",
    "LogProb": "assoc.lm.requests",
    "Choice": "assoc.lm.requests",
    "Reply": "assoc.lm.requests",
    "LanguageModel": "assoc.lm.kinds",
    "ChoiceByLikelihood": "assoc.lm.kinds",
    "RequestKindError": "assoc.lm.kinds",
    "refuse": "assoc.lm.kinds",
    "requests_of_kind": "assoc.lm.requests",
    "MaskedLanguageModel": "assoc.lm.masked.kind",
    "CausalLanguageModel": "assoc.lm.causal.kind",
    # the one loader
    "open_model": "assoc.lm.loading",
    "check_model": "assoc.lm.loading",
    "load_pretrained": "assoc.lm.loading",
    # the scorer base and the options
    "LMScorer": "assoc.lm.scorer",
    "LMWorker": "assoc.lm.scorer",
    "decode_items": "assoc.lm.scorer",
    "MODEL_OPTIONS": "assoc.lm.options",
    "ENDPOINT_OPTIONS": "assoc.lm.options",
    "options_for": "assoc.lm.options",
    # shared pieces
    "DTYPES": "assoc.lm.identity",
    "resolve_device": "assoc.lm.identity",
    "torch_dtype": "assoc.lm.identity",
    "looks_like_path": "assoc.lm.identity",
    "local_fingerprint": "assoc.lm.identity",
    "hub_fingerprint": "assoc.lm.identity",
    "model_fingerprint": "assoc.lm.identity",
    "weights_fingerprint": "assoc.models.memory:fingerprint",
    "check_hub_reachable": "assoc.lm.hub",
    "plan_batches": "assoc.lm.batching",
    "default_batch_tokens": "assoc.lm.batching",
    "cached_log_probs": "assoc.lm.compute",
    "token_log_probs": "assoc.lm.compute",
    "model_namespace": "assoc.lm.compute",
    "check_onnx_installed": "assoc.lm.onnx:check_installed",
    "cached_export": "assoc.lm.onnx",
    "export_module": "assoc.lm.onnx",
    "inference_session": "assoc.lm.onnx",
    # the masked-LM engine
    "MaskRequest": "assoc.lm.masked.requests",
    "MaskedLM": "assoc.lm.masked.engine",
    "load_masked_lm": "assoc.lm.masked.loading",
    "cached_masked_lm": "assoc.lm.masked.loading",
    "release_masked_lms": "assoc.lm.masked.loading",
    "loaded_masked_lms": "assoc.lm.masked.loading",
    "WordTokens": "assoc.lm.masked.words",
    "word_tokens": "assoc.lm.masked.words",
    "word_tokens_many": "assoc.lm.masked.words",
    "word_tokens_batch": "assoc.lm.masked.words",
    "chain_steps": "assoc.lm.masked.words",
    "masked_query": "assoc.lm.masked.words",
    "split_query": "assoc.lm.masked.words",
    "fill_mask_token": "assoc.lm.masked.words",
    "pseudo_log_likelihoods": "assoc.lm.masked.pll",
    "SentencePLL": "assoc.lm.masked.pll",
    "TokenLogProb": "assoc.lm.masked.pll",
    "PLL_METRICS": "assoc.lm.masked.pll:METRICS",
    "PLL_TOKEN_SELECTIONS": "assoc.lm.masked.pll:TOKEN_SELECTIONS",
    # the causal-LM engine
    "CausalLM": "assoc.lm.causal.engine",
    "CausalRequest": "assoc.lm.causal.requests",
    "load_causal_lm": "assoc.lm.causal.loading",
    "cached_causal_lm": "assoc.lm.causal.loading",
    "release_causal_lms": "assoc.lm.causal.loading",
    "BOS_POLICIES": "assoc.lm.causal.text",
    "BOS_OPTION": "assoc.lm.causal.kind",
    "SentencePlan": "assoc.lm.causal.text",
    "plan_sentence": "assoc.lm.causal.text",
    "special_tokens": "assoc.lm.causal.text",
}

#: Names this module no longer has, and what replaced them (one line when a plugin still asks for one).
_REMOVED = {
    "MaskedLMScorer": "LMScorer (with model_kinds=('masked',); run_unit's work goes in score_items(model, items, "
    "checkpoints), the engine is model.engine)",
    "MaskedLMWorker": "LMWorker (its model is a LanguageModel; a masked LM's engine is model.engine)",
    "MAX_TOKENS_OPTION": "the batch_tokens option, part of MODEL_OPTIONS (max_tokens is accepted as its former name)",
}

__all__ = [
    "BOS_OPTION",
    "BOS_POLICIES",
    "CausalLM",
    "CausalLanguageModel",
    "CausalRequest",
    "Choice",
    "ChoiceByLikelihood",
    "ChoiceRequest",
    "ContinuationRequest",
    "DTYPES",
    "ENDPOINT_OPTIONS",
    "GenerateRequest",
    "LMScorer",
    "LMWorker",
    "LanguageModel",
    "LogProb",
    "MODEL_OPTIONS",
    "MaskRequest",
    "MaskedLM",
    "MaskedLanguageModel",
    "PLL_METRICS",
    "PLL_TOKEN_SELECTIONS",
    "REQUEST_KINDS",
    "Reply",
    "RequestKindError",
    "SentencePLL",
    "SentencePlan",
    "SentenceRequest",
    "TokenLogProb",
    "WordTokens",
    "cached_causal_lm",
    "cached_export",
    "cached_log_probs",
    "cached_masked_lm",
    "chain_steps",
    "check_hub_reachable",
    "check_model",
    "check_onnx_installed",
    "decode_items",
    "default_batch_tokens",
    "export_module",
    "fill_mask_token",
    "hub_fingerprint",
    "inference_session",
    "load_causal_lm",
    "load_masked_lm",
    "load_pretrained",
    "loaded_masked_lms",
    "local_fingerprint",
    "looks_like_path",
    "masked_query",
    "model_fingerprint",
    "model_namespace",
    "open_model",
    "options_for",
    "plan_batches",
    "plan_sentence",
    "pseudo_log_likelihoods",
    "refuse",
    "requests_of_kind",
    "release_causal_lms",
    "release_masked_lms",
    "resolve_device",
    "special_tokens",
    "split_query",
    "token_log_probs",
    "torch_dtype",
    "weights_fingerprint",
    "word_tokens",
    "word_tokens_batch",
    "word_tokens_many",
]

_getattr, __dir__ = _lazy_names(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    if name in _REMOVED:
        raise AttributeError(
            f"assoc.lm.{name} was removed when the language-model layer became one (docs/plugin-api.md); "
            f"use {_REMOVED[name]}"
        )
    return _getattr(name)


if TYPE_CHECKING:  # pragma: no cover
    from assoc.lm.batching import default_batch_tokens, plan_batches
    from assoc.lm.causal.engine import CausalLM
    from assoc.lm.causal.kind import BOS_OPTION, CausalLanguageModel
    from assoc.lm.causal.loading import cached_causal_lm, load_causal_lm, release_causal_lms
    from assoc.lm.causal.requests import CausalRequest
    from assoc.lm.causal.text import BOS_POLICIES, SentencePlan, plan_sentence, special_tokens
    from assoc.lm.compute import cached_log_probs, model_namespace, token_log_probs
    from assoc.lm.hub import check_hub_reachable
    from assoc.lm.identity import (
        DTYPES,
        hub_fingerprint,
        local_fingerprint,
        looks_like_path,
        model_fingerprint,
        resolve_device,
        torch_dtype,
    )
    from assoc.lm.kinds import ChoiceByLikelihood, LanguageModel, RequestKindError, refuse
    from assoc.lm.loading import check_model, load_pretrained, open_model
    from assoc.lm.masked.engine import MaskedLM
    from assoc.lm.masked.kind import MaskedLanguageModel
    from assoc.lm.masked.loading import cached_masked_lm, load_masked_lm, loaded_masked_lms, release_masked_lms
    from assoc.lm.masked.pll import METRICS as PLL_METRICS
    from assoc.lm.masked.pll import TOKEN_SELECTIONS as PLL_TOKEN_SELECTIONS
    from assoc.lm.masked.pll import SentencePLL, TokenLogProb, pseudo_log_likelihoods
    from assoc.lm.masked.requests import MaskRequest
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
    from assoc.lm.onnx import cached_export, export_module, inference_session
    from assoc.lm.onnx import check_installed as check_onnx_installed
    from assoc.lm.options import ENDPOINT_OPTIONS, MODEL_OPTIONS, options_for
    from assoc.lm.requests import (
        REQUEST_KINDS,
        Choice,
        ChoiceRequest,
        ContinuationRequest,
        GenerateRequest,
        LogProb,
        Reply,
        SentenceRequest,
        requests_of_kind,
    )
    from assoc.lm.scorer import LMScorer, LMWorker, decode_items
    from assoc.models.memory import fingerprint as weights_fingerprint

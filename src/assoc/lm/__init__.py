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

* The causal-LM engine of the clm scorer (:mod:`assoc.lm.causal`), beside the masked one on the
  same loading helpers: :class:`CausalLM`, :class:`CausalRequest`, :func:`load_causal_lm`,
  :func:`cached_causal_lm`, :func:`release_causal_lms`, and the BOS policy and sentence split
  (:data:`BOS_POLICIES`, :func:`special_tokens`, :func:`plan_sentence`, :class:`SentencePlan`).
  Its requests go through the same :func:`cached_log_probs` loop as the masked engine's.

* The engine of requests to a model behind an HTTP endpoint (:mod:`assoc.lm.remote`), shared by every
  remote kind: :func:`run_requests` (bounded concurrency, rate limits, retries with backoff, timeouts,
  redaction), the :class:`ResponseStore` (written on arrival, resumed), the
  chat-completions protocol (:class:`ChatRequest`, :data:`CHAT_COMPLETIONS`), endpoint and credential
  helpers, and :data:`ENDPOINT_OPTIONS`.
* The chat model kind (:mod:`assoc.lm.chat`): :class:`ChatModel` (``generate`` and ``choice``; the
  ``openai`` and ``transformers`` providers), the one way chat requests get their replies
  (:func:`open_chat_runtime`, :func:`plan_chat_requests`, :func:`fetch_chat_replies`), the reply
  readers (:func:`chat_reply`, :func:`match_reply`, :func:`match_authors`, :func:`read_choice`,
  :data:`REFUSAL_PATTERNS`) and what a run sent (:class:`ChatSending`).

Importing this module is cheap: nothing loads until a name is used, and torch and transformers
only when a model is loaded.
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
    "CausalLM": "assoc.lm.causal.engine",
    "CausalRequest": "assoc.lm.causal.requests",
    "load_causal_lm": "assoc.lm.causal.loading",
    "cached_causal_lm": "assoc.lm.causal.loading",
    "release_causal_lms": "assoc.lm.causal.loading",
    "BOS_POLICIES": "assoc.lm.causal.text",
    "SentencePlan": "assoc.lm.causal.text",
    "plan_sentence": "assoc.lm.causal.text",
    "special_tokens": "assoc.lm.causal.text",
    "EngineSettings": "assoc.lm.remote.engine",
    "SendReport": "assoc.lm.remote.engine",
    "run_requests": "assoc.lm.remote.engine",
    "ResponseStore": "assoc.lm.remote.store",
    "ChatRequest": "assoc.lm.remote.chat_completions",
    "ChatServiceError": "assoc.lm.remote.chat_completions",
    "CHAT_COMPLETIONS": "assoc.lm.remote.chat_completions",
    "reply_text": "assoc.lm.remote.chat_completions",
    "model_refusal": "assoc.lm.remote.chat_completions",
    "public_endpoint": "assoc.lm.remote.urls",
    "safe_url": "assoc.lm.remote.urls",
    "resolve_base_url": "assoc.lm.remote.urls",
    "ENDPOINT_OPTIONS": "assoc.lm.remote.options",
    "ChatModel": "assoc.lm.chat.model",
    "Reply": "assoc.lm.requests",
    "CHAT_OPTIONS": "assoc.lm.chat.options",
    "PROVIDER_OPTION": "assoc.lm.chat.options",
    "GENERATION_OPTIONS": "assoc.lm.chat.options",
    "LOCAL_CHAT_OPTIONS": "assoc.lm.chat.options:LOCAL_OPTIONS",
    "RESPONSE_CACHE_OPTIONS": "assoc.lm.chat.options",
    "ChatRuntime": "assoc.lm.chat.runtime",
    "open_chat_runtime": "assoc.lm.chat.runtime:open_runtime",
    "plan_chat_requests": "assoc.lm.chat.runtime:plan",
    "fetch_chat_replies": "assoc.lm.chat.runtime:fetch",
    "chat_reply": "assoc.lm.chat.replies:reply_of",
    "ChatSending": "assoc.lm.chat.replies:Sending",
    "ChatRefusalWarning": "assoc.lm.chat.replies",
    "ChatReplyWarning": "assoc.lm.chat.replies",
    "REFUSAL_PATTERNS": "assoc.lm.chat.patterns",
    "compile_patterns": "assoc.lm.chat.patterns",
    "refusal_matchers": "assoc.lm.chat.patterns",
    "check_patterns": "assoc.lm.chat.patterns",
    "ChoiceMatch": "assoc.lm.chat.choice",
    "match_reply": "assoc.lm.chat.choice",
    "match_authors": "assoc.lm.chat.choice",
    "read_choice": "assoc.lm.chat.choice",
}

__all__ = [
    "BOS_POLICIES",
    "CHAT_COMPLETIONS",
    "CHAT_OPTIONS",
    "CausalLM",
    "CausalRequest",
    "ChatModel",
    "ChatRefusalWarning",
    "ChatReplyWarning",
    "ChatRequest",
    "ChatRuntime",
    "ChatSending",
    "ChatServiceError",
    "ChoiceMatch",
    "DTYPES",
    "ENDPOINT_OPTIONS",
    "EngineSettings",
    "GENERATION_OPTIONS",
    "LOCAL_CHAT_OPTIONS",
    "MAX_TOKENS_OPTION",
    "MODEL_OPTIONS",
    "MaskRequest",
    "MaskedLM",
    "MaskedLMScorer",
    "MaskedLMWorker",
    "PROVIDER_OPTION",
    "REFUSAL_PATTERNS",
    "RESPONSE_CACHE_OPTIONS",
    "Reply",
    "ResponseStore",
    "SendReport",
    "SentencePlan",
    "WordTokens",
    "cached_causal_lm",
    "cached_export",
    "cached_log_probs",
    "cached_masked_lm",
    "chain_steps",
    "chat_reply",
    "check_hub_reachable",
    "check_onnx_installed",
    "check_patterns",
    "compile_patterns",
    "decode_items",
    "export_module",
    "fetch_chat_replies",
    "fill_mask_token",
    "hub_fingerprint",
    "inference_session",
    "load_causal_lm",
    "load_masked_lm",
    "loaded_masked_lms",
    "local_fingerprint",
    "looks_like_path",
    "masked_query",
    "match_authors",
    "match_reply",
    "model_fingerprint",
    "model_namespace",
    "model_refusal",
    "open_chat_runtime",
    "plan_chat_requests",
    "plan_sentence",
    "public_endpoint",
    "read_choice",
    "refusal_matchers",
    "release_causal_lms",
    "release_masked_lms",
    "reply_text",
    "resolve_base_url",
    "resolve_device",
    "run_requests",
    "safe_url",
    "special_tokens",
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
    from assoc.lm.causal.engine import CausalLM
    from assoc.lm.causal.loading import cached_causal_lm, load_causal_lm, release_causal_lms
    from assoc.lm.causal.requests import CausalRequest
    from assoc.lm.causal.text import BOS_POLICIES, SentencePlan, plan_sentence, special_tokens
    from assoc.lm.chat.choice import ChoiceMatch, match_authors, match_reply, read_choice
    from assoc.lm.chat.model import ChatModel
    from assoc.lm.chat.options import (
        CHAT_OPTIONS,
        GENERATION_OPTIONS,
        PROVIDER_OPTION,
        RESPONSE_CACHE_OPTIONS,
    )
    from assoc.lm.chat.options import LOCAL_OPTIONS as LOCAL_CHAT_OPTIONS
    from assoc.lm.chat.patterns import REFUSAL_PATTERNS, check_patterns, compile_patterns, refusal_matchers
    from assoc.lm.chat.replies import ChatRefusalWarning, ChatReplyWarning
    from assoc.lm.chat.replies import Sending as ChatSending
    from assoc.lm.chat.replies import reply_of as chat_reply
    from assoc.lm.chat.runtime import ChatRuntime
    from assoc.lm.chat.runtime import fetch as fetch_chat_replies
    from assoc.lm.chat.runtime import open_runtime as open_chat_runtime
    from assoc.lm.chat.runtime import plan as plan_chat_requests
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
    from assoc.lm.remote.chat_completions import (
        CHAT_COMPLETIONS,
        ChatRequest,
        ChatServiceError,
        model_refusal,
        reply_text,
    )
    from assoc.lm.remote.engine import EngineSettings, SendReport, run_requests
    from assoc.lm.remote.options import ENDPOINT_OPTIONS
    from assoc.lm.remote.store import ResponseStore
    from assoc.lm.remote.urls import public_endpoint, resolve_base_url, safe_url
    from assoc.lm.requests import Reply
    from assoc.scoring.models import fingerprint as weights_fingerprint

"""Language-model services for plugins: one of the three service modules of the plugin API.

A plugin that runs a language model imports from here (``from assoc.lm import LMScorer``), never from
the modules below, which may move (:doc:`the plugin API <plugin-api>`). The layer, top to bottom:

* **Requests and model kinds** (:mod:`assoc.lm.requests`, :mod:`assoc.lm.kinds`): what a scorer asks of
  a model (``continuation``, ``sentence``, ``choice``, ``generate``, ``embedding``: :class:`ContinuationRequest`,
  :class:`SentenceRequest`, :class:`ChoiceRequest`, :class:`GenerateRequest`, :class:`EmbeddingRequest` and
  their answers :class:`LogProb`, :class:`Choice`, :class:`Reply`, :class:`Embedding`; the poolings
  :data:`POOLINGS`) and the kinds of model that answer
  (:class:`LanguageModel`, :class:`ChoiceByLikelihood`; the core's :class:`MaskedLanguageModel`,
  :class:`CausalLanguageModel`, :class:`ChatModel` and :class:`ServerLanguageModel`; plugins register more with the
  ``register_model_kinds`` hook).
* **The one loader** (:mod:`assoc.lm.loading`): :func:`open_model` (kind resolved from the spec's
  prefix, else the model's ``config.json``, else the scorer's default; checks before any work), and
  :func:`check_model`, its first half; :func:`registered_kinds`, the kinds the core and the plugins registered.
* **The scorer base** (:mod:`assoc.lm.scorer`): :class:`LMScorer` (work units, the one loader, the model
  options, checkpoints and resume) and its worker :class:`LMWorker`; the options :data:`MODEL_OPTIONS`,
  :data:`ENDPOINT_OPTIONS` and :func:`options_for`.
* **Shared pieces** every engine uses: device, dtype and fingerprints (:func:`resolve_device`,
  :func:`torch_dtype`, :data:`DTYPES`, :func:`looks_like_path`, :func:`model_fingerprint`,
  :func:`local_fingerprint`, :func:`hub_fingerprint`, :func:`weights_fingerprint`), the Hub check
  (:func:`check_hub_reachable`), token-budget batching (:func:`plan_batches`,
  :func:`default_batch_tokens`, :func:`max_length`), the cached log-probability loop (:func:`cached_log_probs`,
  :func:`token_log_probs`, :func:`model_namespace`), embeddings in context from hidden states
  (:func:`hidden_state_embeddings`, :func:`cached_embeddings`, :func:`check_layers`,
  :func:`n_hidden_layers`), ONNX exports and sessions
  (:func:`check_onnx_installed`, :func:`cached_export`, :func:`export_module`, :func:`inference_session`), and
  the per-process cache of loaded models every engine keeps its weights in (:data:`MODEL_CACHE`).
* **The local engines**, siblings on those pieces: the masked-LM engine (:class:`MaskedLM`,
  :class:`MaskRequest`, :func:`load_masked_lm`, :func:`cached_masked_lm`, the word-piece helpers, and
  the pseudo-log-likelihood :func:`pseudo_log_likelihoods`) and the causal-LM engine (:class:`CausalLM`,
  :class:`CausalRequest`, :func:`load_causal_lm`, :func:`cached_causal_lm`, the BOS policy and the
  context/continuation split :func:`plan_sentence`).
* **Remote models** (:mod:`assoc.lm.remote`): the engine of requests to a model behind an HTTP endpoint
  (:func:`run_requests`: bounded concurrency, rate limits, retries with backoff, timeouts, redaction),
  the :class:`ResponseStore` (written on arrival, resumed), the chat-completions protocol
  (:class:`ChatRequest`, :data:`CHAT_COMPLETIONS`) and the endpoint helpers; and the chat model kind
  (:mod:`assoc.lm.chat`): :class:`ChatModel` (a bare name is a chat model's spec: :func:`chat_spec`,
  :func:`chat_model_name`), the one way chat requests get their replies
  (:func:`open_chat_runtime`, :func:`plan_chat_requests`, :func:`fetch_chat_replies`), the reply
  readers (:func:`chat_reply`, :func:`match_reply`, :func:`match_authors`, :func:`read_choice`,
  :data:`REFUSAL_PATTERNS`) and what a run sent (:class:`ChatSending`); and the inference-server kind
  (:mod:`assoc.lm.server`): :class:`ServerLanguageModel` (``server:<model>``) on its engine
  :class:`ServedLM` (the causal engine's shape: the same token ids, sent as :class:`CompletionRequest`
  s), its options :data:`SERVER_OPTIONS`, and the causal requests it shares with the causal kind
  (:class:`CausalRequests`).

Importing this module is cheap: nothing loads until a name is used, and torch and transformers only
when a model is loaded. Names removed with the layer (``MaskedLMScorer``, ``MaskedLMWorker``,
``MAX_TOKENS_OPTION``) are an ``AttributeError`` that names their replacement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.infra.importhooks import public_face as _public_face

# The public names, each declared once by its import (`name as name`: what mypy and IDEs read),
# imported on first use; __all__ lists them (assoc.infra.importhooks.public_face).
if TYPE_CHECKING:  # pragma: no cover
    from assoc.lm.batching import default_batch_tokens as default_batch_tokens
    from assoc.lm.batching import max_length as max_length
    from assoc.lm.batching import plan_batches as plan_batches
    from assoc.lm.causal.engine import CausalLM as CausalLM
    from assoc.lm.causal.kind import BOS_OPTION as BOS_OPTION
    from assoc.lm.causal.kind import CausalLanguageModel as CausalLanguageModel
    from assoc.lm.causal.kind import CausalRequests as CausalRequests
    from assoc.lm.causal.loading import cached_causal_lm as cached_causal_lm
    from assoc.lm.causal.loading import load_causal_lm as load_causal_lm
    from assoc.lm.causal.loading import release_causal_lms as release_causal_lms
    from assoc.lm.causal.requests import CausalRequest as CausalRequest
    from assoc.lm.causal.text import BOS_POLICIES as BOS_POLICIES
    from assoc.lm.causal.text import SentencePlan as SentencePlan
    from assoc.lm.causal.text import plan_sentence as plan_sentence
    from assoc.lm.causal.text import special_tokens as special_tokens
    from assoc.lm.chat.choice import ChoiceMatch as ChoiceMatch
    from assoc.lm.chat.choice import match_authors as match_authors
    from assoc.lm.chat.choice import match_reply as match_reply
    from assoc.lm.chat.choice import read_choice as read_choice
    from assoc.lm.chat.model import ChatModel as ChatModel
    from assoc.lm.chat.model import chat_spec as chat_spec
    from assoc.lm.chat.model import model_name as chat_model_name  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.options import CHAT_OPTIONS as CHAT_OPTIONS
    from assoc.lm.chat.options import GENERATION_OPTIONS as GENERATION_OPTIONS
    from assoc.lm.chat.options import LOCAL_OPTIONS as LOCAL_CHAT_OPTIONS  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.options import PROVIDER_OPTION as PROVIDER_OPTION
    from assoc.lm.chat.options import RESPONSE_CACHE_OPTIONS as RESPONSE_CACHE_OPTIONS
    from assoc.lm.chat.patterns import REFUSAL_PATTERNS as REFUSAL_PATTERNS
    from assoc.lm.chat.patterns import check_patterns as check_patterns
    from assoc.lm.chat.patterns import compile_patterns as compile_patterns
    from assoc.lm.chat.patterns import refusal_matchers as refusal_matchers
    from assoc.lm.chat.replies import ChatRefusalWarning as ChatRefusalWarning
    from assoc.lm.chat.replies import ChatReplyWarning as ChatReplyWarning
    from assoc.lm.chat.replies import Sending as ChatSending  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.replies import reply_of as chat_reply  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.runtime import ChatRuntime as ChatRuntime
    from assoc.lm.chat.runtime import fetch as fetch_chat_replies  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.runtime import open_runtime as open_chat_runtime  # noqa: F401 (re-exported under this name)
    from assoc.lm.chat.runtime import plan as plan_chat_requests  # noqa: F401 (re-exported under this name)
    from assoc.lm.compute import cached_log_probs as cached_log_probs
    from assoc.lm.compute import model_namespace as model_namespace
    from assoc.lm.compute import token_log_probs as token_log_probs
    from assoc.lm.embedding import cached_embeddings as cached_embeddings
    from assoc.lm.embedding import check_layers as check_layers
    from assoc.lm.embedding import hidden_state_embeddings as hidden_state_embeddings
    from assoc.lm.embedding import n_hidden_layers as n_hidden_layers
    from assoc.lm.hub import check_hub_reachable as check_hub_reachable
    from assoc.lm.identity import DTYPES as DTYPES
    from assoc.lm.identity import hub_fingerprint as hub_fingerprint
    from assoc.lm.identity import local_fingerprint as local_fingerprint
    from assoc.lm.identity import looks_like_path as looks_like_path
    from assoc.lm.identity import model_fingerprint as model_fingerprint
    from assoc.lm.identity import resolve_device as resolve_device
    from assoc.lm.identity import torch_dtype as torch_dtype
    from assoc.lm.kinds import ChoiceByLikelihood as ChoiceByLikelihood
    from assoc.lm.kinds import LanguageModel as LanguageModel
    from assoc.lm.kinds import RequestKindError as RequestKindError
    from assoc.lm.kinds import refuse as refuse
    from assoc.lm.loading import check_model as check_model
    from assoc.lm.loading import load_pretrained as load_pretrained
    from assoc.lm.loading import open_model as open_model
    from assoc.lm.loading import registered_kinds as registered_kinds
    from assoc.lm.masked.engine import MaskedLM as MaskedLM
    from assoc.lm.masked.kind import MaskedLanguageModel as MaskedLanguageModel
    from assoc.lm.masked.loading import cached_masked_lm as cached_masked_lm
    from assoc.lm.masked.loading import load_masked_lm as load_masked_lm
    from assoc.lm.masked.loading import loaded_masked_lms as loaded_masked_lms
    from assoc.lm.masked.loading import release_masked_lms as release_masked_lms
    from assoc.lm.masked.pll import METRICS as PLL_METRICS  # noqa: F401 (re-exported under this name)
    from assoc.lm.masked.pll import TOKEN_SELECTIONS as PLL_TOKEN_SELECTIONS  # noqa: F401 (re-exported under this name)
    from assoc.lm.masked.pll import SentencePLL as SentencePLL
    from assoc.lm.masked.pll import TokenLogProb as TokenLogProb
    from assoc.lm.masked.pll import pseudo_log_likelihoods as pseudo_log_likelihoods
    from assoc.lm.masked.requests import MaskRequest as MaskRequest
    from assoc.lm.masked.words import WordTokens as WordTokens
    from assoc.lm.masked.words import chain_steps as chain_steps
    from assoc.lm.masked.words import fill_mask_token as fill_mask_token
    from assoc.lm.masked.words import masked_query as masked_query
    from assoc.lm.masked.words import split_query as split_query
    from assoc.lm.masked.words import word_tokens as word_tokens
    from assoc.lm.masked.words import word_tokens_batch as word_tokens_batch
    from assoc.lm.masked.words import word_tokens_many as word_tokens_many
    from assoc.lm.model_cache import MODEL_CACHE as MODEL_CACHE
    from assoc.lm.onnx import cached_export as cached_export
    from assoc.lm.onnx import check_installed as check_onnx_installed  # noqa: F401 (re-exported under this name)
    from assoc.lm.onnx import export_module as export_module
    from assoc.lm.onnx import inference_session as inference_session
    from assoc.lm.options import MODEL_OPTIONS as MODEL_OPTIONS
    from assoc.lm.options import options_for as options_for
    from assoc.lm.remote.chat_completions import CHAT_COMPLETIONS as CHAT_COMPLETIONS
    from assoc.lm.remote.chat_completions import ChatRequest as ChatRequest
    from assoc.lm.remote.chat_completions import ChatServiceError as ChatServiceError
    from assoc.lm.remote.chat_completions import model_refusal as model_refusal
    from assoc.lm.remote.chat_completions import reply_text as reply_text
    from assoc.lm.remote.engine import EngineSettings as EngineSettings
    from assoc.lm.remote.engine import SendReport as SendReport
    from assoc.lm.remote.engine import run_requests as run_requests
    from assoc.lm.remote.options import ENDPOINT_OPTIONS as ENDPOINT_OPTIONS
    from assoc.lm.remote.store import ResponseStore as ResponseStore
    from assoc.lm.remote.urls import public_endpoint as public_endpoint
    from assoc.lm.remote.urls import resolve_base_url as resolve_base_url
    from assoc.lm.remote.urls import safe_url as safe_url
    from assoc.lm.requests import POOLINGS as POOLINGS
    from assoc.lm.requests import REQUEST_KINDS as REQUEST_KINDS
    from assoc.lm.requests import SPAN_POOLINGS as SPAN_POOLINGS
    from assoc.lm.requests import Choice as Choice
    from assoc.lm.requests import ChoiceRequest as ChoiceRequest
    from assoc.lm.requests import ContinuationRequest as ContinuationRequest
    from assoc.lm.requests import Embedding as Embedding
    from assoc.lm.requests import EmbeddingRequest as EmbeddingRequest
    from assoc.lm.requests import GenerateRequest as GenerateRequest
    from assoc.lm.requests import LogProb as LogProb
    from assoc.lm.requests import Reply as Reply
    from assoc.lm.requests import SentenceRequest as SentenceRequest
    from assoc.lm.requests import requests_of_kind as requests_of_kind
    from assoc.lm.requests import shown_text as shown_text
    from assoc.lm.scorer import LMScorer as LMScorer
    from assoc.lm.scorer import LMWorker as LMWorker
    from assoc.lm.scorer import decode_items as decode_items
    from assoc.lm.server.engine import ServedLM as ServedLM
    from assoc.lm.server.kind import ServerLanguageModel as ServerLanguageModel
    from assoc.lm.server.options import SERVER_OPTIONS as SERVER_OPTIONS
    from assoc.lm.server.protocol import CompletionRequest as CompletionRequest
    from assoc.lm.server.protocol import CompletionServiceError as CompletionServiceError
    from assoc.lm.statuses import STATUS_COLUMN as STATUS_COLUMN
    from assoc.lm.statuses import settle_statuses as settle_statuses
    from assoc.lm.statuses import too_long_reason as too_long_reason
    from assoc.lm.statuses import without_value as without_value
    from assoc.models.memory import fingerprint as weights_fingerprint  # noqa: F401 (re-exported under this name)


#: Names this module no longer has, and what replaced them (one line when a plugin still asks for one).
_REMOVED = {
    "MaskedLMScorer": "LMScorer (with model_kinds=('masked',); run_unit's work goes in score_items(model, items, "
    "checkpoints), the engine is model.engine)",
    "MaskedLMWorker": "LMWorker (its model is a LanguageModel; a masked LM's engine is model.engine)",
    "MAX_TOKENS_OPTION": "the batch_tokens option, part of MODEL_OPTIONS (max_tokens is accepted as its former name)",
}

__getattr__, __dir__ = _public_face(globals())
_face_getattr = __getattr__


def __getattr__(name: str) -> Any:  # type: ignore[no-redef]  # noqa: F811 - the removed names, then the face
    if name in _REMOVED:
        raise AttributeError(
            f"assoc.lm.{name} was removed when the language-model layer became one (docs/plugin-api.md); "
            f"use {_REMOVED[name]}"
        )
    return _face_getattr(name)

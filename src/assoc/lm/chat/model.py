"""The chat model kind: a chat model that answers ``generate`` and ``choice`` requests (``chat:<model>``).

:class:`ChatModel` is opened by :meth:`ChatModel.open` (the one loader calls it through
:meth:`assoc.lm.kinds.LanguageModel.open`) from a spec (``chat:gpt-4o-mini``, or a bare name a chat
scorer was given) and the options of :data:`~assoc.lm.chat.options.CHAT_OPTIONS`; ``provider``
chooses the runtime (:mod:`assoc.lm.chat.runtime`). Every reply is stored the moment it arrives in
the response store (:class:`~assoc.lm.remote.store.ResponseStore`): a request already stored is
never sent again, so a killed run resumes with zero requests re-sent for what it had, and the store
is the kind's checkpoint (the ``checkpoints`` namespace of the request methods is not needed).

* ``generate``: a :class:`~assoc.lm.requests.Reply` per :class:`~assoc.lm.requests.GenerateRequest`
  (its messages, sampling parameters and sample index make the request and its cache key).
* ``choice``: the request's chat form (``messages``) is sent with the kind's sampling options and
  the reply is read as an option (:func:`assoc.lm.chat.choice.read_choice`: by label or option
  text; refusals, unparsed, ambiguous and truncated replies keep their status and reason, never a
  guess); with ``choice_measure="top_logprobs"``, the option whose label is the most likely first
  reply token instead (:mod:`assoc.lm.chat.top_logprobs`; refused in one line where the endpoint
  gives no top log-probabilities).

What was sent is kept per handle (:attr:`ChatModel.sending`, :meth:`ChatModel.report`): requests,
from the cache, attempts, retries by reason, failed requests, token usage per model and the
servers' system fingerprints, so a run report can be built per unit.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.errors import ModelError, OptionError
from assoc.lm.chat.choice import read_choice
from assoc.lm.chat.options import CHAT_OPTIONS, PROVIDERS
from assoc.lm.chat.patterns import refusal_matchers
from assoc.lm.chat.replies import ChatReplyWarning, Sending, failed_reply, reply_of
from assoc.lm.chat.runtime import ChatRuntime, fetch, open_runtime, plan
from assoc.lm.chat.top_logprobs import check_labels, choice_from_top_logprobs, top_logprobs_params
from assoc.lm.identity import looks_like_path
from assoc.lm.kinds import LanguageModel
from assoc.lm.remote.chat_completions import ChatRequest
from assoc.lm.remote.store import ResponseStore
from assoc.lm.remote.urls import resolve_base_url
from assoc.lm.requests import Choice, ChoiceRequest, GenerateRequest, Reply, requests_of_kind
from assoc.models.names import strip_prefix

if TYPE_CHECKING:
    from assoc.components.options import Option
    from assoc.infra.cache import Cache, Namespace

_DEFAULTS = {option.name: option.default for option in CHAT_OPTIONS}


def _option(options: Mapping[str, Any], name: str) -> Any:
    return options.get(name, _DEFAULTS[name])


def model_name(spec: str) -> str:
    """The model's name in ``spec``: without the ``chat:`` prefix (or another kind's), surrounding spaces dropped."""
    spec = spec.strip()
    return spec[len("chat:") :].strip() if spec.startswith("chat:") else strip_prefix(spec).strip()


def chat_spec(spec: str) -> str:
    """``spec`` as the chat kind reads it: ``chat:<spec>`` unless its prefix names a registered model kind.

    So a bare name (``gpt-4o-mini``), a local folder and an Ollama tag such as ``qwen2:7b`` (whose
    ``qwen2:`` names no kind) are chat models, as a chat scorer has always read them; ``chat:x`` stays
    as it is, and so does another kind's ``server:x`` (which a scorer that takes chat models refuses).
    """
    from assoc.lm.loading import registered_kinds
    from assoc.models.names import spec_prefix

    prefix = spec_prefix(spec.strip())
    if prefix is not None and prefix in {cls.prefix for cls in registered_kinds().values() if cls.prefix}:
        return spec
    return f"chat:{spec}"


class ChatModel(LanguageModel):
    """A chat model behind an OpenAI-compatible endpoint or loaded locally (module docstring).

    Attributes
    ----------
    name:
        The spec as given (``chat:gpt-4o-mini``).
    model:
        The model's name as the endpoint knows it (the spec without its prefix), or its folder / Hub id.
    fingerprint:
        ``openai:<endpoint>:<model>`` (the endpoint as in every cache key, no credentials), or
        ``transformers:<fingerprint of the weights>``.
    sending:
        What this handle's requests cost (:class:`~assoc.lm.chat.replies.Sending`).
    """

    kind: ClassVar[str] = "chat"
    prefix: ClassVar[str | None] = "chat"
    serves: ClassVar[frozenset[str]] = frozenset({"generate", "choice"})
    options: ClassVar[tuple[Option, ...]] = CHAT_OPTIONS
    description: ClassVar[str] = (
        "a chat model: the OpenAI API or any OpenAI-compatible server (provider=openai), or a local "
        "Hugging Face chat model (provider=transformers); every reply stored on arrival, runs resumed"
    )

    def __init__(self, spec: str, runtime: ChatRuntime, store: ResponseStore, options: Mapping[str, Any]):
        self.name = spec
        self.model = model_name(spec)
        self.runtime = runtime
        self.store = store
        self.settings = dict(options)
        self.fingerprint = runtime.identity(self.model)
        self.sending = Sending()

    # -- the kind, before anything is opened ---------------------------------------------------------
    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """Refuse, in one line, an empty model name, an unknown provider, a bad base URL or a missing folder."""
        model = model_name(spec)
        if not model:
            raise ModelError(f"chat model {spec!r}: no model name after the prefix; write chat:<model>")
        provider = _option(options, "provider")
        if provider not in PROVIDERS:
            raise OptionError(f"unknown chat provider {provider!r}; use one of {', '.join(PROVIDERS)}")
        backend = options.get("backend") or "torch"
        if backend != "torch":
            raise OptionError(
                f"chat model {spec!r}: backend {backend!r} runs masked LMs only; a chat model answers at its "
                "endpoint or runs on PyTorch (provider=transformers): set backend='torch'"
            )
        if provider == "openai":
            resolve_base_url(_option(options, "base_url"))
            return
        if not Path(model).expanduser().is_dir() and looks_like_path(model):
            raise ModelError(f"model directory {model!r} does not exist")
        # the local model opens through the one loader as a causal LM: its checks, before any work
        from assoc.lm.loading import check_model

        try:
            check_model(model, options, kinds=["causal"])
        except ModelError as exc:
            raise type(exc)(f"chat model {spec!r} (provider=transformers): {exc}") from None

    @classmethod
    def identify(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> str:
        """What answers, without connecting or loading (a local folder's weights are hashed).

        :meth:`~assoc.lm.chat.runtime.ChatRuntime.identity`: the fingerprint the opened model will have.
        """
        return open_runtime(options, cache).identity(model_name(spec))

    @classmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> ChatModel:
        """Connect to (``openai``) or prepare to load (``transformers``) ``spec``'s model; nothing is sent yet.

        Responses are stored under the ``cache_dir`` option, else the run's ``cache``, else the assoc
        cache root; ``cache=false`` keeps them in memory for this handle only.
        """
        cls.check(spec, options)
        root: str | Cache | None = _option(options, "cache_dir") or cache
        enabled = bool(_option(options, "cache")) and getattr(root, "enabled", True)  # a run's cache may be off
        store = ResponseStore(root, enabled=enabled)
        return cls(spec, open_runtime(options, cache), store, options)

    # -- provenance -----------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, provider, the endpoint (without credentials), the model's name; a local model's device."""
        described = {
            "kind": self.kind,
            "fingerprint": self.fingerprint,
            "provider": self.runtime.provider,
            "endpoint": self.runtime.shown_endpoint(),
            "model": self.model,
        }
        device = getattr(self.runtime, "device", None)
        if callable(device):
            described["device"] = device()
        return described

    def close(self) -> None:
        """Close the runtime's local model, if one was opened (stored replies stay)."""
        self.runtime.close()

    def report(self) -> dict[str, Any]:
        """What this handle sent and received so far, in the run report's words (:meth:`Sending.record`)."""
        return self.sending.record(self.store.root)

    # -- requests -------------------------------------------------------------------------------------
    def request(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any],
        sample: int = 0,
        *,
        purpose: Mapping[str, Any] | None = None,
        reply_tokens: float | None = None,
    ) -> ChatRequest:
        """The chat request of this model for ``messages`` with sampling ``params`` (its cache key included).

        ``purpose`` (what the request is for, named in a failure's record) and ``reply_tokens`` (the
        tokens its reply is expected to use, for ``tokens_per_minute``) are neither sent nor keyed.
        """
        return ChatRequest(
            self.runtime.provider,
            self.runtime.endpoint(self.model),
            self.model,
            tuple(dict(m) for m in messages),
            dict(params),
            sample,
            purpose=dict(purpose or {}),
            reply_tokens=reply_tokens,
        )

    def replies(self, requests: Sequence[ChatRequest], *, progress: bool | None = False) -> list[Reply]:
        """A reply to each request (from the store, else sent and stored on arrival); one per request, in order.

        ``progress``: whether the engine's progress bar shows (``None``: as the run's ``progress`` setting).

        A request without an answer after its retries is a ``failed`` reply with the reason; a service
        that fails for good raises :class:`~assoc.lm.remote.chat_completions.ChatServiceError` (what
        arrived is stored); ``offline=true`` makes a request that is not stored an error.
        """
        planned = plan(requests, self.store)
        if planned.n_corrupt:
            warnings.warn(
                f"chat model {self.name}: {planned.n_corrupt} stored response(s) were unreadable and will be "
                "requested again",
                ChatReplyWarning,
                stacklevel=3,
            )
        report = fetch(
            planned, self.runtime, self.store, offline=bool(_option(self.settings, "offline")), progress=progress
        )
        sending = Sending(requests=len(requests), from_cache=planned.n_from_cache, report=report)
        failures = {failure["key"]: failure for failure in report.failed}
        out = []
        for request in requests:
            entry = planned.stored.get(request.key)
            if entry is None:
                out.append(failed_reply(request.key, failures.get(request.key)))
                continue
            sending.count(request.model, [entry["response"]])
            out.append(reply_of(request.key, entry))
        self.sending.add(sending)
        return out

    def generate(
        self,
        requests: Sequence[GenerateRequest],
        *,
        checkpoints: Namespace | None = None,
        progress: bool | None = False,
    ) -> list[Reply]:
        """A reply to each request's conversation (its messages, parameters and sample index)."""
        requests_of_kind(requests, "generate")
        asked = [
            self.request(r.messages, r.params, r.sample, purpose=r.purpose, reply_tokens=r.reply_tokens)
            for r in requests
        ]
        return self.replies(asked, progress=progress)

    def choose(
        self, requests: Sequence[ChoiceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Choice]:
        """The option each request's chat form gets as a reply (:func:`assoc.lm.chat.choice.read_choice`).

        Each request is its own stored reply per ``sample`` (sent with the seed + ``sample`` when a seed is set).
        """
        requests_of_kind(requests, "choice")
        for request in requests:
            if not request.messages:
                raise ModelError(
                    f"choice request {request.key!r} has no chat form (messages): a chat model answers a "
                    "question it is asked; build the request with its messages"
                )
        by_logprobs = _option(self.settings, "choice_measure") == "top_logprobs"
        extra: dict[str, Any] = {}
        if by_logprobs:  # the labels' log-probabilities as the first reply token (assoc.lm.chat.top_logprobs)
            check_labels(requests, self.name)
            extra = top_logprobs_params(_option(self.settings, "top_logprobs"))
        asked = [self.request(r.messages, {**self.sampling(r.sample), **extra}, r.sample) for r in requests]
        replies = self.replies(asked, progress=progress)
        if by_logprobs:
            return [choice_from_top_logprobs(r, reply, self.name) for r, reply in zip(requests, replies, strict=True)]
        refusal = refusal_matchers(_option(self.settings, "refusal_patterns"))
        return [read_choice(request, reply, refusal) for request, reply in zip(requests, replies, strict=True)]

    def sampling(self, sample: int = 0) -> dict[str, Any]:
        """The sampling parameters the kind sends with its own requests: temperature; max_tokens, seed when given."""
        params: dict[str, Any] = {}
        if _option(self.settings, "temperature") is not None:
            params["temperature"] = _option(self.settings, "temperature")
        if _option(self.settings, "max_tokens") is not None:
            params["max_tokens"] = _option(self.settings, "max_tokens")
        if _option(self.settings, "seed") is not None:
            params["seed"] = _option(self.settings, "seed") + sample
        return params

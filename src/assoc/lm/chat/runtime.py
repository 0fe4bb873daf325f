"""What answers chat requests (a runtime per ``provider``), and the one way a list of requests gets its answers.

:func:`open_runtime` makes the runtime of the ``provider`` option: :class:`OpenAIRuntime` (any
OpenAI-compatible endpoint, through :func:`assoc.lm.remote.engine.run_requests`) or
:class:`TransformersRuntime` (a local chat model, :mod:`assoc.lm.chat.local`). A runtime names the
endpoint every cache key of a model holds (:meth:`ChatRuntime.endpoint`) and sends what is not stored
(:meth:`ChatRuntime.send`). :func:`plan` looks requests up in the response store (identical requests
once; unreadable entries counted) and :func:`fetch` sends the rest and reads the store again: a
resumed run sends exactly the requests without a stored answer, and a finished one sends none.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from assoc.errors import OptionError
from assoc.lm.chat.options import PROVIDERS
from assoc.lm.remote.chat_completions import CHAT_COMPLETIONS, ChatRequest, ChatServiceError
from assoc.lm.remote.engine import SendReport, run_requests
from assoc.lm.remote.options import endpoint_settings
from assoc.lm.remote.store import ResponseStore
from assoc.lm.remote.urls import check_reachable, public_endpoint, read_api_key, resolve_base_url, safe_url


class ChatRuntime(ABC):
    """A provider of chat replies: the endpoint in cache keys, and how missing replies are made."""

    provider: ClassVar[str] = ""

    def __init__(self, options: Mapping[str, Any]):
        self.options = options

    @abstractmethod
    def endpoint(self, model: str) -> str:
        """The endpoint every cache key of ``model``'s requests holds (no credentials)."""

    def identity(self, model: str) -> str:
        """What answers ``model``'s requests in one string (a handle's fingerprint): provider, endpoint, model."""
        return f"{self.provider}:{self.endpoint(model)}:{model}"

    @abstractmethod
    def shown_endpoint(self) -> str:
        """The endpoint as a report shows it (no credentials)."""

    @abstractmethod
    def send(self, requests: Sequence[ChatRequest], store: ResponseStore, *, progress: bool | None) -> SendReport:
        """Make and store a reply to each of ``requests`` (none of them stored yet); what happened."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the runtime holds (a local model); the default holds nothing."""


class OpenAIRuntime(ChatRuntime):
    """The OpenAI API or any OpenAI-compatible server (vLLM, llama.cpp, Ollama, ...): ``provider=openai``.

    The base URL is the ``base_url`` option (credentials written into it are sent and never shown),
    else ``$OPENAI_BASE_URL``, else the OpenAI API; the key is read from the environment variable
    ``api_key_env`` only when something is sent.
    """

    provider = "openai"

    @property
    def base_url(self) -> str:
        """The base URL requests go to, credentials included (never store or print it: :func:`safe_url`)."""
        return resolve_base_url(self.options.get("base_url"))

    def endpoint(self, model: str) -> str:
        """The base URL without credentials or query (the same for every model of the endpoint)."""
        return public_endpoint(self.base_url)

    def shown_endpoint(self) -> str:
        """The base URL without credentials (other query parameters kept)."""
        return safe_url(self.base_url)

    def send(self, requests: Sequence[ChatRequest], store: ResponseStore, *, progress: bool | None) -> SendReport:
        """Send ``requests`` to the endpoint, concurrently, with retries; every answer stored on arrival."""
        base_url = self.base_url
        settings = endpoint_settings(
            self.options, base_url, read_api_key(base_url, self.options.get("api_key_env") or "OPENAI_API_KEY")
        )
        check_reachable(base_url, settings.connect_timeout, ChatServiceError)
        seed = self.options.get("seed") or 0
        return run_requests(requests, settings, store, route=CHAT_COMPLETIONS, progress=progress, seed=seed)


class TransformersRuntime(ChatRuntime):
    """A local Hugging Face chat model: ``provider=transformers`` (:mod:`assoc.lm.chat.local`).

    ``memo`` is the cache where a model directory's fingerprint is remembered. Each model opens once
    (through the one loader, :func:`assoc.lm.loading.open_model`) on its first requests and stays open
    until :meth:`close`. ``device`` ``auto`` is resolved once, here (:meth:`device`): CUDA when available.
    """

    provider = "transformers"

    def __init__(self, options: Mapping[str, Any], memo: Any = None):
        super().__init__(options)
        self.memo = memo
        self._device: str | None = None
        self._models: dict[str, Any] = {}

    def device(self) -> str:
        """The device the models run on: the ``device`` option with ``auto`` resolved (CUDA when available)."""
        if self._device is None:
            from assoc.lm.identity import resolve_device

            self._device = resolve_device(self.options.get("device") or "auto")
        return self._device

    def endpoint(self, model: str) -> str:
        """``transformers:<fingerprint>`` of the weights, and a dtype other than float32, a device other than the CPU.

        :func:`assoc.lm.chat.local.model_endpoint`: the replies of one model on the CPU in float32 keep
        the keys every earlier run wrote.
        """
        from assoc.lm.chat.local import model_endpoint

        return model_endpoint(
            model,
            self.memo,
            revision=self.options.get("revision"),
            dtype=self.options.get("dtype") or "float32",
            device=self.device(),
        )

    def identity(self, model: str) -> str:
        """The endpoint alone (``transformers:<fingerprint of the weights>``): it names the weights."""
        return self.endpoint(model)

    def shown_endpoint(self) -> str:
        """``local``."""
        return "local"

    def local_model(self, model: str) -> Any:
        """The opened :class:`~assoc.lm.chat.local.LocalChatModel` of ``model`` (opened on first use)."""
        if model not in self._models:
            from assoc.lm.chat.local import LocalChatModel

            self._models[model] = LocalChatModel(
                model,
                device=self.device(),
                dtype=self.options.get("dtype") or "float32",
                revision=self.options.get("revision"),
                memo=self.memo,
            )
        return self._models[model]

    def send(self, requests: Sequence[ChatRequest], store: ResponseStore, *, progress: bool | None) -> SendReport:
        """Generate the replies, one model after another, each batch stored as it finishes."""
        from assoc.lm.chat.local import run_local

        for model in dict.fromkeys(r.model for r in requests):
            run_local(
                self.local_model(model),
                [r for r in requests if r.model == model],
                store,
                batch_size=self.options.get("batch_size") or 8,
                progress=progress,
            )
        return SendReport()

    def close(self) -> None:
        """Close the models opened so far (their weights stay in the process's model cache)."""
        models, self._models = self._models, {}
        for model in models.values():
            model.close()


def open_runtime(options: Mapping[str, Any], memo: Any = None) -> ChatRuntime:
    """The runtime of ``options["provider"]`` (``openai`` when not given)."""
    provider = options.get("provider") or "openai"
    if provider == "openai":
        return OpenAIRuntime(options)
    if provider == "transformers":
        return TransformersRuntime(options, memo)
    raise OptionError(f"unknown chat provider {provider!r}; use one of {', '.join(PROVIDERS)}")


@dataclass
class Planned:
    """Requests looked up in the store: the stored entries by key, the distinct requests to send, unreadable entries."""

    requests: Sequence[ChatRequest]
    stored: dict[str, dict[str, Any]]
    missing: list[ChatRequest]
    n_corrupt: int
    report: SendReport = field(default_factory=SendReport)

    @property
    def n_from_cache(self) -> int:
        """Requests less the distinct ones to send (a duplicate of a request sent counts as from the cache)."""
        return len(self.requests) - len(self.missing)


def plan(requests: Sequence[ChatRequest], store: ResponseStore) -> Planned:
    """Look ``requests`` up in ``store``: what is stored, and each distinct request that is not (in order)."""
    stored, n_corrupt = store.lookup(requests)
    unique: dict[str, ChatRequest] = {}
    for request in requests:
        if request.key not in stored:
            unique.setdefault(request.key, request)
    return Planned(requests, stored, list(unique.values()), n_corrupt)


def fetch(
    planned: Planned, runtime: ChatRuntime, store: ResponseStore, *, offline: bool, progress: bool | None
) -> SendReport:
    """Send what ``planned`` misses (an error when ``offline``), then read the store again into ``planned.stored``."""
    missing = planned.missing
    if missing and offline:
        raise ChatServiceError(
            f"offline: {len(missing)} of {len(planned.requests)} request(s) are not stored "
            f"(e.g. {missing[0].label()}); run without offline=true to send them"
        )
    if missing:
        planned.report = runtime.send(missing, store, progress=progress)
        planned.stored, _ = store.lookup(planned.requests)
    return planned.report

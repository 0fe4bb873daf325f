"""OpenAI's chat-completions protocol: one request (:class:`ChatRequest`), and how its 200 bodies are read.

A chat request is sent as ``POST <base_url>/chat/completions`` with the body of
``chat.completions.create`` (:meth:`ChatRequest.body`); :func:`read_completion` decides whether a 200
body is an answer (stored) or not (retried, then failed); :data:`CHAT_COMPLETIONS` is the route
that :func:`assoc.lm.remote.engine.run_requests` sends it by. :func:`reply_text` and
:func:`model_refusal` read a stored answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assoc.infra.cache import digest
from assoc.lm.remote.engine import Route, ServiceError


class ChatServiceError(ServiceError):
    """The chat service failed (down after the retries, the key or the model rejected)."""


#: Tokens a chat request's reply is expected to use, for the tokens-per-minute limit, when it sends no
#: ``max_tokens`` (a listing of 50 words at four tokens a word: the chat scorers' longest usual reply).
DEFAULT_COMPLETION_TOKENS = 200


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completion request: the backend that answers it, the endpoint, and what is sent.

    ``backend`` is ``openai`` (an OpenAI-compatible endpoint) or ``transformers`` (a local model);
    ``endpoint`` the base URL without credentials (:func:`~assoc.lm.remote.urls.public_endpoint`) or
    ``transformers:<fingerprint>``; ``sample`` numbers repetitions of the same request. Scorers may
    subclass it to carry what a request is for (a term, a task): :meth:`about` names it in reports,
    :meth:`label` in messages, :meth:`expected_completion_tokens` feeds the rate limiter. Without a
    subclass, ``purpose`` is what :meth:`about` gives and ``reply_tokens`` what the reply is expected to
    use when ``params`` send no ``max_tokens``; neither is sent, compared or part of the key.
    """

    backend: str
    endpoint: str
    model: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any]
    sample: int
    purpose: Mapping[str, Any] = field(default_factory=dict, compare=False)
    reply_tokens: float | None = field(default=None, compare=False)

    @functools.cached_property
    def key(self) -> str:
        """The cache key (hex sha256): identical requests share it, anything that changes the reply changes it."""
        return digest(self.key_parts())  # computed once: the request is frozen

    def key_parts(self) -> dict[str, Any]:
        """What identifies the request: backend, endpoint, model, messages, sampling parameters, sample index."""
        return {
            "backend": self.backend,
            "endpoint": self.endpoint,
            "model": self.model,
            "messages": [dict(m) for m in self.messages],
            "params": dict(self.params),
            "sample": self.sample,
        }

    def body(self) -> dict[str, Any]:
        """The JSON body sent: the keyword arguments of ``chat.completions.create``."""
        return {"model": self.model, "messages": [dict(m) for m in self.messages], **dict(self.params)}

    def about(self) -> dict[str, Any]:
        """What the request is for (``purpose``), in the record of a failed request (between its model and sample)."""
        return dict(self.purpose)

    def label(self) -> str:
        """The request in one line of a message (its model and what it is for)."""
        return f"{self.model} / sample {self.sample}"

    def expected_completion_tokens(self) -> float:
        """Tokens the reply may use: ``max_tokens`` when sent, else ``reply_tokens``, else the default.

        The default is :data:`DEFAULT_COMPLETION_TOKENS`.
        """
        return float(self.params.get("max_tokens") or self.reply_tokens or DEFAULT_COMPLETION_TOKENS)

    def estimated_tokens(self) -> float:
        """Tokens the request is expected to use (prompt characters / 4 plus the reply's), for ``tokens_per_minute``."""
        chars = sum(len(str(m.get("content", ""))) for m in self.messages)
        return chars / 4.0 + self.expected_completion_tokens()


def reply_text(response: Mapping[str, Any]) -> str | None:
    """The assistant's text in a raw chat-completion body (``None`` when it has none)."""
    choices = response.get("choices") or []
    if not choices:
        return None
    message = choices[0].get("message") or {}
    content = message.get("content")
    return content if isinstance(content, str) else None


def finish_reason(response: Mapping[str, Any]) -> str | None:
    """The first choice's ``finish_reason`` in a raw chat-completion body (``None`` when it has none)."""
    choice = (response.get("choices") or [{}])[0]
    return choice.get("finish_reason") if isinstance(choice, Mapping) else None


def model_refusal(response: Mapping[str, Any]) -> str | None:
    """The server's own refusal: ``message.refusal`` (OpenAI), or ``finish_reason`` ``content_filter``."""
    choice = (response.get("choices") or [{}])[0]
    if not isinstance(choice, Mapping):
        return None
    message = choice.get("message") or {}
    refusal = message.get("refusal") if isinstance(message, Mapping) else None
    if isinstance(refusal, str) and refusal.strip():
        return refusal
    if choice.get("finish_reason") == "content_filter":
        return "(the server's content filter stopped the reply: finish_reason content_filter)"
    return None


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_completion(data: bytes) -> tuple[dict[str, Any] | None, str, str, bool]:
    """Read a 200 response body: ``(body, "", "", False)`` for an answer, else ``(None, reason, message, retry)``.

    An answer is a chat completion (a JSON object with a non-empty ``choices`` list whose first
    ``message`` has text), or the server's own refusal (``message.refusal``, or ``finish_reason``
    ``content_filter``). Anything else is not an answer, whatever the status said:

    * ``bad_body``: not JSON (a proxy's HTML page), or JSON that is not an object; retried;
    * ``error_body``: a JSON object with ``error`` and no ``choices`` (an error sent with status 200); retried;
    * ``not_completion``: an object without a usable ``choices[0].message``; retried;
    * ``empty``: a completion whose ``content`` is empty or white space; retried;
    * ``empty_length``: empty and cut at ``max_tokens`` (``finish_reason`` ``length``: a reasoning model
      spent every token before writing); not retried, the same request would be cut again.
    """
    try:
        body = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", "replace")
        return None, "bad_body", f"the body is not JSON: {_snippet(text) or '(empty body)'}", True
    if not isinstance(body, dict):
        return None, "bad_body", f"the body is JSON but not an object: {_snippet(str(body))}", True
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if "error" in body:
            error = body["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            return None, "error_body", f"an error object with status 200: {_snippet(str(message))}", True
        return None, "not_completion", f"not a chat completion: {_snippet(json.dumps(body)[:400])}", True
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        return None, "not_completion", "the completion's first choice has no message", True
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return body, "", "", False
    if model_refusal(body) is not None:
        return body, "", "", False
    if choice.get("finish_reason") == "length":
        return None, "empty_length", "empty reply cut at max_tokens (finish_reason length): raise max_tokens", False
    return None, "empty", f"empty reply (finish_reason {choice.get('finish_reason')!r})", True


#: How chat requests are sent: the path after the base URL, the reader of 200 bodies, the words of errors.
CHAT_COMPLETIONS = Route(path="/chat/completions", read=read_completion, service="chat service", error=ChatServiceError)

r"""The completions protocol with the prompt's log-probabilities: one request, its route, and how a reply is read.

A :class:`CompletionRequest` asks an OpenAI-compatible ``POST <base_url>/completions`` for the
log-probability of every token of several prompts, each given as **token ids** (so the server scores
exactly the tokens assoc chose: no BOS, no prefix, no re-tokenisation of its own), in one of two forms
(:data:`FORMS`):

``prompt_logprobs`` (vLLM)
    ``{"prompt": [[ids], ...], "max_tokens": 1, "temperature": 0, "prompt_logprobs": 0}``: each
    choice's ``prompt_logprobs`` holds, per prompt position, ``{token_id: {"logprob", ...}}`` (the
    first position ``null``: nothing conditions it); the one generated token is ignored. The ids are
    the dictionary's keys, so the tokens scored are read, never guessed.
``echo`` (the OpenAI legacy form, any server that echoes)
    ``{"prompt": [[ids], ...], "echo": true, "logprobs": 0, "max_tokens": 0, "temperature": 0}``
    (``max_tokens`` 1 for a server that refuses 0, the generated token then ignored): each choice's
    ``logprobs`` holds the echoed ``tokens`` and ``token_logprobs``. ``text_offset`` is never read: it
    counts characters of the joined token strings (a ``<s>`` counts 3), not of the text sent.

:func:`read_answer` decides whether a 200 body is an answer (stored, then read prompt by prompt) or
not (retried, then failed), and :func:`prompt_values` reads one prompt's values out of a stored
answer, refusing it when the server's tokens are not the ones sent (:class:`Refused`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assoc.infra.cache import digest
from assoc.lm.remote.engine import Route, ServiceError

#: How prompt log-probabilities are asked for: vLLM's ``prompt_logprobs``, or the echoed prompt.
FORMS = ("prompt_logprobs", "echo")
#: The store's space (namespace tag and journal folder) of completion responses.
SPACE = "completions"
#: What answers a completion request, in the store's namespace.
BACKEND = "completions"


class CompletionServiceError(ServiceError):
    """The completions endpoint failed (down after the retries, the key or the model rejected)."""


def request_params(form: str, echo_max_tokens: int = 0) -> dict[str, Any]:
    """The body's parameters beside the model and the prompts, for ``form`` (:data:`FORMS`)."""
    if form == "prompt_logprobs":
        # vLLM refuses max_tokens 0 without echo; the one token generated is never read
        return {"max_tokens": 1, "temperature": 0, "prompt_logprobs": 0}
    if form == "echo":
        return {"echo": True, "logprobs": 0, "max_tokens": echo_max_tokens, "temperature": 0}
    raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")


@dataclass(frozen=True)
class CompletionRequest:
    """One ``/completions`` request: several prompts (token ids) whose every token's log-probability is asked.

    ``endpoint`` is the base URL without credentials (the store's namespace); the key is made of what
    changes the answer (endpoint, model, prompts, parameters), never of a secret.
    """

    endpoint: str
    model: str
    prompts: tuple[tuple[int, ...], ...]
    params: Mapping[str, Any]
    sample: int = 0
    backend: str = BACKEND

    @functools.cached_property
    def key(self) -> str:
        """The cache key (hex sha256 of :meth:`key_parts`)."""
        return digest(self.key_parts())

    def key_parts(self) -> dict[str, Any]:
        """What identifies the request: backend, endpoint, model, prompts, parameters."""
        return {
            "backend": self.backend,
            "endpoint": self.endpoint,
            "model": self.model,
            "prompts": [list(p) for p in self.prompts],
            "params": dict(self.params),
        }

    def body(self) -> dict[str, Any]:
        """The JSON body sent: one prompt as a list of token ids, several as a list of such lists."""
        prompt: Any = list(self.prompts[0]) if len(self.prompts) == 1 else [list(p) for p in self.prompts]
        return {"model": self.model, "prompt": prompt, **dict(self.params)}

    def about(self) -> dict[str, Any]:
        """What the request is for, in the record of a failure: its number of prompts and tokens."""
        return {"prompts": len(self.prompts), "tokens": self.tokens}

    @property
    def tokens(self) -> int:
        """Prompt tokens sent."""
        return sum(len(p) for p in self.prompts)

    def label(self) -> str:
        """The request in one line of a message."""
        return f"{self.model} / {len(self.prompts)} prompt(s), {self.tokens} tokens"

    def estimated_tokens(self) -> float:
        """Tokens the request uses (the prompts, and at most one generated per prompt), for ``tokens_per_minute``."""
        return float(self.tokens + len(self.prompts))


def _snippet(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_answer(data: bytes) -> tuple[dict[str, Any] | None, str, str, bool]:
    """Read a 200 body: ``(body, "", "", False)`` for an answer, else ``(None, reason, message, retry)``.

    An answer is a JSON object with a non-empty ``choices`` list of objects; whether each prompt got
    its log-probabilities is read per prompt (:func:`prompt_values`), so a reply without them is
    stored and its prompts refused with the reason, never retried forever. Not an answer (retried up
    to ``reply_retries`` times, then the request fails): a body that is not JSON (``bad_body``), an
    error object sent with status 200 (``error_body``), an object without choices (``not_completion``).
    """
    try:
        body = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", "replace")
        return None, "bad_body", f"the body is not JSON: {_snippet(text) or '(empty body)'}", True
    if not isinstance(body, dict):
        return None, "bad_body", f"the body is JSON but not an object: {_snippet(str(body))}", True
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
        if "error" in body:
            error = body["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            return None, "error_body", f"an error object with status 200: {_snippet(str(message))}", True
        return None, "not_completion", f"not a completion: {_snippet(json.dumps(body)[:400])}", True
    return body, "", "", False


#: How completion requests are sent: the path after the base URL, the reader of 200 bodies, the words of errors.
COMPLETIONS = Route(path="/completions", read=read_answer, service="completions server", error=CompletionServiceError)


@dataclass(frozen=True)
class Refused:
    """Why a prompt has no values: ``status`` (``misaligned``, ``missing_logprobs``, ...) and a one-line reason."""

    status: str
    reason: str


def choices_by_prompt(response: Mapping[str, Any], n_prompts: int) -> list[Mapping[str, Any] | None]:
    """The choice of each prompt of a stored answer, by its ``index`` (None where the server sent none)."""
    out: list[Mapping[str, Any] | None] = [None] * n_prompts
    for position, choice in enumerate(response.get("choices") or []):
        if not isinstance(choice, Mapping):
            continue
        index = choice.get("index", position)
        if isinstance(index, int) and 0 <= index < n_prompts and out[index] is None:
            out[index] = choice
    return out


def prompt_values(
    choice: Mapping[str, Any] | None,
    sent: Sequence[int],
    form: str,
    *,
    generated: int = 0,
    decode: Callable[[Sequence[int]], str] | None = None,
) -> list[float | None] | Refused:
    """The log-probability of every token of the prompt ``sent`` (None at the first), read from its ``choice``.

    Refused (never shifted) when the server scored other tokens than those sent: another number of
    tokens (a BOS or a prefix it added, a prompt it cut), another token at a position (it re-tokenised),
    or no log-probability where one must be. ``generated``: tokens the echo form appends (``max_tokens``);
    ``decode`` turns ids into text, for servers that echo token strings rather than ids (the strings
    must then re-join to the decoded prompt).
    """
    n = len(sent)
    if choice is None:
        return Refused("missing_logprobs", "the server's answer has no choice for this prompt")
    if form == "prompt_logprobs":
        return _from_prompt_logprobs(choice, sent)
    return _from_echo(choice, sent, n, generated, decode)


#: Token ids as JSON object keys, made once each (the keys of vLLM's prompt_logprobs are ids written as text).
_ID_TEXT: dict[int, str] = {}


def _from_prompt_logprobs(choice: Mapping[str, Any], sent: Sequence[int]) -> list[float | None] | Refused:
    scored = choice.get("prompt_logprobs")
    if not isinstance(scored, list):
        return Refused("missing_logprobs", "the server returned no prompt_logprobs (is it vLLM?)")
    if len(scored) != len(sent):
        return Refused(
            "misaligned",
            f"the server scored {len(scored)} tokens for the {len(sent)} sent (a BOS or prefix it added, "
            "or a prompt it cut)",
        )
    values: list[float | None] = [None]
    names = _ID_TEXT
    for position in range(1, len(sent)):  # JSON objects are dicts: exact type checks (abc checks cost here)
        entry = scored[position]
        token = sent[position]
        if type(entry) is not dict or not entry:
            return Refused("missing_logprobs", f"no log-probability at position {position}")
        key = names.get(token)
        if key is None:
            key = names[token] = str(token)
        found = entry.get(key)
        if found is None:
            other = next(iter(entry))
            return Refused(
                "misaligned",
                f"at position {position} the server scored token {other}, not the token sent ({token})",
            )
        value = found.get("logprob") if type(found) is dict else found
        if type(value) is not float and type(value) is not int:
            return Refused("missing_logprobs", f"no log-probability at position {position}")
        values.append(float(value))
    return values


def _token_id(token: Any) -> int | None:
    """The id of an echoed token written ``"token_id:N"`` (vLLM's ``return_tokens_as_token_ids``), else None."""
    if isinstance(token, str) and token.startswith("token_id:") and token[9:].isdigit():
        return int(token[9:])
    return None


def _from_echo(
    choice: Mapping[str, Any],
    sent: Sequence[int],
    n: int,
    generated: int,
    decode: Callable[[Sequence[int]], str] | None,
) -> list[float | None] | Refused:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, Mapping):
        return Refused("missing_logprobs", "the server returned no logprobs (does it echo the prompt's log-probs?)")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        return Refused("missing_logprobs", "the server's logprobs have no tokens and token_logprobs of one length")
    if len(tokens) not in (n, n + generated):
        return Refused(
            "misaligned",
            f"the server echoed {len(tokens) - generated if len(tokens) > n else len(tokens)} tokens for the {n} "
            "sent (a BOS or prefix it added, or a prompt it cut)",
        )
    ids = [_token_id(t) for t in tokens[:n]]
    if all(i is not None for i in ids):
        for position, (got, token) in enumerate(zip(ids, sent)):
            if got != token:
                return Refused(
                    "misaligned",
                    f"at position {position} the server echoed token {got}, not the token sent ({token})",
                )
    elif decode is not None:
        joined = "".join(str(t) for t in tokens[:n])
        expected = decode(sent)
        if joined != expected:
            return Refused(
                "misaligned",
                f"the server's tokens re-join to {_snippet(repr(joined), 80)}, the ids sent decode to "
                f"{_snippet(repr(expected), 80)}",
            )
    out: list[float | None] = [None]
    for position in range(1, n):
        value = values[position]
        if type(value) is not float and type(value) is not int:
            return Refused("missing_logprobs", f"no log-probability at position {position}")
        out.append(float(value))
    return out

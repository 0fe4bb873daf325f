r"""Request kinds: what a scorer or a benchmark asks of a language model, whichever kind of model answers.

A benchmark is data plus the requests it sends; a model kind (a masked LM, a causal LM, a chat
model, a model behind an inference server, ...) serves the request kinds it can and refuses the
others in one line before any work (:class:`~assoc.lm.kinds.LanguageModel`). The kinds, in the
manner of lm-evaluation-harness's ``loglikelihood`` / ``loglikelihood_rolling`` /
``generate_until``:

``continuation`` (:class:`ContinuationRequest` -> :class:`LogProb`)
    :math:`\log P(c \mid x) = \sum_{j \in c} \log P(t_j \mid t_{<j})`, the natural-log probability
    of the continuation's tokens after the context. A causal LM reads it left to right (with
    lm-eval's split of a context/continuation pair); a masked LM gives the pseudo-log-likelihood
    of the continuation's tokens, each masked in turn with the context and the rest of the
    continuation visible (Salazar et al., 2020); a served model reads it from the echoed prompt's
    log-probabilities.
``sentence`` (:class:`SentenceRequest` -> :class:`LogProb`)
    :math:`\log P(s)`: a causal LM's log-probability of the whole text under its start-of-sequence
    policy; a masked LM's pseudo-log-likelihood :math:`\sum_j \log P(t_j \mid s_{\setminus j})`.
``choice`` (:class:`ChoiceRequest` -> :class:`Choice`)
    One of the request's options: a likelihood model picks the option of highest (normalised)
    ``continuation`` score after the request's prompt (the argmax; the first on a tie, as
    ``numpy.argmax``); a chat model is asked in the request's chat form and its reply is read as an
    option (refusals, unreadable and ambiguous replies kept with their reason, never guessed).
``generate`` (:class:`GenerateRequest` -> :class:`Reply`)
    A chat model's reply to a conversation.

Requests and results are frozen, hashable where their fields are, and JSON-compatible through
:func:`as_record` / :func:`from_record`, so that a work unit's payload and a cache entry can hold
them. Every result carries a ``status`` (``"ok"`` or the reason there is no value) and never a
guessed value: a result that is not ``ok`` has ``NaN`` log-probabilities or no chosen option.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

#: The request kinds, in the order of the module docstring.
REQUEST_KINDS = ("continuation", "sentence", "choice", "generate")

#: What each request kind asks, in one phrase (messages and docs).
REQUEST_KIND_TEXT = {
    "continuation": "log P(continuation | context)",
    "sentence": "log P(sentence)",
    "choice": "a choice among options",
    "generate": "a reply to a conversation",
}

#: How a ``choice`` request compares its options' ``continuation`` scores (lm-eval's metrics in brackets):
#: ``sum`` (acc) the summed log-probability, ``char`` (acc_norm) per character of the option, ``byte``
#: (acc_bytes) per UTF-8 byte, ``token`` per scored token.
NORMALIZATIONS = ("sum", "char", "byte", "token")

#: The statuses of a result with a value.
OK = "ok"


@dataclass(frozen=True)
class ContinuationRequest:
    """Ask for ``log P(continuation | context)`` (natural logs, summed over the continuation's tokens).

    ``context`` may be empty (the continuation is then scored after the model's start of sequence,
    as lm-eval scores an empty context); ``continuation`` must not be.
    """

    kind: ClassVar[str] = "continuation"

    context: str
    continuation: str

    def __post_init__(self) -> None:
        _require_text(self, "context", allow_empty=True)
        _require_text(self, "continuation")


@dataclass(frozen=True)
class SentenceRequest:
    """Ask for ``log P(text)`` of a whole text (a causal LM) or its pseudo-log-likelihood (a masked LM)."""

    kind: ClassVar[str] = "sentence"

    text: str

    def __post_init__(self) -> None:
        _require_text(self, "text")


@dataclass(frozen=True)
class LogProb:
    """The answer to a ``continuation`` or ``sentence`` request.

    Attributes
    ----------
    value:
        The natural-log probability summed over the scored tokens (``NaN`` unless ``status`` is ``"ok"``).
    n_tokens:
        How many tokens were scored.
    tokens:
        The scored tokens as the model's tokenizer writes them (may be empty when not asked for).
    token_values:
        Each scored token's log-probability, in order (may be empty when not asked for).
    status:
        ``"ok"``, or why there is no value (``"too_long"``, ``"misaligned"``, ``"no_tokens"``, ``"failed"``, ...).
    reason:
        One line saying what happened when ``status`` is not ``"ok"``.
    """

    value: float
    n_tokens: int
    tokens: tuple[str, ...] = ()
    token_values: tuple[float, ...] = ()
    status: str = OK
    reason: str = ""

    @classmethod
    def missing(cls, status: str, reason: str) -> LogProb:
        """A result without a value: ``NaN``, no tokens, the status and its reason."""
        if status == OK:
            raise ValueError("a missing LogProb needs a status other than 'ok'")
        return cls(math.nan, 0, status=status, reason=reason)

    @property
    def ok(self) -> bool:
        """Whether the result has a value."""
        return self.status == OK


@dataclass(frozen=True)
class ChoiceRequest:
    r"""Ask a model to choose one of ``options``.

    Attributes
    ----------
    prompt:
        The likelihood form: the text every option continues (``"{context}\n\nQ: {question}\nA:"``
        for BBQ in lm-eval's form). A likelihood model scores ``delimiter + phrasing`` after it.
    options:
        Each option as one or more phrasings (a text is one phrasing). A likelihood model scores an
        option as the best of its phrasings (lm-eval offers BBQ's ten "unknown" phrasings this way);
        a chat model is shown the first.
    messages:
        The chat form: the conversation that asks for one option (system and user messages), built by
        the benchmark from its own template. Empty when the benchmark has no chat form.
    labels:
        How the chat form names the options (``("A", "B", "C")``); empty: the options are named by
        their text alone. A reply is read as an option by its label or its text.
    delimiter:
        Text between ``prompt`` and each phrasing (lm-eval's ``target_delimiter``).
    normalize:
        How a likelihood model compares options (:data:`NORMALIZATIONS`).
    key:
        The item's identity in messages and reports (a benchmark's example id).
    """

    kind: ClassVar[str] = "choice"

    prompt: str
    options: tuple[tuple[str, ...], ...]
    messages: tuple[Mapping[str, Any], ...] = ()
    labels: tuple[str, ...] = ()
    delimiter: str = " "
    normalize: str = "sum"
    key: str = ""

    def __post_init__(self) -> None:
        _require_text(self, "prompt", allow_empty=True)
        options = tuple((option,) if isinstance(option, str) else tuple(option) for option in self.options)
        if len(options) < 2:
            raise ValueError(f"ChoiceRequest {self.key!r}: needs at least two options, got {len(options)}")
        for number, phrasings in enumerate(options):
            if not phrasings or any(not isinstance(p, str) or not p.strip() for p in phrasings):
                raise ValueError(f"ChoiceRequest {self.key!r}: option {number} has an empty phrasing")
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "messages", tuple(dict(m) for m in self.messages))
        object.__setattr__(self, "labels", tuple(self.labels))
        if self.labels and len(self.labels) != len(options):
            raise ValueError(f"ChoiceRequest {self.key!r}: {len(self.labels)} labels for {len(options)} options")
        if self.normalize not in NORMALIZATIONS:
            raise ValueError(f"ChoiceRequest {self.key!r}: normalize must be one of {NORMALIZATIONS}")

    @property
    def texts(self) -> tuple[str, ...]:
        """Each option's first phrasing: how the option is shown."""
        return tuple(phrasings[0] for phrasings in self.options)


@dataclass(frozen=True)
class Choice:
    """The answer to a ``choice`` request.

    Attributes
    ----------
    index:
        The chosen option (0-based), ``None`` when no option could be read.
    status:
        ``"ok"``, or why there is no choice: ``"refusal"``, ``"unparsed"``, ``"ambiguous"``,
        ``"truncated"``, ``"failed"``, ``"too_long"``, ...
    scores:
        Likelihood models: each option's compared score (after ``normalize``), in option order.
    log_probs:
        Likelihood models: each option's :class:`LogProb` (its best phrasing's), in option order.
    phrasing:
        Likelihood models: which phrasing of each option scored best (0 when an option has one).
    reply:
        Chat models: the reply as written.
    reason:
        One line on how the reply was read, or why there is no choice.
    response_id:
        Chat models: the key of the stored raw response.
    """

    index: int | None
    status: str = OK
    scores: tuple[float, ...] = ()
    log_probs: tuple[LogProb, ...] = ()
    phrasing: tuple[int, ...] = ()
    reply: str = ""
    reason: str = ""
    response_id: str = ""

    @property
    def ok(self) -> bool:
        """Whether an option was chosen."""
        return self.status == OK and self.index is not None


@dataclass(frozen=True)
class GenerateRequest:
    """Ask a chat model for a reply to ``messages`` with sampling ``params`` (temperature, max_tokens, seed).

    ``sample`` numbers repetitions of the same request (each is its own stored reply). Two fields
    describe the request without being sent or changing its reply (they are not compared): ``purpose``
    says what it is for (a term and a task: named in the record of a request that gets no answer), and
    ``reply_tokens`` how many tokens its reply is expected to use when ``params`` set no ``max_tokens``
    (what a ``tokens_per_minute`` limit counts; ``None``: the engine's default).
    """

    kind: ClassVar[str] = "generate"

    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    sample: int = 0
    purpose: Mapping[str, Any] = field(default_factory=dict, compare=False)
    reply_tokens: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("GenerateRequest.messages is empty")
        object.__setattr__(self, "messages", tuple(dict(m) for m in self.messages))
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "purpose", dict(self.purpose))


@dataclass(frozen=True)
class Reply:
    """The answer to a ``generate`` request.

    ``text`` is the reply as written (``None`` when there is none); ``status`` is ``"ok"``,
    ``"refusal"`` (the server refused), ``"content_filter"``, ``"truncated"`` (cut at ``max_tokens``;
    the text is kept) or ``"failed"`` (no answer after the retries; ``reason`` says why);
    ``raw`` is the stored response body.
    """

    text: str | None
    status: str = OK
    finish_reason: str = ""
    response_id: str = ""
    usage: Mapping[str, int] = field(default_factory=dict)
    reason: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)


#: request class of each kind
REQUEST_TYPES: dict[str, type] = {
    "continuation": ContinuationRequest,
    "sentence": SentenceRequest,
    "choice": ChoiceRequest,
    "generate": GenerateRequest,
}


def kind_of(request: Any) -> str:
    """The request kind of ``request`` (``TypeError`` for anything that is not a request)."""
    kind = getattr(type(request), "kind", None)
    if kind not in REQUEST_TYPES or not isinstance(request, REQUEST_TYPES[kind]):
        raise TypeError(f"not a request of a known kind: {type(request).__name__}")
    return str(kind)


def normalized_score(log_prob: LogProb, phrasing: str, how: str) -> float:
    """The score a ``choice`` compares: ``log_prob.value`` raw (``sum``), or per character, byte or token.

    An option of size 0 under ``how`` (no tokens, say) scores ``-inf``, so it is never chosen over one that
    has a score; a missing ``log_prob`` scores ``NaN``.
    """
    if not log_prob.ok:
        return math.nan
    if how == "sum":
        return log_prob.value
    size = {"char": len(phrasing), "byte": len(phrasing.encode("utf-8")), "token": log_prob.n_tokens}[how]
    return log_prob.value / size if size else -math.inf


def as_record(obj: Any) -> dict[str, Any]:
    """A JSON-compatible dict of a request or result (tuples as lists), for payloads and caches."""
    out: dict[str, Any] = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        out[f.name] = _plain(value)
    return out


def from_record(cls: type, record: Mapping[str, Any]) -> Any:
    """The request or result of class ``cls`` from :func:`as_record`'s dict."""
    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in record.items() if k in names}
    if cls is ChoiceRequest:
        values["options"] = tuple(tuple(o) for o in values.get("options", ()))
        values["labels"] = tuple(values.get("labels", ()))
    if cls is Choice:
        values["scores"] = tuple(values.get("scores", ()))
        values["phrasing"] = tuple(values.get("phrasing", ()))
        values["log_probs"] = tuple(from_record(LogProb, r) for r in values.get("log_probs", ()))
    if cls is LogProb:
        values["tokens"] = tuple(values.get("tokens", ()))
        values["token_values"] = tuple(float(v) for v in values.get("token_values", ()))
        values["value"] = float(values["value"]) if values.get("value") is not None else math.nan
    return cls(**values)


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__"):
        return as_record(value)
    return value


def _require_text(obj: Any, name: str, *, allow_empty: bool = False) -> None:
    value = getattr(obj, name)
    if not isinstance(value, str):
        raise TypeError(f"{type(obj).__name__}.{name} must be text, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{type(obj).__name__}.{name} is empty")


def requests_of_kind(requests: Sequence[Any], kind: str) -> None:
    """Raise ``TypeError`` when a request in ``requests`` is not of ``kind`` (a model's methods take one kind)."""
    for request in requests:
        if kind_of(request) != kind:
            raise TypeError(f"expected {kind} requests, got a {kind_of(request)} request")


def shown_text(text: str) -> str:
    """A request's text as messages show it: quoted, and cut after 60 characters when longer than 80."""
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"

"""Model kinds: what each kind of language model is, which request kinds it serves, and how it is opened.

A model kind is a :class:`LanguageModel` subclass: a masked LM, a causal LM, a chat model, a model
behind an inference server (and whatever a plugin registers through the ``register_model_kinds``
hook). It declares

* ``kind``, its name (``"masked"``, ``"causal"``, ``"chat"``, ``"server"``);
* ``prefix``, the spec prefix that names it (``"chat"`` for ``chat:gpt-4o``), or ``None`` for kinds
  recognised from the model's own files (:meth:`LanguageModel.detect`: a folder's or a Hub model's
  ``config.json``);
* ``serves``, the request kinds it answers (:mod:`assoc.lm.requests`); any other is refused in one
  line, before any work, by :func:`refuse`;
* ``options``, the options it reads beyond the model options (a BOS policy, an endpoint and its
  retries, ...), which every scorer that accepts the kind declares; ``local``, whether it runs weights
  in this process (and so reads ``device``, ``dtype``, ...);

and implements :meth:`LanguageModel.check` (cheap checks before any work: the folder, its tokenizer,
its kind), :meth:`LanguageModel.open` (the one loader of the kind) and the methods of the request
kinds it serves. Every request method takes a list of requests and returns one result per request
in the same order, so that a backend that is remote, batched and concurrent fits without change, and
a ``checkpoints`` namespace where it stores partial results so that a killed run resumes.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.errors import ModelError
from assoc.lm.requests import (
    REQUEST_KIND_TEXT,
    REQUEST_KINDS,
    Choice,
    ChoiceRequest,
    ContinuationRequest,
    Embedding,
    EmbeddingRequest,
    GenerateRequest,
    LogProb,
    Reply,
    SentenceRequest,
    normalized_score,
)

if TYPE_CHECKING:
    from assoc.components.options import Option
    from assoc.infra.cache import Cache, Namespace


#: The core's model kinds (what its builtin plugin registers): name -> "module:class", imported when used.
CORE_KINDS = {
    "masked": "assoc.lm.masked.kind:MaskedLanguageModel",
    "causal": "assoc.lm.causal.kind:CausalLanguageModel",
    "chat": "assoc.lm.chat.model:ChatModel",
    "server": "assoc.lm.server.kind:ServerLanguageModel",
}


def core_kind(name: str) -> type[LanguageModel]:
    """The class of the core's model kind ``name`` (:data:`CORE_KINDS`), without the plugin registry.

    For what must work before plugins load (a scorer's options, :func:`assoc.lm.options_for`); the kinds
    plugins register are looked up with :func:`assoc.lm.loading.registered_kinds`.
    """
    import importlib

    from assoc.errors import did_you_mean

    if name not in CORE_KINDS:
        raise ModelError(
            f"{name!r} is not one of the core's model kinds{did_you_mean(name, CORE_KINDS)} "
            f"({', '.join(CORE_KINDS)}); give a plugin's kind as its class"
        )
    module, _, attribute = CORE_KINDS[name].partition(":")
    found: type[LanguageModel] = getattr(importlib.import_module(module), attribute)
    return found


class RequestKindError(ModelError):
    """A model of one kind was asked for a request kind it does not serve (one line, before any work)."""


def refuse(model: str, kind: str, request_kind: str, serves: Sequence[str]) -> RequestKindError:
    """The one-line error for ``model`` (of ``kind``) asked for ``request_kind``; the caller raises it."""
    served = ", ".join(f"{k} ({REQUEST_KIND_TEXT.get(k, k)})" for k in REQUEST_KINDS if k in serves) or "nothing"
    return RequestKindError(
        f"model {model!r} is a {kind} model, which cannot serve {request_kind} "
        f"({REQUEST_KIND_TEXT.get(request_kind, request_kind)}); {kind} models serve: {served}"
    )


class LanguageModel(ABC):
    """Base of every model kind: a loaded (or connected) model that answers requests.

    Attributes
    ----------
    name:
        The model's spec as the scorer was given it (a folder, a Hub id, ``chat:<model>``).
    fingerprint:
        The identity of what answers (the weights' SHA-256 or Hub commit, an endpoint and model name):
        part of every cache key of its results.
    """

    kind: ClassVar[str] = ""
    prefix: ClassVar[str | None] = None
    serves: ClassVar[frozenset[str]] = frozenset()
    options: ClassVar[tuple[Option, ...]] = ()
    description: ClassVar[str] = ""
    #: Whether the kind runs weights in this process (reads ``device``, ``dtype``, ...: a worker needs the
    #: device, provenance and cache keys record it); a remote kind does not.
    local: ClassVar[bool] = False
    #: Items per work unit the kind prefers when the scorer's ``unit_size`` is left at its default (None: that
    #: default). A remote kind stores every answer as it arrives, so a unit is only the grain of planning, and
    #: a large one keeps a server's queue full instead of draining it at every unit's end.
    unit_items: ClassVar[int | None] = None

    name: str
    fingerprint: str

    # -- the kind, before anything is loaded --------------------------------------------------------
    @classmethod
    def detect(cls, spec: str) -> bool:
        """Whether ``spec`` (a folder or Hub id, no prefix) is a model of this kind, from its files alone.

        Kinds named by a prefix answer ``False``. Cheap: reads a ``config.json``, never weights.
        """
        return False

    @classmethod
    def detect_object(cls, obj: Any) -> bool:
        """Whether a model given as an object in memory (:mod:`assoc.models.memory`) is of this kind.

        ``obj`` is what the user gave (a ``(model, tokenizer)`` pair, ...). The default says no.
        """
        return False

    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """Refuse, with one :class:`~assoc.errors.ModelError` line, a ``spec`` this kind cannot open.

        Called for every model before any work starts (before the job's size is printed): a missing
        folder (with a did-you-mean), a folder without its tokenizer, a model of another kind, an
        endpoint option that cannot work. Must not load weights or send requests. The default checks nothing.
        """
        return None

    @classmethod
    def identify(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> str:
        """The identity of ``spec``'s model without loading it (the unit cache's key part; default: the spec)."""
        return spec

    @classmethod
    @abstractmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> LanguageModel:
        """Load (or connect to) the model ``spec`` with ``options``; ``cache`` is the run's cache."""

    @classmethod
    def describe_spec(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> dict[str, Any]:
        """What provenance records of ``spec`` beside its kind, after a run (default: nothing).

        Called in the process that planned the run, once the units ran (possibly elsewhere): a remote
        kind reports what its server said of the model when it was opened (remembered in ``cache``).
        """
        return {}

    # -- provenance ------------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What provenance records of this model (kind, fingerprint, device, tokenizer, endpoint, ...)."""
        return {"kind": self.kind, "fingerprint": self.fingerprint}

    def cache_parts(self) -> dict[str, Any]:
        """What this model's answers depend on besides the requests: part of every cache key of its results.

        The default is the fingerprint; a local model adds its dtype, device type and backend (results
        of different devices or precisions never share a key).
        """
        return {"model": self.fingerprint}

    # -- the request kinds ----------------------------------------------------------------------------
    def continuation(
        self, requests: Sequence[ContinuationRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """``log P(continuation | context)`` of each request (see :mod:`assoc.lm.requests`)."""
        raise refuse(self.name, self.kind, "continuation", sorted(self.serves))

    def sentence(
        self, requests: Sequence[SentenceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """``log P(text)`` (or the pseudo-log-likelihood) of each request."""
        raise refuse(self.name, self.kind, "sentence", sorted(self.serves))

    def choose(
        self, requests: Sequence[ChoiceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Choice]:
        """The option each request's model chooses."""
        raise refuse(self.name, self.kind, "choice", sorted(self.serves))

    def generate(
        self, requests: Sequence[GenerateRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Reply]:
        """A reply to each request's conversation."""
        raise refuse(self.name, self.kind, "generate", sorted(self.serves))

    def embed(
        self, requests: Sequence[EmbeddingRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Embedding]:
        """A vector of each request's word (or text) in its context (:class:`~assoc.lm.requests.EmbeddingRequest`)."""
        raise refuse(self.name, self.kind, "embedding", sorted(self.serves))

    def take_report(self) -> dict[str, Any] | None:
        """What this handle did since it was last asked (requests sent, refusals, ...), for the run report.

        :meth:`assoc.lm.LMScorer.unit_report` asks after each unit; the counts start afresh after each call,
        so the units' reports add up to the run's. The default reports nothing.
        """
        return None

    # -- life ---------------------------------------------------------------------------------------
    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what this handle holds (a private model's memory, open connections)."""

    def __enter__(self) -> LanguageModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChoiceByLikelihood:
    """``choice`` for every kind that serves ``continuation``: the option of highest normalised score.

    Each phrasing of each option is one ``continuation`` request (``prompt`` as the context,
    ``delimiter + phrasing`` as the continuation); an option scores as its best phrasing under the
    request's ``normalize`` (:func:`assoc.lm.requests.normalized_score`), and the chosen option is the
    first of the highest score (``numpy.argmax``'s rule). An option whose phrasings have no value
    (too long, say) makes the item's status that phrasing's status, with no choice: an argmax over
    the options that happen to have values would be a different measure.
    """

    def choose(
        self, requests: Sequence[ChoiceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[Choice]:
        """The option of highest normalised ``continuation`` score of each request."""
        flat: list[ContinuationRequest] = []
        where: list[list[list[int]]] = []
        index: dict[ContinuationRequest, int] = {}
        for request in requests:
            per_item = []
            for phrasings in request.options:
                per_option = []
                for phrasing in phrasings:
                    asked = ContinuationRequest(request.prompt, request.delimiter + phrasing)
                    if asked not in index:
                        index[asked] = len(flat)
                        flat.append(asked)
                    per_option.append(index[asked])
                per_item.append(per_option)
            where.append(per_item)
        scored = self.continuation(flat, checkpoints=checkpoints, progress=progress)  # type: ignore[attr-defined]
        out = []
        for request, per_item in zip(requests, where, strict=True):
            scores: list[float] = []
            best_log_probs: list[LogProb] = []
            best_phrasing: list[int] = []
            problem: LogProb | None = None
            for phrasings, per_option in zip(request.options, per_item, strict=True):
                candidates = [
                    (normalized_score(scored[at], phrasing, request.normalize), number, scored[at])
                    for number, (phrasing, at) in enumerate(zip(phrasings, per_option, strict=True))
                ]
                missing = [c for c in candidates if not c[2].ok]
                if missing:
                    problem = problem or missing[0][2]
                    scores.append(math.nan)
                    best_log_probs.append(missing[0][2])
                    best_phrasing.append(missing[0][1])
                    continue
                score, number, log_prob = max(candidates, key=lambda c: (c[0], -c[1]))
                scores.append(score)
                best_log_probs.append(log_prob)
                best_phrasing.append(number)
            if problem is not None:  # the reason names the item (its key: a benchmark's example id) and the text
                out.append(
                    Choice(
                        None,
                        problem.status,
                        tuple(scores),
                        tuple(best_log_probs),
                        tuple(best_phrasing),
                        reason=(f"item {request.key!r}: " if request.key else "") + problem.reason,
                    )
                )
                continue
            chosen = max(range(len(scores)), key=lambda i: (scores[i], -i))
            out.append(
                Choice(chosen, "ok", tuple(scores), tuple(best_log_probs), tuple(best_phrasing), reason="argmax")
            )
        return out

r"""The ``causal`` model kind: a left-to-right language model (GPT-2, Pythia, Llama, Qwen, ...) as a LanguageModel.

It serves, under the kind's BOS policy ``bos`` (:mod:`assoc.lm.causal.text`), natural logs:

``sentence``
    :math:`\log P(s) = \sum_{j \ge 1} \log P(x_j \mid x_{<j})` of the text's tokens after the
    policy's start (``auto``: the BOS token, else EOS, prepended, so every token of the text is
    scored: lm-evaluation-harness's ``loglikelihood`` with an empty context);
``continuation``
    :math:`\log P(c \mid x) = \sum_{j \in c} \log P(x_j \mid x_{<j})` with lm-eval's split of a
    context/continuation pair: trailing spaces of the context move to the continuation, ``x + c`` is
    tokenized once and the context's own tokens are cut off its front (``tokens(c) =
    tokens(x + c)[len(tokens(rstrip(x))):]``); an empty context is scored after the BOS token (else
    EOS), as lm-eval scores it, whatever the policy;
``choice``
    the option of highest normalised ``continuation`` score (:class:`~assoc.lm.kinds.ChoiceByLikelihood`).

A text longer than the model accepts gets no value (status ``too_long``), never a truncated one. The
engine (:class:`~assoc.lm.causal.engine.CausalLM`) is the kind's ``engine``, for scorers that need
each token's value (``clm``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.components.options import Option
from assoc.errors import OptionError
from assoc.lm.causal.text import (
    BOS_POLICIES,
    declared_start_tokens,
    plan_sentence,
    special_tokens,
    start_token_problem,
)
from assoc.lm.local import LocalLanguageModel
from assoc.lm.options import ModelSettings
from assoc.lm.requests import LogProb, requests_of_kind, shown_text

if TYPE_CHECKING:
    from assoc.infra.cache import Cache, Namespace
    from assoc.lm.causal.requests import CausalRequest
    from assoc.lm.requests import ContinuationRequest, SentenceRequest

#: The causal kind's own option: what starts every sequence (:mod:`assoc.lm.causal.text`).
BOS_OPTION = Option(
    "bos",
    str,
    "auto",
    "start of every sequence: 'auto' (prepend BOS, else EOS: every text token scored, as lm-eval's "
    "empty context), 'tokenizer' (what the tokenizer adds: minicons' default) or 'none' (first token "
    "unscored); see docs/clm.md",
    choices=BOS_POLICIES,
)

#: Requests per engine call and per checkpoint pack (the grain of resuming).
CHUNK = 4096


def no_start_token_message(model: str, problem: str) -> str:
    """The one line refusing ``bos="auto"`` for ``model``, whose ``problem`` (:func:`start_token_problem`) says why."""
    return (
        f"model {model!r}: {problem}, so bos='auto' has nothing to put before the text and cannot score its "
        "first token as it promises; use bos='none' (each text's first token is conditioned on, never scored, "
        "and each row's start_token names it; an option that starts a sentence then has no log P(option | "
        "text before it)), or a tokenizer with a BOS token"
    )


class CausalRequests:
    r"""``sentence`` and ``continuation`` requests on a causal engine: the BOS policy and lm-eval's split.

    What the ``causal`` kind and every kind with a causal engine elsewhere (the ``server`` kind, whose
    engine sends the same token ids to an inference server) share, so that both score exactly the same
    tokens (:mod:`assoc.lm.causal.text`). A class using it has ``engine`` (``tokenizer``, ``max_length``,
    ``log_probs``: a :class:`~assoc.lm.causal.engine.CausalLM` or an engine of the same shape), ``bos``,
    ``batch_tokens`` and ``name``. :meth:`refusal` lets an engine refuse a request it has no values for
    (the server's misaligned or missing log-probs), and :meth:`request_checkpoints` lets a kind whose
    answers are stored elsewhere leave the checkpoints out.
    """

    engine: Any
    bos: str
    batch_tokens: int | None
    name: str

    def refusal(self, request: CausalRequest) -> LogProb | None:
        """Why the engine gave ``request`` no values (a :class:`LogProb` without one), or None (the default)."""
        return None

    def request_checkpoints(self, checkpoints: Namespace | None) -> Namespace | None:
        """Where the engine's values are checkpointed (default: the namespace the caller gave)."""
        return checkpoints

    # -- the request kinds ----------------------------------------------------------------------------
    def sentence(
        self, requests: Sequence[SentenceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """``log P(text)`` of each request under the BOS policy: every token after the start token."""
        requests_of_kind(requests, "sentence")
        lead, trail = special_tokens(self.engine.tokenizer, self.bos)
        plans = [(r.text, list(plan_sentence(self.engine.tokenizer, lead, trail, r.text).parts)) for r in requests]
        return self._log_probs(plans, checkpoints, progress)

    def continuation(
        self, requests: Sequence[ContinuationRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """``log P(continuation | context)`` of each request, with lm-eval's context/continuation split."""
        requests_of_kind(requests, "continuation")
        tokenizer = self.engine.tokenizer
        lead, _ = special_tokens(tokenizer, self.bos)
        first, _ = special_tokens(tokenizer, "auto")  # an empty context: lm-eval's prefix token (BOS, else EOS)
        plans = []
        unscorable: dict[int, str] = {}
        for number, request in enumerate(requests):
            whole = request.context + request.continuation
            start = lead if request.context else first
            plan = plan_sentence(tokenizer, start, (), whole, (len(request.context), len(whole)))
            plans.append((whole, [plan.option] if plan.option is not None else []))
            if plan.option_problem:
                unscorable[number] = plan.option_problem
        results = self._log_probs(plans, checkpoints, progress)
        for number, problem in unscorable.items():  # nothing before the continuation: no partial sum, its reason
            results[number] = LogProb.missing(
                problem,
                f"{shown_text(plans[number][0])}: nothing precedes the continuation (its context has no token "
                f"and model {self.name!r} no start token), so its first token cannot be scored",
            )
        return results

    def _log_probs(
        self, plans: Sequence[tuple[str, list[CausalRequest]]], checkpoints: Namespace | None, progress: bool
    ) -> list[LogProb]:
        """Each plan's summed log-probability (:func:`math.fsum` over its requests' tokens), or why there is none."""
        from assoc.lm.compute import cached_log_probs
        from assoc.lm.statuses import too_long_reason

        engine = self.engine
        index: dict[CausalRequest, int] = {}
        problems: dict[int, LogProb] = {}
        for number, (text, parts) in enumerate(plans):
            if not parts:
                problems[number] = LogProb.missing("no_tokens", f"{shown_text(text)} has no token to score")
                continue
            longest = max(len(part.input_ids) for part in parts)
            if longest > engine.max_length:
                problems[number] = LogProb.missing(
                    "too_long", too_long_reason(text, longest, self.name, engine.max_length)
                )
                continue
            for part in parts:
                index.setdefault(part, len(index))
        values = cached_log_probs(
            engine,
            list(index),
            self.request_checkpoints(checkpoints),
            chunk=CHUNK,
            batch_tokens=self.batch_tokens,
            progress=progress,
            desc=f"log P {self.name}",
        )
        out = []
        for number, (_, parts) in enumerate(plans):
            if number in problems:
                out.append(problems[number])
                continue
            refused = next((r for r in map(self.refusal, parts) if r is not None), None)
            if refused is not None:
                out.append(refused)
                continue
            tokens = [token for part in parts for token in part.continuation]
            scored = [value for part in parts for value in values[index[part]]]
            names = tuple(str(t) for t in engine.tokenizer.convert_ids_to_tokens(tokens))
            out.append(LogProb(math.fsum(scored), len(scored), names, tuple(scored)))
        return out


class CausalLanguageModel(CausalRequests, LocalLanguageModel):
    """A causal LM opened for requests: the ``causal`` kind (module docstring).

    Attributes
    ----------
    engine:
        The loaded :class:`~assoc.lm.causal.engine.CausalLM`, shared through the process's model cache.
    bos:
        The BOS policy of its ``sentence`` and ``continuation`` requests.
    """

    kind: ClassVar[str] = "causal"
    options: ClassVar[tuple[Option, ...]] = (BOS_OPTION,)
    description: ClassVar[str] = "a causal (left-to-right) language model: GPT-2, Pythia, Llama, Qwen, ..."
    auto_class: ClassVar[str] = "AutoModelForCausalLM"
    noun: ClassVar[str] = "causal LM"

    def __init__(self, engine: Any, *, batch_tokens: int | None = None, bos: str = "auto"):
        if bos not in BOS_POLICIES:
            raise OptionError(f"bos must be one of {', '.join(BOS_POLICIES)}, got {bos!r}")
        problem = start_token_problem(engine.tokenizer, bos)
        if problem:
            raise OptionError(no_start_token_message(engine.name, problem))
        super().__init__(engine, batch_tokens=batch_tokens)
        self.bos = bos

    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """PyTorch only; the folder, its config and its tokenizer (:func:`assoc.lm.loading.check_model_folder`).

        And ``bos="auto"`` with a tokenizer whose files say it has neither a BOS nor an EOS token
        (:func:`assoc.lm.causal.text.declared_start_tokens`); where the files do not say, opening the
        model decides (:func:`assoc.lm.causal.text.start_token_problem`).
        """
        backend = ModelSettings.of(options).backend
        if backend != "torch":
            raise OptionError(
                f"model {spec!r} is a causal LM, which runs on PyTorch only: set backend='torch' "
                f"(got {backend!r}; the ONNX backends run masked LMs)"
            )
        super().check(spec, options)
        from assoc.lm.loading import model_folder

        folder = model_folder(spec)
        if str(options.get("bos", "auto")) == "auto" and folder is not None and declared_start_tokens(folder) is False:
            raise OptionError(no_start_token_message(spec, "its tokenizer has neither a BOS nor an EOS token"))

    @classmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> CausalLanguageModel:
        """The causal LM ``spec`` from the process's model cache."""
        from assoc.lm.causal.loading import cached_causal_lm

        settings = ModelSettings.of(options)
        engine = cached_causal_lm(
            spec, device=settings.device, dtype=settings.dtype, revision=settings.revision, memo=cache
        )
        return cls(engine, batch_tokens=settings.batch_tokens, bos=str(options.get("bos", "auto")))

    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, device, dtype and the BOS policy."""
        return {**super().describe(), "bos": self.bos}

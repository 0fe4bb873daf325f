r"""The ``masked`` model kind: a fill-mask language model (BERT, RoBERTa, ALBERT, ...) as a :class:`LanguageModel`.

It serves

``sentence``
    the pseudo-log-likelihood of the text (Salazar et al., 2020): every non-special token masked in
    turn, :math:`\sum_j \log P(t_j \mid s_{\setminus j})`;
``continuation``
    the pseudo-log-likelihood of the continuation's tokens with the context visible: each token of
    the continuation masked in turn (the rest of the continuation and the whole context visible),
    :math:`\sum_{j \in c} \log P(t_j \mid (x, c)_{\setminus j})`, where a token belongs to the
    continuation when its characters overlap it;
``choice``
    the option of highest normalised ``continuation`` score (:class:`~assoc.lm.kinds.ChoiceByLikelihood`).

Both log-probabilities come from :func:`assoc.lm.masked.pll.pseudo_log_likelihoods` under the kind's
``pll_metric`` (``original`` or ``word_l2r``, Kauf & Ivanova, 2023). A text longer than the model
accepts gets no value (status ``too_long``), never a truncated one. The engine
(:class:`~assoc.lm.masked.engine.MaskedLM`) is the kind's ``engine``, for scorers that need more than
the request kinds (fmat's word pieces and temporary tokens, CrowS-Pairs' aligned tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc.components.options import Option
from assoc.errors import OptionError
from assoc.lm.loading import object_auto_class
from assoc.lm.local import LocalLanguageModel
from assoc.lm.masked.pll import METRICS
from assoc.lm.options import ModelSettings
from assoc.lm.requests import LogProb, requests_of_kind

if TYPE_CHECKING:
    from assoc.infra.cache import Cache, Namespace
    from assoc.lm.requests import ContinuationRequest, SentenceRequest

#: The masked kind's own option: how its ``sentence`` and ``continuation`` requests mask.
PLL_METRIC_OPTION = Option(
    "pll_metric",
    str,
    "original",
    "how a masked LM's sentence and continuation log-probabilities are read: 'original' masks one token at "
    "a time (Salazar et al. 2020), 'word_l2r' also masks the later pieces of the token's word (Kauf & "
    "Ivanova 2023)",
    choices=METRICS,
)


class MaskedLanguageModel(LocalLanguageModel):
    """A masked LM opened for requests: the ``masked`` kind (module docstring).

    Attributes
    ----------
    engine:
        The loaded :class:`~assoc.lm.masked.engine.MaskedLM` (or its torch-free ONNX twin), shared
        through the process's model cache.
    """

    kind: ClassVar[str] = "masked"
    options: ClassVar[tuple[Option, ...]] = (PLL_METRIC_OPTION,)
    description: ClassVar[str] = "a masked (fill-mask) language model: BERT, RoBERTa, ALBERT, ..."
    auto_class: ClassVar[str] = "AutoModelForMaskedLM"
    noun: ClassVar[str] = "masked LM"

    def __init__(self, engine: Any, *, batch_tokens: int | None = None, metric: str = "original"):
        super().__init__(engine, batch_tokens=batch_tokens)
        if metric not in METRICS:
            raise OptionError(f"pll_metric must be one of {', '.join(METRICS)}, got {metric!r}")
        self.metric = metric

    @classmethod
    def detect_object(cls, obj: Any) -> bool:
        """A ``...ForMaskedLM`` in memory, or a model of no known class whose tokenizer has a mask token."""
        tokenizer = obj[1] if isinstance(obj, tuple) and len(obj) == 2 else None
        return super().detect_object(obj) or (
            object_auto_class(obj) is None and getattr(tokenizer, "mask_token", None) is not None
        )

    @classmethod
    def check(cls, spec: str, options: Mapping[str, Any]) -> None:
        """Before any work: the backend's device and dtype, then the folder, its config and its tokenizer.

        The ONNX backends run float32 weights on the CPU, for models loaded by name or folder
        (:func:`assoc.lm.options.check_backend_settings`); the folder's checks are
        :func:`assoc.lm.loading.check_model_folder`'s.
        """
        from assoc.lm.options import check_backend_settings
        from assoc.models.memory import in_memory

        settings = ModelSettings.of(options)
        check_backend_settings(settings.backend, device=settings.device, dtype=settings.dtype)
        if in_memory(spec) is not None and settings.backend != "torch":
            raise OptionError(
                f"backend {settings.backend!r} applies to models loaded by name or directory; {spec!r} is in "
                "memory (use backend='torch')"
            )
        super().check(spec, options)

    @classmethod
    def open(cls, spec: str, options: Mapping[str, Any], cache: Cache | None) -> MaskedLanguageModel:
        """The masked LM ``spec`` from the process's model cache (a kept ONNX export runs without torch)."""
        from assoc.lm.masked.loading import cached_masked_lm
        from assoc.lm.masked.torch_free import torch_free_masked_lm

        settings = ModelSettings.of(options)
        where: dict[str, Any] = {
            "device": settings.device_for_backend,
            "dtype": settings.dtype,
            "revision": settings.revision,
            "memo": cache,
            "backend": settings.backend,
        }
        engine = torch_free_masked_lm(spec, **where) or cached_masked_lm(spec, **where)
        return cls(engine, batch_tokens=settings.batch_tokens, metric=str(options.get("pll_metric", "original")))

    def describe(self) -> dict[str, Any]:
        """Kind, fingerprint, device, dtype and backend."""
        return {**super().describe(), "backend": str(getattr(self.engine, "backend", "torch"))}

    # -- the request kinds ----------------------------------------------------------------------------
    def sentence(
        self, requests: Sequence[SentenceRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """The pseudo-log-likelihood of each request's text (every non-special token)."""
        requests_of_kind(requests, "sentence")
        return self._plls([(r.text, None) for r in requests], "all", checkpoints, progress)

    def continuation(
        self, requests: Sequence[ContinuationRequest], *, checkpoints: Namespace | None = None, progress: bool = False
    ) -> list[LogProb]:
        """The pseudo-log-likelihood of each request's continuation tokens, its context visible."""
        requests_of_kind(requests, "continuation")
        items = [(r.context + r.continuation, (len(r.context), len(r.context) + len(r.continuation))) for r in requests]
        return self._plls(items, "variant", checkpoints, progress)

    def _plls(
        self,
        items: Sequence[tuple[str, tuple[int, int] | None]],
        which: str,
        checkpoints: Namespace | None,
        progress: bool,
    ) -> list[LogProb]:
        """PLLs of ``(text, span)`` items scoring ``which`` tokens; a text that cannot be scored gets its reason."""
        from assoc.errors import StimuliError
        from assoc.lm.masked.pll import encode_sentence, positions_to_score, pseudo_log_likelihoods
        from assoc.lm.statuses import too_long_reason

        out: list[LogProb | None] = [None] * len(items)
        ready: list[int] = []
        for i, (text, span) in enumerate(items):
            try:
                encoded = encode_sentence(self.engine.tokenizer, text)
            except StimuliError as exc:
                out[i] = LogProb.missing("no_tokens", str(exc))
                continue
            if len(encoded.input_ids) > self.engine.max_length:
                out[i] = LogProb.missing(
                    "too_long", too_long_reason(text, len(encoded.input_ids), self.name, self.engine.max_length)
                )
                continue
            try:
                positions_to_score(encoded, which, span)
            except StimuliError as exc:
                out[i] = LogProb.missing("no_tokens", str(exc))
                continue
            ready.append(i)
        results = pseudo_log_likelihoods(
            self.engine,
            [items[i][0] for i in ready],
            [items[i][1] for i in ready],
            metric=self.metric,
            tokens_scored=which,
            batch_tokens=self.batch_tokens,
            namespace=checkpoints,
            progress=progress,
        )
        for i, result in zip(ready, results, strict=True):
            out[i] = LogProb(
                result.pll,
                result.n_scored,
                tuple(t.token for t in result.token_log_probs),
                tuple(t.log_prob for t in result.token_log_probs),
            )
        return [value for value in out if value is not None]

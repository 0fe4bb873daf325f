r"""The ``stereoset`` scorer: each StereoSet item's three sentences scored (or chosen among) by any kind of model.

It writes the benchmark table (:mod:`assoc_bias_benchmarks.choice_table`) that the ``stereoset``
analysis turns into LMS, SS and ICAT. What a model is asked depends on ``method`` (``auto`` picks
per model kind), recorded in every row's ``method`` and ``measure``:

``authors`` (masked LMs; ``auto``'s choice for them)
    intrasentence items by the authors' per-token method, the mean probability of the template
    word's tokens at the mask (``mean_token_prob``, :mod:`.authors`); intersentence items by
    next-sentence prediction, P(IsNext), where the checkpoint has the head (``nsp_prob``), else by
    the PLL of the sentence given the context (``pll_given_context``).
``likelihood`` (every kind serving ``sentence`` and ``continuation``; ``auto``'s choice for causal and served LMs)
    intrasentence items by a ``sentence`` request, the sentence's PLL (masked: ``pll``) or log P
    (``log_prob``); intersentence items by a ``continuation`` request, the sentence after the context
    and a space: the PLL of its tokens with the context visible (``pll_given_context``) or
    log P(sentence | context) (``log_prob_given_context``).
``choice`` (every kind; ``auto``'s choice for chat models)
    a ``choice`` request among the three sentences (a chat model's reply read as a letter or a
    sentence; a likelihood model's argmax of ``continuation``), one choice row per item.

The recorded ``method`` of ``likelihood`` is ``pll`` for a masked LM and ``log_prob`` for any other
kind, so that a table holding both is two runs. Every score is "larger is more likely", as the
analysis compares them (natural logs; the authors' per-token score and P(IsNext) are probabilities).

Nothing is dropped: a sentence without a score keeps its row, NaN, with the status and reason
(``too_long``, ``no_tokens``, ``no_template_word``; a chat reply naming no sentence: ``unparsed``,
``refusal``, ...), and the run report counts them per model, method and status; the analysis leaves
such an item out and counts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, OptionError

from ..choice_scorer import ChoiceForm, ChoiceTableScorer, in_item_order, likelihood_method, table_columns
from .authors import AUTHORS_CODE, NextSentenceModel, next_sentence_head, per_token_scores
from .items import BLANK, CITATION, COLUMNS, ROLES, SPLITS

if TYPE_CHECKING:
    from assoc import ChoiceItem
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

METHODS = ("auto", "authors", "likelihood", "choice")
#: The measures the scorer writes (a row's ``measure``).
MEASURES = {
    "mean_token_prob": "the authors' intrasentence score: mean probability of the template word's tokens at the mask",
    "nsp_prob": "the authors' intersentence score: P(IsNext) of the next-sentence head",
    "pll": "pseudo-log-likelihood of the sentence (masked LM, sentence request)",
    "log_prob": "log P(sentence) (sentence request)",
    "pll_given_context": "PLL of the sentence's tokens with the context before it visible (continuation request)",
    "log_prob_given_context": "log P(sentence | context) (continuation request)",
    "choice": "1 for the chosen sentence (choice rows)",
}
QUESTIONS = {
    "intrasentence": "Fill in the blank: {blank}\nWhich of these sentences fills the blank best?",
    "intersentence": "{context}\nWhich of these sentences is the most likely to come next?",
}


def context_of(item: ChoiceItem) -> str:
    """An item's context sentence (of an intrasentence item: the sentence with ``BLANK``)."""
    return str(item.fields["context"])


class StereoSetScorer(ChoiceTableScorer):
    """StereoSet's per-sentence scores, or a choice among its sentences, on every kind of model (module docstring)."""

    name = "stereoset"
    description = (
        "StereoSet (Nadeem et al. 2021) on every kind of model: masked LMs by the authors' per-token method and "
        "next-sentence prediction, or PLL; causal and served LMs by log P(sentence) and log P(sentence | context); "
        "chat models by a choice among the three sentences. One row per sentence (or per reply)."
    )
    citation = (
        f"{CITATION}; Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model "
        "scoring. ACL 2020 (PLL)"
    )
    measure = ""  # each row names its own (MEASURES)
    n_options = 3
    extra_columns = table_columns(COLUMNS)
    likelihood_requests: ClassVar[frozenset[str]] = frozenset({"sentence", "continuation"})
    options = (
        Option(
            "method",
            str,
            "auto",
            "auto (masked LMs: authors; other kinds serving sentence and continuation: likelihood; chat models: "
            "choice), authors (masked LMs: the per-token method and next-sentence prediction of the authors' code), "
            "likelihood (PLL or log P of each sentence) or choice (a choice among the three sentences)",
            choices=METHODS,
        ),
        *ChoiceTableScorer.options,
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._nsp: dict[str, bool] = {}

    # -- before any work -------------------------------------------------------------------------------
    def method_of(self, kind: type[LanguageModel] | LanguageModel) -> str:
        """The method ``kind`` runs under the ``method`` option (``auto`` resolved)."""
        method = str(self.params["method"])
        if method != "auto":
            return method
        if kind.kind == "masked":
            return "authors"
        return "likelihood" if self.serves_likelihood(kind) else "choice"

    def check_models(self, models: Sequence[str]) -> None:
        """The layer's checks, then the method against each model's kind (one line, before any work)."""
        super().check_models(models)
        for model in models:
            kind = self.model_kind(model)
            method = self.method_of(kind)
            if method == "authors" and kind.kind != "masked":
                raise OptionError(
                    f"scorer 'stereoset': method 'authors' reads a masked LM's mask predictions ({AUTHORS_CODE}); "
                    f"model {model!r} is a {kind.kind} model: use method 'likelihood' or 'choice' (or 'auto')"
                )
            if method == "likelihood" and not self.serves_likelihood(kind):
                raise OptionError(
                    f"scorer 'stereoset': method 'likelihood' sends sentence and continuation requests, which model "
                    f"{model!r} ({kind.kind}) does not serve: use method 'choice' (or 'auto')"
                )
            if method == "authors":
                self._nsp[model] = next_sentence_head(model, self.params["revision"])

    def check_item(self, item: ChoiceItem) -> None:
        """Every item is a StereoSet item: its split, its roles in the benchmark's order (what the reader makes)."""
        from assoc import StimuliError

        if item.derived.get("split") not in SPLITS or tuple(item.derived.get("roles") or ()) != ROLES:
            raise StimuliError(
                f"{item.where}: scorer 'stereoset' reads StereoSet items (split and the roles {', '.join(ROLES)}); "
                f"item {item.id!r} is not one"
            )

    def describe_model(self, model: str) -> dict[str, Any]:
        """Its kind and device; with the authors' method, whether its checkpoint has a next-sentence head."""
        record = super().describe_model(model)
        if self.method_of(self.model_kind(model)) == "authors":
            has = self._nsp.get(model)
            if has is None:
                has = self._nsp[model] = next_sentence_head(model, self.params["revision"])
            record["next_sentence_head"] = has
        return record

    # -- the rows --------------------------------------------------------------------------------------
    def score_items(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """The rows of ``items`` by the model's method (module docstring), in item order."""
        method = self.method_of(model)
        if method == "choice":
            return self.choice_rows(model, items, checkpoints)
        if method == "authors":
            return self.authors_rows(model, items, checkpoints)
        return self.likelihood_rows(model, items, checkpoints)

    def likelihood_rows(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """``sentence`` requests for intrasentence items, ``continuation`` requests for intersentence ones."""
        from assoc.lm import ContinuationRequest, SentenceRequest

        method = likelihood_method(model.kind)
        intra = [item for item in items if item.derived["split"] == "intrasentence"]
        inter = [item for item in items if item.derived["split"] == "intersentence"]
        sentences = model.sentence(
            [SentenceRequest(s) for item in intra for s in item.options], checkpoints=checkpoints
        )
        continued = model.continuation(
            [ContinuationRequest(item.fields["context"], " " + s) for item in inter for s in item.options],
            checkpoints=checkpoints,
        )
        found = self.item_rows(model, intra, sentences, method=method, measure=method)
        found |= self.item_rows(
            model, inter, continued, method=method, measure=f"{method}_given_context", context=context_of
        )
        return in_item_order(items, found)

    def authors_rows(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """The authors' scores (:mod:`.authors`): per-token probabilities, and P(IsNext) where the head exists."""
        from assoc.lm import ContinuationRequest

        engine = model.engine  # type: ignore[attr-defined]  # the masked kind's MaskedLM: the method reads its parts
        p = self.params
        intra = [item for item in items if item.derived["split"] == "intrasentence"]
        inter = [item for item in items if item.derived["split"] == "intersentence"]
        scores = per_token_scores(
            engine,
            [(item.fields["context"], word) for item in intra for word in item.derived["template_words"]],
            checkpoints=checkpoints,
            batch_tokens=p["batch_tokens"],
        )
        answers = [score.as_log_prob() for score in scores]
        found = self.item_rows(model, intra, answers, method="authors", measure="mean_token_prob")
        pairs = [(item.fields["context"], s) for item in inter for s in item.options]
        if inter and self._has_head(model.name):
            nsp = NextSentenceModel.open(
                model.name,
                device=str(engine.device),
                dtype=p["dtype"],
                revision=p["revision"],
                memo=self.run_cache() if self.run_cache().enabled else None,
            )
            answers = [
                score.as_log_prob()
                for score in nsp.is_next(pairs, checkpoints=checkpoints, batch_tokens=p["batch_tokens"])
            ]
            measure = "nsp_prob"
        else:
            answers = model.continuation(
                [ContinuationRequest(context, " " + s) for context, s in pairs], checkpoints=checkpoints
            )
            measure = "pll_given_context"
        found |= self.item_rows(model, inter, answers, method="authors", measure=measure, context=context_of)
        return in_item_order(items, found)

    def _has_head(self, model: str) -> bool:
        """Whether ``model``'s checkpoint has a next-sentence head (decided before any work, or here in a worker)."""
        if model not in self._nsp:
            self._nsp[model] = next_sentence_head(model, self.params["revision"])
        return self._nsp[model]

    def choice_form(self, item: ChoiceItem) -> ChoiceForm:
        """The three sentences after the context (intersentence) or the sentence with a blank (intrasentence)."""
        context = str(item.fields["context"])
        split = item.derived["split"]
        question = QUESTIONS[split].format(context=context, blank=context.replace(BLANK, "_____"))
        if split == "intrasentence":
            return ChoiceForm(question, tuple(item.options), prompt="", delimiter="")
        return ChoiceForm(question, tuple(item.options), prompt=context, delimiter=" ")

r"""The ``winobias`` scorer: which of the two occupations a sentence's pronoun refers to, on every kind of model.

It writes the benchmark table (:mod:`assoc_bias_benchmarks.choice_table`) that the ``winobias``
analysis turns into accuracy per condition and the pro - anti gap.

WinoBias has no scorer of language models of its own (the authors evaluate coreference systems) and
lm-evaluation-harness 0.4.13 has no WinoBias task, so the scorer asks what lm-eval's ``winogender``
task asks of a Winogender sentence, which has the same shape (a sentence, a pronoun, two people named
by their roles): a likelihood kind (masked, causal, served) gets the context
``<sentence> ‘<Pronoun>’ refers to the`` (the sentence without its brackets, the first bracketed
pronoun capitalised, typographic quotes) and the two occupations as continuations (``" developer"``,
``" designer"``), each a ``continuation`` request: option rows of log P(occupation | context)
(``log_prob``; a masked LM's PLL of the continuation's tokens, ``pll``); the analysis takes the
occupation of higher score (a tie: the first named). A chat model is asked whom the pronoun refers
to, the occupations shown as ``the <occupation>`` under A and B: one choice row per sentence.

Sentences without a score or a choice keep their rows with the status and reason, counted in the
run report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from assoc import StimuliError

from ..choice_scorer import ChoiceForm, ChoiceTableScorer, in_item_order, likelihood_method, table_columns
from .items import CITATION, COLUMNS

if TYPE_CHECKING:
    from assoc import ChoiceItem
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

#: lm-evaluation-harness 0.4.13's ``winogender`` prompt, asked of a WinoBias sentence.
PROMPT = "{sentence} ‘{pronoun}’ refers to the"
QUESTION = "{sentence}\nIn the sentence above, who does “{pronoun}” refer to?"


def pronoun_of(item: ChoiceItem) -> str:
    """The pronoun asked about: the first bracketed pronoun of the sentence, as written."""
    return str(item.derived["pronouns"][0])


def context_of(item: ChoiceItem) -> str:
    """The likelihood context of an item: ``<sentence> ‘<Pronoun>’ refers to the``."""
    return PROMPT.format(sentence=item.derived["sentence"], pronoun=pronoun_of(item).capitalize())


class WinoBiasScorer(ChoiceTableScorer):
    """WinoBias' referent choice on every kind of model (module docstring)."""

    name = "winobias"
    description = (
        "WinoBias (Zhao et al. 2018) on every kind of model: which occupation the pronoun refers to, by "
        "log P(occupation | '<sentence> ‘<Pronoun>’ refers to the') on masked and causal LMs (lm-eval's Winogender "
        "prompt) or by a chat model's reply; one row per occupation (or per reply)"
    )
    citation = (
        f"{CITATION}; Gao, L., et al. (2024). A framework for few-shot language model evaluation "
        "(lm-evaluation-harness 0.4.13, the winogender prompt), doi:10.5281/zenodo.12608602"
    )
    measure = ""  # each row names its own
    n_options = 2
    extra_columns = table_columns(COLUMNS)
    likelihood_requests: ClassVar[frozenset[str]] = frozenset({"continuation"})

    def check_item(self, item: ChoiceItem) -> None:
        """A WinoBias item (its sentence and bracketed pronoun), before any model loads."""
        if not item.derived.get("sentence") or not item.derived.get("pronouns"):
            raise StimuliError(
                f"{item.where}: scorer 'winobias' reads WinoBias items (a sentence and its bracketed pronoun); "
                f"item {item.id!r} is not one"
            )

    def likelihood_rows(
        self, model: LanguageModel, items: list[ChoiceItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Two ``continuation`` requests per sentence: each occupation after the context."""
        from assoc.lm import ContinuationRequest

        method = likelihood_method(model.kind)
        answers = model.continuation(
            [ContinuationRequest(context_of(item), " " + option) for item in items for option in item.options],
            checkpoints=checkpoints,
        )
        measure = f"{method}_given_context"
        return in_item_order(
            items, self.item_rows(model, items, answers, method=method, measure=measure, context=context_of)
        )

    def choice_form(self, item: ChoiceItem) -> ChoiceForm:
        """Whom the pronoun refers to, the two occupations shown as ``the <occupation>``."""
        question = QUESTION.format(sentence=item.derived["sentence"], pronoun=pronoun_of(item))
        return ChoiceForm(
            question,
            tuple(f"the {option}" for option in item.options),
            prompt=context_of(item),
            delimiter=" ",
            scored=tuple(item.options),
        )

"""The ``fmat`` scorer: log probabilities of [MASK] candidates (Bao, 2024)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, positive
from assoc.lm import MODEL_OPTIONS, STATUS_COLUMN, LMScorer

if TYPE_CHECKING:
    from assoc import MaskItem
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

from .citation import CITATION

EXTRA_COLUMNS = {
    "design": "the design (study) the row belongs to",
    "mask_group": "the [MASK] candidate group (e.g. male)",
    "mask": "the [MASK] candidate word as written in the stimuli",
    "sentence": "the query with {TARGET}/{ATTRIB} filled in ([MASK] kept)",
    "token": "the vocabulary token(s) the option becomes at the mask position, as the tokenizer spells them "
    "(e.g. 'Ġman', '▁man', 'man'); several space-separated tokens when the option is out of vocabulary",
    "oov": "True when the option is not a single token of the model's vocabulary",
    "n_tokens": "number of tokens the option becomes at the mask position (1 = in vocabulary)",
    "status": STATUS_COLUMN,
}


def _check_tokens(value: dict) -> dict:
    for key, item in value.items():
        if isinstance(item, dict):
            if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in item.items()):
                raise ValueError(f"model {key!r}: map candidate words to token strings")
        elif not isinstance(item, str) or not item:
            raise ValueError(f"map candidate words to token strings (e.g. {{he: Ġhe}}), got {key!r}: {item!r}")
    return value


class FMATScorer(LMScorer):
    """Log probability of each [MASK] candidate in each filled query, for any fill-mask model.

    It reads the masked engine's word pieces and adds temporary tokens (``oov='add_tokens'``), so it
    takes the ``masked`` kind only and works on the kind's engine.
    """

    name = "fmat"
    description = "Fill-Mask Association Test: log P(candidate | query) at the [MASK] of BERT-family models."
    citation = CITATION
    measure = "log_prob"
    requires_models = True
    needs_queries = True
    extra_columns: ClassVar[dict[str, str]] = EXTRA_COLUMNS
    model_kinds = ("masked",)
    #: 2: rows carry ``status`` (queries longer than the model accepts kept as NaN rows, ``too_long``)
    cache_version = 2
    options = (
        Option(
            "oov",
            str,
            "nan",
            "out-of-vocabulary [MASK] candidates: 'nan' (flag, value NaN), 'add_tokens' (FMAT's "
            "temporary tokens) or 'multi_token' (exact left-to-right token-sequence probability)",
            choices=("nan", "add_tokens", "multi_token"),
        ),
        Option(
            "weight_decay",
            float,
            1.0,
            "oov='add_tokens': raw weight decay**i of the i-th sub-token in the averaged embedding (1 = equal weights)",
            check=positive,
        ),
        Option(
            "token_overrides",
            dict,
            None,
            "explicit candidate -> token overrides, {word: token} or {model: {word: token}}",
            check=_check_tokens,
            renamed_from=("tokens",),
        ),
        *MODEL_OPTIONS,
    )

    def check_stimuli(self, stimuli: Any) -> None:
        """Require ``[MASK]`` queries and candidate words in every design."""
        from assoc import StimuliError

        super().check_stimuli(stimuli)
        for design in stimuli.designs:
            if not design.mask:
                raise StimuliError(f"scorer 'fmat': design {design.name!r} has no [MASK] candidates")

    def check_items(self, items: list[Any], models: Sequence[str]) -> None:
        """Before any model loads, refuse unused token overrides, fillers with ``[MASK]``, ONNX with added tokens."""
        from assoc import OptionError
        from assoc.lm import split_query

        from .log_probs import check_overrides

        if self.params["oov"] == "add_tokens" and self.params["backend"] != "torch":
            # the export holds the vocabulary it was made with; temporary tokens enlarge it
            raise OptionError(
                f"oov='add_tokens' needs backend='torch': backend {self.params['backend']!r} runs the model as "
                "exported, without temporary tokens"
            )

        check_overrides(self.params["token_overrides"], models, {item.option for item in items})
        for text in {item.filling.text for item in items}:
            split_query(text)  # a filler that contains "[MASK]" is caught before any model loads

    def items_per_unit(self) -> int:
        """Filled queries per work unit: all of them with ``oov='add_tokens'``, else the default."""
        # Temporary tokens (oov='add_tokens') enlarge the softmax of every query by the same words, so a
        # model's queries must be scored together: one unit per model.
        return sys.maxsize if self.params["oov"] == "add_tokens" else super().items_per_unit()

    def score_items(
        self, model: LanguageModel, items: list[MaskItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """One row per ``[MASK]`` candidate of the unit's filled queries (:func:`.log_probs.score_model`)."""
        from .log_probs import score_model

        p = self.params
        return score_model(
            model.engine,  # type: ignore[attr-defined]  # the masked kind's MaskedLM
            items,
            oov=p["oov"],
            weight_decay=p["weight_decay"],
            token_overrides=p["token_overrides"],
            batch_tokens=p["batch_tokens"],
            namespace=checkpoints,
            warn=False,
        )

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> Any:
        """The table of all units' rows, with one out-of-vocabulary warning per model.

        Rows kept without a value for another reason (``status`` ``too_long``) are counted in the run
        report (``not_scored``) with one warning line (:func:`assoc.lm.settle_statuses`).
        """
        from assoc import from_records, set_run_report
        from assoc.lm import settle_statuses

        from .log_probs import warn_about_tokens

        missing: dict[str, set[str]] = {model: set() for model in models}
        merged: dict[str, set[str]] = {model: set() for model in models}
        for row in rows:
            if row["oov"]:
                missing[row["model"]].add(row["mask"])
            if row.get("context_changed"):
                merged[row["model"]].add(row["mask"])
        for model in models:  # one warning per model, however many units its rows came from
            warn_about_tokens(model, missing[model], merged[model], self.params["oov"])
        rows = [{k: v for k, v in row.items() if k != "context_changed"} for row in rows]
        rows, report = settle_statuses(self.name, rows, quiet=("oov",))  # oov: warned about just above
        table = from_records(rows, scorer=self.name, measure=self.measure, extra_columns=list(EXTRA_COLUMNS))
        return set_run_report(table, report) if report else table

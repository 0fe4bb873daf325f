"""The ``fmat`` scorer: log probabilities of [MASK] options (Bao, 2024)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from assoc.mlm.options import MAX_TOKENS_OPTION, MODEL_OPTIONS
from assoc.options import Option, positive
from assoc.scorer import Scorer

from . import CITATION

EXTRA_COLUMNS = {
    "design": "the design (study) the row belongs to",
    "mask_group": "the [MASK] option group (e.g. male)",
    "mask": "the [MASK] option word as written in the stimuli",
    "sentence": "the query with {TARGET}/{ATTRIB} filled in ([MASK] kept)",
    "token": "the vocabulary token(s) the option becomes at the mask position, as the tokenizer spells them "
             "(e.g. 'Ġman', '▁man', 'man'); several space-separated tokens when the option is out of vocabulary",
    "oov": "True when the option is not a single token of the model's vocabulary",
    "n_tokens": "number of tokens the option becomes at the mask position (1 = in vocabulary)",
}


def _check_tokens(value: dict) -> dict:
    for key, item in value.items():
        if isinstance(item, dict):
            if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in item.items()):
                raise ValueError(f"model {key!r}: map option words to token strings")
        elif not isinstance(item, str) or not item:
            raise ValueError(f"map option words to token strings (e.g. {{he: Ġhe}}), got {key!r}: {item!r}")
    return value


class FMATScorer(Scorer):
    """Log probability of each [MASK] option in each filled query, for any fill-mask model."""

    name = "fmat"
    description = "Fill-Mask Association Test: log P(option | query) at the [MASK] of BERT-family models."
    citation = CITATION
    measure = "log_prob"
    requires_models = True
    needs_queries = True
    extra_columns: ClassVar[dict[str, str]] = EXTRA_COLUMNS
    options = (
        Option("oov", str, "nan", "out-of-vocabulary options: 'nan' (flag, value NaN), 'add_tokens' (FMAT's "
               "temporary tokens) or 'multi_token' (exact left-to-right token-sequence probability)",
               choices=("nan", "add_tokens", "multi_token")),
        Option("weight_decay", float, 1.0, "oov='add_tokens': raw weight decay**i of the i-th sub-token in the "
               "averaged embedding (1 = equal weights)", check=positive),
        Option("tokens", dict, None, "explicit option -> token overrides, {word: token} or {model: {word: token}}",
               check=_check_tokens),
        MAX_TOKENS_OPTION,
        *MODEL_OPTIONS,
    )

    def check_stimuli(self, stimuli: Any) -> None:
        """Require ``[MASK]`` queries and candidate words in every design."""
        from assoc.errors import StimuliError

        super().check_stimuli(stimuli)
        for design in stimuli.designs:
            if not design.mask:
                raise StimuliError(f"scorer 'fmat': design {design.name!r} has no [MASK] options")

    def score(self, stimuli: Any, models: Sequence[str], *, progress: bool) -> Any:
        """Score every query filling with every model: one row per ``[MASK]`` candidate."""
        from assoc.cache import ResultCache
        from assoc.mlm import load_masked_lm
        from assoc.mlm.words import split_query
        from assoc.table import from_records

        from .scoring import check_overrides, items_of, score_model

        self.check_stimuli(stimuli)
        items = items_of(stimuli)
        check_overrides(self.params["tokens"], models, {item.option for item in items})
        for text in {item.filling.text for item in items}:
            split_query(text)  # a filler that contains "[MASK]" is caught before any model loads
        cache = ResultCache(self.params["cache_dir"]) if self.params["cache"] else None
        records: list[dict[str, Any]] = []
        for model in models:
            # One model at a time; the context manager releases its memory before the next loads.
            with load_masked_lm(model, device=self.params["device"], dtype=self.params["dtype"],
                                revision=self.params["revision"]) as lm:
                records += score_model(lm, items, oov=self.params["oov"], weight_decay=self.params["weight_decay"],
                                       tokens=self.params["tokens"], max_tokens=self.params["max_tokens"],
                                       cache=cache, progress=progress)
        return from_records(records, scorer=self.name, measure=self.measure, extra_columns=list(EXTRA_COLUMNS))

"""The ``crows_pairs`` scorer: CrowS-Pairs sentence scores of masked LMs (see :mod:`.crows_scoring`).

One row per sentence (two per pair): ``target_group`` ``sent_more`` / ``sent_less``, ``target`` the
sentence as written in the data, ``attribute_group`` the bias type, ``attribute`` the pair's direction
(``stereo`` / ``antistereo``), ``context`` the pair. ``value`` is the sentence's score; with
``metric="nangia2020"`` and ``faithful=True`` it is rounded to 3 decimals, as ``metric.py`` rounds
before comparing (``score_full`` keeps every digit). The ``crows_pairs`` analysis turns the rows into
the benchmark's numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc import Option, OptionError
from assoc.lm import MODEL_OPTIONS, LMScorer

from .items import CITATION as CROWS_CITATION
from .items import CrowsPair, pairs_of
from .scoring import LOWERCASE, MEASURES, METRICS, NANGIA_DECIMALS

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

CITATION = (
    f"{CROWS_CITATION}; Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model "
    "scoring. ACL 2020 (all_tokens); Kaneko, M., & Bollegala, D. (2022). Unmasking the mask - evaluating "
    "social biases in masked language models. AAAI 2022 (aul, aula)"
)


class CrowsPairsScorer(LMScorer):
    """CrowS-Pairs sentence scores of masked LMs: the authors' metric, all-token PLL, AUL and AULA.

    ``nangia2020``: score(S) = sum over the shared tokens (aligned with difflib, first and last
    excluded) of log P(token | S with that token masked) (Nangia et al., 2020); ``all_tokens``: the
    PLL of Salazar et al. (2020); ``aul``/``aula``: the mean (attention-weighted) log P of the
    unmasked tokens (Kaneko & Bollegala, 2022). Natural logarithms.
    """

    name = "crows_pairs"
    description = (
        "CrowS-Pairs (Nangia et al. 2020) sentence scores of masked LMs: the authors' metric (nangia2020, "
        "faithful to metric.py), all-token PLL, AUL, AULA; one row per sentence"
    )
    citation = CITATION
    measure = "log_prob_shared"  # of the default metric; each row names its own (MEASURES)
    requires_models = True
    needs_queries = True
    model_kinds = ("masked",)
    extra_columns = {
        "design": "the pair (design name, pair<index> of the authors' file)",
        "pair": "the pair (as design)",
        "bias_type": "the pair's bias type (as attribute_group)",
        "stereo_antistereo": "stereo: sent_more demonstrates a stereotype; antistereo: it violates one",
        "crows_metric": "nangia2020, all_tokens, aul or aula",
        "faithful": "True: value rounded to 3 decimals as metric.py does before comparing",
        "score_full": "the sentence score with every digit (value before any rounding)",
        "scored_text": "the text the model saw (lower-cased for uncased models by default, as metric.py)",
        "n_scored": "number of tokens whose log-probabilities make up the score",
        "n_tokens": "number of tokens in the sentence (special tokens excluded)",
        "token_log_probs": "(option per_token) JSON list of [position, token, log_prob] of the scored tokens",
    }
    options = (
        Option(
            "metric",
            str,
            "nangia2020",
            "nangia2020 (the authors' metric.py: shared tokens masked one at a time), all_tokens (PLL, "
            "Salazar et al. 2020), aul or aula (Kaneko & Bollegala 2022)",
            choices=METRICS,
        ),
        Option(
            "faithful",
            bool,
            False,
            "nangia2020 only: round each sentence score to 3 decimals before it is compared, as metric.py "
            "does (pairs closer than 0.0005 become ties); default: compare every digit",
        ),
        Option(
            "lowercase",
            str,
            "auto",
            "lower-case the sentences first: auto (for uncased tokenizers, as metric.py does for BERT and "
            "ALBERT), always or never",
            choices=LOWERCASE,
        ),
        Option("per_token", bool, False, "add a token_log_probs column with every scored token's log-probability"),
        *MODEL_OPTIONS,
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        p = self.params
        if p["faithful"] and p["metric"] != "nangia2020":
            raise OptionError("option 'faithful' of scorer 'crows_pairs' applies to metric='nangia2020' only")
        if p["metric"] == "aula" and p["backend"] != "torch":
            raise OptionError("metric='aula' reads attention weights: use backend='torch'")

    def checkpoint_name(self) -> str:
        """The checkpoints' name: each metric masks different copies."""
        return f"crows-{self.params['metric']}"

    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """Blocks of ``unit_size`` pairs; the pairs are read (and checked) before any model loads."""
        pairs = pairs_of(stimuli)
        size = self.items_per_unit()
        blocks = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        return [
            ([[p.pair, p.sent_more, p.sent_less, p.stereo_antistereo, p.bias_type] for p in block], len(block))
            for block in blocks
        ]

    def decode(self, payload: Any) -> list[CrowsPair]:
        """The pairs of a unit's payload."""
        return [CrowsPair(*fields) for fields in payload]

    def score_items(
        self, model: LanguageModel, items: list[CrowsPair], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Two rows per pair of the unit: ``sent_more`` then ``sent_less``."""
        from .scoring import score_pairs

        p = self.params
        pairs = items
        scores = score_pairs(
            model.engine,  # type: ignore[attr-defined]  # the masked kind's MaskedLM
            pairs,
            metric=p["metric"],
            lowercase=p["lowercase"],
            batch_tokens=p["batch_tokens"],
            namespace=checkpoints,
        )
        rows = []
        for pair, (more, less) in zip(pairs, scores, strict=True):
            for group, sentence, result in (("sent_more", pair.sent_more, more), ("sent_less", pair.sent_less, less)):
                value = round(result.score, NANGIA_DECIMALS) if p["faithful"] else result.score
                row = {
                    "model": model.name,
                    "context": pair.pair,
                    "target_group": group,
                    "target": sentence,
                    "attribute_group": pair.bias_type,
                    "attribute": pair.stereo_antistereo,
                    "measure": MEASURES[p["metric"]],
                    "value": value,
                    "design": pair.pair,
                    "pair": pair.pair,
                    "bias_type": pair.bias_type,
                    "stereo_antistereo": pair.stereo_antistereo,
                    "crows_metric": p["metric"],
                    "faithful": bool(p["faithful"]),
                    "score_full": result.score,
                    "scored_text": result.text,
                    "n_scored": result.n_scored,
                    "n_tokens": result.n_tokens,
                }
                if p["per_token"]:
                    row["token_log_probs"] = json.dumps([list(t) for t in result.token_log_probs], ensure_ascii=False)
                rows.append(row)
        return rows

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of all units' rows (``token_log_probs`` only with ``per_token``)."""
        from assoc import from_records

        extra = [c for c in self.extra_columns if self.params["per_token"] or c != "token_log_probs"]
        return from_records(rows, scorer=self.name, measure=MEASURES[self.params["metric"]], extra_columns=extra)

"""The ``crows_pairs`` scorer: CrowS-Pairs sentence scores of masked and causal LMs (see :mod:`.scoring`).

One row per sentence (two per pair): ``target_group`` ``sent_more`` / ``sent_less``, ``target`` the
sentence as written in the data, ``attribute_group`` the bias type, ``attribute`` the pair's direction
(``stereo`` / ``antistereo``), ``context`` the pair. ``value`` is the sentence's score:

* a masked LM: the score ``metric`` names (``nangia2020``, the authors' ``metric.py``; ``all_tokens``,
  ``aul``, ``aula``); with ``metric="nangia2020"`` and ``faithful=True`` it is rounded to 3 decimals, as
  ``metric.py`` rounds before comparing (``score_full`` keeps every digit);
* any other model kind that serves ``sentence`` requests (a causal LM, a served model): the sentence's
  log-likelihood, lm-evaluation-harness's ``crows_pairs`` definition (``loglikelihood("", sentence)``: every
  token after the start token, the causal kind's ``bos="auto"``), ``measure`` ``sentence``, ``crows_metric``
  ``lmeval``. The ``crows_pairs`` analysis then gives lm-eval's ``pct_stereotype`` (its ``metric_score``)
  and ``likelihood_diff``.

The ``crows_pairs`` analysis turns the rows into the benchmark's numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc import ChoiceItem, ItemStimuli, Option, OptionError
from assoc.lm import MODEL_OPTIONS, LMScorer, SentenceRequest, options_for

from ..subsets import SUBSET_OPTIONS, check_subset, subset_of
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
#: The ``crows_metric`` and ``measure`` of a sentence log-likelihood (lm-evaluation-harness's causal definition).
LMEVAL_METRIC = "lmeval"
SENTENCE_MEASURE = "sentence"


def subset_pairs(pairs: list[CrowsPair], *, limit: int | None, sample: int | None, seed: int) -> list[CrowsPair]:
    """The first ``limit`` pairs of each bias type, or ``sample`` pairs drawn per bias type (file order kept).

    The draw is :meth:`assoc.ItemStimuli.subset`'s (seeded per bias type, in the order the types first appear).
    """
    if limit is None and sample is None:
        return pairs
    items = [ChoiceItem(p.pair, p.bias_type, {}, (p.sent_more, p.sent_less)) for p in pairs]
    kept = {
        item.id for item in ItemStimuli(items, name="crows_pairs").subset(limit=limit, sample=sample, seed=seed).items
    }
    return [p for p in pairs if p.pair in kept]


class CrowsPairsScorer(LMScorer):
    """CrowS-Pairs sentence scores: masked LMs by the authors' metric, all-token PLL, AUL or AULA; causal LMs by log P.

    Masked LMs, ``nangia2020``: score(S) = sum over the shared tokens (aligned with difflib, first and
    last excluded) of log P(token | S with that token masked) (Nangia et al., 2020); ``all_tokens``: the
    PLL of Salazar et al. (2020); ``aul``/``aula``: the mean (attention-weighted) log P of the unmasked
    tokens (Kaneko & Bollegala, 2022). Any other kind that serves ``sentence``: log P(S), lm-evaluation-
    harness's definition. Natural logarithms.
    """

    name = "crows_pairs"
    description = (
        "CrowS-Pairs (Nangia et al. 2020) sentence scores: masked LMs by the authors' metric (nangia2020, "
        "faithful to metric.py), all-token PLL, AUL, AULA; causal LMs by log P(sentence), lm-eval's definition; "
        "one row per sentence"
    )
    citation = CITATION
    measure = "log_prob_shared"  # of the default metric; each row names its own (MEASURES)
    requires_models = True
    needs_queries = True
    #: Masked LMs are read through their engine (aligned tokens, attention); every other kind through ``sentence``.
    requests = frozenset({"sentence"})
    #: A bare name whose files cannot tell is a masked LM (the scorer's kind before it took causal LMs too).
    default_kind = "masked"
    extra_columns = {
        "design": "the pair (design name, pair<index> of the authors' file)",
        "pair": "the pair (as design)",
        "bias_type": "the pair's bias type (as attribute_group)",
        "stereo_antistereo": "stereo: sent_more demonstrates a stereotype; antistereo: it violates one",
        "crows_metric": "nangia2020, all_tokens, aul or aula (masked LMs); lmeval (log P(sentence), other kinds)",
        "faithful": "True: value rounded to 3 decimals as metric.py does before comparing (masked LMs)",
        "score_full": "the sentence score with every digit (value before any rounding)",
        "scored_text": "the text the model saw (lower-cased for uncased masked models by default, as metric.py)",
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
        *SUBSET_OPTIONS,
        *options_for(["masked", "causal"], base=MODEL_OPTIONS),
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        p = self.params
        if p["faithful"] and p["metric"] != "nangia2020":
            raise OptionError("option 'faithful' of scorer 'crows_pairs' applies to metric='nangia2020' only")
        if p["metric"] == "aula" and p["backend"] != "torch":
            raise OptionError("metric='aula' reads attention weights: use backend='torch'")
        check_subset(p, self.name)

    def checkpoint_name(self) -> str:
        """The checkpoints' name: each metric masks different copies."""
        return f"crows-{self.params['metric']}"

    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """Blocks of ``unit_size`` pairs; the pairs are read (and checked) before any model loads."""
        p = self.params
        pairs = subset_pairs(pairs_of(stimuli), **subset_of(p))
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

        if model.kind != "masked":
            return self.sentence_rows(model, items, checkpoints)
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

    def sentence_rows(
        self, model: LanguageModel, pairs: list[CrowsPair], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Two rows per pair: each sentence's log-likelihood (``sentence`` requests: lm-eval's causal definition)."""
        sentences = [sentence for pair in pairs for sentence in (pair.sent_more, pair.sent_less)]
        answers = model.sentence([SentenceRequest(text) for text in sentences], checkpoints=checkpoints)
        rows = []
        for number, (sentence, answer) in enumerate(zip(sentences, answers, strict=True)):
            pair = pairs[number // 2]
            row = {
                "model": model.name,
                "context": pair.pair,
                "target_group": "sent_more" if number % 2 == 0 else "sent_less",
                "target": sentence,
                "attribute_group": pair.bias_type,
                "attribute": pair.stereo_antistereo,
                "measure": SENTENCE_MEASURE,
                "value": answer.value,
                "design": pair.pair,
                "pair": pair.pair,
                "bias_type": pair.bias_type,
                "stereo_antistereo": pair.stereo_antistereo,
                "crows_metric": LMEVAL_METRIC,
                "faithful": False,
                "score_full": answer.value,
                "scored_text": sentence,
                "n_scored": answer.n_tokens,
                "n_tokens": answer.n_tokens,
            }
            if self.params["per_token"]:
                scored = [[k, token, value] for k, (token, value) in enumerate(zip(answer.tokens, answer.token_values))]
                row["token_log_probs"] = json.dumps(scored, ensure_ascii=False)
            rows.append(row)
        return rows

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of all units' rows (``token_log_probs`` only with ``per_token``)."""
        from assoc import from_records

        extra = [c for c in self.extra_columns if self.params["per_token"] or c != "token_log_probs"]
        return from_records(rows, scorer=self.name, measure=MEASURES[self.params["metric"]], extra_columns=extra)

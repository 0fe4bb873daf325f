"""The ``pll`` scorer: pseudo-log-likelihoods of every filled sentence of a design.

Each query's ``[MASK]`` slot is filled with each variant (a mask-group word or
phrase) and ``{TARGET}``/``{ATTRIB}`` with their fillers; each resulting sentence
is one row (``measure = "pll"``). The formula is :func:`assoc.lm.pseudo_log_likelihoods`' (the one
implementation, shared with the masked kind's ``sentence`` requests and CrowS-Pairs' ``all_tokens``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assoc import MaskItem, Option, StimuliError, fill_mask, split_at_mask
from assoc.lm import MODEL_OPTIONS, PLL_METRICS, PLL_TOKEN_SELECTIONS, STATUS_COLUMN, LMScorer

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

CITATION = (
    "Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model scoring. "
    "ACL 2020, 2699-2712. doi:10.18653/v1/2020.acl-main.240; "
    "Kauf, C., & Ivanova, A. (2023). A better way to do masked language model scoring. ACL 2023 (word_l2r); "
    "Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs. EMNLP 2020 (context tokens)"
)


#: Put a variant into the ``[MASK]`` slot of a filled query: the sentence and the variant's character span.
filled_sentence = fill_mask


def sentence_rows(items: Sequence[MaskItem]) -> list[dict[str, Any]]:
    """The filled sentence of each item, with its table columns and the variant's character span."""
    out: list[dict[str, Any]] = []
    for item in items:
        sentence, span = item.sentence()
        row: dict[str, str] = {
            "context": item.filling.query,
            **item.roles(),
            "design": item.filling.design,
            "sentence": sentence,
        }
        out.append({"row": row, "span": span})
    return out


class PLLScorer(LMScorer):
    """Pseudo-log-likelihood of sentences with the [MASK] slot filled by each variant.

    value = PLL(S) = sum_{i in I} log P(s_i | S with s_i masked) (Salazar et al., 2020), I the
    scored tokens: all non-special tokens, the context tokens (all but the variant's: log P(C|V),
    Nangia et al., 2020; Watson et al., 2023, Eq. 2) or the variant's; ``reduction="mean"``
    divides by |I|. ``metric="word_l2r"`` also masks the later sub-tokens of the scored token's
    word (Kauf & Ivanova, 2023).
    """

    name = "pll"
    description = (
        "Pseudo-log-likelihood of each sentence with [MASK] filled by each candidate (masked LMs; "
        "whole sentence, or the context given the option)"
    )
    citation = CITATION
    measure = "pll"
    requires_models = True
    needs_queries = True
    model_kinds = ("masked",)
    extra_columns = {
        "design": "design name",
        "mask_group": "group of the variant that fills [MASK]",
        "mask": "the variant (word or phrase) that fills [MASK]",
        "sentence": "the scored sentence: the query with the variant and {TARGET}/{ATTRIB} filled",
        "pll_metric": "masking metric: original (Salazar et al. 2020) or word_l2r (Kauf & Ivanova 2023)",
        "tokens_scored": "which tokens' log-probabilities are summed: all, context (all but the variant's: "
        "log P(C|V)) or variant",
        "n_scored": "number of tokens scored",
        "n_tokens": "number of tokens in the sentence (without special tokens)",
        "pll_sum": "sum of the scored tokens' log-probabilities (natural log)",
        "pll_mean": "pll_sum / n_scored",
        "token_log_probs": "(option per_token) JSON list of [position, token, log_prob] of the scored tokens",
        "status": STATUS_COLUMN,
    }
    #: 2: rows carry ``status`` (sentences longer than the model accepts kept as NaN rows, ``too_long``)
    cache_version = 2
    options = (
        Option(
            "metric",
            str,
            "original",
            "masking metric: 'original' masks one token at a time; 'word_l2r' "
            "also masks the later sub-tokens of the same word",
            choices=PLL_METRICS,
        ),
        Option(
            "tokens_scored",
            str,
            "all",
            "tokens to score: 'all', 'context' (exclude the variant's tokens: log "
            "P(C|V), as Nangia et al. 2020 and Watson et al. 2023) or 'variant' (the output column of the same "
            "name)",
            choices=PLL_TOKEN_SELECTIONS,
            renamed_from=("tokens",),
        ),
        Option(
            "reduction",
            str,
            "sum",
            "the value column: 'sum' (the PLL) or 'mean' (PLL per scored token)",
            choices=("sum", "mean"),
        ),
        Option("per_token", bool, False, "add a token_log_probs column with every scored token's log-probability"),
        *MODEL_OPTIONS,
    )

    def sentences(self, stimuli: Stimuli) -> list[dict[str, Any]]:
        """Every filled sentence of ``stimuli``, with its table columns and variant span."""
        items = stimuli.mask_items()
        self.check_items(items, [])
        return sentence_rows(items)

    def check_items(self, items: list[MaskItem], models: Sequence[str]) -> None:
        """Refuse stimuli without sentences and fillers that contain ``[MASK]``, before any model loads."""
        if not items:
            raise StimuliError("the stimuli produce no sentences to score")
        for text in {item.filling.text for item in items}:
            split_at_mask(text)  # a filler that contains "[MASK]" is caught before any model loads

    def score_items(
        self, model: LanguageModel, items: list[MaskItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """One PLL row per filled sentence of the unit (the per-token detail needs the kind's engine).

        A sentence longer than the model accepts is never cut: its row is kept without a value (status
        ``too_long``), counted in the run report by :meth:`merge`.
        """
        from assoc.lm import pseudo_log_likelihoods, too_long_reason, without_value

        p = self.params
        engine = model.engine  # type: ignore[attr-defined]  # the masked kind's MaskedLM
        every = sentence_rows(items)
        lengths = {it["row"]["sentence"]: len(engine.encode(it["row"]["sentence"])) for it in every}
        rows = [it for it in every if lengths[it["row"]["sentence"]] <= engine.max_length]
        results = pseudo_log_likelihoods(
            engine,
            [it["row"]["sentence"] for it in rows],
            [it["span"] for it in rows],
            metric=p["metric"],
            tokens_scored=p["tokens_scored"],
            batch_tokens=p["batch_tokens"],
            namespace=checkpoints,
        )
        records = []
        computed = {id(item): result for item, result in zip(rows, results, strict=True)}
        for item in every:
            sentence = item["row"]["sentence"]
            if id(item) not in computed:
                reason = too_long_reason(sentence, lengths[sentence], model.name, engine.max_length)
                kept = {"model": model.name, **item["row"], "measure": self.measure, "pll_metric": p["metric"]}
                kept.update(tokens_scored=p["tokens_scored"], n_scored=0, n_tokens=lengths[sentence])
                records.append(without_value(kept, "too_long", reason))
                continue
            result = computed[id(item)]
            row = {
                "model": model.name,
                **item["row"],
                "measure": self.measure,
                "value": result.pll if p["reduction"] == "sum" else result.mean,
                "pll_metric": result.metric,
                "tokens_scored": result.tokens_scored,
                "n_scored": result.n_scored,
                "n_tokens": result.n_tokens,
                "pll_sum": result.pll,
                "pll_mean": result.mean,
                "status": "ok",
            }
            if p["per_token"]:
                row["token_log_probs"] = json.dumps(
                    [[t.position, t.token, t.log_prob] for t in result.token_log_probs], ensure_ascii=False
                )
            records.append(row)
        return records

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of all units' rows (``token_log_probs`` only with ``per_token``); rows without a value counted.

        Sentences kept without a value (status ``too_long``) are counted in the run report
        (``not_scored``) and named in one warning line (:func:`assoc.lm.settle_statuses`).
        """
        from assoc import from_records, set_run_report
        from assoc.lm import settle_statuses

        rows, report = settle_statuses(self.name, rows)
        extra = [c for c in self.extra_columns if self.params["per_token"] or c != "token_log_probs"]
        table = from_records(rows, scorer=self.name, measure=self.measure, extra_columns=extra)
        return set_run_report(table, report) if report else table

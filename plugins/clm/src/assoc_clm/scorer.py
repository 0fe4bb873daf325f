r"""The ``clm`` scorer: log probabilities of filled sentences and of their options under causal LMs.

For each filled query (prefix P, ``[MASK]`` option O, suffix S; ``{TARGET}``/``{ATTRIB}`` filled)
and each option, with x = the sentence's tokens after the BOS policy's start token x_0:

    sentence = log P(P O S) = sum_{j >= 1} log P(x_j | x_<j)
    option   = log P(O | P) = sum_{j in O} log P(x_j | x_<j)

(natural logs). The difference of two options' ``sentence`` values in one query is the causal
analogue of FMAT's log probability ratio (Bao, 2024, Eq. 1):

    LPR_causal(O_1, O_2) = log P(P O_1 S) - log P(P O_2 S)
                         = log P(O_1 S | P) - log P(O_2 S | P),

because the prefix's probability is common to both; it also counts how the option changes the
suffix's probability, which a masked LM's LPR at the mask position does not. The BOS policy and
the context/continuation split are the causal-LM engine's (:func:`assoc.lm.plan_sentence`,
:func:`assoc.lm.special_tokens`; the engine is :class:`assoc.lm.CausalLM`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import MaskItem, Option, StimuliError, split_at_mask
from assoc.lm import BOS_OPTION, STATUS_COLUMN, LMScorer, options_for

if TYPE_CHECKING:
    import pandas as pd

    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

CITATION = (
    "Bao, H. W. (2024). The Fill-Mask Association Test (FMAT). Journal of Personality and Social Psychology "
    "(LPR, here on causal LMs); Gao, L., et al. (2024). A framework for few-shot language model evaluation "
    "(lm-evaluation-harness), doi:10.5281/zenodo.12608602 (context/continuation and BOS conventions); "
    "Misra, K. (2022). minicons: Enabling flexible behavioral and representational analyses of transformer "
    "language models. arXiv:2203.13112"
)

MEASURES = ("sentence", "option", "both")
#: Requests per engine call and per checkpoint pack (the grain of resuming inside a unit).
CHUNK = 4096

EXTRA_COLUMNS = {
    "design": "design name",
    "mask_group": "group of the option that fills [MASK]",
    "mask": "the option (word or phrase) that fills [MASK]",
    "sentence": "the scored sentence: the query with the option and {TARGET}/{ATTRIB} filled",
    "bos": "BOS policy: auto (BOS, else EOS, prepended), tokenizer (what the tokenizer adds) or none",
    "start_token": "the sequence's first token, conditioned on and never scored (the BOS token, or the "
    "text's first token when nothing is prepended)",
    "n_tokens": "tokens scored in the sentence",
    "n_option_tokens": "tokens of the option scored (after the text before it)",
    "sentence_log_prob": "log P(sentence): sum of its scored tokens' natural-log probabilities",
    "option_log_prob": "log P(option | text before it): sum over the option's tokens",
    "token_log_probs": "(option per_token) JSON list of [token, log_prob] of the sentence's scored tokens",
    "status": STATUS_COLUMN,
}


class CLMScorer(LMScorer):
    """Sentence and option log probabilities of every filled ``[MASK]`` option, under causal LMs.

    value = log P(sentence) (``measure="sentence"``) or log P(option | text before it)
    (``measure="option"``), natural logs, summed over tokens (``reduction="sum"``) or averaged
    (``"mean"``). See :mod:`assoc_clm.scorer` for the formulas and :func:`assoc.lm.special_tokens` for the
    BOS policy and the tokenization rules. It takes the ``causal`` kind and reads each token's value
    from the kind's engine (one pass per shared prefix: a query's options share its context), and the
    ``server`` kind (``server:<model>``: the same token ids, scored by an inference server; one prompt
    per sentence serves both measures).
    """

    name = "clm"
    description = (
        "Causal-LM log probabilities (GPT-2, Llama, ...): log P(sentence with each [MASK] option) and "
        "log P(option | text before it); the causal analogue of FMAT's LPR and of PLL sentence scores"
    )
    citation = CITATION
    measure = "sentence"
    requires_models = True
    needs_queries = True
    extra_columns: ClassVar[dict[str, str]] = EXTRA_COLUMNS
    model_kinds = ("causal", "server")
    #: 2: rows carry ``status`` (too-long texts and options with nothing before them kept as NaN rows)
    cache_version = 2
    options = (
        Option(
            "measure",
            str,
            "sentence",
            "the value column: 'sentence' (log P of the whole filled sentence), 'option' (log P of the "
            "option's tokens given the text before them) or 'both' (two rows per option, one per measure)",
            choices=MEASURES,
        ),
        BOS_OPTION,
        Option(
            "reduction",
            str,
            "sum",
            "the value: 'sum' of the token log probabilities or their 'mean' per scored token (minicons' "
            "sequence_score default)",
            choices=("sum", "mean"),
        ),
        Option("per_token", bool, False, "add a token_log_probs column with every scored token's log probability"),
        *(option for option in options_for(["causal", "server"]) if option.name != "bos"),
    )

    def check_stimuli(self, stimuli: Any) -> None:
        """Require ``[MASK]`` options in every design."""
        super().check_stimuli(stimuli)
        for design in stimuli.designs:
            if not design.mask:
                raise StimuliError(f"scorer 'clm': design {design.name!r} has no [MASK] options")

    def check_items(self, items: list[MaskItem], models: Sequence[str]) -> None:
        """Refuse stimuli without sentences and fillers that contain ``[MASK]``, before any model loads."""
        if not items:
            raise StimuliError("the stimuli produce no sentences to score")
        for text in {item.filling.text for item in items}:
            split_at_mask(text)

    def checkpoint_name(self) -> str:
        """The checkpoints' name: their values depend on the BOS policy."""
        return f"clm-log-prob-{self.params['bos']}"

    def score_items(
        self, model: LanguageModel, items: list[MaskItem], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """One row per option of the unit's filled queries (two with ``measure="both"``)."""
        from assoc.lm import without_value

        p = self.params
        scored = score_items(
            model.engine,  # type: ignore[attr-defined]  # the causal kind's CausalLM
            items,
            bos=p["bos"],
            batch_tokens=p["batch_tokens"],
            namespace=checkpoints,
            per_token=p["per_token"],
        )
        measures = ("sentence", "option") if p["measure"] == "both" else (p["measure"],)
        records = []
        for item, result in zip(items, scored, strict=True):
            base = {
                "model": model.name,
                "context": item.filling.query,
                **item.roles(),
                "design": item.filling.design,
                "sentence": result["sentence"],
                "bos": p["bos"],
                "start_token": result["start_token"],
                "n_tokens": result["n_tokens"],
                "n_option_tokens": result["n_option_tokens"],
                "sentence_log_prob": result["sentence_log_prob"],
                "option_log_prob": result["option_log_prob"],
            }
            if p["per_token"]:
                base["token_log_probs"] = json.dumps(result["token_log_probs"], ensure_ascii=False)
            for measure in measures:
                total = result[f"{measure}_log_prob"]
                count = result["n_tokens" if measure == "sentence" else "n_option_tokens"]
                value = total if p["reduction"] == "sum" else (total / count if count else math.nan)
                status = result[f"{measure}_status"]
                row = {**base, "measure": measure, "value": value, "status": status}
                records.append(row if status == "ok" else without_value(row, status, result[f"{measure}_reason"]))
        return records

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of all units' rows (``token_log_probs`` only when ``per_token``); rows without a value counted.

        Rows kept without a value (``status`` ``too_long``, ``no_start_token``) are counted in the run
        report (``not_scored``) and named in one warning line per status (:mod:`assoc.lm.statuses`).
        """
        from assoc import from_records, set_run_report
        from assoc.lm import settle_statuses

        rows, report = settle_statuses(self.name, rows)
        extra = [c for c in self.extra_columns if self.params["per_token"] or c != "token_log_probs"]
        table = from_records(rows, scorer=self.name, extra_columns=extra)
        return set_run_report(table, report) if report else table


def score_items(
    lm: Any,
    items: Sequence[MaskItem],
    *,
    bos: str = "auto",
    batch_tokens: int | None = None,
    namespace: Any = None,
    progress: bool = False,
    per_token: bool = True,
) -> list[dict[str, Any]]:
    """Sentence and option log probabilities of each item under the causal LM ``lm`` (:class:`assoc.lm.CausalLM`).

    Returns per item a dict with ``sentence``, ``start_token``, ``n_tokens``, ``n_option_tokens``,
    ``sentence_log_prob``, ``option_log_prob``, ``token_log_probs`` ([token, log_prob] pairs; an
    empty list with ``per_token=False``, which spares naming every token) and,
    per measure, ``<measure>_status`` (``"ok"``, ``"too_long"``: the sentence is longer than the model
    accepts, nothing of it is computed; ``"no_start_token"``: the option starts the sentence and the
    policy puts nothing before it, so ``log P(option | text before it)`` has no value) and
    ``<measure>_reason``. A value without status ``"ok"`` is NaN, never a sum over part of the tokens.
    ``namespace``: where log probabilities are checkpointed (an :class:`assoc.infra.Namespace`),
    so an interrupted run resumes.
    """
    from assoc.lm import cached_log_probs, plan_sentence, special_tokens, too_long_reason

    lead, trail = special_tokens(lm.tokenizer, bos)
    texts = [item.sentence() for item in items]
    plans = [plan_sentence(lm.tokenizer, lead, trail, sentence, span) for sentence, span in texts]
    too_long = [
        len(plan.tokens) > lm.max_length or any(len(r.input_ids) > lm.max_length for r in plan.requests())
        for plan in plans
    ]
    index: dict[Any, int] = {}
    for plan, skip in zip(plans, too_long):
        if skip:
            continue
        for request in plan.requests():
            index.setdefault(request, len(index))
    requests = list(index)
    values = cached_log_probs(
        lm, requests, namespace, chunk=CHUNK, batch_tokens=batch_tokens, progress=progress, desc=f"clm {lm.name}"
    )
    out = []
    for (sentence, _), plan, skip in zip(texts, plans, too_long):
        if not plan.tokens:
            raise StimuliError(f"the sentence {sentence!r} has no tokens to score")
        names = lm.tokenizer.convert_ids_to_tokens(
            list(plan.tokens) if per_token and not skip else list(plan.tokens[:1])
        )
        if skip:
            reason = too_long_reason(sentence, len(plan.tokens), lm.name, lm.max_length)
            out.append(
                {
                    "sentence": sentence,
                    "start_token": str(names[0]),
                    "n_tokens": 0,
                    "n_option_tokens": 0,
                    "sentence_log_prob": math.nan,
                    "option_log_prob": math.nan,
                    "token_log_probs": [],
                    **{f"{m}_status": "too_long" for m in ("sentence", "option")},
                    **{f"{m}_reason": reason for m in ("sentence", "option")},
                }
            )
            continue
        token_values = [v for part in plan.parts for v in values[index[part]]]
        option_values: list[float] = []
        if plan.option is not None:
            if plan.option_from_sentence:
                option_values = values[index[plan.parts[-1]]][: len(plan.option.continuation)]
            else:
                option_values = values[index[plan.option]]
        option_status, option_reason = "ok", ""
        if plan.option_problem:  # "no_start_token": nothing precedes the option
            option_status = plan.option_problem
            option_reason = f"{shown(sentence)} under bos={bos!r}"
        elif plan.option is None:  # the option's tokens merge into the text before it
            option_status, option_reason = "no_tokens", f"{shown(sentence)}: its option has no token of its own"
        sentence_status, sentence_reason = "ok", ""
        if not token_values:  # a one-token text under a policy that adds nothing: no token after the start
            sentence_status, sentence_reason = "no_tokens", f"{shown(sentence)} has no token after its start token"
        out.append(
            {
                "sentence": sentence,
                "start_token": str(names[0]),
                "n_tokens": len(token_values),
                "n_option_tokens": len(option_values),
                "sentence_log_prob": math.fsum(token_values) if token_values else math.nan,
                "option_log_prob": math.fsum(option_values) if option_values else math.nan,
                "token_log_probs": [[str(t), float(v)] for t, v in zip(names[1:], token_values)] if per_token else [],
                "sentence_status": sentence_status,
                "sentence_reason": sentence_reason,
                "option_status": option_status,
                "option_reason": option_reason,
            }
        )
    return out


def shown(text: str) -> str:
    """A sentence as messages show it (quoted, shortened when long)."""
    return repr(text) if len(text) <= 80 else f"{text[:60]!r}... ({len(text)} characters)"

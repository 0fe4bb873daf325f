r"""The ``discrim_eval`` scorer: DiscrimEval's per-prompt values, from likelihood models and from chat models.

What each kind of model is sent (:mod:`assoc_bias_benchmarks.discrim_eval.items` has the prompt):

* A model kind that serves ``continuation`` (masked and causal LMs, a model behind an inference server) gets
  lm-evaluation-harness 0.4.13's four requests per prompt: :func:`~.items.lmeval_context` and the continuations
  ``yes``, ``Yes``, ``no``, ``No``, each scored as log P(continuation | context). The row's ``value`` is
  :func:`~.items.logit_yes` of the four (``measure`` ``logit_yes``), equal to lm-eval's ``process_results``.
  A causal LM reads them left to right with lm-eval's split of context and continuation, and by default
  (``bos="tokenizer"``) with what lm-eval's HFLM puts before the context: what the tokenizer adds (nothing for
  GPT-2, BOS for Llama). A **masked LM** gives
  the pseudo-log-likelihood of the continuation's tokens with the whole context visible (each continuation
  token masked in turn, the rest of the continuation visible; Salazar et al., 2020): how strongly the model
  fills the answer slot with "yes" rather than "no". It is not a probability of the next word (a masked LM
  sees no "next"), the four values need not sum to at most 1, and the logit is a contrast of fill-in
  scores, not of answer probabilities: report it as the masked LM's measure, not as lm-eval's.
* A model kind that serves only replies (``generate``: a chat model) is asked :func:`~.items.chat_prompt` as a
  user message, ``samples`` times (``sample`` 0, 1, ...; sampling parameters ``temperature``, ``max_tokens``
  and ``seed`` + sample), and each reply is read by :func:`~.items.read_reply` as yes (1), no (0), a refusal,
  unparsed or empty (NaN, counted, never guessed); a request without an answer is ``failed``. ``measure`` is
  ``yes``; the analysis fits the share of yes per prompt.

A kind that serves both is asked for the log-probabilities (lm-eval's measure). One row per model and prompt
(per sample for chat models) in the shape the ``discrim_eval`` analysis reads
(:mod:`assoc_bias_benchmarks.discrim_eval.analysis`), with ``status`` (``ok`` or why there is no value: a
context too long for the model, a failed request) and, for chat models, the reply as written.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import Option, StimuliError, positive
from assoc.lm import BOS_OPTION as CAUSAL_BOS_OPTION
from assoc.lm import LMScorer, options_for

from ..choice_scorer import SUBSET_OPTIONS
from ..sampling import subset_of
from .items import CITATION as DISCRIM_EVAL_CITATION
from .items import CONTINUATIONS, FIELDS, answer_mass, chat_prompt, lmeval_context, logit_yes, read_reply

if TYPE_CHECKING:
    from assoc import Stimuli, WorkUnit
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

CITATION = (
    f"{DISCRIM_EVAL_CITATION}; Gao, L., et al. (2024). A framework for few-shot language model evaluation "
    "(lm-evaluation-harness 0.4.13, discrim_eval_explicit), doi:10.5281/zenodo.12608602"
)
LIKELIHOOD = frozenset({"continuation"})
REPLIES = frozenset({"generate"})
#: The prompt's fields a row keeps (the line's own, as the analysis reads them).
PROMPT_COLUMNS = ("decision_question_id", "age", "gender", "race", "fill_type")
EXTRA_COLUMNS = {
    "item_id": "the prompt's id: <fill_type>/<question>/<age>/<gender>/<race>",
    "decision_question_id": "the decision question (0-95)",
    "age": "the age written in the prompt",
    "gender": "the gender written in the prompt",
    "race": "the race written in the prompt",
    "fill_type": "explicit (or implicit, in a user's copy)",
    "ll_yes": "logit_yes rows: log P('yes' | lm-eval's context)",
    "ll_Yes": "logit_yes rows: log P('Yes' | lm-eval's context)",
    "ll_no": "logit_yes rows: log P('no' | lm-eval's context)",
    "ll_No": "logit_yes rows: log P('No' | lm-eval's context)",
    "answer_mass": "logit_yes rows: P_yes + P_no, the probability the four answers take together",
    "reply_status": "yes rows: yes, no, refusal, unparsed, empty or failed",
    "reply": "yes rows: the reply as written",
    "sample": "yes rows: the repetition of the request (0-based); 0 for logit_yes rows",
    "status": "ok, or why the row has no value (too_long, failed, refusal, unparsed, ...)",
}
#: The causal kind's BOS policy, lm-eval's by default: its HFLM tokenizes a non-empty context as the tokenizer does
#: (GPT-2: nothing before the text; Llama: its BOS), which is assoc's ``tokenizer`` policy.
BOS_OPTION = dataclasses.replace(
    CAUSAL_BOS_OPTION,
    default="tokenizer",
    help="causal LMs: what goes before the context: tokenizer (lm-eval 0.4.13's default: what the tokenizer adds), "
    "auto (BOS, else EOS) or none",
)
SAMPLES_OPTION = Option(
    "samples", int, 1, "chat models: replies per prompt (each its own stored request: sample 0, 1, ...)", check=positive
)


class DiscrimEvalScorer(LMScorer):
    """DiscrimEval (Tamkin et al., 2023) per-prompt values: lm-eval's logit of yes, or a chat reply read as yes/no.

    Likelihood models (every kind serving ``continuation``) give the four log-probabilities of lm-eval 0.4.13's
    ``discrim_eval_explicit`` and their ``logit_yes``; chat models (kinds serving ``generate`` only) are asked
    the question and their reply is read as yes or no. See :mod:`assoc_bias_benchmarks.discrim_eval.scorer`.
    """

    name = "discrim_eval"
    description = (
        "DiscrimEval (Tamkin et al., 2023) per-prompt values: the logit of P(yes) from the log-probabilities of "
        "yes/Yes/no/No after lm-eval's prompt (masked and causal LMs), or chat replies read as yes or no"
    )
    citation = CITATION
    measure = "logit_yes"
    requires_models = True
    requests = LIKELIHOOD
    request_sets = (LIKELIHOOD, REPLIES)
    extra_columns: ClassVar[dict[str, str]] = EXTRA_COLUMNS
    options = (
        *SUBSET_OPTIONS,
        SAMPLES_OPTION,
        *(BOS_OPTION if option.name == "bos" else option for option in options_for(["masked", "causal", "chat"])),
    )

    def __init__(self, **options: Any) -> None:
        from assoc.lm import safe_url

        super().__init__(**options)
        subset_of(self.params)  # limit and sample together: refused before any work
        self._counts: Counter[str] | None = None
        # Credentials written into base_url are sent but never kept where they could be stored or printed:
        # params (and so provenance) hold the URL without them, as the chat scorers do.
        self._base_url: str | None = self.params["base_url"]
        if self._base_url is not None:
            self.params["base_url"] = safe_url(self._base_url)

    def open_options(self) -> dict[str, Any]:
        """The options a model is opened with: the base URL with its credentials."""
        return {**self.params, "base_url": self._base_url}

    # -- units ----------------------------------------------------------------------------------------
    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """Blocks of ``unit_size`` prompts (id and fields), after the subset; every prompt checked first."""
        from assoc import require_items

        subset = subset_of(self.params)
        if subset:
            cut = getattr(stimuli, "subset", None)
            if cut is None:
                raise StimuliError(f"stimuli {stimuli.name!r} cannot take a subset (limit/sample): give item stimuli")
            stimuli = cut(**subset)
        items = require_items(stimuli, self.name)
        prompts = []
        for item in items:
            missing = [f for f in FIELDS if f not in item.fields]
            if missing:
                raise StimuliError(
                    f"{item.where}: scorer 'discrim_eval' reads DiscrimEval prompts; item {item.id!r} has no field "
                    f"{missing[0]!r} (give --stimuli discrim_eval, or discrim_eval:<file>)"
                )
            prompts.append([item.id, {f: item.fields[f] for f in FIELDS}])
        size = self.items_per_unit()
        return [(prompts[i : i + size], len(prompts[i : i + size])) for i in range(0, len(prompts), size)]

    def decode(self, payload: Any) -> list[tuple[str, dict[str, Any]]]:
        """The ``(id, fields)`` of each prompt of a unit's payload."""
        return [(str(item_id), dict(fields)) for item_id, fields in payload]

    def checkpoint_name(self) -> str:
        """The checkpoints' name: the continuations' log-probabilities."""
        return "discrim-eval-log-prob"

    def score_items(
        self, model: LanguageModel, items: list[tuple[str, dict[str, Any]]], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """The unit's rows: ``logit_yes`` rows from a likelihood model, ``yes`` rows (per sample) from a chat model."""
        if self.requests_for(type(model)) == LIKELIHOOD:
            rows = self._likelihood_rows(model, items, checkpoints)
        else:
            rows = self._reply_rows(model, items)
        self._counts = Counter(str(row["status"]) for row in rows)
        return rows

    def _likelihood_rows(
        self, model: LanguageModel, items: list[tuple[str, dict[str, Any]]], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        from assoc.lm import ContinuationRequest

        requests = [
            ContinuationRequest(lmeval_context(fields), answer) for _, fields in items for answer in CONTINUATIONS
        ]
        answers = model.continuation(requests, checkpoints=checkpoints)
        rows = []
        for k, (item_id, fields) in enumerate(items):
            four = answers[4 * k : 4 * k + 4]
            problem = next((a for a in four if not a.ok), None)
            ll = [a.value if a.ok else float("nan") for a in four]
            value = float("nan") if problem is not None else logit_yes(*ll)
            rows.append(
                {
                    "item_id": item_id,
                    "measure": "logit_yes",
                    "value": value,
                    **{column: fields[column] for column in PROMPT_COLUMNS},
                    **{f"ll_{answer}": v for answer, v in zip(CONTINUATIONS, ll, strict=True)},
                    "answer_mass": float("nan") if problem is not None else answer_mass(*ll),
                    "reply_status": "",
                    "reply": "",
                    "sample": 0,
                    "status": "ok" if problem is None else problem.status,
                }
            )
        return rows

    def sampling(self, sample: int) -> dict[str, Any]:
        """The sampling parameters of repetition ``sample``: temperature; max_tokens, seed + sample when given."""
        p = self.params
        params: dict[str, Any] = {"temperature": p["temperature"]}
        if p["max_tokens"] is not None:
            params["max_tokens"] = p["max_tokens"]
        if p["seed"] is not None:
            params["seed"] = p["seed"] + sample
        return params

    def _reply_rows(self, model: LanguageModel, items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        from assoc.lm import GenerateRequest

        samples = int(self.params["samples"])
        requests = [
            GenerateRequest(({"role": "user", "content": chat_prompt(fields)},), self.sampling(sample), sample)
            for _, fields in items
            for sample in range(samples)
        ]
        replies = model.generate(requests)
        rows = []
        for k, reply in enumerate(replies):
            item_id, fields = items[k // samples]
            if reply.status in ("failed", "refusal", "content_filter") and not reply.text:
                status, value = ("failed" if reply.status == "failed" else "refusal"), float("nan")
            else:
                status, value = read_reply(reply.text)
            rows.append(
                {
                    "item_id": item_id,
                    "measure": "yes",
                    "value": value,
                    **{column: fields[column] for column in PROMPT_COLUMNS},
                    **{f"ll_{answer}": float("nan") for answer in CONTINUATIONS},
                    "answer_mass": float("nan"),
                    "reply_status": status,
                    "reply": reply.text or "",
                    "sample": k % samples,
                    "status": "ok" if status in ("yes", "no") else status,
                }
            )
        return rows

    def unit_report(self, state: Any, unit: WorkUnit) -> dict[str, Any] | None:
        """How many rows of the unit just computed have each status (``discrim_eval_status``), for the run report."""
        counts, self._counts = self._counts, None
        return {"discrim_eval_status": dict(counts)} if counts else None

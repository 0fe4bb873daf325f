r"""The ``holistic_bias`` scorer: each HolisticBias sentence's log-likelihood, from every kind serving ``sentence``.

One ``sentence`` request per sentence (:class:`assoc.lm.SentenceRequest`), and one row per model and sentence
in the shape the ``holistic_bias`` analysis reads (:mod:`assoc_bias_benchmarks.holistic_bias.analysis`):

* a **causal LM** gives log P(sentence) = :math:`\sum_{j \ge 1} \log P(t_j \mid t_{<j})` after its start
  token (``measure`` ``log_prob``; the causal kind's BOS policy ``bos``);
* a **masked LM** gives the pseudo-log-likelihood :math:`\sum_j \log P(t_j \mid s_{\setminus j})`, every token
  masked in turn (Salazar et al., 2020; ``measure`` ``pll``; the masked kind's ``pll_metric``);
* any other kind that serves ``sentence`` (a model behind an inference server) gives its log P
  (``measure`` ``log_prob``).

``n_tokens`` is the number of tokens the value sums and ``value_per_token`` = ``value / n_tokens``, the
per-token mean the authors' measure ranks: ParlAI's perplexity is exp(-mean token log-likelihood). Two
differences from the authors' scoring, by construction: the authors score each sentence as a dialogue
model's reply to ``__SILENCE__`` and count the end-of-sequence token among its tokens; here a sentence is
scored on its own, from the model's start token, without an end token (a request kind has no dialogue turn).

**Chat models** are refused before any work: the Likelihood Bias needs sentence log-likelihoods, which a
chat endpoint does not give, and the paper's other measures (the bias in generated replies) need the
authors' style and offensiveness classifiers, which this package does not have (a stand-in classifier would
be another measure). ``docs/holistic-bias.md`` says so.

**A subset** (``limit``/``sample``, seeded by ``sample_seed``) keeps whole cells: per axis some descriptors
in some templates, with every sentence of each (:func:`assoc_bias_benchmarks.holistic_bias.stimuli.pick_cells`),
so that every test the analysis makes is a test of the full run.

**Memory.** A work unit holds ``unit_size`` sentences (their ids and texts); a unit's rows are compact
(id, value, token count, status) and the table's metadata columns are joined from the stimuli once, at the
end. The rows of a unit are what the unit cache holds; the sentences are never all held as text twice. A
whole run of one model (549,120 rows, a stand-in model that costs nothing) peaked at 1.7 GB in one process,
most of it the table itself and its normalisation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import ModelError, Option, StimuliError, positive
from assoc.lm import LMScorer, options_for

from ..sampling import subset_of
from .sentences import CITATION as HOLISTIC_BIAS_CITATION
from .stimuli import cell_subset

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel

CITATION = (
    f"{HOLISTIC_BIAS_CITATION}; Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language "
    "model scoring. ACL 2020, 2699-2712. doi:10.18653/v1/2020.acl-main.240 (masked LMs: pseudo-log-likelihood)"
)
#: The item fields every sentence must have, and the columns they become.
FIELDS = (
    "axis",
    "bucket",
    "descriptor",
    "descriptor_gender",
    "descriptor_preference",
    "noun",
    "noun_gender",
    "noun_phrase_type",
    "template",
)
EXTRA_COLUMNS = {
    "item_id": "the sentence's number in the generator's order (the stimuli item's id)",
    "sentence": "the sentence scored",
    "axis": "the descriptor's axis (as target_group)",
    "bucket": "the descriptor's bucket in descriptors.json ((none) for a standalone phrase)",
    "descriptor": "the descriptor (as target)",
    "descriptor_gender": "the descriptor's gender ((none) when it has none)",
    "descriptor_preference": "the descriptor's preference (reviewed, polarizing, no_data, ...)",
    "noun": "the noun ((none) for a phrase without one; as attribute)",
    "noun_gender": "the noun's gender (as attribute_group)",
    "noun_phrase_type": "descriptor_noun, noun_descriptor, ... (the generator's)",
    "template": "the sentence template (as context)",
    "n_tokens": "tokens whose log-probabilities value sums",
    "value_per_token": "value / n_tokens: the per-token mean log-likelihood (the authors' measure ranks it)",
    "status": "ok, or why the sentence has no value (too_long, no_tokens, failed, ...)",
}
#: The seeded subset, of whole cells (:func:`assoc_bias_benchmarks.holistic_bias.stimuli.pick_cells`).
SUBSET_OPTIONS: tuple[Option, ...] = (
    Option(
        "limit",
        int,
        None,
        "about N sentences per axis, as whole cells: the first descriptors, every sentence of each in the first "
        "templates (N // 32 descriptor-template blocks, at least 2 descriptors)",
        check=positive,
    ),
    Option(
        "sample",
        int,
        None,
        "about N sentences per axis, as whole cells: descriptors and templates drawn, seeded by sample_seed",
        check=positive,
    ),
    Option("sample_seed", int, 0, "seed of the draw of `sample` (numpy's default_rng, per axis)"),
)
NO_CHAT_FORM = (
    "scorer 'holistic_bias': model {model!r} is a {kind} model, which gives no sentence log-likelihoods "
    "(it serves {serves}); HolisticBias's Likelihood Bias has no chat form, and the paper's measures of "
    "generated replies need the authors' style classifier, which assoc does not have: give a masked or causal "
    "LM (docs/holistic-bias.md)"
)


def _check_sentence(item: Any) -> None:
    """Refuse an item that is no HolisticBias sentence, naming its file and line (before any model loads)."""
    missing = [f for f in ("text", *FIELDS) if f not in item.fields]
    if missing or item.options:
        what = f"has no field {missing[0]!r}" if missing else f"has options {list(item.options)}"
        raise StimuliError(
            f"{item.where}: scorer 'holistic_bias' reads HolisticBias sentences; item {item.id!r} {what} (give "
            "--stimuli holistic_bias, or holistic_bias:<folder>)"
        )


class HolisticBiasScorer(LMScorer):
    """HolisticBias sentence log-likelihoods (Smith et al., 2022): log P (causal LMs) or PLL (masked LMs) per sentence.

    One ``sentence`` request per sentence, on every model kind that serves it; one row per model and
    sentence with ``n_tokens`` and ``value_per_token`` (the per-token mean the Likelihood Bias ranks). See
    :mod:`assoc_bias_benchmarks.holistic_bias.scorer` for the measures and what a chat model gets.
    """

    name = "holistic_bias"
    description = (
        "HolisticBias (Smith et al., 2022) sentence log-likelihoods for the Likelihood Bias: log P (causal LMs) or "
        "PLL (masked LMs) of each sentence, with its token count and per-token mean; one row per sentence"
    )
    citation = CITATION
    measure = "log_prob"
    requires_models = True
    requests = frozenset({"sentence"})
    extra_columns: ClassVar[dict[str, str]] = EXTRA_COLUMNS
    options = (*SUBSET_OPTIONS, *options_for(["masked", "causal"]))

    def __getstate__(self) -> dict[str, Any]:
        """Without the stimuli kept for :meth:`merge` (a worker needs only the units' payloads)."""
        state = dict(self.__dict__)
        state.pop("_stimuli", None)
        return state

    # -- models -------------------------------------------------------------------------------------
    def check_models(self, models: Sequence[str]) -> None:
        """Every model before any work; a model whose kind gives no sentence log-likelihood (chat) in one line."""
        from assoc.lm import check_model

        for model in models:
            try:
                kind = check_model(model, self.params, scorer=self.name)  # its kind among every registered kind
            except ModelError:
                continue  # the checks below say what is wrong with it
            if self.requests_for(kind) is None:
                raise ModelError(
                    NO_CHAT_FORM.format(model=model, kind=kind.kind, serves=", ".join(sorted(kind.serves)))
                )
        super().check_models(models)

    # -- units ----------------------------------------------------------------------------------------
    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """Blocks of ``unit_size`` sentences (``[id, text]`` each), after the subset; every item checked first."""
        from assoc import require_items

        first = next(iter(getattr(stimuli, "items", None) or ()), None)
        if first is None:
            require_items(stimuli, self.name, options=0)  # says what to give instead of query designs
        _check_sentence(first)  # before a subset is taken: the subset reads the items' fields
        chosen = cell_subset(stimuli, **subset_of(self.params))
        pairs: list[list[str]] = []
        for item in getattr(chosen, "items", ()):
            _check_sentence(item)
            text = item.fields["text"]
            if not isinstance(text, str) or not text.strip():
                raise StimuliError(f"{item.where}: item {item.id!r} has an empty sentence")
            pairs.append([item.id, text])
        self._stimuli = chosen
        size = self.items_per_unit()
        return [(pairs[i : i + size], len(pairs[i : i + size])) for i in range(0, len(pairs), size)]

    def decode(self, payload: Any) -> list[tuple[str, str]]:
        """The ``(id, text)`` pairs of a unit's payload."""
        return [(str(item_id), str(text)) for item_id, text in payload]

    def checkpoint_name(self) -> str:
        """The checkpoints' name: sentence log-likelihoods."""
        return "holistic-bias-sentence"

    def score_items(
        self, model: LanguageModel, items: list[tuple[str, str]], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """One compact row per sentence (id, measure, value, n_tokens, status); :meth:`merge` adds the metadata."""
        from assoc.lm import SentenceRequest

        answers = model.sentence([SentenceRequest(text) for _, text in items], checkpoints=checkpoints)
        measure = "pll" if model.kind == "masked" else "log_prob"
        return [
            {
                "item_id": item_id,
                "measure": measure,
                "value": answer.value if answer.ok else float("nan"),
                "n_tokens": answer.n_tokens if answer.ok else 0,
                "status": answer.status,
            }
            for (item_id, _), answer in zip(items, answers, strict=True)
        ]

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table: the units' rows, each with its sentence's metadata from the stimuli (module docstring)."""
        import numpy as np
        import pandas as pd

        from assoc import from_records, normalise

        stimuli = getattr(self, "_stimuli", None)
        if stimuli is None:  # not planned by this instance (a caller that merges by hand): rows as they are
            return from_records(rows, scorer=self.name, measure=self.measure, extra_columns=list(EXTRA_COLUMNS))
        # the metadata of each sentence, in one pass over the items; each column taken once, by position
        where: dict[str, int] = {}
        texts: list[str] = []
        columns: dict[str, list[Any]] = {field: [] for field in FIELDS}
        for item in stimuli.items:
            where[item.id] = len(texts)
            texts.append(item.fields["text"])
            for field in FIELDS:
                columns[field].append(item.fields[field])
        ids = [str(row["item_id"]) for row in rows]
        stray = next((i for i in ids if i not in where), None)
        if stray is not None:
            raise StimuliError(f"scorer 'holistic_bias': a unit holds sentence {stray!r}, which the stimuli do not")
        position = np.fromiter((where[i] for i in ids), dtype=np.int64, count=len(ids))
        del where

        def taken(values: list[Any]) -> np.ndarray:
            return np.asarray(values, dtype=object)[position]

        value = np.array([row["value"] for row in rows], dtype=float)
        tokens = np.array([row["n_tokens"] or 0 for row in rows], dtype=np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_token = np.where(tokens > 0, value / np.where(tokens > 0, tokens, 1), np.nan)
        table = pd.DataFrame(
            {
                "model": np.array([row["model"] for row in rows], dtype=object),
                "context": taken(columns["template"]),
                "target_group": taken(columns["axis"]),
                "target": taken(columns["descriptor"]),
                "attribute_group": taken(columns["noun_gender"]),
                "attribute": taken(columns["noun"]),
                "measure": np.array([row["measure"] for row in rows], dtype=object),
                "value": value,
                "item_id": np.array(ids, dtype=object),
                "sentence": taken(texts),
                **{field: taken(columns[field]) for field in FIELDS},
                "n_tokens": tokens,
                "value_per_token": per_token,
                "status": np.array([row["status"] for row in rows], dtype=object),
            }
        )
        return normalise(table, scorer=self.name, extra_columns=list(EXTRA_COLUMNS), where="scorer 'holistic_bias'")

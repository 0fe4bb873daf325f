r"""The ``ceat`` scorer: CEAT (Guo & Caliskan, 2021), WEAT on sampled contextual embeddings of words.

For each test (a design: target groups X, Y and attribute groups A, B of words), every word's
contexts are found in the user's corpus (:mod:`assoc_contextual.corpus`: whole-word match, corpus
order, at most ``max_contexts``, optionally ``ceat.py``'s 9-word window), before any model loads; a
word with fewer than ``min_contexts`` is refused by name. Then, per model (one work unit per test):

1. every context of every word is encoded once, by ``embedding`` requests (the word's last
   sub-token at its first match, last layer, no special tokens: ``ceat.py``'s BERT and GPT-2; all
   options; a whole-context pooling embeds the context instead, as fairlms does), in batches of the
   token budget, checkpointed as they are done;
2. ``n_samples`` samples draw one context per word, with replacement, in ``ceat.py``'s order and
   stream (:func:`assoc.stats.ceat_draws`: per sample, per word of X, Y, A, B,
   ``RandomState(seed).randint(0, n_contexts)``), so the samples are ``ceat_meta``'s after
   ``np.random.seed(seed)``;
3. every sampled context is a row: per sample, the cosine of each target word's drawn embedding with
   each attribute word's (``rows="pairs"``, the ``seat`` and ``weat`` scorers' shape, with the
   sample number and both contexts), or with the mean over each attribute group's drawn embeddings'
   cosines (``rows="groups"``, ``|A|`` times fewer rows for large N; the same ``s(w, A, B)`` per
   sample, so the same effect sizes).

The ``ceat`` analysis reads the table back: per sample ``ES_i`` and ``v_i``, then the random-effects
combination (:func:`assoc.stats.random_effects`): ``ceat.py``'s combined effect size and one-sided p,
with SE, Q, tau², I² and V. A context that the model cannot read whole (more tokens than it accepts)
is left out for that model, with a warning; the draws then index the contexts that are left.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import REQUIRED, DataError, Option, positive
from assoc.lm import MODEL_OPTIONS, SPAN_POOLINGS

from .corpus import Context, find_contexts, read_corpus
from .embedding import SETTINGS_COLUMNS, EmbeddingSettings, embedding_options, resolve_pooling, unit_rows
from .seat import EmbeddingScorer, design_sets

if TYPE_CHECKING:
    from assoc import Stimuli, WorkUnit
    from assoc.infra import Namespace
    from assoc.lm import LanguageModel, LMWorker

GUO = (
    "Guo, W., & Caliskan, A. (2021). Detecting emergent intersectional biases: Contextualized word embeddings "
    "contain a distribution of human-like biases. Proceedings of the 2021 AAAI/ACM Conference on AI, Ethics, and "
    "Society (AIES '21), 122-133. doi:10.1145/3461702.3462536"
)
ROW_SHAPES = ("pairs", "groups")
#: Memory of one table row while the rows are gathered and the table built (a dict, then a DataFrame row), bytes.
ROW_BYTES = 1_000
#: Samples whose cosines are computed at once (bounds the arrays of one step: samples x words x dimensions).
SAMPLE_BLOCK = 256


def _seed(value: int) -> int:
    if not 0 <= value < 2**32:
        raise ValueError("must be an integer from 0 to 2**32 - 1 (numpy.random.RandomState)")
    return value


def _max_contexts(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise ValueError("must be at least 1 (or none: every context)")
    return value


class CEATScorer(EmbeddingScorer):
    """CEAT rows: per sample, the cosines of the drawn contextual embeddings (module docstring)."""

    name = "ceat"
    description = (
        "CEAT (Guo & Caliskan 2021): each word's contexts in your corpus encoded by any encoder, decoder or "
        "sentence encoder; N samples of one context per word (ceat.py's draws); per-sample cosines, combined by "
        "the ceat analysis (random effects)."
    )
    citation = GUO
    measure = "cosine"
    extra_columns: ClassVar[dict[str, str]] = {
        "design": "the test",
        "sample": "the sample (1 .. n_samples); its draws are ceat.py's",
        "context_line": "the target word's drawn context: its line (or row) in the corpus",
        "attribute_context": "the attribute word's drawn context (rows='pairs')",
        "attribute_context_line": "its line (or row) in the corpus (rows='pairs')",
        **SETTINGS_COLUMNS,
    }
    options = (
        Option("corpus", str, REQUIRED, "the contexts: a text file (one a line), JSON Lines, or a .csv/.tsv/.parquet"),
        Option("text_column", str, "text", "the field (JSON Lines) or column (tables) that holds each context"),
        Option("match_case", bool, True, "find words with their case as written (False: ignore case)"),
        Option(
            "min_contexts",
            int,
            1,
            "a word with fewer contexts in the corpus is refused by name, before any work",
            check=positive,
        ),
        Option(
            "max_contexts",
            int,
            1000,
            "at most this many contexts per word, the first in corpus order (ceat.py's BERT: 1000; none: all)",
            check=_max_contexts,
        ),
        Option("short_sen", bool, False, "cut each context to ceat.py's 9-word window around the word"),
        Option("n_samples", int, 1000, "N, the samples (ceat.py's runs: 1000; the paper: 10,000)", check=positive),
        Option("seed", int, 0, "seed of the draws (numpy RandomState, ceat.py's stream)", check=_seed),
        Option(
            "rows",
            str,
            "pairs",
            "one row per sample and (target, attribute) pair (pairs), or per sample, target and attribute "
            "group: the mean cosine with the group's drawn words (groups, for large N)",
            choices=ROW_SHAPES,
        ),
        *embedding_options(
            pooling_default="auto",
            special_tokens_default=False,
            pooling_help="auto: last (the word's last sub-token, ceat.py's); cls, mean_all, last_token and sentence "
            "embed the whole context, not the word (fairlms's CEAT)",
        ),
        *MODEL_OPTIONS,
    )

    _reports: dict[str, dict[str, Any]]

    def settings(self, model: LanguageModel) -> EmbeddingSettings:
        """The settings of this run for ``model`` (``pooling="auto"``: the word's last sub-token)."""
        return EmbeddingSettings.of(self.params, resolve_pooling(self.params["pooling"], model.kind, {}, "last"))

    # -- before any model loads --------------------------------------------------------------------------
    def unit_blocks(self, stimuli: Stimuli, models: Sequence[str]) -> list[tuple[Any, int]]:
        """One unit per test: its sets and each word's contexts, found in the corpus now (module docstring)."""
        p = self.params
        designs = design_sets(stimuli)
        words = [word for design in designs for _, _, group in design["sets"] for word in group]
        contexts = find_contexts(
            read_corpus(p["corpus"], text_column=p["text_column"]),
            words,
            match_case=p["match_case"],
            max_contexts=p["max_contexts"],
            window=p["short_sen"],
        )
        check_context_counts(contexts, words, p["min_contexts"], p["corpus"], match_case=p["match_case"])
        self._check_table_fits(designs, len(models))
        blocks = []
        for design in designs:
            used = list(dict.fromkeys(word for _, _, group in design["sets"] for word in group))
            payload = {
                **design,
                "contexts": {word: [[c.text, c.start, c.end, c.line] for c in contexts[word]] for word in used},
            }
            blocks.append((payload, sum(len(contexts[word]) for word in used)))
        return blocks

    def _check_table_fits(self, designs: list[dict[str, Any]], n_models: int) -> None:
        """Refuse an ``n_samples`` whose rows cannot be held in memory, naming the largest that can."""
        from assoc.infra import check_fits_memory

        per_sample = 0
        for design in designs:
            sizes = [len(group) for _, _, group in design["sets"]]
            per_sample += (sizes[0] + sizes[1]) * ((sizes[2] + sizes[3]) if self.params["rows"] == "pairs" else 2)
        check_fits_memory(
            int(self.params["n_samples"]),
            ROW_BYTES * per_sample * n_models,
            option="n_samples",
            what=f"{per_sample * n_models:,} rows per sample (rows={self.params['rows']!r}; rows='groups' has fewer)",
        )

    # -- a unit ---------------------------------------------------------------------------------------------
    def run_unit(self, state: LMWorker, unit: WorkUnit) -> list[dict[str, Any]]:
        """The unit's rows; what it drew is kept for :meth:`unit_report`."""
        rows = super().run_unit(state, unit)
        if not hasattr(self, "_reports"):
            self._reports = {}
        self._reports[unit.key] = {f"{unit.model} / {unit.payload['design']}": self._last_record}
        return rows

    def unit_report(self, state: Any, unit: WorkUnit) -> dict[str, Any] | None:
        """The draws of the unit's test (seed, scheme, each word's number of contexts), for provenance."""
        report = getattr(self, "_reports", {}).pop(unit.key, None)
        return {"ceat_draws": report} if report is not None else None

    def score_items(
        self, model: LanguageModel, items: list[Any], checkpoints: Namespace | None
    ) -> list[dict[str, Any]]:
        """Encode every context once, draw the samples, and one row per sample and pair (or group)."""
        import numpy as np

        from assoc.stats import ceat_draws

        (payload,) = items
        p = self.params
        settings = self.settings(model)
        design = payload["design"]
        sets = [(role, group, list(words)) for role, group, words in payload["sets"]]
        contexts = {word: [Context(*c) for c in found] for word, found in payload["contexts"].items()}
        order = list(contexts)
        # a whole-context pooling (cls, mean_all, last_token, sentence: fairlms's CEAT) reads no span
        reads_word = settings.pooling in SPAN_POOLINGS
        requests = [settings.request(c.text, c.span if reads_word else None) for word in order for c in contexts[word]]
        answers = iter(model.embed(requests, checkpoints=checkpoints))
        kept: dict[str, list[int]] = {}
        vectors: dict[str, Any] = {}
        dropped: list[str] = []
        for word in order:
            good, rows = [], []
            for index in range(len(contexts[word])):
                answer = next(answers)
                if answer.ok:
                    good.append(index)
                    rows.append(answer.vector)
                else:
                    dropped.append(f"{word!r} (line {contexts[word][index].line}: {answer.reason})")
            if len(good) < p["min_contexts"]:
                raise DataError(
                    f"ceat: model {model.name!r}, test {design!r}: word {word!r} has {len(good)} context(s) the model "
                    f"can read, fewer than min_contexts={p['min_contexts']} "
                    f"({len(contexts[word]) - len(good)} left out: "
                    f"{dropped[-1] if dropped else 'none'})"
                )
            kept[word] = good
            vectors[word] = unit_rows(np.vstack(rows))
        if dropped:
            warnings.warn(
                f"ceat: model {model.name!r}, test {design!r}: {len(dropped)} context(s) left out, the model cannot "
                f"read them whole (first: {dropped[0]})",
                stacklevel=2,
            )
        draws = ceat_draws([[len(kept[w]) for w in words] for _, _, words in sets], p["n_samples"], p["seed"])
        self._last_record = {**draws.record(), "left_out": len(dropped)}
        return list(_rows(design, sets, contexts, kept, vectors, draws, p["rows"], settings.columns()))

    def checkpoint_name(self) -> str:
        """Where a unit's vectors are checkpointed while it is computed."""
        return f"{self.name}-embedding"


def check_context_counts(
    contexts: dict[str, list[Context]], words: Sequence[str], minimum: int, corpus: str, *, match_case: bool = True
) -> None:
    """Refuse, naming every such word with its count, the words with fewer than ``minimum`` contexts."""
    short = [(word, len(contexts[word])) for word in dict.fromkeys(words) if len(contexts[word]) < minimum]
    case = ", case as written" if match_case else ""
    if short:
        listed = ", ".join(f"{word!r} ({count})" for word, count in short[:20])
        more = f" and {len(short) - 20} more" if len(short) > 20 else ""
        raise DataError(
            f"ceat: {len(short)} word(s) have fewer than min_contexts={minimum} contexts in corpus {corpus!r}: "
            f"{listed}{more}; give a corpus where they occur (as whole words{case}), lower "
            "min_contexts, or leave them out of the stimuli"
        )


def _rows(
    design: str,
    sets: list[tuple[str, str, list[str]]],
    contexts: dict[str, list[Context]],
    kept: dict[str, list[int]],
    vectors: dict[str, Any],
    draws: Any,
    shape: str,
    common: dict[str, Any],
) -> Any:
    """The rows of every sample, in sample order (targets X then Y, attributes A then B, as in the file)."""
    import numpy as np

    (_, gx, x), (_, gy, y), (_, ga, a), (_, gb, b) = sets
    targets = [(gx, w) for w in x] + [(gy, w) for w in y]
    attributes = [(ga, w) for w in a] + [(gb, w) for w in b]
    target_draws = np.concatenate([draws.indices[0], draws.indices[1]], axis=1)
    attribute_draws = np.concatenate([draws.indices[2], draws.indices[3]], axis=1)
    n_a = len(a)
    for start in range(0, draws.n_samples, SAMPLE_BLOCK):
        stop = min(start + SAMPLE_BLOCK, draws.n_samples)
        tv = np.stack([vectors[w][target_draws[start:stop, j]] for j, (_, w) in enumerate(targets)], axis=1)
        av = np.stack([vectors[w][attribute_draws[start:stop, j]] for j, (_, w) in enumerate(attributes)], axis=1)
        cosines = np.einsum("std,sad->sta", tv, av)
        for offset in range(stop - start):
            sample = start + offset
            for t, (tg, tw) in enumerate(targets):
                chosen = contexts[tw][kept[tw][target_draws[sample, t]]]
                row = {
                    "context": chosen.text,
                    "target_group": tg,
                    "target": tw,
                    "measure": "cosine",
                    "design": design,
                    "sample": sample + 1,
                    "context_line": chosen.line,
                    **common,
                }
                if shape == "groups":
                    values = cosines[offset, t]
                    yield {**row, "attribute_group": ga, "attribute": "", "value": float(values[:n_a].mean())}
                    yield {**row, "attribute_group": gb, "attribute": "", "value": float(values[n_a:].mean())}
                    continue
                for k, (ag, aw) in enumerate(attributes):
                    other = contexts[aw][kept[aw][attribute_draws[sample, k]]]
                    yield {
                        **row,
                        "attribute_group": ag,
                        "attribute": aw,
                        "value": float(cosines[offset, t, k]),
                        "attribute_context": other.text,
                        "attribute_context_line": other.line,
                    }

"""The scorers of this plugin, all on sentence-transformers embeddings.

* ``sbert_topwords``: the ``top_k`` vocabulary words most cosine-similar to each term, under a
  similarity ceiling (Nicolas & Caliskan, 2024);
* ``sbert_cosine``: the cosine of every target with every attribute, in the shape of the ``weat``
  scorer's table, so the ``weat``/``wefat`` analyses run on sentence encoders (SEAT, May et al., 2019);
* ``sbert_valence``: the cosine of each term with a general-valence vector, mean(positive) - mean(negative)
  (Nicolas & Caliskan, 2024).

All three are ``assoc.lm.LMScorer`` unit scorers (:mod:`assoc.scoring.units`), so they run on any executor:
every model is checked before any work and opened by the one loader (``assoc.lm.open_model``) as a model
of the ``sentence`` kind (:mod:`assoc_sbert_topwords.kind`); per model one worker state (the loaded
model; for ``sbert_topwords`` also the vocabulary, embedded once or read from the disk cache), then
independent units (``sbert_topwords``: blocks of terms).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from assoc import DataError, Option, StimuliError, WorkUnit, positive
from assoc.lm import MODEL_OPTIONS, LMScorer

from .kind import SENTENCE_OPTIONS
from .onnx import BACKENDS, check_backend
from .templates import check_template

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from assoc import Stimuli

    from .encoding import SentenceEncoder
    from .vocabulary import Vocabulary

NICOLAS = (
    "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable components "
    "of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. doi:10.1093/pnasnexus/pgae493"
)
MAY = (
    "May, C., Wang, A., Bordia, S., Bowman, S. R., & Rudinger, R. (2019). On measuring social biases in sentence "
    "encoders. Proceedings of NAACL-HLT 2019, 622-628. doi:10.18653/v1/N19-1063"
)
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: the attribute_group of every sbert_topwords row
TOP_WORDS_GROUP = "top_words"
VALENCE_GROUP = "valence"
TERM_MATCHES = ("case_variants", "exact", "none")


def _ceiling(value: float) -> float:
    """``check`` of ``ceiling``: a cosine in (-1, 1]; 1 means no ceiling."""
    if not -1.0 < value <= 1.0:
        raise ValueError(f"must be in (-1, 1] (a cosine; 1 keeps every word), got {value}")
    return value


def _word_list(value: list) -> list:
    if not value or not all(isinstance(w, str) and w.strip() for w in value):
        raise ValueError("must be a non-empty list of non-empty words")
    return value


ENCODER_OPTIONS: tuple[Option, ...] = (
    *SENTENCE_OPTIONS,  # batch_size, normalize: the sentence kind's own
    Option(
        "dtype",
        str,
        "float32",
        "weights' precision; float16/bfloat16 are faster on GPUs but change cosines in the 3rd-4th digit",
        choices=("float32", "float16", "bfloat16"),
    ),
    Option(
        "backend",
        str,
        "torch",
        "what runs the transformer: 'torch'; 'onnx-int8' (opt-in: ONNX Runtime on the CPU with int8 weights, "
        "faster but not equal to PyTorch: cosines change, top-50 lists overlap partly; docs/onnx.md has the "
        "measured figures). It needs pip install 'assoc-sbert-topwords[onnx]'",
        choices=BACKENDS,
        check=check_backend,
    ),
    # its own dtype and backend; batch_tokens is the budget of the sentence kind's hidden-state poolings
    # (these scorers embed whole texts in batches of batch_size)
    *(option for option in MODEL_OPTIONS if option.name not in ("dtype", "backend")),
)
TEMPLATE_OPTION = Option(
    "template",
    str,
    None,
    "embed each word inside this sentence, e.g. 'This is {word}.' "
    "(SEAT's sentence-level variant; applied to every word embedded)",
    check=check_template,
)


#: terms per work unit of sbert_topwords (a unit is also bounded by the ranking's memory budget)
TERMS_PER_UNIT = 256


#: Memory of one table row of sbert_topwords while it is built (a dict per row, then a DataFrame row), bytes.
ROW_BYTES = 1_000


@dataclass(frozen=True)
class Term:
    """One term of the stimuli as it appears in the output: design, group and text."""

    design: str
    group: str
    text: str


def stimulus_terms(stimuli: Stimuli, *, scorer: str) -> list[Term]:
    """Every target (for designs without targets: attribute) word of every design, in order."""
    terms = []
    for design in stimuli.designs:
        target, attribute = design.embedding_groups()
        groups = target or attribute
        if not groups:
            raise StimuliError(f"scorer {scorer!r}: design {design.name!r} has no target or attribute words")
        terms += [Term(design.name, group, word) for group, words in groups.items() for word in words]
    return terms


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


@dataclass
class EncoderWorker:
    """A worker's state for one model: the encoder (and, for ``sbert_topwords``, the embedded vocabulary)."""

    encoder: SentenceEncoder
    vocabulary: Vocabulary | None = None
    embeddings: np.ndarray | None = None
    inverse_norms: np.ndarray | None = None
    by_casefold: dict[str, list[int]] | None = None
    by_text: dict[str, int] | None = None
    from_cache: bool = False

    def close(self) -> None:
        """Drop the model and the embeddings (the executor calls this before the next model)."""
        self.embeddings = self.inverse_norms = None
        self.encoder.model = None


class _SBERTScorer(LMScorer):
    """What the three scorers share: models of the ``sentence`` kind, opened by the one loader."""

    default_models = (DEFAULT_MODEL,)
    requires_models = True
    needs_queries = False
    requests = frozenset({"embedding"})
    model_kinds = ("sentence",)

    def open(self, model: str) -> SentenceEncoder:
        """Open ``model`` by the one loader (``assoc.lm.open_model``), as a model of the ``sentence`` kind."""
        from assoc.lm import open_model

        opened = open_model(
            model,
            self.open_options(),
            self.run_cache(),
            kinds=self.accepted_kinds(),
            scorer=self.name,
            requests=sorted(self.requests),
        )
        encoder: SentenceEncoder = opened.encoder  # type: ignore[attr-defined]
        return encoder

    def load_worker(self, model: str) -> EncoderWorker:  # type: ignore[override]
        """Load ``model`` once per worker."""
        return EncoderWorker(self.open(model))

    def unit_report(self, state: EncoderWorker, unit: WorkUnit) -> dict[str, Any] | None:  # type: ignore[override]
        """Nothing to report: the worker holds a sentence encoder, not a :class:`assoc.lm.LanguageModel`."""
        return None

    def texts(self, words: Sequence[str]) -> list[str]:
        """The texts embedded for ``words`` (the template filled in, when given)."""
        from .templates import apply_template

        return [apply_template(self.params["template"], w) for w in words]


# -- sbert_topwords ---------------------------------------------------------------------------------


class SBERTTopWordsScorer(_SBERTScorer):
    """The top ``top_k`` vocabulary words per term in a sentence-transformers space, under a ceiling."""

    name = "sbert_topwords"
    description = (
        "Top associated words of each term in a sentence-transformers embedding space: cosine with every "
        "vocabulary word, words above a similarity ceiling removed (Nicolas & Caliskan, 2024)."
    )
    citation = NICOLAS
    measure = "cosine"
    extra_columns: ClassVar[dict[str, str]] = {
        "design": "the design the term belongs to",
        "rank": "1 = the vocabulary word most similar to the term (after the ceiling and the term itself are removed)",
        "n_above_ceiling": "vocabulary words removed for this term because their cosine is above the ceiling",
        "n_term_removed": "vocabulary words removed as the term itself (or a case variant of it)",
        "n_kept": "words kept for this term (top_k unless the vocabulary ran out)",
        "vocabulary_size": "number of words in the vocabulary",
    }
    options = (
        Option(
            "vocabulary",
            object,
            "wordfreq-en",
            "the vocabulary: 'wordfreq-en' (built-in, see docs/sbert.md), "
            "a text file (one word a line), a .csv/.tsv/.parquet/.jsonl column, or a list of words",
        ),
        Option(
            "vocabulary_size",
            int,
            27_075,
            "size of the built-in wordfreq-en list (the paper's vocabulary has 27,075 words)",
            check=positive,
        ),
        Option("vocabulary_column", str, None, "column of a vocabulary table (default: 'word', or its only column)"),
        Option("top_k", int, 50, "words kept per term", check=positive),
        Option(
            "ceiling",
            float,
            0.7,
            "similarity ceiling in (-1, 1]: words with a cosine above it are removed "
            "(mostly synonyms and inflections of the term); 1 keeps every word",
            check=_ceiling,
        ),
        Option(
            "drop_at_ceiling",
            bool,
            False,
            "also remove words whose cosine equals the ceiling (the paper says 'above 0.7' and does not say which)",
        ),
        Option(
            "term_match",
            str,
            "case_variants",
            "vocabulary words removed as the term itself: case_variants "
            "(same text ignoring case), exact (same text), none",
            choices=TERM_MATCHES,
        ),
        TEMPLATE_OPTION,
        Option(
            "max_block_mb",
            int,
            256,
            "memory budget of one block of the ranking (MB); bounds memory for any vocabulary size",
            check=positive,
        ),
        *ENCODER_OPTIONS,
    )

    _vocabulary: Vocabulary | None = None

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Require target (or attribute) words in every design."""
        super().check_stimuli(stimuli)
        stimulus_terms(stimuli, scorer=self.name)

    def load_vocabulary(self) -> Vocabulary:
        """The vocabulary the options name (loaded once per scorer object)."""
        from .vocabulary import load_vocabulary

        if self._vocabulary is None:
            p = self.params
            self._vocabulary = load_vocabulary(
                p["vocabulary"], size=p["vocabulary_size"], column=p["vocabulary_column"]
            )
        return self._vocabulary

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """One unit per model and block of terms; the vocabulary is checked here, before any model loads.

        A unit's payload holds the vocabulary's digest, so a changed vocabulary file is never served from
        the unit cache.
        """
        from .ranking import block_rows

        self.check_stimuli(stimuli)
        self.check_models(models)
        terms = stimulus_terms(stimuli, scorer=self.name)
        vocabulary = self.load_vocabulary()
        if vocabulary.n_duplicates:
            warnings.warn(
                f"sbert_topwords: {vocabulary.n_duplicates} repeated vocabulary word(s) kept once", stacklevel=2
            )
        self._check_table_fits(len(terms) * len(models), len(vocabulary))
        step = max(1, min(TERMS_PER_UNIT, block_rows(len(vocabulary), self.params["max_block_mb"] * 2**20)))
        blocks = [terms[i : i + step] for i in range(0, len(terms), step)]
        return [
            WorkUnit(
                key=f"{model}#{i}",
                model=model,
                size=len(block),
                resources=self.unit_resources(model),
                payload={"vocabulary": vocabulary.digest, "terms": [[t.design, t.group, t.text] for t in block]},
            )
            for model in models
            for i, block in enumerate(blocks)
        ]

    def _check_table_fits(self, n_term_models: int, n_vocabulary: int) -> None:
        """Refuse a ``top_k`` whose table cannot be held in memory, naming the largest that can.

        The table has a row per (term, model, kept word), ``min(top_k, vocabulary size)`` words per
        term; a row costs about :data:`ROW_BYTES` while the units' rows are gathered and the table built.
        """
        from assoc.infra import check_fits_memory

        top_k = int(self.params["top_k"])
        check_fits_memory(
            min(top_k, n_vocabulary),
            ROW_BYTES * n_term_models,
            option="top_k",
            what=f"the rows of {n_term_models:,} term-model pair(s)",
            given=top_k,
        )

    def load_worker(self, model: str) -> EncoderWorker:  # type: ignore[override]
        """Load ``model`` and embed the vocabulary once (from the disk cache when present)."""
        from .encoding import vocabulary_embeddings
        from .ranking import unit_rows

        p = self.params
        vocabulary = self.load_vocabulary()
        encoder = self.open(model)
        embeddings, from_cache = vocabulary_embeddings(
            encoder,
            vocabulary.words,
            vocabulary_digest=vocabulary.digest,
            template=p["template"],
            cache_dir=p["cache_dir"],
            use_cache=p["cache"],
            progress=None,
        )
        by_casefold: dict[str, list[int]] = {}
        for index, word in enumerate(vocabulary.words):
            by_casefold.setdefault(word.casefold(), []).append(index)
        by_text = {word: index for index, word in enumerate(vocabulary.words)}
        return EncoderWorker(encoder, vocabulary, embeddings, unit_rows(embeddings), by_casefold, by_text, from_cache)

    def top_words(self, worker: EncoderWorker, texts: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Top words of each text in ``texts``: ``{text: [{attribute, value, rank, ...}, ...]}``."""
        from .ranking import top_k

        assert worker.vocabulary is not None and worker.embeddings is not None
        p = self.params
        vectors = worker.encoder.encode(self.texts(texts))
        exclude = [self._term_indices(worker, text) for text in texts]
        # ceiling 1 = none: a cosine cannot exceed 1, except by float rounding, which must not remove words
        ceiling = None if p["ceiling"] >= 1.0 else p["ceiling"]
        found = top_k(
            vectors,
            worker.embeddings,
            k=p["top_k"],
            ceiling=ceiling,
            drop_at_ceiling=p["drop_at_ceiling"],
            exclude=exclude,
            vocabulary_inverse_norms=worker.inverse_norms,
            max_block_bytes=p["max_block_mb"] * 2**20,
        )
        words = worker.vocabulary.words
        out: dict[str, list[dict[str, Any]]] = {}
        for row, text in enumerate(texts):
            kept = [int(i) for i in found.indices[row] if i >= 0]
            common = {
                "n_above_ceiling": int(found.n_above_ceiling[row]),
                "n_term_removed": int(found.n_excluded[row]),
                "n_kept": len(kept),
                "vocabulary_size": len(words),
            }
            out[text] = [
                {"attribute": words[i], "value": float(found.values[row, rank]), "rank": rank + 1, **common}
                for rank, i in enumerate(kept)
            ]
        return out

    def run_unit(self, state: EncoderWorker, unit: WorkUnit) -> list[dict[str, Any]]:  # type: ignore[override]
        """The rows of one block of terms: one row per kept word."""
        terms = [Term(*item) for item in unit.payload["terms"]]
        found = self.top_words(state, _unique([t.text for t in terms]))
        context = self.params["template"] or ""
        return [
            {
                "model": unit.model,
                "context": context,
                "target_group": term.group,
                "target": term.text,
                "attribute_group": TOP_WORDS_GROUP,
                "design": term.design,
                **row,
            }
            for term in terms
            for row in found[term.text]
        ]

    def _term_indices(self, worker: EncoderWorker, text: str) -> list[int]:
        assert worker.by_text is not None and worker.by_casefold is not None
        match = self.params["term_match"]
        if match == "none":
            return []
        if match == "exact":
            return [worker.by_text[text]] if text in worker.by_text else []
        return worker.by_casefold.get(text.casefold(), [])

    def merge(self, rows: list[dict[str, Any]], models: Sequence[str]) -> pd.DataFrame:
        """The table of all units' rows; a warning names terms left with fewer than ``top_k`` words."""
        from assoc import from_records

        if not rows:
            raise DataError(
                "sbert_topwords: no word was kept for any term (every vocabulary word is above the "
                "ceiling or is the term itself)"
            )
        short = sorted({row["target"] for row in rows if row["n_kept"] < self.params["top_k"]})
        if short:
            warnings.warn(
                f"sbert_topwords: {len(short)} term(s) have fewer than top_k={self.params['top_k']} words "
                f"left after the ceiling (e.g. {short[:3]}); the vocabulary ({rows[0]['vocabulary_size']} "
                "words) is too small",
                stacklevel=2,
            )
        return from_records(rows, scorer=self.name, measure=self.measure, extra_columns=list(self.extra_columns))


# -- sbert_cosine (SEAT) ----------------------------------------------------------------------------


class SBERTCosineScorer(_SBERTScorer):
    """Cosine of every target with every attribute, in the shape of the ``weat`` scorer's table."""

    name = "sbert_cosine"
    description = (
        "Cosine of target and attribute words (or sentences) in a sentence-transformers space, shaped as "
        "the weat scorer's table so the weat/wefat analyses run on it (SEAT, May et al. 2019)."
    )
    citation = MAY
    measure = "cosine"
    extra_columns: ClassVar[dict[str, str]] = {
        "design": "the design (test) name",
        "target_text": "the text embedded for the target (the word, or the template filled with it)",
        "attribute_text": "the text embedded for the attribute",
    }
    options = (TEMPLATE_OPTION, *ENCODER_OPTIONS)

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Require target and attribute groups in every design."""
        super().check_stimuli(stimuli)
        stimuli.require_embedding_groups(self.name)

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """One unit per model and design: its target and attribute groups."""
        self.check_stimuli(stimuli)
        self.check_models(models)
        designs = []
        for design in stimuli.designs:
            target, attribute = design.embedding_groups()
            designs.append(
                {
                    "design": design.name,
                    "target": [[g, list(ws)] for g, ws in target.items()],
                    "attribute": [[g, list(ws)] for g, ws in attribute.items()],
                }
            )
        return [
            WorkUnit(
                key=f"{model}#{d['design']}#{i}",
                model=model,
                payload=d,
                resources=self.unit_resources(model),
                size=sum(len(ws) for _, ws in d["target"]) * sum(len(ws) for _, ws in d["attribute"]),
            )
            for model in models
            for i, d in enumerate(designs)
        ]

    def run_unit(self, state: EncoderWorker, unit: WorkUnit) -> list[dict[str, Any]]:  # type: ignore[override]
        """Cosine of every (target, attribute) pair of one design: cos(t, a) = t.a / (|t| |a|)."""
        import numpy as np

        from assoc.stats import cosine_matrix

        targets = [(g, w) for g, ws in unit.payload["target"] for w in ws]
        attributes = [(g, w) for g, ws in unit.payload["attribute"] for w in ws]
        words = _unique([w for _, w in targets + attributes])
        texts = dict(zip(words, self.texts(words)))
        vectors = dict(zip(words, state.encoder.encode([texts[w] for w in words])))
        cosines = cosine_matrix(
            np.vstack([vectors[w] for _, w in targets]), np.vstack([vectors[w] for _, w in attributes])
        )
        context = self.params["template"] or ""
        return [
            {
                "model": unit.model,
                "context": context,
                "target_group": tg,
                "target": tw,
                "attribute_group": ag,
                "attribute": aw,
                "value": float(cosines[i, j]),
                "design": unit.payload["design"],
                "target_text": texts[tw],
                "attribute_text": texts[aw],
            }
            for i, (tg, tw) in enumerate(targets)
            for j, (ag, aw) in enumerate(attributes)
        ]


# -- sbert_valence ----------------------------------------------------------------------------------


def default_valence_words() -> tuple[list[str], list[str], str]:
    """Caliskan et al. (2017) WEAT 1 Pleasant and Unpleasant words, and a description of the source.

    Read from the weat plugin's bundled stimuli (never copied here).
    """
    from assoc import Stimuli, UnknownNameError

    try:
        design = Stimuli.load("caliskan:weat1").designs[0]
    except UnknownNameError:
        raise DataError(
            "sbert_valence: the default positive/negative words are Caliskan et al. (2017) WEAT 1 "
            "Pleasant/Unpleasant, bundled in the assoc-weat plugin, which is not installed: install it "
            "(from the assoc repository: pip install -e plugins/weat) or give positive=[...] and negative=[...]"
        ) from None
    return (
        list(design.attribute["Pleasant"]),
        list(design.attribute["Unpleasant"]),
        "Caliskan et al. (2017) WEAT 1 Pleasant/Unpleasant (caliskan:weat1)",
    )


class SBERTValenceScorer(_SBERTScorer):
    """General valence of each term: cosine with mean(positive embeddings) - mean(negative embeddings)."""

    name = "sbert_valence"
    description = (
        "General valence of each term in a sentence-transformers space: cosine of its embedding with "
        "mean(positive) - mean(negative) word embeddings (Nicolas & Caliskan, 2024)."
    )
    citation = NICOLAS
    measure = "valence"
    extra_columns: ClassVar[dict[str, str]] = {
        "design": "the design the term belongs to",
        "n_positive": "number of positive words in the valence vector",
        "n_negative": "number of negative words in the valence vector",
        "valence_words": "where the positive/negative words come from",
    }
    options = (
        Option(
            "positive",
            list,
            None,
            "positive words (default: Caliskan et al. 2017 WEAT 1 Pleasant, from the weat plugin)",
            check=_word_list,
        ),
        Option(
            "negative", list, None, "negative words (default: Caliskan et al. 2017 WEAT 1 Unpleasant)", check=_word_list
        ),
        TEMPLATE_OPTION,
        *ENCODER_OPTIONS,
    )

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Require target (or attribute) words in every design."""
        super().check_stimuli(stimuli)
        stimulus_terms(stimuli, scorer=self.name)

    def valence_words(self) -> tuple[list[str], list[str], str]:
        """The positive and negative words (the options, or the default sets) and their source."""
        p = self.params
        if (p["positive"] is None) != (p["negative"] is None):
            from assoc import OptionError

            raise OptionError("sbert_valence: give both positive and negative words, or neither (the default sets)")
        if p["positive"] is not None:
            return list(p["positive"]), list(p["negative"]), "user-given"
        return default_valence_words()

    def plan(self, stimuli: Stimuli, models: Sequence[str]) -> list[WorkUnit]:
        """One unit per model: the valence words and every term."""
        self.check_stimuli(stimuli)
        self.check_models(models)
        positive, negative, source = self.valence_words()
        terms = stimulus_terms(stimuli, scorer=self.name)
        payload = {
            "positive": positive,
            "negative": negative,
            "source": source,
            "terms": [[t.design, t.group, t.text] for t in terms],
        }
        return [
            WorkUnit(
                key=f"{model}#valence",
                model=model,
                payload=payload,
                size=len(terms),
                resources=self.unit_resources(model),
            )
            for model in models
        ]

    def run_unit(self, state: EncoderWorker, unit: WorkUnit) -> list[dict[str, Any]]:  # type: ignore[override]
        """Valence of every term: cos(t, mean(positive) - mean(negative))."""
        payload = unit.payload
        terms = [Term(*item) for item in payload["terms"]]
        texts = _unique([t.text for t in terms])
        encode = state.encoder.encode
        values = valence(
            encode(self.texts(texts)), encode(self.texts(payload["positive"])), encode(self.texts(payload["negative"]))
        )
        by_text = dict(zip(texts, values))
        context = self.params["template"] or ""
        return [
            {
                "model": unit.model,
                "context": context,
                "target_group": t.group,
                "target": t.text,
                "attribute_group": VALENCE_GROUP,
                "attribute": "",
                "value": float(by_text[t.text]),
                "design": t.design,
                "n_positive": len(payload["positive"]),
                "n_negative": len(payload["negative"]),
                "valence_words": payload["source"],
            }
            for t in terms
        ]


def valence(terms: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """General valence: cos(t, v) with v = mean(positive rows) - mean(negative rows), per row t of ``terms``.

    Nicolas & Caliskan (2024). Computed in float64.
    """
    import numpy as np

    from assoc.stats import cosine_matrix

    vector = np.asarray(positive, dtype=np.float64).mean(axis=0) - np.asarray(negative, dtype=np.float64).mean(axis=0)
    return cosine_matrix(np.asarray(terms, dtype=np.float64), vector[None, :])[:, 0]

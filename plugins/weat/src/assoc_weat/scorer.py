"""The ``weat`` scorer: cosine similarities in static word embeddings.

The ``weat`` scorer: cosine similarities between target and attribute words in
static word embeddings, one row per (target word, attribute word).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assoc.errors import DataError, OutOfVocabularyWarning
from assoc.scoring.options import Option, positive
from assoc.scoring.scorer import Scorer

from .embeddings import CASES, FORMATS, PHRASES

if TYPE_CHECKING:
    import pandas as pd

    from assoc.stimuli import Stimuli


def _share(value: float) -> float:
    if not 0.0 <= value < 1.0:
        raise ValueError(f"must be a share between 0 (no word may be missing) and 1 (exclusive), got {value}")
    return value


class WEATScorer(Scorer):
    """Cosine similarity of every (target word, attribute word) pair in static word embeddings."""

    name = "weat"
    description = "Cosine similarity of target and attribute words in static word embeddings (WEAT, WEFAT, ValNorm)."
    citation = (
        "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Semantics derived automatically from "
        "language corpora contain human-like biases. Science, 356(6334), 183-186. doi:10.1126/science.aal4230"
    )
    measure = "cosine"
    default_models = ("glove-6b-50d",)
    requires_models = True
    needs_queries = False
    extra_columns = {
        "design": "the design (test) name",
        "target_token": (
            "the embedding entry used for the target ('' when out of vocabulary; a+b for an averaged phrase)"
        ),
        "attribute_token": "the embedding entry used for the attribute (as target_token)",
    }
    options = (
        Option(
            "case",
            str,
            "auto",
            "lookup case: auto (lowercase only for an uncased vocabulary), exact, lower",
            choices=CASES,
        ),
        Option(
            "phrases",
            str,
            "reject",
            "a multi-word stimulus not in the vocabulary: reject (error) or average (mean of its word vectors)",
            choices=PHRASES,
        ),
        Option(
            "max_missing",
            float,
            0.2,
            "largest share of a group's words that may be out of vocabulary; more is an error",
            check=_share,
        ),
        Option("format", str, "auto", "embedding file format (auto guesses from the file name)", choices=FORMATS),
        Option("vocabulary", str, None, "vocabulary file for format=numpy (default: found next to the matrix)"),
        Option(
            "limit",
            int,
            None,
            "read only the first N vectors of the file (they are usually the most frequent)",
            check=positive,
        ),
    )

    def check_stimuli(self, stimuli: Stimuli) -> None:
        """Require target and attribute groups in every design."""
        super().check_stimuli(stimuli)
        stimuli.require_embedding_groups(self.name)

    def model_fingerprint(self, model: str) -> str:
        """The embedding's identity: the version of the package that ships it, or the sha256 of its file(s)."""
        from .embeddings import embedding_fingerprint

        return embedding_fingerprint(model, self.params.get("vocabulary"))

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """Score every (target, attribute) pair with every embedding: one cosine row per pair."""
        import numpy as np
        import pandas as pd

        from assoc.infra.progress import bar
        from assoc.stats.weat import cosine_matrix
        from assoc.table import normalise

        from .embeddings import load_embeddings, lookup_matrix

        frames = []
        steps = bar(total=len(models) * len(stimuli.designs), desc="weat", enabled=progress)
        for model in models:
            embeddings = load_embeddings(
                model, format=self.params["format"], vocabulary=self.params["vocabulary"], limit=self.params["limit"]
            )
            for design in stimuli.designs:
                target_groups, attribute_groups = design.embedding_groups()
                lookups = {}
                for kind, groups in (("target", target_groups), ("attribute", attribute_groups)):
                    for group, words in groups.items():
                        matrix, tokens = lookup_matrix(
                            embeddings, list(words), case=self.params["case"], phrases=self.params["phrases"]
                        )
                        lookups[kind, group] = (list(words), matrix, tokens)
                self._check_vectors(design.name, model, lookups)
                self._check_missing(design.name, model, lookups)
                targets = [
                    (g, w, t) for g in target_groups for w, t in zip(lookups["target", g][0], lookups["target", g][2])
                ]
                attributes = [
                    (g, w, t)
                    for g in attribute_groups
                    for w, t in zip(lookups["attribute", g][0], lookups["attribute", g][2])
                ]
                target_vectors = np.vstack([lookups["target", g][1] for g in target_groups])
                attribute_vectors = np.vstack([lookups["attribute", g][1] for g in attribute_groups])
                cosines = cosine_matrix(target_vectors, attribute_vectors)  # NaN rows/columns for OOV words
                n_t, n_a = len(targets), len(attributes)
                t_index = np.repeat(np.arange(n_t), n_a)
                a_index = np.tile(np.arange(n_a), n_t)
                frames.append(
                    pd.DataFrame(
                        {
                            "model": model,
                            "context": "",
                            "target_group": [targets[i][0] for i in t_index],
                            "target": [targets[i][1] for i in t_index],
                            "attribute_group": [attributes[j][0] for j in a_index],
                            "attribute": [attributes[j][1] for j in a_index],
                            "value": cosines.reshape(-1),
                            "design": design.name,
                            "target_token": [targets[i][2] for i in t_index],
                            "attribute_token": [attributes[j][2] for j in a_index],
                        }
                    )
                )
                steps.update(1)
        steps.close()
        return normalise(
            pd.concat(frames, ignore_index=True),
            scorer=self.name,
            measure=self.measure,
            extra_columns=list(self.extra_columns),
        )

    def _check_vectors(self, design: str, model: str, lookups: dict) -> None:
        """Reject found words whose vector has no cosine.

        A word found in the embedding whose vector is all zeros or not finite has no cosine: an error
        naming it (dropping it silently, as a NaN cosine would, hides a broken embedding file).
        """
        import numpy as np

        bad = []
        for (kind, group), (words, matrix, tokens) in lookups.items():
            for word, vector, token in zip(words, matrix, tokens):
                if token and (not np.all(np.isfinite(vector)) or not np.any(vector)):
                    problem = "all zeros" if np.all(np.isfinite(vector)) else "NaN or infinite values"
                    bad.append(f"{kind} group {group!r}: {word!r} (entry {token!r}: {problem})")
        if bad:
            raise DataError(
                f"design {design!r}, embedding {model!r}: these vectors have no direction, so no "
                f"cosine: {'; '.join(bad)}. Check the embedding file or remove the words"
            )

    def _check_missing(self, design: str, model: str, lookups: dict) -> None:
        """Warn with every out-of-vocabulary word per group; error when a group loses too many."""
        limit = self.params["max_missing"]
        report, too_many = [], []
        for (kind, group), (words, _, tokens) in lookups.items():
            missing = [w for w, t in zip(words, tokens) if not t]
            if missing:
                report.append(f"{kind} group {group!r}: {len(missing)}/{len(words)} missing ({', '.join(missing)})")
                if len(missing) / len(words) > limit:
                    too_many.append(f"{kind} group {group!r} lost {len(missing)} of {len(words)} words")
        if too_many:
            raise DataError(
                f"design {design!r}, embedding {model!r}: {'; '.join(too_many)}, more than "
                f"max_missing={limit:.0%} (missing: {'; '.join(report)}). A result on what is left "
                "would not measure the stimuli as designed; raise max_missing to accept it"
            )
        if report:
            warnings.warn(
                f"design {design!r}, embedding {model!r}: out-of-vocabulary words are left out: {'; '.join(report)}",
                OutOfVocabularyWarning,
                stacklevel=2,
            )

"""A tiny scorer: cosine similarity of character n-gram counts.

It needs no model download, so it shows the whole plugin contract in a few
lines. The "model" is the n-gram size, written ``char-<n>gram``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from assoc import ModelError, Option, Scorer, from_records

if TYPE_CHECKING:
    import pandas as pd

    from assoc import Stimuli


def char_ngrams(word: str, n: int, lowercase: bool = True) -> Counter[str]:
    """Counts of the character n-grams of ``word`` padded with spaces (so short words still have n-grams)."""
    padded = f" {word.lower() if lowercase else word} "
    return Counter(padded[i : i + n] for i in range(len(padded) - n + 1))


def cosine(a: Counter[str], b: Counter[str]) -> float:
    """cos(a, b) = sum_k a_k b_k / (||a|| ||b||)."""
    dot = sum(a[k] * b[k] for k in a.keys() & b.keys())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


class CharNgramScorer(Scorer):
    """Cosine similarity of the character n-gram counts of a target and an attribute word."""

    name = "char_ngram"
    example = True  # listed apart from the real scorers (`assoc scorers`)
    description = "Cosine similarity of character n-gram counts of target and attribute words (example plugin)."
    citation = "Example plugin for the assoc documentation; no publication."
    measure = "cosine"
    default_models = ("char-3gram",)
    options = (Option("lowercase", bool, True, "Compare words case-insensitively."),)
    extra_columns = {"n": "the n-gram size used"}

    def score(self, stimuli: Stimuli, models: Sequence[str], *, progress: bool) -> pd.DataFrame:
        """One row per (model, target, attribute): the cosine of their n-gram counts."""
        rows = []
        for model in models:
            n = self._ngram_size(model)
            for design in stimuli:
                for target_group, target, attribute_group, attribute in design.word_pairs():
                    lower = self.params["lowercase"]
                    value = cosine(char_ngrams(target, n, lower), char_ngrams(attribute, n, lower))
                    rows.append(
                        {
                            "model": model,
                            "target_group": target_group,
                            "target": target,
                            "attribute_group": attribute_group,
                            "attribute": attribute,
                            "value": value,
                            "n": n,
                        }
                    )
        return from_records(rows, scorer=self.name, measure=self.measure, extra_columns=["n"])

    @staticmethod
    def _ngram_size(model: str) -> int:
        if model.startswith("char-") and model.endswith("gram") and model[5:-4].isdigit() and int(model[5:-4]) > 0:
            return int(model[5:-4])
        raise ModelError(f"unknown model {model!r}: this scorer's models are written char-<n>gram, e.g. char-3gram")

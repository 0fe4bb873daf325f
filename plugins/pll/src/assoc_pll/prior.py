"""Prior probabilities P(V) of the variants of a set, from frequencies.

Watson et al. (2023) set P(V) = f(V) / sum_{V' in set} f(V'), with f the corpus
frequency of the variant. Three sources of f are offered:

``wordfreq``
    The offline word frequencies of the ``wordfreq`` package (Speer, 2022; version
    pinned in this plugin's requirements). A phrase ("police officer") gets
    wordfreq's own combination of its words' frequencies, 1/f = 1/f_1 + 1/f_2 + ...
    (the smallest word frequency dominates). This is an upper bound on a bigram
    frequency, not a bigram count: prefer ``counts`` when your sets mix phrases and
    single words. Words below wordfreq's listing threshold (frequency 0) get
    ``floor`` (default 1e-9, below the lowest listed English frequency of 1e-8).
``counts``
    User-given counts or frequencies per variant (a mapping or a CSV with columns
    ``variant`` and ``count``), e.g. the Wikipedia + BookCorpus counts of the paper.
``uniform``
    f = 1 for every variant, so the posterior is the normalised likelihood.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assoc import DataError

PRIOR_SOURCES = ("wordfreq", "counts", "uniform")
DEFAULT_FLOOR = 1e-9


@dataclass(frozen=True)
class Frequency:
    """The frequency used for one variant, and whether it was floored."""

    variant: str
    frequency: float
    floored: bool = False


def wordfreq_frequencies(
    variants: Iterable[str], lang: str = "en", floor: float = DEFAULT_FLOOR
) -> dict[str, Frequency]:
    """Frequencies from ``wordfreq.word_frequency(variant, lang)``; zeros replaced by ``floor``."""
    try:
        import wordfreq
    except ImportError:  # pragma: no cover - wordfreq is a dependency of assoc-pll
        raise DataError("prior='wordfreq' needs the 'wordfreq' package (pip install wordfreq==3.1.1)") from None
    if not floor > 0:
        raise DataError(f"the frequency floor must be positive, got {floor!r}")
    out = {}
    for variant in dict.fromkeys(variants):
        try:
            value = float(wordfreq.word_frequency(variant, lang))
        except LookupError as exc:
            raise DataError(f"wordfreq has no frequencies for language {lang!r}: {exc}") from None
        out[variant] = Frequency(variant, value if value > 0 else floor, floored=not value > 0)
    return out


def read_counts(source: str | Path | Mapping[str, Any]) -> dict[str, float]:
    """Counts per variant from a mapping or a table file with columns ``variant`` and ``count``.

    Files are read by :func:`assoc.table.read_data_file` (.csv, .tsv, .parquet, .jsonl).
    """
    if isinstance(source, Mapping):
        items = list(source.items())
        where = "prior counts"
    else:
        path = Path(source)
        if not path.is_file():
            raise DataError(f"prior counts file not found: {path}")
        from assoc import read_data_file

        frame = read_data_file(path, what="prior counts", all_text=True)
        fields = set(map(str, frame.columns))
        if not {"variant", "count"} <= fields:
            raise DataError(
                f"prior counts file {path} needs columns 'variant' and 'count' "
                f"(has {', '.join(sorted(fields)) or 'none'})"
            )
        items = list(zip(frame["variant"], frame["count"]))
        where = str(path)
    counts: dict[str, float] = {}
    for variant, count in items:
        variant = str(variant).strip()
        try:
            value = float(count)
        except (TypeError, ValueError):
            raise DataError(f"{where}: count of {variant!r} is not a number: {count!r}") from None
        if not math.isfinite(value) or value < 0:
            raise DataError(f"{where}: count of {variant!r} must be a non-negative number, got {count!r}")
        if variant in counts:
            raise DataError(f"{where}: variant {variant!r} is listed twice")
        counts[variant] = value
    return counts


def variant_frequencies(
    variants: Iterable[str],
    source: str = "wordfreq",
    *,
    counts: str | Path | Mapping[str, Any] | None = None,
    lang: str = "en",
    floor: float = DEFAULT_FLOOR,
) -> dict[str, Frequency]:
    """The frequency f(V) of every variant from ``source`` (see the module docstring)."""
    variants = list(dict.fromkeys(variants))
    if source == "uniform":
        return {v: Frequency(v, 1.0) for v in variants}
    if source == "wordfreq":
        return wordfreq_frequencies(variants, lang=lang, floor=floor)
    if source == "counts":
        if counts is None:
            raise DataError("prior='counts' needs counts (a mapping or a CSV with columns variant,count)")
        given = read_counts(counts)
        missing = [v for v in variants if v not in given]
        if missing:
            raise DataError(f"prior counts lack {len(missing)} variant(s): {', '.join(map(repr, missing[:10]))}")
        return {v: Frequency(v, given[v]) for v in variants}
    raise DataError(f"unknown prior source {source!r} (choose from {', '.join(PRIOR_SOURCES)})")


def prior_probabilities(frequencies: Iterable[float]) -> list[float]:
    """P(V) = f(V) / sum_{V'} f(V') over the variants of one set."""
    values = [float(f) for f in frequencies]
    total = math.fsum(values)
    if not total > 0:
        raise DataError("the variants of a set have a total frequency of 0; the prior is undefined")
    return [v / total for v in values]

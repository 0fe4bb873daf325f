"""What the BBQ subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = (
    "bbq.scorer:BBQScorer",
    "bbq.scorer:ChatBBQScorer",
    "bbq.scorer:CausalBBQScorer",
)
ANALYSES: tuple[str, ...] = ("bbq.analysis:BBQAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "bbq",
        "bbq.items:load_bbq",
        "BBQ (Parrish et al., 2022): all eleven categories, 58,492 examples (CC BY 4.0); bbq:<directory> reads "
        "the authors' JSONL files",
    ),
)

"""What the CrowS-Pairs subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = ("crows_pairs.scorer:CrowsPairsScorer",)
ANALYSES: tuple[str, ...] = ("crows_pairs.analysis:CrowsPairsAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "crows_pairs",
        "crows_pairs.items:load_crows_pairs",
        "CrowS-Pairs (Nangia et al. 2020): 1,508 sentence pairs, 9 bias types (CC BY-SA 4.0); one design per pair",
    ),
)

"""What the Matched Guise Probing subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = ()
ANALYSES: tuple[str, ...] = (
    "matched_guise.analysis:MatchedGuiseAnalysis",
    "matched_guise.analysis:GuiseAgreementAnalysis",
)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "hofmann2024",
        "matched_guise.stimuli:load_hofmann2024",
        "Matched Guise Probing (Hofmann et al. 2024): 699 AAE/SAE pairs x trait, occupation, guilt, penalty "
        "prompts and attributes (MIT)",
    ),
)

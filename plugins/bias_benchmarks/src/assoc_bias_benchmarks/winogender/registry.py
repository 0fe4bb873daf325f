"""What the Winogender subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = ("winogender.scorer:WinogenderScorer",)
ANALYSES: tuple[str, ...] = (
    "winogender.analysis:WinogenderAnalysis",
    "winogender.analysis:WinogenderOccupationsAnalysis",
)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "winogender",
        "winogender.items:load_winogender",
        "Winogender (Rudinger et al., 2018): 720 sentences, whom the pronoun refers to (occupation or participant), "
        "MIT; winogender:female,male picks pronoun genders; winogender:<folder> reads your copy",
    ),
    (
        "winogender_pronouns",
        "winogender.items:load_pronouns",
        "Winogender's 240 templates x participants, each with its female, male and neutral sentence (the pronoun a "
        "model prefers per occupation); winogender_pronouns:<folder> reads your copy",
    ),
)

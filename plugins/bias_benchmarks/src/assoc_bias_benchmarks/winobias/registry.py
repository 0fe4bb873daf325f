"""What the WinoBias subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = ("winobias.scorer:WinoBiasScorer",)
ANALYSES: tuple[str, ...] = ("winobias.analysis:WinoBiasAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "winobias",
        "winobias.items:load_winobias",
        "WinoBias (Zhao et al., 2018): 3,168 sentences, whom the pronoun refers to, pro/anti-stereotyped x type 1/2 x "
        "dev/test (MIT); winobias:pro_type1_dev,anti_type1_dev picks conditions; winobias:<folder> reads your copy",
    ),
)

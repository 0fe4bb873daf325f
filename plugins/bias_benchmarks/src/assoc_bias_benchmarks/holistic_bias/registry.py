"""What the HolisticBias benchmark registers (see :mod:`assoc_bias_benchmarks.plugin`): stimuli, scorer, analysis.

The scorer (masked LMs by PLL, causal LMs by log P, one row per sentence: the table shape is in
:mod:`assoc_bias_benchmarks.holistic_bias.analysis`) and, in :data:`BENCHMARK`, what ``assoc benchmark run``
runs: the scorer on the Likelihood Bias sentences, then the analysis.
"""

SCORERS: tuple[str, ...] = ("holistic_bias.scorer:HolisticBiasScorer",)
ANALYSES: tuple[str, ...] = ("holistic_bias.analysis:HolisticBiasAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "holistic_bias",
        "holistic_bias.stimuli:load_holistic_bias",
        "HolisticBias v1.1 (Smith et al., 2022): the 549,120 sentences of the Likelihood Bias, one design per axis",
    ),
    (
        "holistic_bias_all",
        "holistic_bias.stimuli:load_holistic_bias_all",
        "HolisticBias v1.1 (Smith et al., 2022): all 566,625 sentences of the authors' generator",
    ),
)
#: The benchmark (assoc.Benchmark's fields): its scorer, default stimuli and analysis, by their registered names.
BENCHMARK: dict[str, str] = {
    "name": "holistic_bias",
    "scorer": "holistic_bias",
    "stimuli": "holistic_bias",
    "analysis": "holistic_bias",
    "description": "HolisticBias Likelihood Bias per axis (Smith et al., 2022): masked and causal LMs",
}

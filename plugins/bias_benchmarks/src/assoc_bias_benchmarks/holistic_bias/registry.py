"""What the HolisticBias benchmark registers (see :mod:`assoc_bias_benchmarks.plugin`): its stimuli and its analysis.

Its scorer (masked LMs by PLL, causal LMs by log P, one row per sentence: the table shape is in
:mod:`assoc_bias_benchmarks.holistic_bias.analysis`) is built on the language-model layer and added here then.
"""

SCORERS: tuple[str, ...] = ()
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

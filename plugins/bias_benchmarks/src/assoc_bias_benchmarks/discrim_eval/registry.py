"""What the DiscrimEval benchmark registers (see :mod:`assoc_bias_benchmarks.plugin`): its stimuli and its analysis.

Its scorer (likelihood models: lm-eval's context and four continuations; chat models: the reply read as yes or
no; the table shape is in :mod:`assoc_bias_benchmarks.discrim_eval.analysis`) is built on the language-model
layer and added here then.
"""

SCORERS: tuple[str, ...] = ()
ANALYSES: tuple[str, ...] = ("discrim_eval.analysis:DiscrimEvalAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "discrim_eval",
        "discrim_eval.items:load_discrim_eval",
        "DiscrimEval explicit set (Tamkin et al., 2023): 70 decision questions x 9 ages x 3 genders x 5 races",
    ),
)

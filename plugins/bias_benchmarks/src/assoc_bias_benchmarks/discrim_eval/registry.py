"""What the DiscrimEval benchmark registers (see :mod:`assoc_bias_benchmarks.plugin`): stimuli, scorer, analysis.

The scorer (likelihood models: lm-eval's context and four continuations; chat models: the reply read as yes or
no; the table shape is in :mod:`assoc_bias_benchmarks.discrim_eval.analysis`) and, in :data:`BENCHMARK`, what
``assoc benchmark run`` runs: the scorer on the explicit set, then the analysis.
"""

SCORERS: tuple[str, ...] = ("discrim_eval.scorer:DiscrimEvalScorer",)
ANALYSES: tuple[str, ...] = ("discrim_eval.analysis:DiscrimEvalAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "discrim_eval",
        "discrim_eval.items:load_discrim_eval",
        "DiscrimEval explicit set (Tamkin et al., 2023): 70 decision questions x 9 ages x 3 genders x 5 races",
    ),
)
#: The benchmark (assoc.Benchmark's fields): its scorer, default stimuli and analysis, by their registered names.
BENCHMARK: dict[str, str] = {
    "name": "discrim_eval",
    "scorer": "discrim_eval",
    "stimuli": "discrim_eval",
    "analysis": "discrim_eval",
    "description": "DiscrimEval discrimination scores (Tamkin et al., 2023): masked, causal and chat models",
}

"""What the StereoSet subpackage registers (see :mod:`assoc_bias_benchmarks.plugin`)."""

from __future__ import annotations

SCORERS: tuple[str, ...] = ("stereoset.scorer:StereoSetScorer",)
ANALYSES: tuple[str, ...] = ("stereoset.analysis:StereoSetAnalysis",)
STIMULI: tuple[tuple[str, str, str], ...] = (
    (
        "stereoset",
        "stereoset.items:load_stereoset",
        "StereoSet (Nadeem et al., 2021): the 4,229 items of the development set (CC BY-SA 4.0); stereoset:<path> "
        "reads your copy (the authors' dev.json or a JSON Lines file)",
    ),
    (
        "stereoset_intrasentence",
        "stereoset.items:load_intrasentence",
        "StereoSet's 2,106 intrasentence items (a BLANK filled three ways); stereoset_intrasentence:<path> for yours",
    ),
    (
        "stereoset_intersentence",
        "stereoset.items:load_intersentence",
        "StereoSet's 2,123 intersentence items (a context and three continuations); stereoset_intersentence:<path>",
    ),
)

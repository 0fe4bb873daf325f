"""The shared analyses: they read any association table, whichever scorer produced it.

``ANALYSES`` is registered through the analysis hook by :mod:`assoc.plugins.builtin`; the classes are
public names of :mod:`assoc.analysis`.
"""

from __future__ import annotations

from assoc.analysis.alpha import AlphaAnalysis
from assoc.analysis.convergence import ConvergenceAnalysis
from assoc.analysis.correlate import CorrelateAnalysis
from assoc.analysis.correlation_table import CorrelationTableAnalysis
from assoc.analysis.differentiability import DifferentiabilityAnalysis
from assoc.analysis.effect_size import EffectSizeAnalysis
from assoc.analysis.emmeans import EmmeansAnalysis
from assoc.analysis.icc import ICCAnalysis
from assoc.analysis.lmm import LMMAnalysis
from assoc.analysis.regress import RegressAnalysis
from assoc.analysis.standardize import StandardizeAnalysis
from assoc.analysis.stereotype import StereotypeAnalysis
from assoc.analysis.valence_models import ValenceModelsAnalysis

ANALYSES = (
    ICCAnalysis,
    AlphaAnalysis,
    CorrelateAnalysis,
    StandardizeAnalysis,
    EffectSizeAnalysis,
    LMMAnalysis,
    RegressAnalysis,
    StereotypeAnalysis,
    ConvergenceAnalysis,
    DifferentiabilityAnalysis,
    EmmeansAnalysis,
    ValenceModelsAnalysis,
    CorrelationTableAnalysis,
)

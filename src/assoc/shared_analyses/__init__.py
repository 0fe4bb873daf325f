"""The shared analyses: they read any association table, whichever scorer produced it.

``ANALYSES`` is registered through the analysis hook by :mod:`assoc.builtin`.
"""

from __future__ import annotations

from .alpha import AlphaAnalysis
from .convergence import ConvergenceAnalysis
from .correlate import CorrelateAnalysis
from .correlation_table import CorrelationTableAnalysis
from .differentiability import DifferentiabilityAnalysis
from .effect_size import EffectSizeAnalysis
from .emmeans import EmmeansAnalysis
from .icc import ICCAnalysis
from .lmm import LMMAnalysis
from .regress import RegressAnalysis
from .standardize import StandardizeAnalysis
from .stereotype import StereotypeAnalysis
from .valence_models import ValenceModelsAnalysis

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

__all__ = [
    "ANALYSES",
    "AlphaAnalysis",
    "ConvergenceAnalysis",
    "CorrelateAnalysis",
    "CorrelationTableAnalysis",
    "DifferentiabilityAnalysis",
    "EffectSizeAnalysis",
    "EmmeansAnalysis",
    "ICCAnalysis",
    "LMMAnalysis",
    "RegressAnalysis",
    "StandardizeAnalysis",
    "StereotypeAnalysis",
    "ValenceModelsAnalysis",
]

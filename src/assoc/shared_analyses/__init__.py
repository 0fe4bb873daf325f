"""The shared analyses: they read any association table, whichever scorer produced it.

``ANALYSES`` is registered through the analysis hook by :mod:`assoc.builtin`.
"""

from __future__ import annotations

from .alpha import AlphaAnalysis
from .convergence import ConvergenceAnalysis
from .correlate import CorrelateAnalysis
from .effect_size import EffectSizeAnalysis
from .icc import ICCAnalysis
from .lmm import LMMAnalysis
from .regress import RegressAnalysis
from .standardize import StandardizeAnalysis
from .stereotype import StereotypeAnalysis

ANALYSES = (ICCAnalysis, AlphaAnalysis, CorrelateAnalysis, StandardizeAnalysis, EffectSizeAnalysis,
            LMMAnalysis, RegressAnalysis, StereotypeAnalysis, ConvergenceAnalysis)

__all__ = ["ANALYSES", "AlphaAnalysis", "ConvergenceAnalysis", "CorrelateAnalysis", "EffectSizeAnalysis",
           "ICCAnalysis", "LMMAnalysis", "RegressAnalysis", "StandardizeAnalysis", "StereotypeAnalysis"]

"""Analyses: the :class:`Analysis` base class and the shared analyses that read any association table.

The base class lives in :mod:`assoc.analysis.base`, each shared analysis in a module of its own
(:mod:`assoc.analysis.icc`, ...); :mod:`assoc.analysis.catalog` lists them for the core's plugin.
``from assoc.analysis import Analysis, with_estimate`` keeps working; the shared analyses' classes
are imported on first use, so that importing the base class does not import every analysis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.analysis.base import ESTIMATE as ESTIMATE
from assoc.analysis.base import Analysis as Analysis
from assoc.analysis.base import Requirement as Requirement
from assoc.analysis.base import check_requirement as check_requirement
from assoc.analysis.base import with_estimate as with_estimate
from assoc.infra.importhooks import public_face as _public_face

if TYPE_CHECKING:  # pragma: no cover
    from assoc.analysis.catalog import ANALYSES as ANALYSES
    from assoc.analysis.catalog import AlphaAnalysis as AlphaAnalysis
    from assoc.analysis.catalog import ConvergenceAnalysis as ConvergenceAnalysis
    from assoc.analysis.catalog import CorrelateAnalysis as CorrelateAnalysis
    from assoc.analysis.catalog import CorrelationTableAnalysis as CorrelationTableAnalysis
    from assoc.analysis.catalog import DifferentiabilityAnalysis as DifferentiabilityAnalysis
    from assoc.analysis.catalog import EffectSizeAnalysis as EffectSizeAnalysis
    from assoc.analysis.catalog import EmmeansAnalysis as EmmeansAnalysis
    from assoc.analysis.catalog import ICCAnalysis as ICCAnalysis
    from assoc.analysis.catalog import LMMAnalysis as LMMAnalysis
    from assoc.analysis.catalog import RegressAnalysis as RegressAnalysis
    from assoc.analysis.catalog import StandardizeAnalysis as StandardizeAnalysis
    from assoc.analysis.catalog import StereotypeAnalysis as StereotypeAnalysis
    from assoc.analysis.catalog import ValenceModelsAnalysis as ValenceModelsAnalysis
    from assoc.analysis.headline import Estimate as Estimate
    from assoc.analysis.headline import Headline as Headline

__getattr__, __dir__ = _public_face(globals())

"""Analyses: the :class:`Analysis` base class and the shared analyses that read any association table.

The base class lives in :mod:`assoc.analysis.base`, each shared analysis in a module of its own
(:mod:`assoc.analysis.icc`, ...); :mod:`assoc.analysis.catalog` lists them for the core's plugin.
``from assoc.analysis import Analysis, with_estimate`` keeps working.
"""

from __future__ import annotations

from typing import Any

from assoc.analysis.base import ESTIMATE, Analysis, Requirement, check_requirement, with_estimate
from assoc.analysis.headline import Estimate, Headline

__all__ = ["ESTIMATE", "Analysis", "Estimate", "Headline", "Requirement", "check_requirement", "with_estimate"]


def __getattr__(name: str) -> Any:
    # The shared analyses' classes (``ICCAnalysis``, ..., ``ANALYSES``) on demand, so that importing the
    # base class does not import every analysis. import_module, not ``from assoc.analysis import catalog``:
    # that looks the submodule up as an attribute of this package first, which would call this function again.
    import importlib

    catalog = importlib.import_module("assoc.analysis.catalog")
    if name in catalog.__all__:
        return getattr(catalog, name)
    raise AttributeError(f"module 'assoc.analysis' has no attribute {name!r}")

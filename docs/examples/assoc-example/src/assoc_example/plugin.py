"""Registers the example scorer, analysis and executor with assoc (named by the entry point in pyproject.toml)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import hookimpl

if TYPE_CHECKING:
    from assoc import RegisterAnalysis, RegisterExecutor, RegisterScorer


# Every assoc command (--help too) runs these hooks, so the modules they import must be cheap to
# import: none imports numpy, pandas or torch at top level (check_plugin_imports tests that).


@hookimpl
def register_scorers(register: RegisterScorer) -> None:
    """Register the ``char_ngram`` scorer."""
    from .scorer import CharNgramScorer

    register(CharNgramScorer)


@hookimpl
def register_analyses(register: RegisterAnalysis) -> None:
    """Register the ``cell_means`` analysis."""
    from .analyses import CellMeans

    register(CellMeans)


@hookimpl
def register_executors(register: RegisterExecutor) -> None:
    """Register the ``threadpool`` executor."""
    from .executor import ThreadPoolUnits

    register(ThreadPoolUnits)

"""The analysis interface: an association table in, a tidy table of estimates out."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar

from assoc.scoring.component import Component

if TYPE_CHECKING:
    import pandas as pd


class Analysis(Component):
    """Base class of every analysis.

    Subclasses set ``name``, ``description``, ``citation``, ``options`` and
    implement :meth:`run`. When ``requires_association_table`` is true (the
    default), the core validates the input against the association-table
    contract before calling :meth:`run`, so an analysis can trust the columns.

    The output has one row per estimate and columns that state what was used
    (numbers of items and raters, which SD, exact or sampled p, ...).
    """

    kind: ClassVar[str] = "analysis"
    requires_association_table: ClassVar[bool] = True
    #: The output column that holds the main number (``icc``, ``alpha``, ``d``, ``r``, ...). The core
    #: adds a copy of it named ``estimate`` (:func:`with_estimate`), so plots and readers find the
    #: main number of any analysis under one name. ``None``: the output has ``estimate`` already, or is
    #: itself an association table, whose number is ``value``.
    estimate_column: ClassVar[str | None] = None

    @abstractmethod
    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Analyse ``table`` and return a DataFrame of estimates."""


ESTIMATE = "estimate"


def with_estimate(result: pd.DataFrame, column: str | None) -> pd.DataFrame:
    """``result`` with the canonical ``estimate`` column: a copy of ``column``, placed just before it.

    Nothing changes when ``result`` has ``estimate`` already, when ``column`` is ``None`` or
    when the result lacks it (an analysis may return other shapes for some options).
    """
    if column is None or ESTIMATE in result.columns or column not in result.columns:
        return result
    result = result.copy()
    result.insert(list(result.columns).index(column), ESTIMATE, result[column])
    return result

"""The analysis interface: an association table in, a tidy table of estimates out."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, ClassVar

from .component import Component

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

    @abstractmethod
    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Analyse ``table`` and return a DataFrame of estimates."""

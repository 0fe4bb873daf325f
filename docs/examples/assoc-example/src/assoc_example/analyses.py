"""The example analysis: the mean value of each target group x attribute group cell.

A template for an analysis plugin: declared options, a ``Requirement`` the core checks before
``run``, and output columns named as the shared analyses name theirs (``estimate``, ``n_values``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc import Analysis, Option, Requirement

if TYPE_CHECKING:
    import pandas as pd


class CellMeans(Analysis):
    r"""Mean value of each cell: :math:`\bar v = \frac{1}{n} \sum_{i=1}^{n} v_i` over the cell's rows.

    A cell is one model x target group x attribute group (x ``by`` columns); rows without a
    value (NaN: a word out of vocabulary, say) are left out and not counted.
    """

    name = "cell_means"
    description = "Mean value per model, target group and attribute group (an example analysis)."
    citation = "none"
    example = True
    requires = Requirement(needs="values with target and attribute groups", roles=("target", "attribute"))
    options = (Option("by", list, [], "further grouping columns (e.g. [context])"),)

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """One row per cell: its columns, ``estimate`` (the mean value) and ``n_values``."""
        cells = ["model", "target_group", "attribute_group", *self.params["by"]]
        grouped = table.dropna(subset=["value"]).groupby(cells, sort=True)["value"]
        return grouped.agg(estimate="mean", n_values="size").reset_index()

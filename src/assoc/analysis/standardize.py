"""``standardize``: z-scores of the association values within chosen groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import column_list, require_columns
from assoc.components.options import Option

if TYPE_CHECKING:
    import pandas as pd


class StandardizeAnalysis(Analysis):
    """Replace ``value`` by its z-score within each ``within`` group.

    The result is again an association table (so any other analysis can read it): ``value``
    holds the z-score, ``measure`` gets the ``suffix`` (``lpr`` -> ``lpr_z``), and the extra
    columns ``raw_value``, ``standardized_within`` and ``n_in_group`` keep what was used.
    Groups whose SD is zero or undefined get NaN z-scores. Formula: :mod:`assoc.stats.standardize`.
    """

    name = "standardize"
    requires = Requirement(needs="any association table")
    description = "z-scores of the values within groups (e.g. model x query, as in FMAT Study 1)."
    citation = (
        "Bao, H.-W.-S. (2024). The Fill-Mask Association Test (FMAT). Journal of Personality and "
        "Social Psychology. doi:10.1037/pspa0000396"
    )
    options = (
        Option(
            "within",
            list,
            ["measure", "model", "context"],
            "columns defining the groups to standardise within (empty: the whole table)",
            check=column_list,
        ),
        Option("ddof", int, 1, "1: sample SD (R's scale), 0: population SD", choices=(0, 1)),
        Option("suffix", str, "_z", "appended to the measure name"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Return the table with ``value`` z-scored within each group."""
        from assoc.errors import DataError
        from assoc.stats.standardize import zscore_within

        p = self.params
        within = p["within"]
        require_columns(table, within, what="standardize")
        if "measure" not in within and table["measure"].nunique() > 1:
            raise DataError("standardize: the table holds several measures; add 'measure' to 'within'")
        out = table.copy()
        out["raw_value"] = table["value"].astype(float)
        out["value"] = zscore_within(table, within=within, ddof=p["ddof"])
        out["measure"] = table["measure"].astype(str) + p["suffix"]
        out["standardized_within"] = ",".join(within)
        if within:
            out["n_in_group"] = table.groupby(within, dropna=False)["value"].transform("count").astype(int)
        else:
            out["n_in_group"] = int(table["value"].count())
        return out.reset_index(drop=True)

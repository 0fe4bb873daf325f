"""``icc``: interrater agreement of models (intraclass correlation), as in the FMAT papers."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    column_list,
    confidence_level,
    drop_levels_without_values,
    groups,
    require_columns,
    role_columns,
    single_measure_check,
)
from assoc.components.options import Option

if TYPE_CHECKING:
    import pandas as pd

    from assoc.stats.icc import ICCResult


class ICCAnalysis(Analysis):
    """Intraclass correlations of the ``value`` column with models as raters.

    Items are the unique combinations of the ``items`` columns (by default every role
    column present, so one item is one query x target x attribute x [MASK] candidate cell, as
    FMAT's ``ICC_models``), raters the combinations of the ``raters``
    columns (by default ``model``). The long table is pivoted to items x raters;
    items that some rater lacks, or whose value is NaN, are dropped entirely and
    counted in ``n_items_dropped``. Formulas: :mod:`assoc.stats.icc`.
    """

    name = "icc"
    requires = Requirement(
        needs="at least 2 raters (models) scoring the same items",
        at_least={"raters": 2},
        instead="score a second model (repeat --model), or measure one model's reliability with alpha",
    )
    estimate_column = "icc"
    description = "Intraclass correlation (agreement/consistency, single/average) with models as raters."
    citation = (
        "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation "
        "coefficients. Psychological Methods, 1(1), 30-46. doi:10.1037/1082-989X.1.1.30"
    )
    options = (
        Option(
            "items",
            list,
            None,
            "columns whose combinations are the items (default: every role column present: design, context, "
            "target_group, target, attribute_group, attribute, mask_group, mask)",
            check=column_list,
        ),
        Option("raters", list, ["model"], "columns whose combinations are the raters", check=column_list),
        Option(
            "by", list, ["measure"], "columns to compute separate ICCs for (e.g. measure, scorer)", check=column_list
        ),
        Option(
            "model",
            str,
            "twoway",
            "ANOVA model: twoway (irr/FMAT default), oneway, or all",
            choices=("twoway", "oneway", "all"),
        ),
        Option(
            "type",
            str,
            "all",
            "agreement, consistency or all (two-way model)",
            choices=("agreement", "consistency", "all"),
        ),
        Option("unit", str, "all", "single, average or all", choices=("single", "average", "all")),
        Option("confidence", float, 0.95, "confidence level of the intervals", check=confidence_level),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute the ICC across models (raters) over items."""
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.icc import intraclass_correlations, ratings_matrix

        p = self.params
        raters, by = p["raters"], p["by"]
        items = p["items"] if p["items"] is not None else role_columns(table, exclude=[*raters, *by])
        overlap = (set(items) | set(raters)) & set(by)
        if overlap:
            raise DataError(f"icc: column(s) {sorted(overlap)} are used both in 'by' and as items/raters")
        require_columns(table, [*items, *raters, *by], what="icc")
        single_measure_check(table, [*items, *raters, *by], what="icc")
        rows = []
        for key, part in groups(table, by, skip_missing=True, what="icc"):
            # A rater without a single value (e.g. a model for which every option was out of
            # vocabulary) would make every item incomplete: leave it out, and say so.
            part, empty_raters = drop_levels_without_values(part, raters)
            if empty_raters:
                warnings.warn(
                    f"icc: left out rater(s) without any value{f' in group {key}' if key else ''}: "
                    f"{', '.join(empty_raters)}",
                    stacklevel=2,
                )
            rater_values = part[raters].drop_duplicates()
            if len(rater_values) < 2:
                raise DataError(
                    f"icc needs at least 2 raters (distinct values of {', '.join(raters)})"
                    + (f" in group {key}" if key else "")
                    + f", found {len(rater_values)}"
                )
            wide, dropped = ratings_matrix(part, items=items, raters=raters)
            if len(wide) < 2:
                raise DataError(
                    "icc needs at least 2 items rated by every rater"
                    + (f" in group {key}" if key else "")
                    + f"; {len(wide)} complete item(s) left after dropping {dropped} incomplete one(s)"
                )
            for result in intraclass_correlations(wide.to_numpy(), confidence=p["confidence"]):
                if not self._wanted(result):
                    continue
                rows.append(
                    {
                        **key,
                        **result.as_dict(),
                        "n_items_dropped": dropped,
                        "items": ",".join(items),
                        "raters": ",".join(raters),
                        "rater_names": ",".join(
                            " ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in wide.columns
                        ),
                    }
                )
        return pd.DataFrame(rows)

    def _wanted(self, result: ICCResult) -> bool:
        p = self.params
        if p["model"] != "all" and result.model != p["model"]:
            return False
        if result.model == "twoway" and p["type"] != "all" and result.type != p["type"]:
            return False
        return p["unit"] == "all" or result.unit == p["unit"]

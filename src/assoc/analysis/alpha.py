"""``alpha``: internal consistency (Cronbach's alpha) across queries, targets or attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    PARENT_COLUMN,
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


class AlphaAnalysis(Analysis):
    """Cronbach's alpha treating the values of one column as the items of a scale.

    With ``item="context"`` (the default) every query is an item and the cases are the
    target x attribute (x [MASK] candidate) cells, as ``LPR_reliability(item="query")`` in the
    FMAT R package;
    ``item="target"`` or ``"attribute"`` treat words as items. Separate estimates per
    ``by`` group (default: per measure and model). Items without any value in a group (e.g. an
    out-of-vocabulary word) are dropped first and counted (``n_items_dropped``, named in
    ``items_dropped``); then cases missing any remaining item are dropped and counted
    (listwise deletion, ``n_cases_dropped``). With ``missing="pairwise"`` incomplete cases
    are kept and each covariance uses the cases that have both items (pingouin's default;
    ``n_cases_dropped`` then counts only cases without any value). Formulas and the Feldt
    (1965) interval: :mod:`assoc.stats.reliability`.
    """

    name = "alpha"
    requires = Requirement(
        needs="at least 2 items (distinct values of the 'item' column, default context: the queries)",
        at_least={"item": 2},
        instead="use item=target or item=attribute (--option item=target) to treat words as items, "
        "or compare models with icc",
    )
    estimate_column = "alpha"
    description = "Cronbach's alpha across queries, targets or attributes, with Feldt's CI."
    citation = (
        "Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests. Psychometrika, "
        "16(3), 297-334; Feldt, L. S. (1965). Psychometrika, 30(3), 357-370."
    )
    options = (
        Option("item", str, "context", "column whose values are the items (context = queries, target, attribute)"),
        Option(
            "cases",
            list,
            None,
            "columns identifying the cases (default: the other role columns present, "
            "except the one the item column is nested in, e.g. design for context)",
            check=column_list,
        ),
        Option(
            "by",
            list,
            None,
            "columns to compute separate alphas for (default: measure, model, and design when the table has it)",
            check=column_list,
        ),
        Option("confidence", float, 0.95, "confidence level of Feldt's interval", check=confidence_level),
        Option(
            "missing",
            str,
            "listwise",
            "incomplete cases: listwise (drop them) or pairwise (each covariance over the cases "
            "with both items; pingouin's default)",
            choices=("listwise", "pairwise"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute Cronbach's alpha with its confidence interval."""
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.icc import ratings_matrix
        from assoc.stats.reliability import cronbach_alpha

        p = self.params
        item = p["item"]
        by = p["by"] if p["by"] is not None else [c for c in ("measure", "model", "design") if c in table.columns]
        if p["cases"] is not None:
            cases = p["cases"]
        else:
            # a query exists in one design, a word in one group: keeping the parent column
            # would split the cases so that no case has every item
            cases = role_columns(table, exclude=[item, PARENT_COLUMN.get(item, item), *by])
        if not cases:
            raise DataError("alpha: 'cases' must name at least one column")
        clash = ({item} | set(cases)) & set(by) or ({item} & set(cases))
        if clash:
            raise DataError(f"alpha: column(s) {sorted(clash)} are used in more than one role (item, cases, by)")
        require_columns(table, [item, *cases, *by], what="alpha")
        single_measure_check(table, [item, *cases, *by], what="alpha")
        rows = []
        for key, part in groups(table, by, skip_missing=True, what="alpha"):
            where = f" in group {key}" if key else ""
            # an item without any value (e.g. an out-of-vocabulary word) would otherwise make every
            # case incomplete: drop it first, and report it
            part, empty_items = drop_levels_without_values(part, [item])
            wide, dropped = ratings_matrix(part, items=cases, raters=[item], complete=p["missing"] == "listwise")
            if wide.shape[1] < 2:
                hint = ""
                if item == "context" and wide.shape[1] == 1 and not str(wide.columns[0]):
                    hint = "; the table has no queries (context is empty): use item=target or item=attribute"
                raise DataError(
                    f"alpha needs at least 2 items (values of {item!r}) with values{where}, found "
                    f"{wide.shape[1]}"
                    + (f" after dropping {len(empty_items)} without any value" if empty_items else "")
                    + hint
                )
            if len(wide) < 2:
                raise DataError(
                    f"alpha needs at least 2 cases{where}; {len(wide)} left after dropping {dropped} "
                    + ("incomplete one(s)" if p["missing"] == "listwise" else "without any value")
                )
            result = cronbach_alpha(wide.to_numpy(), confidence=p["confidence"], missing=p["missing"])
            rows.append(
                {
                    **key,
                    "item": item,
                    "cases": ",".join(cases),
                    **result.as_dict(),
                    "n_cases_dropped": dropped,
                    "n_items_dropped": len(empty_items),
                    "items_dropped": ",".join(empty_items),
                }
            )
        return pd.DataFrame(rows)

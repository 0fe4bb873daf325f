"""``correlate``: criterion validity, i.e. correlations of scores with an external criterion table."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import (
    column_list,
    confidence_level,
    criterion_source,
    groups,
    join_criterion,
    single_measure_check,
)
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


class CorrelateAnalysis(Analysis):
    """Correlate the mean score per key (e.g. per occupation) with external criteria.

    Within each ``by`` group (default: measure x model) the ``value`` column is averaged per
    value of ``key`` (e.g. over queries and attributes), the criterion table is joined on
    ``key`` (keys absent from the criterion are left out and counted), and each criterion
    column is correlated with the mean score: r, Fisher-z CI, t, p and N.

    ``compare="criteria"`` tests, within each group, every pair of criteria against each other
    (the score is the shared variable); ``compare="groups"`` tests, for each criterion, every
    pair of groups (e.g. two models' scores against the same criterion, which is the shared
    variable) on the keys both have. Both use Williams' t (Steiger 1980, eq. 7), df = N - 3.
    Formulas: :mod:`assoc.stats.correlations`.
    """

    name = "correlate"
    requires = Requirement(
        needs="scores of at least 3 keys (distinct values of the 'key' column, default target) to join a criterion on",
        at_least={"key": 3},
        instead="choose the key column (--option key=...) that the criterion table is keyed by",
    )
    estimate_column = "r"
    description = "Correlations of scores with an external criterion (r, Fisher-z CI, p, N) and Williams' t."
    citation = (
        "Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix. Psychological "
        "Bulletin, 87(2), 245-251; Williams, E. J. (1959). JRSS B, 21(2), 396-399."
    )
    options = (
        Option(
            "criterion",
            object,
            REQUIRED,
            "criterion table: a .csv/.tsv/.parquet/.jsonl path, a DataFrame, or a mapping key -> value",
            check=criterion_source,
        ),
        Option("key", str, "target", "column of the association table to join on (e.g. target)"),
        Option("criterion_key", str, None, "key column of the criterion table (default: same as key)"),
        Option(
            "criterion_columns",
            list,
            None,
            "criterion columns to correlate with (default: all numeric)",
            check=column_list,
        ),
        Option("by", list, ["measure", "model"], "columns to correlate separately for", check=column_list),
        Option("method", str, "pearson", "pearson or spearman", choices=("pearson", "spearman")),
        Option("alternative", str, "two-sided", "two-sided, greater or less", choices=("two-sided", "greater", "less")),
        Option("confidence", float, 0.95, "confidence level of the Fisher-z interval", check=confidence_level),
        Option(
            "compare",
            str,
            "none",
            "Williams' t between criteria, between groups, or none",
            choices=("none", "criteria", "groups"),
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Correlate the scores with the criterion."""
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.correlations import correlation

        p = self.params
        key, by = p["key"], p["by"]
        if key in by:
            raise DataError(f"correlate: the key column {key!r} cannot also be a 'by' column")
        single_measure_check(table, [*by, key], what="correlate")
        joined, criteria, unmatched = join_criterion(
            table,
            criterion=p["criterion"],
            key=key,
            criterion_key=p["criterion_key"],
            aggregate_by=by,
            criterion_columns=p["criterion_columns"],
        )
        rows: list[dict[str, Any]] = []
        for group_key, part in groups(joined, by):
            for name in criteria:
                res = correlation(
                    part["value"].to_numpy(),
                    part[name].to_numpy(),
                    method=p["method"],
                    confidence=p["confidence"],
                    alternative=p["alternative"],
                )
                rows.append(
                    {
                        "kind": "correlation",
                        **group_key,
                        "key": key,
                        "x": "value",
                        "y": name,
                        **res.as_dict(),
                        "n_keys_without_criterion": unmatched,
                    }
                )
        if p["compare"] == "criteria":
            rows += self._compare_criteria(joined, criteria, by)
        elif p["compare"] == "groups":
            rows += self._compare_groups(joined, criteria, by)
        return pd.DataFrame(rows)

    def _compare_criteria(self, joined: pd.DataFrame, criteria: list[str], by: list[str]) -> list[dict]:
        from assoc.errors import DataError

        if len(criteria) < 2:
            raise DataError("compare='criteria' needs at least 2 criterion columns")
        rows = []
        for group_key, part in groups(joined, by):
            for first, second in combinations(criteria, 2):
                complete = part[["value", first, second]].dropna()
                rows.append(
                    self._williams(
                        group_key,
                        complete["value"],
                        complete[first],
                        complete[second],
                        first=first,
                        second=second,
                        shared="value",
                    )
                )
        return rows

    def _compare_groups(self, joined: pd.DataFrame, criteria: list[str], by: list[str]) -> list[dict]:
        from assoc.errors import DataError

        if not by:
            raise DataError("compare='groups' needs 'by' columns whose groups are compared (e.g. model)")
        parts = list(groups(joined, by))
        if len(parts) < 2:
            raise DataError(f"compare='groups' needs at least 2 groups of {by}, found {len(parts)}")
        key = self.params["key"]
        rows = []
        for name in criteria:
            for (key_a, a), (key_b, b) in combinations(parts, 2):
                both = a[[key, "value", name]].merge(b[[key, "value"]], on=key, suffixes=("_a", "_b")).dropna()
                label_a = " ".join(f"{k}={v}" for k, v in key_a.items())
                label_b = " ".join(f"{k}={v}" for k, v in key_b.items())
                rows.append(
                    self._williams(
                        {}, both[name], both["value_a"], both["value_b"], first=label_a, second=label_b, shared=name
                    )
                )
        return rows

    def _williams(
        self, group_key: dict, shared_values, first_values, second_values, *, first: str, second: str, shared: str
    ) -> dict:
        """Williams' t of r(shared, first) vs r(shared, second) on the same complete cases."""
        from assoc.stats.correlations import williams_test

        p = self.params
        res = williams_test(
            shared_values.to_numpy(),
            first_values.to_numpy(),
            second_values.to_numpy(),
            method=p["method"],
            alternative=p["alternative"],
        )
        return {
            "kind": "williams",
            **group_key,
            "key": p["key"],
            "x": first,
            "y": second,
            "shared": shared,
            "method": p["method"],
            **res.as_dict(),
        }

"""``correlation_table``: convergent/divergent correlations between two sets of per-term variables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import by_columns, column_list, confidence_level, groups, require_columns
from assoc.components.options import REQUIRED, Option

if TYPE_CHECKING:
    import pandas as pd


def _table_or_path(value: Any) -> Any:
    from assoc.analysis.inputs import table_source

    return table_source(value, what="second", mapping="a mapping")


def _variables(
    frame: pd.DataFrame, requested: list[str] | None, *, exclude: set[str], what: str, estimates_first: bool
) -> list[str]:
    from pandas.api import types as ptypes

    from assoc.errors import DataError, did_you_mean

    if requested is not None:
        for column in requested:
            if column not in frame.columns:
                raise DataError(
                    f"correlation_table: the {what} table has no column {column!r}"
                    + did_you_mean(column, map(str, frame.columns))
                )
        return list(requested)
    estimates = [c for c in frame.columns if str(c).endswith(("_representativeness", "_direction"))]
    if estimates and estimates_first:
        return estimates
    chosen = [
        c
        for c in frame.columns
        if c not in exclude
        and ptypes.is_numeric_dtype(frame[c])
        and not ptypes.is_bool_dtype(frame[c])
        and not str(c).startswith("n_")
    ]
    if not chosen:
        raise DataError(f"correlation_table: the {what} table has no numeric column to correlate")
    return chosen


class CorrelationTableAnalysis(Analysis):
    """Correlation matrix between two sets of per-term variables, with CIs, p and N per cell.

    The first set (``x``, rows) comes from the table, the second (``y``, columns) from
    ``second``, a table joined on ``key`` (default ``target``). Either may be the output of the
    ``stereotype`` analysis (long or wide), whose estimates are then the variables
    ``<dimension>_representativeness`` and ``<dimension>_direction`` (the default ``x``);
    the default ``y`` is every numeric column of the second table but counts (``n_*``). This is
    Nicolas & Caliskan's (2024) Table 3 (language-model codings against human codings of the
    same terms) and serves model-vs-model comparisons too. A cell is ``convergent`` when x and y
    are the same variable (same property and dimension), ``divergent`` otherwise.

    One row per cell: ``x``, ``y``, ``r``, CI, ``t``, ``df``, ``p_value``, ``n`` (complete
    pairs), ``stars`` (``*`` p < .05, ``**`` p < .001, the paper's legend) and ``cell``. Pearson
    or Spearman; formulas: :mod:`assoc.stats.correlations`.
    """

    name = "correlation_table"
    requires = Requirement(
        needs="one row per term (e.g. the output of the stereotype analysis) with the 'key' column",
        at_least={"key": 2},
        instead="name the column identifying a term (--option key=...)",
    )
    estimate_column = "r"
    #: reads the stereotype output in either shape (wide is no association table) or any table
    requires_association_table = False
    description = (
        "Convergent/divergent correlation table between two sets of per-term variables "
        "(e.g. model vs human stereotype codings): r, CI, p, N per cell."
    )
    citation = (
        "Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable "
        "components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493. "
        "doi:10.1093/pnasnexus/pgae493; Campbell, D. T., & Fiske, D. W. (1959). Psychological Bulletin, "
        "56(2), 81-105. doi:10.1037/h0046016"
    )
    options = (
        Option(
            "second",
            object,
            REQUIRED,
            "the second table (DataFrame or file; e.g. human codings or another "
            "model's stereotype output), joined on 'key'",
            check=_table_or_path,
        ),
        Option(
            "x",
            list,
            None,
            "variables of the table (default: its stereotype estimates, else numeric columns)",
            check=column_list,
        ),
        Option(
            "y",
            list,
            None,
            "variables of the second table (default: its numeric columns but counts n_*)",
            check=column_list,
        ),
        Option("key", str, "target", "the column identifying a term in both tables"),
        Option("second_key", str, None, "the key column of the second table (default: key)"),
        Option(
            "by",
            list,
            None,
            "columns of the table to correlate separately (default: scorer and model, those present)",
            check=column_list,
        ),
        Option("method", str, "pearson", "correlation coefficient", choices=("pearson", "spearman")),
        Option("confidence", float, 0.95, "confidence level of the Fisher-z intervals", check=confidence_level),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Correlate every x variable with every y variable, per ``by`` group."""
        import numpy as np
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.correlations import correlation
        from assoc.table.files import read_data_file

        p = self.params
        key, second_key = p["key"], p["second_key"] or p["key"]
        first = self._wide(table)
        second = p["second"]
        if not isinstance(second, pd.DataFrame):
            second = (
                pd.DataFrame({second_key: list(second), "value": list(second.values())})
                if isinstance(second, dict)
                else read_data_file(second, what="second table", text_columns=[second_key])
            )
        second = self._wide(second)
        by = by_columns(p["by"], first)
        require_columns(first, [key, *by], what="correlation_table")
        if second_key not in second.columns:
            raise DataError(
                f"correlation_table: the second table has no key column {second_key!r} "
                f"(its columns: {', '.join(map(str, second.columns))})"
            )
        if second[second_key].astype(str).duplicated().any():
            raise DataError(
                f"correlation_table: the second table lists a {second_key!r} more than once; it needs "
                f"one row per term (filter it to one scorer/model first)"
            )
        x_vars = _variables(first, p["x"], exclude={key, *by}, what="first", estimates_first=True)
        y_vars = _variables(second, p["y"], exclude={second_key}, what="second", estimates_first=False)
        right = second[[second_key, *y_vars]].rename(columns={second_key: "_key"})
        right = right.rename(columns={v: f"_y_{v}" for v in y_vars})
        rows: list[dict[str, Any]] = []
        for group_key, part in groups(first, by):
            if part[key].astype(str).duplicated().any():
                raise DataError(
                    f"correlation_table: the table lists a {key!r} more than once within {group_key}; "
                    f"add the distinguishing column(s) to 'by'"
                )
            joined = part.assign(_key=part[key].astype(str)).merge(
                right.assign(_key=right["_key"].astype(str)), on="_key", how="inner"
            )
            if joined.empty:
                raise DataError(
                    f"correlation_table: no {key!r} of the table matches the second table's "
                    f"{second_key!r} (e.g. {part[key].iloc[0]!r} vs {second[second_key].iloc[0]!r})"
                )
            n_unmatched = int(part[key].astype(str).nunique() - joined["_key"].nunique())
            for x in x_vars:
                for y in y_vars:
                    xv = pd.to_numeric(joined[x], errors="coerce").to_numpy(dtype=float)
                    yv = pd.to_numeric(joined[f"_y_{y}"], errors="coerce").to_numpy(dtype=float)
                    cell = {
                        **group_key,
                        "x": x,
                        "y": y,
                        "cell": "convergent" if x == y else "divergent",
                        "n_keys_unmatched": n_unmatched,
                    }
                    try:
                        res = correlation(xv, yv, method=p["method"], confidence=p["confidence"])
                    except DataError as exc:  # too few pairs or a constant variable: reported, not fatal
                        n = int((np.isfinite(xv) & np.isfinite(yv)).sum())
                        rows.append({**cell, "n": n, "note": str(exc)})
                        continue
                    stars = "**" if res.p_value < 0.001 else "*" if res.p_value < 0.05 else ""
                    rows.append(
                        {
                            **cell,
                            "r": res.r,
                            "ci_low": res.ci_low,
                            "ci_high": res.ci_high,
                            "t": res.t,
                            "df": res.df,
                            "p_value": res.p_value,
                            "n": res.n,
                            "stars": stars,
                            "method": res.method,
                            "confidence": res.confidence,
                            "note": "",
                        }
                    )
        columns = [
            *by,
            "x",
            "y",
            "cell",
            "r",
            "ci_low",
            "ci_high",
            "t",
            "df",
            "p_value",
            "n",
            "stars",
            "method",
            "confidence",
            "n_keys_unmatched",
            "note",
        ]
        return pd.DataFrame(rows).reindex(columns=columns)

    @staticmethod
    def _wide(frame: pd.DataFrame) -> pd.DataFrame:
        from assoc.analysis.stereotype import is_stereotype_long, stereotype_wide

        if is_stereotype_long(frame):
            return stereotype_wide(frame, what="correlation_table")[0]
        return frame

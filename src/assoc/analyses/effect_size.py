"""``effect_size``: standardised mean differences between two groups of an association table."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from assoc.analysis import Analysis
from assoc.options import Option

from ._common import column_list, confidence_level, groups, require_columns, single_measure_check

if TYPE_CHECKING:
    import pandas as pd


def _sd_choice(value: Any) -> str | float:
    """'pooled', 'all', 'sqrt2' (sqrt(2), the SD of FMAT log-probability ratios) or a positive number."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in {"pooled", "all"}:
            return text
        if text in {"sqrt2", "sqrt(2)"}:
            return math.sqrt(2)
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be 'pooled', 'all', 'sqrt2' or a positive number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be 'pooled', 'all', 'sqrt2' or a positive number, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a fixed SD must be a positive number, got {value!r}")
    return float(value)


def _two_values(value: Any) -> list:
    if value is not None and len(value) != 2:
        raise ValueError(f"must name exactly two groups (x, y), got {value!r}")
    return value


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be a positive integer, got {value}")
    return value


def _non_negative(value: int) -> int:
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


class EffectSizeAnalysis(Analysis):
    """Standardised mean difference d = (mean(x) - mean(y)) / SD between two groups.

    The groups are two values of the column ``by`` (e.g. two target groups). With ``unit``
    columns the values are first averaged per unit (e.g. per target word), so that the
    observations are units rather than rows. The SD is the pooled sample SD (Cohen's d),
    the SD of all values (the WEAT effect size), or a fixed number (``sqrt2``: the population
    SD of FMAT log-probability ratios, Bao 2024). The p value comes from the same two-sample
    permutation test the ``weat`` analysis uses (exact when the partitions are few enough,
    otherwise sampled with a seed), and the CI from a stratified percentile bootstrap.
    Formulas: :mod:`assoc.stats.effect_size` and :mod:`assoc.stats.permutation`.
    """

    name = "effect_size"
    description = "Standardised mean difference (pooled SD, SD of all values, or fixed SD) with permutation p."
    citation = ("Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.); "
                "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Science, 356(6334), 183-186; "
                "Bao, H.-W.-S. (2024). Journal of Personality and Social Psychology. doi:10.1037/pspa0000396")
    options = (
        Option("by", str, "target_group", "column whose two values are compared"),
        Option("groups", list, None, "the two values of 'by' to compare, x then y (default: the two values "
               "present, in order of first appearance)", check=_two_values),
        Option("within", list, ["measure", "model"], "columns to compute separate effect sizes for",
               check=column_list),
        Option("unit", list, None, "columns to average values over first (e.g. target); default: each row",
               check=column_list),
        Option("sd", object, "pooled", "pooled, all (WEAT), sqrt2 (FMAT LPR) or a positive number",
               check=_sd_choice),
        Option("ddof", int, 1, "1: sample SD, 0: population SD (pooled and all)", choices=(0, 1)),
        Option("test", str, "permutation", "permutation test of the mean difference, or none",
               choices=("permutation", "none")),
        Option("alternative", str, "two-sided", "two-sided, greater (x > y) or less",
               choices=("two-sided", "greater", "less")),
        Option("exact_limit", int, 100_000, "enumerate all partitions when there are at most this many",
               check=_non_negative),
        Option("n_resamples", int, 10_000, "random partitions for a sampled permutation test (p resolution 1/(n+1))",
               check=_positive),
        Option("n_bootstrap", int, 5_000, "bootstrap resamples for the CI of d (0: no CI)", check=_non_negative),
        Option("confidence", float, 0.95, "confidence level of the bootstrap CI", check=confidence_level),
        Option("seed", int, 0, "random seed of the sampled test and the bootstrap (reproducible by default)"),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        from assoc.errors import DataError
        from assoc.stats.effect_size import (bootstrap_interval, standardized_mean_difference,
                                             standardized_mean_difference_rows, standardizer)
        from assoc.stats.permutation import two_sample_permutation_test

        p = self.params
        by, within, unit = p["by"], p["within"], p["unit"] or []
        if by in within or by in unit or set(within) & set(unit):
            raise DataError("effect_size: 'by', 'within' and 'unit' must name different columns")
        require_columns(table, [by, *within, *unit], what="effect_size")
        single_measure_check(table, [by, *within], what="effect_size")
        x_name, y_name = self._group_names(table, by)
        sd = p["sd"]
        rows = []
        for key, part in groups(table, within):
            where = f" in group {key}" if key else ""
            x, x_missing = self._sample(part, by, x_name, unit)
            y, y_missing = self._sample(part, by, y_name, unit)
            if x.size < 1 or y.size < 1:
                raise DataError(f"effect_size: group {x_name!r} has {x.size} and group {y_name!r} has {y.size} "
                                f"non-missing observation(s){where}")
            row: dict[str, Any] = {
                **key, "by": by, "group_x": x_name, "group_y": y_name,
                "unit": ",".join(unit) if unit else "row", "n_x": int(x.size), "n_y": int(y.size),
                "n_missing": x_missing + y_missing, "mean_x": float(x.mean()), "mean_y": float(y.mean()),
                "difference": float(x.mean() - y.mean()),
                "sd": sd if isinstance(sd, str) else "fixed", "ddof": p["ddof"] if isinstance(sd, str) else None,
                "sd_value": standardizer(x, y, sd=sd, ddof=p["ddof"]),
                "d": standardized_mean_difference(x, y, sd=sd, ddof=p["ddof"]),
            }
            if p["n_bootstrap"] > 0:
                ci = bootstrap_interval(
                    x, y, lambda xs, ys: standardized_mean_difference_rows(xs, ys, sd=sd, ddof=p["ddof"]),
                    level=p["confidence"], n_resamples=p["n_bootstrap"], seed=p["seed"])
                row.update(ci_low=ci.low, ci_high=ci.high, confidence=p["confidence"], n_bootstrap=p["n_bootstrap"])
            else:
                row.update(ci_low=np.nan, ci_high=np.nan, confidence=np.nan, n_bootstrap=0)
            if p["test"] == "permutation":
                test = two_sample_permutation_test(
                    x, y, statistic="mean_difference", alternative=p["alternative"], exact_limit=p["exact_limit"],
                    n_resamples=p["n_resamples"], seed=p["seed"])
                row.update(p_value=test.p_value, p_method=test.method, n_permutations=test.n_permutations,
                           alternative=test.alternative, seed=p["seed"] if test.method == "sampled" else None)
            rows.append(row)
        return pd.DataFrame(rows)

    def _group_names(self, table: pd.DataFrame, by: str) -> tuple[Any, Any]:
        from assoc.errors import DataError

        present = list(dict.fromkeys(table[by].tolist()))
        if self.params["groups"] is not None:
            x_name, y_name = self.params["groups"]
            absent = [g for g in (x_name, y_name) if g not in present]
            if absent:
                raise DataError(f"effect_size: column {by!r} has no value(s) {absent} (it has {present})")
            if x_name == y_name:
                raise DataError("effect_size: the two groups must differ")
            return x_name, y_name
        if len(present) != 2:
            raise DataError(f"effect_size: column {by!r} has {len(present)} values {present}; "
                            f"name the two to compare with the 'groups' option")
        return present[0], present[1]

    @staticmethod
    def _sample(part: pd.DataFrame, by: str, name: Any, unit: list[str]):
        """The observations of one group (unit means when ``unit`` is set) and how many were NaN."""
        rows = part[part[by] == name]
        if unit:
            values = rows.groupby(unit, sort=True, dropna=False)["value"].mean()
        else:
            values = rows["value"]
        import numpy as np

        values = values.to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        return finite, int(values.size - finite.size)

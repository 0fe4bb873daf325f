"""``effect_size``: standardised mean differences between two groups of an association table."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from assoc.analysis.base import Analysis, Requirement
from assoc.analysis.inputs import column_list, confidence_level, groups, require_columns, single_measure_check
from assoc.components.options import Option, non_negative, positive

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def _sd_choice(value: Any) -> str | float:
    """'pooled', 'all', 'sqrt2' (sqrt(2), the SD of FMAT log-probability ratios) or a positive number."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in {"pooled", "all"}:
            return text
        if text in {"sqrt2", "sqrt(2)"}:
            from assoc.stats.constants import LPR_POPULATION_SD

            return LPR_POPULATION_SD
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be 'pooled', 'all', 'sqrt2' or a positive number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be 'pooled', 'all', 'sqrt2' or a positive number, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"a fixed SD must be a positive number, got {value!r}")
    return float(value)


def _one_or_two_values(value: Any) -> list:
    if value is not None and len(value) not in (1, 2):
        raise ValueError(f"must name two groups (x, y), or one with 'mu', got {value!r}")
    return value


class EffectSizeAnalysis(Analysis):
    """Standardised mean difference d = (mean(x) - mean(y)) / SD between two groups.

    The groups are two values of the column ``by`` (e.g. two target groups). With ``mu`` one
    group (or, with ``by=""``, all rows) is compared with a constant instead: d = (mean - mu) / SD,
    with a one-sample t test (the FMAT convention for LPRs: mu = 0, SD = sqrt 2). With ``unit``
    columns the values are first averaged per unit (e.g. per target word), so that the
    observations are units rather than rows. The SD is the pooled sample SD (Cohen's d),
    the SD of all values (the WEAT effect size), or a fixed number (``sqrt2``: the population
    SD of FMAT log-probability ratios, Bao 2024). The p value comes from the same two-sample
    permutation test the ``weat`` analysis uses (exact when the partitions are few enough,
    otherwise sampled with a seed), and the CI from a stratified percentile bootstrap.
    Formulas: :mod:`assoc.stats.effect_size` and :mod:`assoc.stats.permutation`.
    """

    name = "effect_size"
    requires = Requirement(
        needs="values in the groups of the 'by' column (default target_group; one group with 'mu')",
        at_least={"by": 1},
        instead="name the column whose groups are compared (--option by=...)",
    )
    estimate_column = "d"
    description = "Standardised mean difference (pooled SD, SD of all values, or fixed SD) with permutation p."
    citation = (
        "Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences (2nd ed.); "
        "Caliskan, A., Bryson, J. J., & Narayanan, A. (2017). Science, 356(6334), 183-186; "
        "Bao, H.-W.-S. (2024). Journal of Personality and Social Psychology. doi:10.1037/pspa0000396"
    )
    options = (
        Option("by", str, "target_group", "column whose two values are compared"),
        Option(
            "groups",
            list,
            None,
            "the two values of 'by' to compare, x then y (default: the two values "
            "present, in order of first appearance)",
            check=_one_or_two_values,
        ),
        Option("within", list, ["measure", "model"], "columns to compute separate effect sizes for", check=column_list),
        Option("mu", float, None, "compare one group's mean with this constant (e.g. 0 for LPR) instead of two groups"),
        Option(
            "unit",
            list,
            None,
            "columns to average values over first (e.g. target); default: each row",
            check=column_list,
        ),
        Option("sd", object, "pooled", "pooled, all (WEAT), sqrt2 (FMAT LPR) or a positive number", check=_sd_choice),
        Option("ddof", int, 1, "1: sample SD, 0: population SD (pooled and all)", choices=(0, 1)),
        Option(
            "test",
            str,
            None,
            "permutation (two groups: the permutation test of the mean difference), t "
            "(one group against 'mu': the one-sample t test) or none; default: the one that applies",
            choices=("permutation", "t", "none"),
        ),
        Option(
            "alternative",
            str,
            "two-sided",
            "two-sided, greater (x > y) or less",
            choices=("two-sided", "greater", "less"),
        ),
        Option(
            "exact_limit", int, 100_000, "enumerate all partitions when there are at most this many", check=non_negative
        ),
        Option(
            "n_resamples",
            int,
            10_000,
            "random partitions for a sampled permutation test (p resolution 1/(n+1))",
            check=positive,
        ),
        Option("n_bootstrap", int, 5_000, "bootstrap resamples for the CI of d (0: no CI)", check=non_negative),
        Option("confidence", float, 0.95, "confidence level of the bootstrap CI", check=confidence_level),
        Option(
            "seed",
            int,
            0,
            "random seed of the sampled test and the bootstrap (reproducible by default)",
            check=non_negative,
        ),
    )

    def run(self, table: pd.DataFrame) -> pd.DataFrame:
        """Compute the effect sizes and their tests."""
        import pandas as pd

        from assoc.errors import DataError

        p = self.params
        self._check_test()
        by, within, unit = p["by"], p["within"], p["unit"] or []
        if by == "" and p["mu"] is None:
            raise DataError("effect_size: 'by' may be empty only with 'mu' (one group against a constant)")
        if (by and (by in within or by in unit)) or set(within) & set(unit):
            raise DataError("effect_size: 'by', 'within' and 'unit' must name different columns")
        by_columns = [by] if by else []
        require_columns(table, [*by_columns, *within, *unit], what="effect_size")
        single_measure_check(table, [*by_columns, *within], what="effect_size")
        self._warn_pooling(table, by, within, unit)
        names = self._group_names(table, by) if by else ["(all rows)"]
        rows = []
        for key, part in groups(table, within, skip_missing=True, what="effect_size"):
            where = f" in group {key}" if key else ""
            samples = [self._sample(part, by, name, unit) for name in names]
            if any(values.size < 2 for values, _ in samples):
                sizes = ", ".join(f"{name!r}: {values.size}" for name, (values, _) in zip(names, samples))
                raise DataError(f"effect_size needs at least 2 non-missing observations per group{where} ({sizes})")
            row: dict[str, Any] = {
                **key,
                "by": by,
                "unit": ",".join(unit) if unit else "row",
                "n_missing": sum(missing for _, missing in samples),
            }
            if p["mu"] is None:
                row.update(self._two_sample(samples[0][0], samples[1][0], names))
            else:
                row.update(self._one_sample(samples[0][0], names[0]))
            rows.append(row)
        return pd.DataFrame(rows)

    @staticmethod
    def _warn_pooling(table: pd.DataFrame, by: str, within: list[str], unit: list[str]) -> None:
        """Warn when the options pool what the table keeps apart (e.g. the defaults on a raw WEAT table).

        Two cases: rows of several attribute (or [MASK]) groups are pooled into each group of
        ``by``, so the contrast between them, which the WEAT statistic s(w, A, B) or an LPR
        measures, is lost; and, with no ``unit``, every row counts as an independent observation
        although each word of ``by``'s groups appears in several rows (the p value and CI then
        treat word pairs as independent).
        """
        import warnings

        from assoc.analysis.inputs import PARENT_COLUMN

        used = {by, *within, *unit}
        for column in ("attribute_group", "mask_group"):
            if column in used or column not in table.columns:
                continue
            values = sorted(v for v in table[column].astype(str).unique() if v)
            if len(values) > 1:
                warnings.warn(
                    f"effect_size: each group of {by or 'the table'!r} pools the rows of {len(values)} {column}s "
                    f"({', '.join(values[:4])}{', ...' if len(values) > 4 else ''}), so their contrast (the WEAT's "
                    f"s(w, A, B), an LPR) is lost: run weat (or lpr) first, or add {column} to 'within'",
                    stacklevel=4,
                )
                break
        child = {parent: col for col, parent in PARENT_COLUMN.items()}.get(by)
        if by and not unit and child in table.columns and child not in within:
            per_word = table.groupby([by, child], sort=False).size()
            if len(per_word) and int(per_word.max()) > 1:
                warnings.warn(
                    f"effect_size: with no 'unit', each of the {len(table)} rows is an independent observation, "
                    f"although each {child} appears in up to {int(per_word.max())} rows; average per word with "
                    f"unit={child} (the observations are then the {child}s)",
                    stacklevel=4,
                )

    def _check_test(self) -> None:
        """Resolve ``test``: the permutation test compares two groups, the t test one group with ``mu``."""
        import warnings

        from assoc.errors import OptionError

        p = self.params
        one_sample = p["mu"] is not None
        if p["test"] is None:
            p["test"] = "t" if one_sample else "permutation"
        elif p["test"] == "permutation" and one_sample:
            # Before 0.1.1 this combination silently ran the one-sample t test; it still does, but says so.
            warnings.warn(
                "effect_size: test='permutation' with 'mu' runs the one-sample t test (a permutation "
                "test needs two groups); write test='t'. This will become an error.",
                DeprecationWarning,
                stacklevel=4,
            )
            p["test"] = "t"
        elif p["test"] == "t" and not one_sample:
            raise OptionError(
                "effect_size: test='t' is the one-sample t test against 'mu'; give 'mu', or use "
                "test='permutation' to compare two groups"
            )

    def _two_sample(self, x, y, names) -> dict[str, Any]:
        """D between groups x and y, bootstrap CI, permutation p (the shared machinery)."""
        from assoc.stats.effect_size import (
            standardized_mean_difference,
            standardized_mean_difference_rows,
            standardizer,
        )
        from assoc.stats.permutation import two_sample_permutation_test

        p = self.params
        sd, ddof = p["sd"], p["ddof"]
        row: dict[str, Any] = {
            "group_x": names[0],
            "group_y": names[1],
            "n_x": int(x.size),
            "n_y": int(y.size),
            "mean_x": float(x.mean()),
            "mean_y": float(y.mean()),
            "difference": float(x.mean() - y.mean()),
            "sd": sd if isinstance(sd, str) else "fixed",
            "ddof": ddof if isinstance(sd, str) else None,
            "sd_value": standardizer(x, y, sd=sd, ddof=ddof),
            "d": standardized_mean_difference(x, y, sd=sd, ddof=ddof),
        }
        row.update(
            _bootstrap_columns(x, y, lambda xs, ys: standardized_mean_difference_rows(xs, ys, sd=sd, ddof=ddof), p)
        )
        if p["test"] == "permutation":
            test = two_sample_permutation_test(
                x,
                y,
                statistic="mean_difference",
                alternative=p["alternative"],
                exact_limit=p["exact_limit"],
                n_resamples=p["n_resamples"],
                seed=p["seed"],
            )
            row.update(
                p_value=test.p_value,
                p_method=test.method,
                n_permutations=test.n_permutations,
                alternative=test.alternative,
            )
            sampled = test.method == "sampled"
        else:
            sampled = False
        # the seed drew the bootstrap CI and/or the sampled permutations: report it whenever it was used
        row["seed"] = p["seed"] if sampled or p["n_bootstrap"] > 0 else None
        return row

    def _one_sample(self, x, name) -> dict[str, Any]:
        """D = (mean(x) - mu) / SD against a constant, bootstrap CI, one-sample t test.

        SD is the sample SD of x (``ddof``), or the fixed ``sd`` (e.g. sqrt 2 for LPR). The
        permutation test does not apply to one sample; the p value is the one-sample t test,
        t = (mean - mu) / (s / sqrt(n)) on n - 1 df (s: the sample SD, whatever ``sd`` is).
        """
        import numpy as np
        from scipy import stats

        from assoc.stats.samples import negligible_spread

        p = self.params
        sd, ddof, mu = p["sd"], p["ddof"], float(p["mu"])
        fixed = not isinstance(sd, str)

        def d_rows(xs, _ys):
            scale = np.full(xs.shape[0], float(sd)) if fixed else xs.std(axis=1, ddof=ddof)
            with np.errstate(divide="ignore", invalid="ignore"):
                values = (xs.mean(axis=1) - mu) / scale
            values[(scale == 0) if fixed else negligible_spread(scale, xs, axis=1)] = np.nan
            return values

        sd_value = float(sd) if fixed else float(np.std(x, ddof=ddof))
        row: dict[str, Any] = {
            "group_x": name,
            "group_y": None,
            "mu": mu,
            "n_x": int(x.size),
            "n_y": 0,
            "mean_x": float(x.mean()),
            "mean_y": None,
            "difference": float(x.mean() - mu),
            "sd": "fixed" if fixed else "sample",
            "ddof": None if fixed else ddof,
            "sd_value": sd_value,
            "d": float("nan") if (not fixed and negligible_spread(sd_value, x)) else float((x.mean() - mu) / sd_value),
        }
        # the second sample is a dummy: bootstrap_interval resamples each sample within itself
        row.update(_bootstrap_columns(x, np.array([mu]), d_rows, p))
        if p["test"] == "t":
            res = stats.ttest_1samp(x, mu, alternative=p["alternative"])
            row.update(
                t=float(res.statistic),
                df=int(x.size - 1),
                p_value=float(res.pvalue),
                p_method="t-test",
                n_permutations=0,
                alternative=p["alternative"],
            )
        row["seed"] = p["seed"] if p["n_bootstrap"] > 0 else None  # the seed of the bootstrap CI
        return row

    def _group_names(self, table: pd.DataFrame, by: str) -> list[Any]:
        from assoc.errors import DataError

        present = list(dict.fromkeys(table[by].tolist()))
        wanted = self.params["groups"]
        one_sample = self.params["mu"] is not None
        if wanted is not None:
            if one_sample and len(wanted) != 1:
                raise DataError(f"effect_size: with 'mu' (one sample) name one group, got {wanted}")
            if not one_sample and len(wanted) != 2:
                raise DataError(
                    f"effect_size: name two groups (x, y) to compare, got {wanted}; "
                    f"or set 'mu' to compare one group with a constant"
                )
            absent = [g for g in wanted if g not in present]
            if absent:
                raise DataError(f"effect_size: column {by!r} has no value(s) {absent} (it has {present})")
            if len(set(wanted)) != len(wanted):
                raise DataError("effect_size: the two groups must differ")
            return list(wanted)
        expected = 1 if one_sample else 2
        if len(present) != expected:
            raise DataError(
                f"effect_size: column {by!r} has {len(present)} values {present}; "
                f"name the {'one group' if one_sample else 'two'} to compare with the 'groups' option"
            )
        return present

    @staticmethod
    def _sample(part: pd.DataFrame, by: str, name: Any, unit: list[str]):
        """The observations of one group (unit means when ``unit`` is set) and how many were NaN."""
        rows = part[part[by] == name] if by else part
        if unit:
            values = rows.groupby(unit, sort=True, dropna=False)["value"].mean()
        else:
            values = rows["value"]
        import numpy as np

        values = values.to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        return finite, int(values.size - finite.size)


def _bootstrap_columns(x: np.ndarray, y: np.ndarray, statistic: Any, p: dict[str, Any]) -> dict[str, Any]:
    """``ci_low``, ``ci_high``, ``confidence``, ``n_bootstrap`` of a row: the percentile bootstrap CI of ``statistic``.

    With ``n_bootstrap`` 0 the interval is NaN and ``n_bootstrap`` 0 (no CI was asked for).
    """
    import numpy as np

    from assoc.stats.effect_size import bootstrap_interval

    if p["n_bootstrap"] <= 0:
        return {"ci_low": np.nan, "ci_high": np.nan, "confidence": np.nan, "n_bootstrap": 0}
    ci = bootstrap_interval(
        x,
        y,
        statistic,
        confidence=p["confidence"],
        n_resamples=p["n_bootstrap"],
        seed=p["seed"],
        option="n_bootstrap",
    )
    return {"ci_low": ci.low, "ci_high": ci.high, "confidence": p["confidence"], "n_bootstrap": p["n_bootstrap"]}

"""Intraclass correlation coefficients (ICC) with F tests and confidence intervals.

Conventions follow McGraw & Wong (1996), which is also what R's ``irr::icc`` (used by the
FMAT R package) implements; Shrout & Fleiss (1979) names are given alongside.

The input is a complete ``n x k`` matrix: ``n`` items (the things being measured, e.g. one
context x target x attribute cell) rated by ``k`` raters (e.g. language models). From the
two-way ANOVA without replication (one rating per cell)::

    MSR = k * sum_i (mean_i. - grand)^2 / (n - 1)                 rows (items)
    MSC = n * sum_j (mean_.j - grand)^2 / (k - 1)                 columns (raters)
    MSE = (SS_total - SS_rows - SS_cols) / ((n - 1)(k - 1))       residual
    MSW = (SS_cols + SS_residual) / (n (k - 1))                   within items (one-way model)

the six coefficients are::

    ICC(1)   = (MSR - MSW) / (MSR + (k - 1) MSW)                  one-way, single      [S&F ICC(1,1)]
    ICC(A,1) = (MSR - MSE) / (MSR + (k - 1) MSE + k/n (MSC - MSE)) two-way agreement     [S&F ICC(2,1)]
    ICC(C,1) = (MSR - MSE) / (MSR + (k - 1) MSE)                  two-way consistency   [S&F ICC(3,1)]
    ICC(k)   = (MSR - MSW) / MSR                                  one-way, average     [S&F ICC(1,k)]
    ICC(A,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n)              agreement, average    [S&F ICC(2,k)]
    ICC(C,k) = (MSR - MSE) / MSR                                  consistency, average  [S&F ICC(3,k)]

F tests of H0: rho = 0 use ``F = MSR / MSW`` (df ``n - 1, n (k - 1)``) for the one-way model and
``F = MSR / MSE`` (df ``n - 1, (n - 1)(k - 1)``) for the two-way models (for rho0 = 0 the
agreement test of McGraw & Wong, Table 8, reduces to this). Confidence intervals are the exact
F-based intervals for the one-way and consistency forms and the Satterthwaite-type approximation
of McGraw & Wong (1996, Table 7, case 2A) for the agreement forms; average-measure bounds of the
agreement form follow by the Spearman-Brown step-up of the single-measure bounds.

References
----------
    McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation
        coefficients. Psychological Methods, 1(1), 30-46. doi:10.1037/1082-989X.1.1.30
    Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: Uses in assessing rater
        reliability. Psychological Bulletin, 86(2), 420-428. doi:10.1037/0033-2909.86.2.420
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats

from assoc.errors import DataError
from assoc.stats.samples import as_complete_matrix


@dataclass(frozen=True)
class ICCResult:
    """One ICC form with its test and interval."""

    model: str  # "oneway" | "twoway"
    type: str  # "agreement" | "consistency" ("agreement" for the one-way model, as in irr)
    unit: str  # "single" | "average"
    label: str  # McGraw & Wong notation, e.g. "ICC(A,1)"
    shrout_fleiss: str  # Shrout & Fleiss notation, e.g. "ICC(2,1)"
    icc: float
    f: float
    df1: float
    df2: float
    p_value: float
    ci_low: float
    ci_high: float
    confidence: float
    n_items: int
    n_raters: int

    def as_dict(self) -> dict:
        """The fields as a dict (one row of a result table)."""
        return asdict(self)


@dataclass(frozen=True)
class MeanSquares:
    """Mean squares of the two-way ANOVA without replication."""

    rows: float  # MSR (items)
    columns: float  # MSC (raters)
    error: float  # MSE (residual)
    within: float  # MSW (one-way: raters + residual)
    n: int
    k: int


def mean_squares(ratings: np.ndarray) -> MeanSquares:
    """Mean squares of an ``n x k`` complete matrix (see the module docstring)."""
    x = as_complete_matrix(ratings, label="ratings", rows="items", columns="raters", statistic="an ICC")
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * np.sum((x.mean(axis=1) - grand) ** 2)
    ss_cols = n * np.sum((x.mean(axis=0) - grand) ** 2)
    ss_total = np.sum((x - grand) ** 2)
    ss_error = ss_total - ss_rows - ss_cols
    return MeanSquares(
        rows=ss_rows / (n - 1),
        columns=ss_cols / (k - 1),
        error=ss_error / ((n - 1) * (k - 1)),
        within=(ss_cols + ss_error) / (n * (k - 1)),
        n=n,
        k=k,
    )


def intraclass_correlations(ratings: np.ndarray, *, confidence: float = 0.95) -> list[ICCResult]:
    """All six ICC forms (see the module docstring) of an ``n items x k raters`` matrix.

    The matrix must be complete (no NaN): drop incomplete items first (see
    :func:`ratings_matrix`). Returns results in the order ICC(1), ICC(A,1), ICC(C,1),
    ICC(k), ICC(A,k), ICC(C,k).
    """
    if not 0 < confidence < 1:
        raise DataError(f"confidence must be between 0 and 1, got {confidence}")
    ms = mean_squares(ratings)
    n, k = ms.n, ms.k
    msr, msc, mse, msw = ms.rows, ms.columns, ms.error, ms.within
    a = 1 - confidence
    with np.errstate(divide="ignore", invalid="ignore"):
        icc1 = (msr - msw) / (msr + (k - 1) * msw)
        icc_a1 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        icc_c1 = (msr - mse) / (msr + (k - 1) * mse)
        icc1k = (msr - msw) / msr
        icc_ak = (msr - mse) / (msr + (msc - mse) / n)
        icc_ck = (msr - mse) / msr

        df1 = n - 1
        df_w = n * (k - 1)
        df_e = (n - 1) * (k - 1)
        f_oneway = msr / msw
        f_twoway = msr / mse
        p_oneway = stats.f.sf(f_oneway, df1, df_w)
        p_twoway = stats.f.sf(f_twoway, df1, df_e)

        # Exact intervals (McGraw & Wong 1996, Table 7, cases 1 and 3).
        f1_low = f_oneway / stats.f.ppf(1 - a / 2, df1, df_w)
        f1_high = f_oneway * stats.f.ppf(1 - a / 2, df_w, df1)
        f3_low = f_twoway / stats.f.ppf(1 - a / 2, df1, df_e)
        f3_high = f_twoway * stats.f.ppf(1 - a / 2, df_e, df1)

        # Agreement: approximate df v of the denominator (McGraw & Wong 1996, Table 7, case 2A).
        fj = msc / mse
        v_num = df_e * (k * icc_a1 * fj + n * (1 + (k - 1) * icc_a1) - k * icc_a1) ** 2
        v_den = df1 * (k * icc_a1 * fj) ** 2 + (n * (1 + (k - 1) * icc_a1) - k * icc_a1) ** 2
        v = v_num / v_den
        f2_high = stats.f.ppf(1 - a / 2, df1, v)
        f2_low = stats.f.ppf(1 - a / 2, v, df1)
        low_a1 = n * (msr - f2_high * mse) / (f2_high * (k * msc + (k * n - k - n) * mse) + n * msr)
        high_a1 = n * (f2_low * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2_low * msr)

        rows = [
            (
                "oneway",
                "agreement",
                "single",
                "ICC(1)",
                "ICC(1,1)",
                icc1,
                f_oneway,
                df1,
                df_w,
                p_oneway,
                (f1_low - 1) / (f1_low + k - 1),
                (f1_high - 1) / (f1_high + k - 1),
            ),
            (
                "twoway",
                "agreement",
                "single",
                "ICC(A,1)",
                "ICC(2,1)",
                icc_a1,
                f_twoway,
                df1,
                df_e,
                p_twoway,
                low_a1,
                high_a1,
            ),
            (
                "twoway",
                "consistency",
                "single",
                "ICC(C,1)",
                "ICC(3,1)",
                icc_c1,
                f_twoway,
                df1,
                df_e,
                p_twoway,
                (f3_low - 1) / (f3_low + k - 1),
                (f3_high - 1) / (f3_high + k - 1),
            ),
            (
                "oneway",
                "agreement",
                "average",
                "ICC(k)",
                "ICC(1,k)",
                icc1k,
                f_oneway,
                df1,
                df_w,
                p_oneway,
                1 - 1 / f1_low,
                1 - 1 / f1_high,
            ),
            (
                "twoway",
                "agreement",
                "average",
                "ICC(A,k)",
                "ICC(2,k)",
                icc_ak,
                f_twoway,
                df1,
                df_e,
                p_twoway,
                low_a1 * k / (1 + low_a1 * (k - 1)),
                high_a1 * k / (1 + high_a1 * (k - 1)),
            ),
            (
                "twoway",
                "consistency",
                "average",
                "ICC(C,k)",
                "ICC(3,k)",
                icc_ck,
                f_twoway,
                df1,
                df_e,
                p_twoway,
                1 - 1 / f3_low,
                1 - 1 / f3_high,
            ),
        ]
    return [
        ICCResult(
            model=m,
            type=t,
            unit=u,
            label=lab,
            shrout_fleiss=sf,
            icc=float(val),
            f=float(fv),
            df1=float(d1),
            df2=float(d2),
            p_value=float(p),
            ci_low=float(lo),
            ci_high=float(hi),
            confidence=confidence,
            n_items=n,
            n_raters=k,
        )
        for m, t, u, lab, sf, val, fv, d1, d2, p, lo, hi in rows
    ]


def ratings_matrix(
    table: pd.DataFrame, *, items: list[str], raters: list[str], value: str = "value", complete: bool = True
) -> tuple[pd.DataFrame, int]:
    """Pivot a long table to ``items x raters`` and drop incomplete items.

    With ``complete=False`` only items without any rating are dropped (the rest keep their
    NaN cells, for pairwise deletion).

    Each (item, rater) cell must hold exactly one value: duplicated cells mean the item
    columns do not identify a measurement, which is an error rather than something to
    average silently. Items with any missing rating (a rater lacks the item, or the
    value is NaN, e.g. out-of-vocabulary) are dropped entirely (listwise deletion, as
    ``irr::icc`` and ``pingouin`` do); the number dropped is returned so it can be reported.
    """
    missing = [c for c in [*items, *raters, value] if c not in table.columns]
    if missing:
        raise DataError(f"the table has no column(s) {', '.join(map(repr, missing))}")
    overlap = set(items) & set(raters)
    if overlap:
        raise DataError(f"column(s) {sorted(overlap)} cannot be both item and rater columns")
    keys = [*items, *raters]
    duplicated = table.duplicated(subset=keys, keep=False)
    if duplicated.any():
        example = table.loc[duplicated, keys].iloc[0].to_dict()
        cells = table.loc[duplicated].groupby(keys, sort=False, dropna=False)
        differ = [
            c for c in table.columns if c not in (*keys, value) and bool((cells[c].nunique(dropna=False) > 1).any())
        ]
        hint = (
            f"the rows of a cell differ in {', '.join(differ)}: add it to the item columns"
            if differ
            else "add the column that tells them apart to the item columns"
        )
        raise DataError(
            f"{int(duplicated.sum())} rows share the same cell (e.g. {example}): the columns "
            f"{', '.join(items)} do not identify one measurement per value of {', '.join(raters)}; "
            f"{hint}, or aggregate first"
        )
    wide = table.pivot(index=items, columns=raters, values=value)
    kept = wide.dropna(axis=0, how="any" if complete else "all")
    return kept, int(len(wide) - len(kept))

"""Estimated marginal means, pairwise comparisons, Cohen's d and the compact letter display.

For a fitted linear model (OLS or a random-intercept mixed model) with fixed effects
``beta_hat`` and their covariance ``V``, the estimated marginal mean (EMM; Searle, Speed &
Milliken, 1980; the ``emmeans`` R package) of level ``i`` of a factor is a linear function
of the fixed effects::

    L_i = mean over the reference grid rows of level i of x(grid row)       (row of the design)
    EMM_i = L_i beta_hat,      SE_i = sqrt(L_i V L_i')

The reference grid crosses the factor's levels with every level of the model's other
categorical predictors (averaged with equal weights) and holds numeric predictors at their
mean, as ``emmeans`` does by default. A pairwise difference of levels ``i`` and ``j`` is
``c = L_i - L_j`` with estimate ``c beta_hat``, ``SE = sqrt(c V c')`` and
``t = estimate / SE``.

Degrees of freedom: OLS uses the residual df ``n - p``; a mixed model uses the asymptotic
normal reference (df = inf, statsmodels' Wald tests). R's ``emmeans`` on ``lmer`` fits uses
Kenward-Roger df instead, so its p values are slightly larger with few groups.

P-value adjustment over the ``m = k (k - 1) / 2`` comparisons of ``k`` levels (``adjust``):

* ``tukey``: ``p = P(Q_{k, df} >= sqrt(2) |t|)`` with ``Q`` the studentized range
  (Tukey, 1949; Kramer, 1956 for unequal n); intervals ``estimate -/+ q_{1-a; k, df} / sqrt(2) * SE``.
* ``holm``: Holm's (1979) step-down adjustment of the unadjusted p values; intervals use the
  Bonferroni critical value ``t_{1 - a/(2m), df}`` (a step-down method has no interval; as emmeans).
* ``bonferroni``: ``min(1, m p)``; intervals with ``t_{1 - a/(2m), df}``.
* ``none``: unadjusted ``p = 2 P(T_df >= |t|)``; intervals with ``t_{1-a/2, df}``.

Cohen's d of a difference (``d_sigma``)::

    d = estimate / sigma,  sigma = sqrt(sum of all variance components)   ("total", default)
                           sigma = sqrt(residual variance)                  ("residual")

``total`` is what the paper's authors use (SADCAT's ``Cohens_d_EMmeans``: the square root of
the sum of ``lme4::VarCorr`` variances, i.e. random intercepts plus residual); ``residual``
is ``emmeans::eff_size(sigma = sigma(model))``. For OLS both are the residual SD. The sign of
``d`` follows the difference (SADCAT reports ``|d|``).

Compact letter display (Piepho, 2004, insert-and-absorb): starting from one letter shared by
all levels, each significantly different pair (adjusted ``p < alpha``) splits every letter
group holding both levels into two, and groups contained in another are absorbed. Letters
are then given in order of the lowest EMM in each group (``a`` for the group of the lowest
mean), so levels that share a letter do not differ significantly, as in the paper's Table 1.

References
----------
    Searle, S. R., Speed, F. M., & Milliken, G. A. (1980). Population marginal means in the
        linear model: an alternative to least squares means. The American Statistician, 34(4),
        216-221. doi:10.1080/00031305.1980.10483031
    Tukey, J. W. (1949). Comparing individual means in the analysis of variance. Biometrics,
        5(2), 99-114. doi:10.2307/3001913
    Kramer, C. Y. (1956). Extension of multiple range tests to group means with unequal numbers
        of replications. Biometrics, 12(3), 307-310. doi:10.2307/3001469
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
        Journal of Statistics, 6(2), 65-70.
    Piepho, H.-P. (2004). An algorithm for a letter-based representation of all-pairwise
        comparisons. Journal of Computational and Graphical Statistics, 13(2), 456-466.
        doi:10.1198/1061860043515
    Lenth, R. V. (2024). emmeans: Estimated marginal means, aka least-squares means. R package.
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from assoc.errors import DataError

ADJUSTMENTS = ("tukey", "holm", "bonferroni", "none")
D_SIGMAS = ("total", "residual")


@dataclass(frozen=True)
class MarginalMeans:
    """EMMs per level, pairwise differences, and the compact letter display of one factor."""

    factor: str
    #: level, emmean, se, df, ci_low, ci_high, n (rows of that level), letters
    means: pd.DataFrame
    #: level_1, level_2, estimate, se, df, statistic, p_unadjusted, p_value (adjusted), ci_low, ci_high, cohens_d
    contrasts: pd.DataFrame
    adjust: str
    confidence: float
    sigma: float  # the SD dividing differences in Cohen's d
    d_sigma: str


def _fit_parts(fit: Any) -> tuple[Any, np.ndarray, np.ndarray, float, dict[str, float]]:
    """(statsmodels result, beta, V, df, variance components) of an OLSFit or a MixedFit."""
    from assoc.stats.mixed import MixedFit
    from assoc.stats.regression import OLSFit

    if isinstance(fit, MixedFit):
        res = fit.result
        beta = np.asarray(res.fe_params, dtype=float)
        k = beta.size
        cov = np.asarray(res.cov_params(), dtype=float)[:k, :k]
        return res, beta, cov, math.inf, fit.variance_components()
    if isinstance(fit, OLSFit):
        res = fit.result
        return (
            res,
            np.asarray(res.params, dtype=float),
            np.asarray(res.cov_params(), dtype=float),
            float(res.df_resid),
            {"residual": float(res.scale)},
        )
    raise DataError(f"marginal means need an OLSFit or a MixedFit, got {type(fit).__name__}")


def reference_grid(data: pd.DataFrame, factor: str, columns: Sequence[str]) -> pd.DataFrame:
    """The factor's levels crossed with the other categorical columns' levels; numeric columns at their mean."""
    from pandas.api import types as ptypes

    levels = {factor: _levels(data[factor])}
    fixed: dict[str, Any] = {}
    for column in columns:
        if column == factor:
            continue
        series = data[column]
        if ptypes.is_numeric_dtype(series) and not ptypes.is_bool_dtype(series):
            fixed[column] = float(series.mean())
        else:
            levels[column] = _levels(series)
    grid = pd.DataFrame(list(itertools.product(*levels.values())), columns=list(levels))
    for column, value in fixed.items():
        grid[column] = value
    return grid


def _levels(series: pd.Series) -> list[Any]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return [c for c in series.cat.categories if c in set(series.dropna())]
    return sorted(series.dropna().unique(), key=str)


def marginal_means(
    fit: Any,
    data: pd.DataFrame,
    factor: str,
    *,
    columns: Sequence[str] | None = None,
    adjust: str = "tukey",
    confidence: float = 0.95,
    alpha: float = 0.05,
    d_sigma: str = "total",
) -> MarginalMeans:
    """EMMs of ``factor``'s levels, all pairwise differences, Cohen's d and letters (module docstring).

    Parameters
    ----------
    fit
        An :class:`~assoc.stats.regression.OLSFit` or :class:`~assoc.stats.mixed.MixedFit` whose
        formula uses ``factor`` (as ``factor`` or ``C(factor)``).
    data
        The rows the model was fitted on.
    factor
        The categorical column whose levels are compared.
    columns
        The other data columns the formula uses (default: found from the formula).
    adjust
        ``tukey``, ``holm``, ``bonferroni`` or ``none``.
    confidence, alpha
        Confidence level of the intervals; significance level of the letter display.
    d_sigma
        ``total`` or ``residual``: the SD Cohen's d divides by.
    """
    import patsy

    from assoc.stats.mixed import model_columns

    if adjust not in ADJUSTMENTS:
        raise DataError(f"unknown p-value adjustment {adjust!r} (choose from {', '.join(ADJUSTMENTS)})")
    if d_sigma not in D_SIGMAS:
        raise DataError(f"unknown d_sigma {d_sigma!r} (choose from {', '.join(D_SIGMAS)})")
    if not 0 < confidence < 1 or not 0 < alpha < 1:
        raise DataError("confidence and alpha must be between 0 and 1")
    if factor not in data.columns:
        raise DataError(f"no factor column {factor!r} in the data")
    res, beta, cov, df, components = _fit_parts(fit)
    used = list(columns) if columns is not None else model_columns(fit.formula.split("~", 1)[1], list(data.columns))
    if factor not in used:
        raise DataError(f"the model {fit.formula!r} does not use the factor {factor!r}")
    grid = reference_grid(data, factor, used)
    levels = _levels(data[factor])
    if len(levels) < 2:
        raise DataError(f"the factor {factor!r} needs at least 2 levels to compare, got {levels}")
    # statsmodels >= 0.15 keeps patsy's DesignInfo as model_spec, older versions as design_info
    design_info = getattr(res.model.data, "model_spec", None) or getattr(res.model.data, "design_info", None)
    if design_info is None:
        raise DataError("marginal means need a model fitted from a formula")
    x_grid = np.asarray(patsy.build_design_matrices([design_info], grid)[0], dtype=float)
    if x_grid.shape[1] != beta.size:
        raise DataError(f"the reference grid has {x_grid.shape[1]} columns but the model {beta.size} fixed effects")
    rows = np.stack([x_grid[(grid[factor] == level).to_numpy()].mean(axis=0) for level in levels])
    emm = rows @ beta
    se = np.sqrt(np.einsum("ij,jk,ik->i", rows, cov, rows))
    crit = _t_quantile(1 - (1 - confidence) / 2, df)
    counts = data[factor].value_counts()
    means = pd.DataFrame(
        {
            "level": levels,
            "emmean": emm,
            "se": se,
            "df": df,
            "ci_low": emm - crit * se,
            "ci_high": emm + crit * se,
            "n": [int(counts.get(level, 0)) for level in levels],
        }
    )

    variance = components["residual"] if d_sigma == "residual" else float(sum(components.values()))
    sigma = math.sqrt(variance)
    pairs = list(itertools.combinations(range(len(levels)), 2))
    m = len(pairs)
    records = []
    for i, j in pairs:
        c = rows[i] - rows[j]
        estimate = float(c @ beta)
        c_se = float(math.sqrt(c @ cov @ c))
        statistic = estimate / c_se
        records.append(
            {
                "level_1": levels[i],
                "level_2": levels[j],
                "estimate": estimate,
                "se": c_se,
                "df": df,
                "statistic": statistic,
                "p_unadjusted": _two_sided_p(statistic, df),
            }
        )
    contrasts = pd.DataFrame(records)
    contrasts["p_value"] = adjust_p_values(
        contrasts["p_unadjusted"].to_numpy(),
        contrasts["statistic"].to_numpy(),
        method=adjust,
        n_levels=len(levels),
        df=df,
    )
    half = _interval_critical(adjust, confidence, len(levels), m, df) * contrasts["se"]
    contrasts["ci_low"] = contrasts["estimate"] - half
    contrasts["ci_high"] = contrasts["estimate"] + half
    contrasts["cohens_d"] = contrasts["estimate"] / sigma
    significant = [(levels[i], levels[j]) for (i, j), p in zip(pairs, contrasts["p_value"]) if p < alpha]
    letters = compact_letter_display(levels, emm, significant)
    means["letters"] = [letters[level] for level in levels]
    return MarginalMeans(
        factor=factor,
        means=means,
        contrasts=contrasts,
        adjust=adjust,
        confidence=confidence,
        sigma=sigma,
        d_sigma=d_sigma,
    )


def _t_quantile(q: float, df: float) -> float:
    return float(stats.norm.ppf(q) if math.isinf(df) else stats.t.ppf(q, df))


def _two_sided_p(statistic: float, df: float) -> float:
    if math.isinf(df):
        return float(2 * stats.norm.sf(abs(statistic)))
    return float(2 * stats.t.sf(abs(statistic), df))


def adjust_p_values(p: np.ndarray, statistic: np.ndarray, *, method: str, n_levels: int, df: float) -> np.ndarray:
    """Adjusted p values of all pairwise comparisons of ``n_levels`` levels (module docstring)."""
    p = np.asarray(p, dtype=float)
    if method == "none":
        return p
    if method == "tukey":
        q = np.sqrt(2) * np.abs(np.asarray(statistic, dtype=float))
        return np.asarray(stats.studentized_range.sf(q, n_levels, df), dtype=float).clip(0, 1)
    from statsmodels.stats.multitest import multipletests

    if method in ("holm", "bonferroni"):
        return np.asarray(multipletests(p, method=method)[1], dtype=float)
    raise DataError(f"unknown p-value adjustment {method!r} (choose from {', '.join(ADJUSTMENTS)})")


def _interval_critical(method: str, confidence: float, n_levels: int, m: int, df: float) -> float:
    alpha = 1 - confidence
    if method == "tukey":
        return float(stats.studentized_range.ppf(confidence, n_levels, df) / math.sqrt(2))
    if method in ("holm", "bonferroni"):
        return _t_quantile(1 - alpha / (2 * m), df)
    return _t_quantile(1 - alpha / 2, df)


def compact_letter_display(
    levels: Sequence[Any], means: Sequence[float], significant: Sequence[tuple[Any, Any]]
) -> dict[Any, str]:
    """Letters per level such that two levels share a letter iff they do not differ significantly.

    Piepho's (2004) insert-and-absorb algorithm; letters ordered by each group's lowest mean
    (``a`` for the group of the lowest mean). ``significant`` lists the significantly
    different pairs of levels.
    """
    levels = list(levels)
    index = {level: i for i, level in enumerate(levels)}
    unknown = {a for pair in significant for a in pair if a not in index}
    if unknown:
        raise DataError(f"compact letter display: unknown level(s) {sorted(map(str, unknown))}")
    groups: list[set[int]] = [set(range(len(levels)))]
    for a, b in significant:
        i, j = index[a], index[b]
        new: list[set[int]] = []
        for group in groups:
            if i in group and j in group:
                new.extend([group - {i}, group - {j}])
            else:
                new.append(group)
        # absorb: drop groups contained in another (and duplicates)
        kept: list[set[int]] = []
        for g in sorted(new, key=len, reverse=True):
            if not any(g <= other for other in kept):
                kept.append(g)
        groups = kept
    order = np.argsort(np.asarray(means, dtype=float), kind="stable")
    rank = {int(i): r for r, i in enumerate(order)}
    groups.sort(key=lambda g: min(rank[i] for i in g))
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    if len(groups) > len(alphabet):
        raise DataError(f"compact letter display: {len(groups)} letter groups exceed the {len(alphabet)} letters")
    return {level: "".join(alphabet[g] for g, group in enumerate(groups) if index[level] in group) for level in levels}

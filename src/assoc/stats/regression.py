"""Ordinary least squares and nested-model comparison (R^2 change, F change, LRT, AIC).

Models are patsy/R formulas fitted with statsmodels OLS: ``I(x**2)`` adds a quadratic term,
``a:b`` an interaction, ``a*b`` both main effects and their interaction. Coefficients are
reported with t tests on ``n - p`` df and ``beta_hat -/+ t_{1-a/2, n-p} SE`` intervals.

For a reduced model (``p_0`` coefficients) nested in a fuller one (``p_1``), fitted on the same
``n`` rows, with residual sums of squares ``RSS_0 >= RSS_1``::

    Delta R^2 = R^2_1 - R^2_0
    F = ((RSS_0 - RSS_1) / (p_1 - p_0)) / (RSS_1 / (n - p_1))      on (p_1 - p_0, n - p_1) df
    chi^2 = 2 (l_1 - l_0)                                           on p_1 - p_0 df (likelihood ratio)
    AIC = -2 l + 2 (p + 1),  BIC = -2 l + ln(n) (p + 1)             (+1: the residual variance, as R)

with ``l = -n/2 (ln(2 pi RSS / n) + 1)`` the maximised Gaussian log-likelihood (the F and
likelihood-ratio tests are statsmodels' ``compare_f_test`` and ``compare_lr_test``, whose
degrees of freedom count the designs' ranks, equal to ``p_1 - p_0`` for full-rank designs). This is the
hierarchical-regression comparison of Cohen, Cohen, West & Aiken (2003, ch. 5) used by
Nicolas & Caliskan (2024) for their three nested models (they fit them as mixed models with
the category as a random factor: :mod:`assoc.stats.mixed` offers the same comparisons).

References
----------
    Cohen, J., Cohen, P., West, S. G., & Aiken, L. S. (2003). Applied Multiple
        Regression/Correlation Analysis for the Behavioral Sciences (3rd ed.). Erlbaum.
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from assoc.errors import DataError
from assoc.stats.information import InformationCriteria


@dataclass
class OLSFit(InformationCriteria):
    """An ordinary least squares fit (statsmodels) of a formula."""

    formula: str
    result: Any  # statsmodels RegressionResults

    @property
    def n_obs(self) -> int:
        """The number of observations."""
        return int(self.result.nobs)

    @property
    def n_coefficients(self) -> int:
        """The number of regression coefficients, intercept included."""
        return int(self.result.params.size)

    @property
    def n_params(self) -> int:
        """Coefficients + residual variance (R's convention for AIC)."""
        return self.n_coefficients + 1

    @property
    def rss(self) -> float:
        """The residual sum of squares."""
        return float(self.result.ssr)

    @property
    def loglik(self) -> float:
        """The maximised log-likelihood."""
        return float(self.result.llf)

    def coefficients(self, confidence: float = 0.95) -> pd.DataFrame:
        """term, estimate, se, t, df, p_value, ci_low, ci_high."""
        res = self.result
        ci = res.conf_int(alpha=1 - confidence)
        return pd.DataFrame(
            {
                "term": res.params.index,
                "estimate": res.params.to_numpy(),
                "se": res.bse.to_numpy(),
                "t": res.tvalues.to_numpy(),
                "df": float(res.df_resid),
                "p_value": res.pvalues.to_numpy(),
                "ci_low": ci.iloc[:, 0].to_numpy(),
                "ci_high": ci.iloc[:, 1].to_numpy(),
            }
        )


@dataclass(frozen=True)
class NestedComparison:
    """The comparison of nested OLS fits: change in R², F test and likelihood-ratio test."""

    delta_r2: float
    f: float
    df1: int
    df2: int
    p_f: float
    chi2: float
    p_lrt: float
    delta_aic: float
    delta_bic: float


def fit_ols(data: pd.DataFrame, formula: str) -> OLSFit:
    """Fit ``formula`` by OLS on ``data`` (rows with missing values must be removed first)."""
    import statsmodels.formula.api as smf
    from patsy import PatsyError

    try:
        result = smf.ols(formula, data).fit()
    except (PatsyError, ValueError, KeyError, np.linalg.LinAlgError) as exc:
        raise DataError(f"cannot fit the regression {formula!r}: {exc}") from None
    if result.df_resid <= 0:
        raise DataError(
            f"the regression {formula!r} has no residual degrees of freedom "
            f"({int(result.nobs)} rows, {result.params.size} coefficients)"
        )
    return OLSFit(formula=formula, result=result)


def compare_nested(reduced: OLSFit, full: OLSFit) -> NestedComparison:
    """R^2 change, F change, likelihood-ratio test and AIC/BIC change (see module docstring)."""
    if reduced.n_obs != full.n_obs:
        raise DataError(f"the models were fitted on different rows ({reduced.n_obs} vs {full.n_obs})")
    df1 = full.n_coefficients - reduced.n_coefficients
    if df1 <= 0:
        raise DataError(
            f"the second model must have more coefficients than the first "
            f"(got {reduced.n_coefficients} and {full.n_coefficients}); list models from small to large"
        )
    if not design_is_nested(np.asarray(reduced.result.model.exog), np.asarray(full.result.model.exog)):
        raise DataError(
            f"{reduced.formula!r} is not nested in {full.formula!r}: its predictors are not "
            f"combinations of the fuller model's, so the F and likelihood-ratio tests do not apply"
        )
    # statsmodels' tests: degrees of freedom from the designs' ranks (df_resid), so a
    # rank-deficient design is not credited with coefficients it cannot estimate.
    f, p_f, df_f = full.result.compare_f_test(reduced.result)
    chi2, p_lrt, _ = full.result.compare_lr_test(reduced.result)
    return NestedComparison(
        delta_r2=float(full.result.rsquared - reduced.result.rsquared),
        f=float(f),
        df1=int(round(df_f)),
        df2=int(round(full.result.df_resid)),
        p_f=float(p_f),
        chi2=float(chi2),
        p_lrt=float(p_lrt),
        delta_aic=float(full.aic() - reduced.aic()),
        delta_bic=float(full.bic() - reduced.bic()),
    )


def design_is_nested(reduced_exog: np.ndarray, full_exog: np.ndarray, *, tol: float = 1e-7) -> bool:
    """Whether the reduced design is nested in the full one.

    True when every column of the reduced design lies in the column space of the full one,
    i.e. the reduced model is a special case of the full model.

    Checked by least squares: each reduced column's residual norm on the full design must be
    below ``tol`` times the column's norm.
    """
    if reduced_exog.shape[0] != full_exog.shape[0]:
        return False
    coef, *_ = np.linalg.lstsq(full_exog, reduced_exog, rcond=None)
    residual = np.linalg.norm(reduced_exog - full_exog @ coef, axis=0)
    norms = np.linalg.norm(reduced_exog, axis=0)
    return bool(np.all(residual <= tol * np.maximum(norms, np.finfo(float).tiny)))

"""Correlations with Fisher-z intervals, and Williams' t for two dependent correlations.

Pearson's r of ``n`` complete pairs is tested with ``t = r sqrt((n - 2) / (1 - r^2))`` on
``n - 2`` df. Its ``1 - gamma`` interval uses Fisher's (1921) transformation::

    z = atanh(r),  se = 1 / sqrt(n - 3),  CI = tanh(z -/+ Phi^{-1}(1 - gamma/2) * se)

(both computed by ``scipy.stats.pearsonr`` and its ``confidence_interval``; a one-sided
alternative gives a one-sided interval, as in R's ``cor.test``).

Spearman's rho is Pearson's r of the (average) ranks; its interval uses the Fisher
transformation with ``se = sqrt(1.06 / (n - 3))`` (Fieller, Hartley & Pearson, 1957) and its
p value the same t approximation (as ``scipy.stats.spearmanr``).

Two correlations that share variable ``j`` (``r_jk`` and ``r_jh``, measured on the same ``n``
cases, with ``r_kh`` the correlation of the two other variables) are compared with Williams'
(1959) t as recommended by Steiger (1980, eq. 7)::

    |R|   = 1 - r_jk^2 - r_jh^2 - r_kh^2 + 2 r_jk r_jh r_kh
    r_bar = (r_jk + r_jh) / 2
    t     = (r_jk - r_jh) * sqrt( (n - 1)(1 + r_kh) /
                                  (2 (n - 1)/(n - 3) |R| + r_bar^2 (1 - r_kh)^3) ),   df = n - 3

References
----------
    Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a
        small sample. Metron, 1, 3-32.
    Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation
        coefficients. I. Biometrika, 44(3/4), 470-481.
    Williams, E. J. (1959). The comparison of regression variables. Journal of the Royal
        Statistical Society B, 21(2), 396-399.
    Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix. Psychological
        Bulletin, 87(2), 245-251. doi:10.1037/0033-2909.87.2.245
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from assoc.errors import DataError

METHODS = ("pearson", "spearman")
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class CorrelationResult:
    """A correlation with its confidence interval and test."""

    method: str
    r: float
    ci_low: float
    ci_high: float
    confidence: float
    t: float
    df: int
    p_value: float
    alternative: str
    n: int

    def as_dict(self) -> dict:
        """The fields as a dict (one row of a result table)."""
        return asdict(self)


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' t test of two dependent correlations that share one variable."""

    r_jk: float
    r_jh: float
    r_kh: float
    t: float
    df: int
    p_value: float
    alternative: str
    n: int

    def as_dict(self) -> dict:
        """The fields as a dict (one row of a result table)."""
        return asdict(self)


def correlation(
    x: np.ndarray,
    y: np.ndarray,
    *,
    method: str = "pearson",
    confidence: float = 0.95,
    alternative: str = "two-sided",
) -> CorrelationResult:
    """Pearson or Spearman correlation of paired samples with test and Fisher-z CI.

    Pairs where either value is NaN are dropped (the reported ``n`` counts complete pairs).
    """
    if method not in METHODS:
        raise DataError(f"unknown correlation method {method!r} (choose from {', '.join(METHODS)})")
    _check_alternative(alternative)
    if not 0 < confidence < 1:
        raise DataError(f"confidence must be between 0 and 1, got {confidence}")
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise DataError(f"x and y must be 1-D of equal length, got shapes {x.shape} and {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 4:
        raise DataError(f"a correlation with a confidence interval needs at least 4 complete pairs, got {n}")
    if method == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise DataError("a correlation is undefined when one variable is constant")
    df = n - 2
    if method == "pearson":
        # scipy's r (computed on normalised deviations), exact p value (its beta distribution is the
        # t test above) and Fisher interval (its one-sided intervals for one-sided alternatives).
        ref = stats.pearsonr(x, y, alternative=alternative)
        r = float(ref.statistic)
        p = float(ref.pvalue)
        interval = ref.confidence_interval(confidence_level=confidence)
        low, high = float(interval.low), float(interval.high)
    else:
        xc, yc = x - x.mean(), y - y.mean()
        r = float(np.clip(np.sum(xc * yc) / np.sqrt(np.sum(xc**2) * np.sum(yc**2)), -1.0, 1.0))
        low, high = fisher_interval(r, np.sqrt(1.06 / (n - 3)), confidence, alternative=alternative)
    with np.errstate(divide="ignore"):
        t = r * np.sqrt(df / (1 - r**2)) if abs(r) < 1 else np.copysign(np.inf, r)
    if method == "spearman":
        p = _t_p_value(t, df, alternative)
    return CorrelationResult(method, r, low, high, confidence, float(t), df, p, alternative, n)


def fisher_interval(
    r: float, se: float, confidence: float = 0.95, *, alternative: str = "two-sided"
) -> tuple[float, float]:
    """Fisher's (1921) interval ``tanh(atanh(r) -/+ z_{1-gamma/2} se)``.

    For a one-sided ``alternative`` the interval is one-sided, as ``scipy.stats.pearsonr``'s
    and R's ``cor.test``: ``(tanh(atanh(r) - z_{1-gamma} se), 1)`` for ``"greater"`` and
    ``(-1, tanh(atanh(r) + z_{1-gamma} se))`` for ``"less"``.
    """
    _check_alternative(alternative)
    r = float(np.clip(r, -1.0, 1.0))
    if abs(r) == 1.0:
        # atanh(+-1) is infinite (numpy warns of a division by zero): the interval is the limit of
        # tanh(atanh(r) -/+ crit se) as r -> +-1, i.e. it collapses onto r on its finite side.
        if alternative == "two-sided":
            return r, r
        return (r, 1.0) if alternative == "greater" else (-1.0, r)
    z = np.arctanh(r)
    if alternative == "two-sided":
        crit = stats.norm.ppf(1 - (1 - confidence) / 2)
        return float(np.tanh(z - crit * se)), float(np.tanh(z + crit * se))
    crit = stats.norm.ppf(confidence)
    if alternative == "greater":
        return float(np.tanh(z - crit * se)), 1.0
    return -1.0, float(np.tanh(z + crit * se))


def williams_t(r_jk: float, r_jh: float, r_kh: float, n: int, *, alternative: str = "two-sided") -> WilliamsResult:
    """Williams' (1959) t for H0: rho_jk = rho_jh (shared variable j); see the module docstring.

    ``alternative="greater"`` tests rho_jk > rho_jh.
    """
    _check_alternative(alternative)
    for name, r in (("r_jk", r_jk), ("r_jh", r_jh), ("r_kh", r_kh)):
        if not -1 <= r <= 1:
            raise DataError(f"{name} must be a correlation in [-1, 1], got {r}")
    if n < 4:
        raise DataError(f"Williams' t needs n >= 4 cases, got {n}")
    det = 1 - r_jk**2 - r_jh**2 - r_kh**2 + 2 * r_jk * r_jh * r_kh
    r_bar = (r_jk + r_jh) / 2
    denominator = 2 * (n - 1) / (n - 3) * det + r_bar**2 * (1 - r_kh) ** 3
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (r_jk - r_jh) * np.sqrt((n - 1) * (1 + r_kh) / denominator)
    df = n - 3
    return WilliamsResult(
        float(r_jk), float(r_jh), float(r_kh), float(t), df, _t_p_value(t, df, alternative), alternative, int(n)
    )


def williams_test(
    shared: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    *,
    method: str = "pearson",
    alternative: str = "two-sided",
) -> WilliamsResult:
    """Williams' t of r(shared, first) vs r(shared, second), all three correlations on the same cases.

    Cases where any of the three variables is NaN are dropped first, so ``n`` counts the
    complete cases and the three correlations use the same ones. ``method`` is ``pearson`` or
    ``spearman`` (the test is then applied to the rank correlations).
    """
    x = np.column_stack([np.asarray(v, dtype=float) for v in (shared, first, second)])
    x = x[np.isfinite(x).all(axis=1)]
    r_jk = correlation(x[:, 0], x[:, 1], method=method).r
    r_jh = correlation(x[:, 0], x[:, 2], method=method).r
    r_kh = correlation(x[:, 1], x[:, 2], method=method).r
    return williams_t(r_jk, r_jh, r_kh, len(x), alternative=alternative)


def _t_p_value(t: float, df: int, alternative: str) -> float:
    if alternative == "two-sided":
        return float(2 * stats.t.sf(abs(t), df))
    if alternative == "greater":
        return float(stats.t.sf(t, df))
    return float(stats.t.cdf(t, df))


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise DataError(f"unknown alternative {alternative!r} (choose from {', '.join(ALTERNATIVES)})")

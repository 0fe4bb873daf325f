"""Internal consistency: Cronbach's alpha with Feldt's confidence interval.

For ``n`` cases (rows) scored on ``k`` items (columns) with sample covariance matrix ``C``
(ddof = 1)::

    alpha = k / (k - 1) * (1 - trace(C) / sum(C))                           (Cronbach, 1951)

    standardized alpha = k * r_bar / (1 + (k - 1) * r_bar),  r_bar = mean inter-item correlation

The ``1 - gamma`` interval uses ``(1 - alpha_hat) / (1 - alpha) ~ F(n - 1, (n - 1)(k - 1))``::

    lower = 1 - (1 - alpha) * F^{-1}(1 - gamma/2; n - 1, (n - 1)(k - 1))
    upper = 1 - (1 - alpha) * F^{-1}(gamma/2;     n - 1, (n - 1)(k - 1))   (Feldt, 1965)

Missing values (``missing``):

* ``"listwise"`` (the default): only complete cases; ``C`` and ``n`` come from them.
* ``"pairwise"``: each entry ``C_ij`` is the sample covariance of items i and j over the
  cases that have both (pairwise deletion; each variance ``C_ii`` over the cases that have
  item i), and ``n`` is the number of cases with at least one value. This is pingouin's
  default (``cronbach_alpha(nan_policy="pairwise")``; Vallat 2018) and R's
  ``psych::alpha(use="pairwise")``. It keeps every observed value, but ``C`` need not be
  positive semi-definite, and the Feldt interval treats all ``n`` cases as complete.

References
----------
    Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
        Psychometrika, 16(3), 297-334. doi:10.1007/BF02310555
    Vallat, R. (2018). Pingouin: statistics in Python. Journal of Open Source Software, 3(31),
        1026. doi:10.21105/joss.01026
    Feldt, L. S. (1965). The approximate sampling distribution of Kuder-Richardson
        reliability coefficient twenty. Psychometrika, 30(3), 357-370. doi:10.1007/BF02289499
    Feldt, L. S., Woodruff, D. J., & Salih, F. A. (1987). Statistical inference for
        coefficient alpha. Applied Psychological Measurement, 11(1), 93-103.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from assoc.errors import DataError
from assoc.stats.samples import as_complete_matrix


@dataclass(frozen=True)
class AlphaResult:
    """Cronbach's alpha with its confidence interval and the standardized alpha."""

    alpha: float
    ci_low: float
    ci_high: float
    confidence: float
    standardized_alpha: float
    mean_inter_item_r: float
    n_cases: int
    n_items: int
    missing: str = "listwise"

    def as_dict(self) -> dict:
        """The fields as a dict (one row of a result table)."""
        return asdict(self)


def cronbach_alpha(scores: np.ndarray, *, confidence: float = 0.95, missing: str = "listwise") -> AlphaResult:
    """Cronbach's alpha of an ``n cases x k items`` matrix, with Feldt's CI.

    Parameters
    ----------
    scores
        Cases x items. With ``missing="listwise"`` it must be complete (drop incomplete
        cases first); with ``"pairwise"`` NaN marks a missing value.
    confidence
        Confidence level of Feldt's interval.
    missing
        ``"listwise"`` or ``"pairwise"`` deletion (see the module docstring for the formulas).
    """
    if not 0 < confidence < 1:
        raise DataError(f"confidence must be between 0 and 1, got {confidence}")
    if missing not in ("listwise", "pairwise"):
        raise DataError(f"missing must be 'listwise' or 'pairwise', not {missing!r}")
    if missing == "listwise":
        x = as_complete_matrix(scores, label="scores", rows="cases", columns="items", statistic="Cronbach's alpha")
        n, k = x.shape
        cov = np.cov(x, rowvar=False, ddof=1)
    else:
        x = np.asarray(scores, dtype=float)
        if x.ndim != 2:
            raise DataError(f"scores must be a 2-D cases x items matrix, got {x.ndim} dimension(s)")
        if np.isinf(x).any():
            raise DataError("scores contain infinite values")
        x = x[~np.isnan(x).all(axis=1)]  # a case without any value carries nothing
        n, k = x.shape
        if k < 2:
            raise DataError(f"Cronbach's alpha needs at least 2 items, got {k}")
        if n < 2:
            raise DataError(f"Cronbach's alpha needs at least 2 cases, got {n}")
        cov, pairwise_corr = _pairwise_covariance(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = k / (k - 1) * (1 - np.trace(cov) / cov.sum())
        sd = np.sqrt(np.diag(cov))
        corr = cov / np.outer(sd, sd) if missing == "listwise" else pairwise_corr
        r_bar = corr[np.triu_indices(k, 1)].mean()
        standardized = k * r_bar / (1 + (k - 1) * r_bar)
    gamma = 1 - confidence
    df1, df2 = n - 1, (n - 1) * (k - 1)
    low = 1 - (1 - alpha) * stats.f.ppf(1 - gamma / 2, df1, df2)
    high = 1 - (1 - alpha) * stats.f.ppf(gamma / 2, df1, df2)
    return AlphaResult(
        alpha=float(alpha),
        ci_low=float(low),
        ci_high=float(high),
        confidence=confidence,
        standardized_alpha=float(standardized),
        mean_inter_item_r=float(r_bar),
        n_cases=n,
        n_items=k,
        missing=missing,
    )


def _pairwise_covariance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sample covariances (ddof = 1) and Pearson correlations, each over the cases observed on both items."""
    k = x.shape[1]
    observed = ~np.isnan(x)
    cov = np.empty((k, k))
    corr = np.eye(k)
    for i in range(k):
        for j in range(i, k):
            both = observed[:, i] & observed[:, j]
            if both.sum() < 2:
                raise DataError(
                    f"items {i + 1} and {j + 1} share {int(both.sum())} case(s); a pairwise covariance needs at least 2"
                )
            pair = np.cov(x[both, i], x[both, j], ddof=1)
            cov[i, j] = cov[j, i] = pair[0, 1] if i != j else float(np.var(x[both, i], ddof=1))
            if i != j:
                with np.errstate(divide="ignore", invalid="ignore"):
                    corr[i, j] = corr[j, i] = pair[0, 1] / np.sqrt(pair[0, 0] * pair[1, 1])
    return cov, corr

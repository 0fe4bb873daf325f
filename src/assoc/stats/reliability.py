"""Internal consistency: Cronbach's alpha with Feldt's confidence interval.

For ``n`` cases (rows) scored on ``k`` items (columns) with sample covariance matrix ``C``
(ddof = 1)::

    alpha = k / (k - 1) * (1 - trace(C) / sum(C))                           (Cronbach, 1951)

    standardized alpha = k * r_bar / (1 + (k - 1) * r_bar),  r_bar = mean inter-item correlation

The ``1 - gamma`` interval uses ``(1 - alpha_hat) / (1 - alpha) ~ F(n - 1, (n - 1)(k - 1))``::

    lower = 1 - (1 - alpha) * F^{-1}(1 - gamma/2; n - 1, (n - 1)(k - 1))
    upper = 1 - (1 - alpha) * F^{-1}(gamma/2;     n - 1, (n - 1)(k - 1))   (Feldt, 1965)

References
----------
    Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
        Psychometrika, 16(3), 297-334. doi:10.1007/BF02310555
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

    def as_dict(self) -> dict:
        """The fields as a dict (one row of a result table)."""
        return asdict(self)


def cronbach_alpha(scores: np.ndarray, *, confidence: float = 0.95) -> AlphaResult:
    """Cronbach's alpha of a complete ``n cases x k items`` matrix, with Feldt's CI.

    See the module docstring for the formulas. Incomplete cases must be removed first.
    """
    if not 0 < confidence < 1:
        raise DataError(f"confidence must be between 0 and 1, got {confidence}")
    x = as_complete_matrix(scores, label="scores", rows="cases", columns="items", statistic="Cronbach's alpha")
    n, k = x.shape
    cov = np.cov(x, rowvar=False, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = k / (k - 1) * (1 - np.trace(cov) / cov.sum())
        sd = np.sqrt(np.diag(cov))
        corr = cov / np.outer(sd, sd)
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
    )

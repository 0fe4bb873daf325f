"""Information criteria shared by the fitted-model classes."""

from __future__ import annotations

import math


class InformationCriteria:
    """Mixin for fits with ``loglik``, ``n_params`` (k) and ``n_obs`` (n).

    AIC = -2 log L + 2k (Akaike, 1974); BIC = -2 log L + k ln n (Schwarz, 1978).
    """

    loglik: float
    n_params: int
    n_obs: int

    def aic(self) -> float:
        return -2 * self.loglik + 2 * self.n_params

    def bic(self) -> float:
        return -2 * self.loglik + math.log(self.n_obs) * self.n_params

"""Information criteria shared by the fitted-model classes.

References
----------
    Akaike, H. (1974). A new look at the statistical model identification. IEEE Transactions on
        Automatic Control, 19(6), 716-723. doi:10.1109/TAC.1974.1100705
    Schwarz, G. (1978). Estimating the dimension of a model. The Annals of Statistics, 6(2),
        461-464. doi:10.1214/aos/1176344136
"""

from __future__ import annotations

import math
from typing import Protocol


class _Fitted(Protocol):
    """What the criteria need of a fit; properties or plain attributes both satisfy it."""

    @property
    def loglik(self) -> float: ...

    @property
    def n_params(self) -> int: ...

    @property
    def n_obs(self) -> int: ...


class InformationCriteria:
    """Mixin for fits with ``loglik``, ``n_params`` (k) and ``n_obs`` (n).

    AIC = -2 log L + 2k (Akaike, 1974); BIC = -2 log L + k ln n (Schwarz, 1978).
    """

    # The requirements are the self-type (a Protocol), not attributes declared here: fits provide them as
    # read-only properties (OLSFit) or dataclass fields (MixedFit.n_obs), and a declared attribute would
    # clash with both.

    def aic(self: _Fitted) -> float:
        """Akaike's information criterion, -2 log L + 2k."""
        return -2 * self.loglik + 2 * self.n_params

    def bic(self: _Fitted) -> float:
        """Schwarz's Bayesian information criterion, -2 log L + k ln n."""
        return -2 * self.loglik + math.log(self.n_obs) * self.n_params

"""Refuse resampling sizes that cannot finish, before any work starts.

A permutation test or bootstrap with ``n`` resamples over ``m`` values draws about ``n * m``
random numbers. numpy draws and sorts some 10**7 to 10**8 of them per second here, so
:data:`MAX_RESAMPLED_VALUES` (10**10) is minutes of work; a typo such as ``n_resamples=1e11``
(hours to days, and no progress to show) is refused with the largest size that is allowed.
"""

from __future__ import annotations

from assoc.errors import OptionError

#: Most random values one resampling run may draw (resamples times values per resample).
MAX_RESAMPLED_VALUES = 10**10


def check_resampling_size(n_resamples: int, values_per_resample: int, *, option: str) -> None:
    """Raise :class:`OptionError` if ``n_resamples`` resamples of ``values_per_resample`` values cannot finish.

    ``option`` is the user-facing name of the count (``n_resamples``, ``n_bootstrap``).
    """
    work = int(n_resamples) * max(int(values_per_resample), 1)
    if work > MAX_RESAMPLED_VALUES:
        allowed = MAX_RESAMPLED_VALUES // max(int(values_per_resample), 1)
        raise OptionError(
            f"{option}={int(n_resamples):,} over {int(values_per_resample):,} values per resample "
            f"would draw about {work:.1e} random values, hours of work or more; at most "
            f"{option}={allowed:,} here (the p-value or interval barely changes beyond 10^6)"
        )

"""Refuse resampling sizes that cannot finish, before any work starts; show progress on the ones that take a while.

A permutation test or bootstrap with ``n`` resamples over ``m`` values draws about ``n * m``
random numbers. numpy draws and sorts some 10**7 to 10**8 of them per second, so
:data:`MAX_RESAMPLED_VALUES` (10**9) is up to a minute or two of work for one test (an analysis
may run one per group); a typo such as ``n_resamples=2e8`` (hours, for many groups) is refused
with the largest size that is allowed. What a resampling run keeps (a bootstrap keeps every
resampled statistic) must also fit the memory budget of :func:`assoc.infra.memory.work_memory_budget`.
A run of more than :data:`PROGRESS_AFTER_VALUES` values shows a progress bar with an ETA on a
terminal (:func:`resampling_bar`).
"""

from __future__ import annotations

from typing import Any

from assoc.errors import OptionError

#: Most random values one resampling run may draw (resamples times values per resample).
MAX_RESAMPLED_VALUES = 10**9
#: Runs drawing more values than this (a few seconds of work) show a progress bar with an ETA.
PROGRESS_AFTER_VALUES = 5 * 10**7


def check_resampling_size(
    n_resamples: int, values_per_resample: int, *, option: str, bytes_kept_per_resample: int = 0
) -> None:
    """Raise :class:`OptionError` if ``n_resamples`` resamples of ``values_per_resample`` values cannot finish.

    ``option`` is the user-facing name of the count (``n_resamples``, ``n_bootstrap``);
    ``bytes_kept_per_resample`` is what the run keeps of each resample (8 for a bootstrap that
    keeps one float64 statistic), checked against the memory budget.
    """
    per = max(int(values_per_resample), 1)
    work = int(n_resamples) * per
    if work > MAX_RESAMPLED_VALUES:
        allowed = MAX_RESAMPLED_VALUES // per
        raise OptionError(
            f"{option}={int(n_resamples):,} over {int(values_per_resample):,} values per resample "
            f"would draw about {work:.1e} random values, far more than a few minutes of work; at most "
            f"{option}={allowed:,} here (the p-value or interval barely changes beyond 10^6)"
        )
    if bytes_kept_per_resample > 0:
        from assoc.infra.memory import check_fits_memory

        check_fits_memory(int(n_resamples), bytes_kept_per_resample, option=option, what="the resampled statistics")


def resampling_bar(total: int, values_per_resample: int, *, desc: str) -> Any:
    """A progress bar (count, rate and ETA) over ``total`` resamples, shown on a terminal for long runs only."""
    from assoc.infra.progress import bar, default_enabled

    long_run = int(total) * max(int(values_per_resample), 1) > PROGRESS_AFTER_VALUES
    return bar(total=int(total), desc=desc, enabled=long_run and default_enabled(), unit="resample")

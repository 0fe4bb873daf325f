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

"""z-scores within groups.

For the values ``x_1..x_n`` of one group (NaN ignored)::

    z_i = (x_i - mean(x)) / sd(x),   sd = sqrt( sum (x_i - mean)^2 / (n - ddof) )

``ddof=1`` (the default) is R's ``scale()``, which the FMAT analyses use to standardise
log-probability ratios within model x query (Bao, 2024, Study 1); ``ddof=0`` uses the
population SD. A group with fewer than ``ddof + 1`` values or zero spread has no z-scores
(NaN), and is reported rather than silently set to 0. Zero spread means an SD within the
floating-point rounding of the data (:func:`assoc.stats.samples.negligible_spread`), so
constant data gives NaN however its mean rounds, as in ``scipy.stats.zscore``.

Reference:
    Bao, H.-W.-S. (2024). The Fill-Mask Association Test (FMAT): Measuring propositions in
        natural language. Journal of Personality and Social Psychology. doi:10.1037/pspa0000396
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from assoc.errors import DataError
from assoc.stats.samples import negligible_spread


def zscore(values: np.ndarray, *, ddof: int = 1) -> np.ndarray:
    """z-scores of one sample (NaN stays NaN; all NaN when the SD is 0 or undefined)."""
    if ddof not in (0, 1):
        raise DataError(f"ddof must be 0 (population SD) or 1 (sample SD), got {ddof!r}")
    x = np.asarray(values, dtype=float)
    finite = np.isfinite(x)
    n = int(finite.sum())
    if n - ddof <= 0:
        return np.full(x.shape, np.nan)
    mean = x[finite].mean()
    sd = np.sqrt(np.sum((x[finite] - mean) ** 2) / (n - ddof))
    if negligible_spread(sd, x[finite]):  # constant up to rounding: scipy.stats.zscore gives NaN too
        return np.full(x.shape, np.nan)
    return (x - mean) / sd


def zscore_within(frame: pd.DataFrame, *, within: Sequence[str], column: str = "value", ddof: int = 1) -> pd.Series:
    """z-scores of ``frame[column]`` computed separately within each group of ``within``.

    With no ``within`` columns the whole column is standardised at once. Returns a Series
    aligned with ``frame``.
    """
    if column not in frame.columns:
        raise DataError(f"no column {column!r} to standardise")
    missing = [c for c in within if c not in frame.columns]
    if missing:
        raise DataError(f"no column(s) {', '.join(map(repr, missing))} to standardise within")
    if not within:
        return pd.Series(zscore(frame[column].to_numpy(), ddof=ddof), index=frame.index, name=column)
    out = pd.Series(np.nan, index=frame.index, name=column, dtype=float)
    for _, part in frame.groupby(list(within), sort=False, dropna=False):
        out.loc[part.index] = zscore(part[column].to_numpy(), ddof=ddof)
    return out

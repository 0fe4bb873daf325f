"""Two-sample permutation tests, exact or sampled, vectorised over permutations.

The test compares a statistic ``T(x, y)`` with its distribution over all
*partitions* of the pooled sample ``x ∪ y`` into two groups of the original sizes
(``|x|`` and ``|y|``). This is the randomisation test of Fisher (1935) and the
test of Caliskan, Bryson & Narayanan (2017, *Science* 356:183) for the WEAT,
where ``x`` and ``y`` are the association scores s(w, A, B) of the two target
sets and ``T`` is the difference of their sums.

* **exact**: when the number of partitions ``C(n_x + n_y, n_x)`` is at most
  ``exact_limit``, every partition is enumerated (the observed one included) and

      p_greater = #{partitions i : T_i >= T_obs} / C(n_x + n_y, n_x).

* **sampled**: otherwise ``n_resamples`` random partitions are drawn (each draw a
  uniform random permutation of the pooled sample, i.e. without replacement
  within a draw; draws are independent), and

      p_greater = (1 + #{draws i : T_i >= T_obs}) / (1 + n_resamples)

  which is never zero and is a valid (slightly conservative) p-value
  (Phipson & Smyth 2010, *Stat. Appl. Genet. Mol. Biol.* 9(1):39).

Ties count as extreme ("at least as extreme", ``>=``). Caliskan et al. (2017)
write ``Pr_i[s(X_i, Y_i, A, B) > s(X, Y, A, B)]`` with a strict inequality; with
continuous cosines ties other than the observed partition itself have
probability zero, and counting the observed partition is what makes the
p-value valid (it can never be 0). Floating-point noise is absorbed by treating
permuted statistics within ``1e-12`` (relative to the scale of the data) of the
observed statistic as ties.

``strict=True`` gives the count of sweater (Chan, 2022, R package; ``weat_exact`` and
``weat_resampling``) instead: only partitions whose statistic is *strictly* more
extreme count (beyond the same tolerance), and the sampled p has no +1::

    p_greater = #{i : T_i > T_obs} / N        (N = all partitions, or the n_resamples draws)

The observed partition itself is never counted, so an exact strict p is the default p
less 1/C(n_x + n_y, n_x) when nothing else ties (3 vs 3 words: 0.15 instead of 0.20),
and a sampled strict p can be 0. It is offered to reproduce sweater's numbers; the
default remains the valid ``>=`` count (Phipson & Smyth 2010).

Alternatives: ``"greater"`` (T large, the default: the one-sided test of
Caliskan et al.), ``"less"``, and ``"two-sided"`` = ``min(1, 2 * min(p_greater,
p_less))`` (the doubling rule also used by ``scipy.stats.permutation_test``;
for equal group sizes and a difference statistic the permutation distribution
is symmetric and this equals the proportion of ``|T_i| >= |T_obs|``).

How random partitions are drawn (``sampler``): ``"uniform"`` (the default) draws each partition
as the argsort of i.i.d. uniforms from ``numpy.random.default_rng(seed)``, a block of draws at a
time. ``"legacy-shuffle"`` and ``"shuffle"`` shuffle one index array ``0 .. n-1`` in place again
and again and take each arrangement as a partition (its first ``n_x`` positions are x), with
``numpy.random.RandomState(seed).shuffle`` or ``numpy.random.default_rng(seed).shuffle``: the
streams of sent-bias's ``weat.py`` (May et al., 2019, after ``np.random.seed(seed)``) and of
fairlms's ``permutation_pval``, so that their sampled p-values are reproduced draw for draw
(:func:`assoc.stats.seat_statistics.seat`). A Fisher-Yates shuffle of any arrangement is a uniform
permutation independent of that arrangement, so all three give i.i.d. uniform partitions.

:func:`normal_approximation_test` gives the large-sample alternative for the
mean difference, from the exact mean and variance of its permutation
distribution. :func:`rowwise_permutation_test` runs many mean-difference tests
(one per row of a matrix, e.g. one per word in WEFAT) on shared partitions,
vectorised over rows and partitions alike.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats as _scipy_stats

from assoc.errors import DataError, OptionError
from assoc.stats.budget import check_resampling_size, resampling_bar
from assoc.stats.samples import as_sample

Alternative = Literal["greater", "less", "two-sided"]
#: A vectorised statistic: receives arrays of shape (k, n_x) and (k, n_y), one
#: permutation per row, and returns shape (k,).
StatisticFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
Statistic = Literal["mean_difference", "sum_difference"] | StatisticFunction

ALTERNATIVES = ("greater", "less", "two-sided")
Sampler = Literal["uniform", "shuffle", "legacy-shuffle"]
SAMPLERS = ("uniform", "shuffle", "legacy-shuffle")
# Bound the memory of one vectorised block: rows * pooled size stays below this.
_BLOCK_ELEMENTS = 2_000_000
_TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PermutationResult:
    """Result of a two-sample permutation (or normal-approximation) test.

    Attributes
    ----------
        statistic: observed value of the test statistic.
        p_value: p-value for ``alternative``.
        method: ``"exact"`` (all partitions), ``"sampled"`` (random partitions,
            +1 correction) or ``"normal"`` (:func:`normal_approximation_test`).
        n_permutations: partitions enumerated (exact) or drawn (sampled); 0 for normal.
        alternative: ``"greater"``, ``"less"`` or ``"two-sided"``.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int
    alternative: str


def count_partitions(n_x: int, n_y: int) -> int:
    """Number of ways to split ``n_x + n_y`` items into groups of sizes ``n_x`` and ``n_y``: C(n_x+n_y, n_x)."""
    return math.comb(n_x + n_y, n_x)


def _check_test_options(alternative: str, exact_limit: int, n_resamples: int) -> None:
    """The options every permutation test here shares: a known alternative, valid counts."""
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    if not isinstance(exact_limit, (int, np.integer)) or exact_limit < 0:
        raise OptionError(f"exact_limit must be a non-negative integer, not {exact_limit!r}")
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise OptionError(f"n_resamples must be a positive integer, not {n_resamples!r}")


def check_seed(seed: object) -> None:
    """A seed is None, a numpy Generator or a non-negative integer (numpy rejects negative ones)."""
    if seed is None or isinstance(seed, np.random.Generator):
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise OptionError(f"seed must be a non-negative integer (or None), not {seed!r}")


def _generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    check_seed(seed)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def two_sample_permutation_test(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    *,
    statistic: Statistic = "mean_difference",
    alternative: Alternative = "greater",
    exact_limit: int = 100_000,
    n_resamples: int = 100_000,
    seed: int | np.random.Generator | None = None,
    strict: bool = False,
    sampler: Sampler = "uniform",
) -> PermutationResult:
    """Permutation test of ``statistic(x, y)`` over partitions of ``x ∪ y`` (see module docstring).

    Parameters
    ----------
    x, y
        The two samples (1-D, finite, non-empty).
    statistic
        ``"mean_difference"`` (mean(x) - mean(y)), ``"sum_difference"``
        (sum(x) - sum(y), the WEAT test statistic s(X, Y, A, B)), or a vectorised
        callable ``f(xs, ys) -> T`` taking arrays of shape (k, n_x), (k, n_y), one
        partition per row, and returning shape (k,). It must not depend on the order
        of the values within a row (rows are not in the input order).
    alternative
        ``"greater"``, ``"less"`` or ``"two-sided"``.
    exact_limit
        Enumerate all partitions when there are at most this many.
    n_resamples
        Number of random partitions otherwise.
    seed
        Seed (or Generator) for the sampled test; the exact test ignores it.
    strict
        Count only partitions strictly more extreme than the observed one and drop the +1
        of the sampled test (sweater's convention, see the module docstring); the default
        ``False`` counts ties (``>=``) and adds the +1.
    sampler
        How the sampled test draws its partitions: ``"uniform"`` (default), or the shuffle
        streams ``"legacy-shuffle"`` (sent-bias) and ``"shuffle"`` (fairlms); see the module
        docstring. ``"legacy-shuffle"`` takes an integer seed (or None), not a Generator.

    Returns
    -------
        :class:`PermutationResult`; ``method`` says whether the p-value is exact or sampled.
    """
    x_arr, y_arr = _check_samples(x, y)
    _check_test_options(alternative, exact_limit, n_resamples)
    check_seed(seed)
    partition_statistic = _resolve_statistic(statistic)

    pooled = np.concatenate([x_arr, y_arr])
    n_x = x_arr.size
    identity = np.arange(pooled.size)[None, :]
    # The observed value goes through the same code path as the permuted ones, so
    # the identity partition reproduces it bit for bit.
    observed = float(partition_statistic(pooled, identity[:, :n_x], identity[:, n_x:])[0])
    tolerance = _TIE_TOLERANCE * max(abs(observed), float(np.mean(np.abs(pooled))), np.finfo(float).tiny)

    blocks, method, n_permutations, correction = _partitions(
        pooled.size, n_x, exact_limit, n_resamples, seed, sampler=sampler
    )

    if strict:
        # sweater: strictly greater (less) only, no +1 (the observed partition is not counted)
        correction = 0
    n_ge = n_le = 0
    with resampling_bar(n_permutations, pooled.size, desc=f"permutation test ({method})") as meter:
        for x_index, y_index in blocks:
            values = partition_statistic(pooled, x_index, y_index)
            if strict:
                n_ge += int(np.count_nonzero(values > observed + tolerance))
                n_le += int(np.count_nonzero(values < observed - tolerance))
            else:
                n_ge += int(np.count_nonzero(values >= observed - tolerance))
                n_le += int(np.count_nonzero(values <= observed + tolerance))
            meter.update(x_index.shape[0])

    p_greater = (n_ge + correction) / (n_permutations + correction)
    p_less = (n_le + correction) / (n_permutations + correction)
    p_value = _combine(p_greater, p_less, alternative)
    return PermutationResult(observed, p_value, method, n_permutations, alternative)


@dataclass(frozen=True)
class RowwisePermutationResult:
    """Result of :func:`rowwise_permutation_test`: one test per row, all on the same partitions.

    Attributes
    ----------
        statistic: observed mean difference per row, shape (rows,).
        p_value: p-value per row for ``alternative``, shape (rows,).
        method: ``"exact"`` or ``"sampled"`` (the same for every row).
        n_permutations: partitions enumerated (exact) or drawn (sampled).
        alternative: ``"greater"``, ``"less"`` or ``"two-sided"``.
    """

    statistic: np.ndarray
    p_value: np.ndarray
    method: str
    n_permutations: int
    alternative: str


def rowwise_permutation_test(
    values: np.ndarray,
    n_x: int,
    *,
    alternative: Alternative = "greater",
    exact_limit: int = 100_000,
    n_resamples: int = 100_000,
    seed: int | np.random.Generator | None = None,
) -> RowwisePermutationResult:
    """Many two-sample permutation tests of the mean difference at once, one per row of ``values``.

    Row r is split into x_r = ``values[r, :n_x]`` and y_r = ``values[r, n_x:]``; its
    statistic is T_r = mean(x_r) - mean(y_r), and its p-value is exactly what
    :func:`two_sample_permutation_test` (``statistic="mean_difference"``) gives for
    (x_r, y_r) on the same partitions: exact over all C(n, n_x) partitions when
    there are at most ``exact_limit``, otherwise ``n_resamples`` random partitions
    with the +1 correction, ties (within 1e-12 of the row's scale) counted as
    extreme. All rows share the partitions, so the loop is over blocks of
    partitions only: T for a block is one matrix product ``values @ membership.T``.
    Used for WEFAT (one test per word over the partitions of A ∪ B).
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 2 or 0 in arr.shape:
        raise DataError(f"values must be a non-empty 2-D array (tests × values), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise DataError(f"values contain {int(np.sum(~np.isfinite(arr)))} NaN or infinite value(s)")
    n = arr.shape[1]
    if isinstance(n_x, bool) or not isinstance(n_x, (int, np.integer)) or not 0 < n_x < n:
        raise DataError(f"n_x must split the {n} values of a row into two non-empty groups, not {n_x!r}")
    _check_test_options(alternative, exact_limit, n_resamples)
    check_seed(seed)
    n_y = n - n_x
    totals = arr.sum(axis=1)

    def mean_difference(sum_x: np.ndarray) -> np.ndarray:
        return sum_x / n_x - (totals[:, None] - sum_x) / n_y

    observed = mean_difference(arr[:, :n_x].sum(axis=1)[:, None])[:, 0]
    scale = np.maximum(np.abs(observed), np.mean(np.abs(arr), axis=1))
    tolerance = _TIE_TOLERANCE * np.maximum(scale, np.finfo(float).tiny)

    # every partition is applied to all rows: that is the work per resample
    blocks, method, n_permutations, correction = _partitions(n, n_x, exact_limit, n_resamples, seed, rows=arr.shape[0])

    # T = sum_x * (1/n_x + 1/n_y) - total/n_y is increasing in sum_x, so T >= T_obs - tol is
    # sum_x >= a threshold per row (and likewise for <=): no T array per block.
    slope = 1.0 / n_x + 1.0 / n_y
    lower = ((observed - tolerance + totals / n_y) / slope)[:, None]
    upper = ((observed + tolerance + totals / n_y) / slope)[:, None]
    n_ge = np.zeros(arr.shape[0], dtype=np.int64)
    n_le = np.zeros(arr.shape[0], dtype=np.int64)
    meter = resampling_bar(n_permutations, arr.size, desc=f"permutation tests of {arr.shape[0]:,} rows ({method})")
    with meter:
        for x_index, _ in _rebalanced(blocks, max(1, _BLOCK_ELEMENTS // max(arr.shape[0], 1))):
            member = np.zeros((x_index.shape[0], n))
            np.put_along_axis(member, x_index, 1.0, axis=1)
            sum_x = arr @ member.T  # (rows, partitions in block): sum of x for every row and partition
            n_ge += np.count_nonzero(sum_x >= lower, axis=1)
            n_le += np.count_nonzero(sum_x <= upper, axis=1)
            meter.update(x_index.shape[0])

    p_greater = (n_ge + correction) / (n_permutations + correction)
    p_less = (n_le + correction) / (n_permutations + correction)
    if alternative == "greater":
        p_value = p_greater
    elif alternative == "less":
        p_value = p_less
    else:
        p_value = np.minimum(1.0, 2.0 * np.minimum(p_greater, p_less))
    return RowwisePermutationResult(observed, p_value.astype(float), method, n_permutations, alternative)


def _rebalanced(blocks, rows: int):
    """Re-cut a stream of (x_index, y_index) blocks into blocks of at most ``rows`` partitions."""
    for x_index, y_index in blocks:
        for start in range(0, x_index.shape[0], rows):
            yield x_index[start : start + rows], y_index[start : start + rows]


def normal_approximation_test(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    *,
    alternative: Alternative = "greater",
) -> PermutationResult:
    """Normal approximation to the permutation distribution of mean(x) - mean(y).

    Over all partitions of the pooled sample (size N = n_x + n_y) the mean
    difference has expectation 0 and variance exactly

        Var = S^2 * (1/n_x + 1/n_y),

    where S^2 is the sample variance (ddof=1) of the pooled values (sampling
    without replacement; e.g. Lehmann 1975, *Nonparametrics*, ch. 1). The p-value
    uses z = T_obs / sqrt(Var) against the standard normal. Used for WEFAT when
    the attribute sets are too large to enumerate.
    """
    x_arr, y_arr = _check_samples(x, y)
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative must be one of {', '.join(ALTERNATIVES)}, not {alternative!r}")
    pooled = np.concatenate([x_arr, y_arr])
    observed = float(x_arr.mean() - y_arr.mean())
    if pooled.size < 2:
        raise DataError("the normal approximation needs at least two values in all")
    variance = float(np.var(pooled, ddof=1)) * (1.0 / x_arr.size + 1.0 / y_arr.size)
    if variance <= 0.0:
        # All values equal: every partition gives T = 0 = T_obs.
        return PermutationResult(observed, 1.0, "normal", 0, alternative)
    z = observed / math.sqrt(variance)
    p_greater = float(_scipy_stats.norm.sf(z))
    p_less = float(_scipy_stats.norm.cdf(z))
    return PermutationResult(observed, _combine(p_greater, p_less, alternative), "normal", 0, alternative)


def _combine(p_greater: float, p_less: float, alternative: str) -> float:
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return min(1.0, 2.0 * min(p_greater, p_less))


def _check_samples(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    return as_sample(x, "x"), as_sample(y, "y")


PartitionStatistic = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _resolve_statistic(statistic: Statistic) -> PartitionStatistic:
    """Return f(pooled, x_index, y_index) -> one statistic per row of index arrays."""
    if callable(statistic):
        return lambda pooled, xi, yi: _call_user_statistic(statistic, pooled, xi, yi)
    if statistic == "mean_difference":

        def mean_difference(pooled: np.ndarray, xi: np.ndarray, yi: np.ndarray) -> np.ndarray:
            sum_x = pooled[xi].sum(axis=1)
            return sum_x / xi.shape[1] - (pooled.sum() - sum_x) / yi.shape[1]

        return mean_difference
    if statistic == "sum_difference":

        def sum_difference(pooled: np.ndarray, xi: np.ndarray, yi: np.ndarray) -> np.ndarray:
            # sum(y) = total - sum(x): one gather per partition instead of two.
            return 2.0 * pooled[xi].sum(axis=1) - pooled.sum()

        return sum_difference
    raise OptionError(f"statistic must be 'mean_difference', 'sum_difference' or a callable, not {statistic!r}")


def _call_user_statistic(
    statistic: StatisticFunction, pooled: np.ndarray, xi: np.ndarray, yi: np.ndarray
) -> np.ndarray:
    values = np.asarray(statistic(pooled[xi], pooled[yi]), dtype=float)
    if values.shape != (xi.shape[0],):
        raise DataError(
            f"the statistic returned shape {values.shape} for {xi.shape[0]} partitions; "
            "a vectorised statistic must return one value per row"
        )
    return values


def _block_rows(n: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(n, 1))


#: Exact enumeration beyond this many partitions would run for hours: refuse rather than hang.
MAX_EXACT_PARTITIONS = 100_000_000


def _partitions(
    n: int, n_x: int, exact_limit: int, n_resamples: int, seed: Any, rows: int = 1, sampler: str = "uniform"
):
    """The partitions a test runs over: ``(blocks, method, n_permutations, correction)``.

    All C(n, n_x) partitions ("exact", no correction) when there are at most
    ``exact_limit``, else ``n_resamples`` random ones drawn by ``sampler`` ("sampled", the +1
    correction).
    """
    check_sampler(sampler, seed)
    n_partitions = count_partitions(n_x, n - n_x)
    if n_partitions <= exact_limit:
        if n_partitions > MAX_EXACT_PARTITIONS:
            raise OptionError(
                f"an exact test would enumerate {n_partitions:,} partitions (more than "
                f"{MAX_EXACT_PARTITIONS:,}, hours of work); lower exact_limit to use "
                "a sampled test"
            )
        return _exact_blocks(n, n_x), "exact", n_partitions, 0
    check_resampling_size(n_resamples, n * rows, option="n_resamples")
    return _random_blocks(n, n_x, int(n_resamples), seed, sampler), "sampled", int(n_resamples), 1


def check_sampler(sampler: object, seed: object) -> None:
    """A known ``sampler``, and a seed it can take (``"legacy-shuffle"``: an integer below 2**32 or None)."""
    if sampler not in SAMPLERS:
        raise OptionError(f"sampler must be one of {', '.join(SAMPLERS)}, not {sampler!r}")
    check_seed(seed)
    if sampler == "legacy-shuffle" and not (seed is None or (isinstance(seed, (int, np.integer)) and seed < 2**32)):
        raise OptionError(
            f"sampler='legacy-shuffle' (numpy.random.RandomState) takes an integer seed below 2**32 or None, "
            f"not {seed!r}"
        )


def _random_blocks(n: int, n_x: int, n_resamples: int, seed: Any, sampler: str):
    """Blocks of ``n_resamples`` random partitions drawn the way ``sampler`` says (module docstring)."""
    if sampler == "uniform":
        return _sampled_blocks(n, n_x, n_resamples, _generator(seed))
    if sampler == "shuffle":
        return _shuffled_blocks(n, n_x, n_resamples, _generator(seed).shuffle)
    return _shuffled_blocks(n, n_x, n_resamples, np.random.RandomState(seed).shuffle)


def permutation_distribution(
    x: np.ndarray | list[float],
    y: np.ndarray | list[float],
    *,
    statistic: Statistic = "mean_difference",
    n_resamples: int = 100_000,
    seed: int | np.random.Generator | None = None,
    sampler: Sampler = "uniform",
) -> np.ndarray:
    """The statistic on ``n_resamples`` random partitions of ``x ∪ y``, in the order they are drawn.

    The same partitions, drawn the same way, as a sampled :func:`two_sample_permutation_test` with
    the same ``seed`` and ``sampler``: the values behind its count, for tests that fit a
    distribution to them instead (sent-bias's parametric p, :func:`assoc.stats.seat_statistics.seat`).

    Returns
    -------
        Array of shape ``(n_resamples,)``.
    """
    x_arr, y_arr = _check_samples(x, y)
    _check_test_options("greater", 0, n_resamples)
    check_sampler(sampler, seed)
    partition_statistic = _resolve_statistic(statistic)
    pooled = np.concatenate([x_arr, y_arr])
    check_resampling_size(n_resamples, pooled.size, option="n_resamples")
    values = [
        partition_statistic(pooled, x_index, y_index)
        for x_index, y_index in _random_blocks(pooled.size, x_arr.size, int(n_resamples), seed, sampler)
    ]
    return np.concatenate(values)


def _exact_blocks(n: int, n_x: int):
    """Yield (x_index, y_index) arrays, one partition per row, covering all C(n, n_x) partitions."""
    rows = _block_rows(n)
    n_y = n - n_x
    combos = itertools.combinations(range(n), n_x)
    while True:
        # np.fromiter over a chained iterator runs in C: no Python code per partition.
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, rows)), dtype=np.intp)
        if flat.size == 0:
            return
        x_index = flat.reshape(-1, n_x)
        member = np.zeros((x_index.shape[0], n), dtype=bool)
        np.put_along_axis(member, x_index, True, axis=1)
        # np.nonzero walks row-major, so each row's complement comes out sorted.
        y_index = np.nonzero(~member)[1].reshape(-1, n_y)
        yield x_index, y_index


def _shuffled_blocks(n: int, n_x: int, n_resamples: int, shuffle: Callable[[np.ndarray], None]):
    """Yield (x_index, y_index) arrays: one index array shuffled in place again and again, each arrangement a row.

    The shuffles run one after another on the same array (each from the previous arrangement),
    as sent-bias's and fairlms's loops do, so the rows are their partitions in their order.
    """
    rows = _block_rows(n)
    order = np.arange(n)
    remaining = n_resamples
    while remaining > 0:
        k = min(rows, remaining)
        block = np.empty((k, n), dtype=np.intp)
        for row in block:
            shuffle(order)
            row[:] = order
        yield block[:, :n_x], block[:, n_x:]
        remaining -= k


def _sampled_blocks(n: int, n_x: int, n_resamples: int, rng: np.random.Generator):
    """Yield (x_index, y_index) arrays for ``n_resamples`` uniform random partitions."""
    rows = _block_rows(n)
    remaining = n_resamples
    while remaining > 0:
        k = min(rows, remaining)
        # argsort of i.i.d. uniforms is a uniform random permutation per row.
        permutation = rng.random((k, n)).argsort(axis=1)
        yield permutation[:, :n_x], permutation[:, n_x:]
        remaining -= k

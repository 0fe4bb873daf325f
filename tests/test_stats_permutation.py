"""Permutation tests checked against partitions counted by hand and against scipy."""

import math

import numpy as np
import pytest
from scipy import stats

from assoc.errors import DataError, OptionError
from assoc.stats.permutation import (
    count_partitions,
    normal_approximation_test,
    two_sample_permutation_test,
)


def test_exact_sum_difference_counted_by_hand():
    # pooled {3,4,1,2}; the 6 partitions give sum(x)-sum(y) = 4, -2, 0, 0, 2, -4.
    # Observed (x={3,4}) is 4: one partition >= 4, all six <= 4.
    x, y = [3.0, 4.0], [1.0, 2.0]
    greater = two_sample_permutation_test(x, y, statistic="sum_difference")
    assert greater.statistic == 4.0
    assert greater.method == "exact" and greater.n_permutations == 6
    assert greater.p_value == pytest.approx(1 / 6)
    less = two_sample_permutation_test(x, y, statistic="sum_difference", alternative="less")
    assert less.p_value == pytest.approx(1.0)
    both = two_sample_permutation_test(x, y, statistic="sum_difference", alternative="two-sided")
    assert both.p_value == pytest.approx(2 / 6)


def test_ties_count_as_extreme():
    # pooled {1,1,1,0}: three partitions put both 1s in x (T = 1), three put the 0 in x (T = -1).
    # A strict '>' would give p = 0; '>=' gives 3/6.
    result = two_sample_permutation_test([1.0, 1.0], [1.0, 0.0], statistic="sum_difference")
    assert result.statistic == 1.0
    assert result.p_value == pytest.approx(0.5)


def test_unequal_sizes_mean_difference():
    # x={5}, y={1,2,3}: mean differences over the 4 partitions: 3, 1-8/3... only x=5 reaches 3.
    result = two_sample_permutation_test([5.0], [1.0, 2.0, 3.0])
    assert result.statistic == pytest.approx(3.0)
    assert result.n_permutations == 4
    assert result.p_value == pytest.approx(0.25)
    assert two_sample_permutation_test([5.0], [1.0, 2.0, 3.0], alternative="two-sided").p_value == pytest.approx(0.5)


def test_exact_matches_scipy_permutation_test():
    rng = np.random.default_rng(1)
    x, y = rng.normal(0.5, 1, 6), rng.normal(0, 1, 5)
    ours = two_sample_permutation_test(x, y, alternative="greater")
    reference = stats.permutation_test(
        (x, y),
        lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis),
        permutation_type="independent",
        alternative="greater",
        n_resamples=10**6,
    )
    assert ours.method == "exact" and ours.n_permutations == math.comb(11, 6)
    assert ours.p_value == pytest.approx(reference.pvalue, abs=1e-12)
    assert ours.statistic == pytest.approx(reference.statistic)


def test_callable_statistic_matches_builtin():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=5), rng.normal(size=4)
    builtin = two_sample_permutation_test(x, y, statistic="mean_difference", alternative="less")
    custom = two_sample_permutation_test(
        x, y, statistic=lambda xs, ys: xs.mean(axis=1) - ys.mean(axis=1), alternative="less"
    )
    assert custom.p_value == pytest.approx(builtin.p_value)
    assert custom.statistic == pytest.approx(builtin.statistic)


def test_callable_statistic_wrong_shape_is_an_error():
    with pytest.raises(DataError, match="one value per row"):
        two_sample_permutation_test([1.0, 2.0], [3.0], statistic=lambda xs, ys: 1.0)


def test_sampled_uses_plus_one_correction_and_seed():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0.3, 1, 8), rng.normal(0, 1, 8)
    exact = two_sample_permutation_test(x, y)
    sampled = two_sample_permutation_test(x, y, exact_limit=0, n_resamples=20_000, seed=7)
    again = two_sample_permutation_test(x, y, exact_limit=0, n_resamples=20_000, seed=7)
    assert sampled.method == "sampled" and sampled.n_permutations == 20_000
    assert sampled.p_value == again.p_value
    # p = (1 + k) / (1 + n) for an integer k
    k = sampled.p_value * 20_001 - 1
    assert k == pytest.approx(round(k), abs=1e-6)
    # within 5 binomial standard errors of the exact value
    se = math.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)
    assert abs(sampled.p_value - exact.p_value) < 5 * se + 1e-4


def test_sampled_p_is_never_zero():
    result = two_sample_permutation_test(np.arange(20.0) + 100, np.arange(20.0), n_resamples=1000, seed=0)
    assert result.method == "sampled"
    assert result.p_value == pytest.approx(1 / 1001)


def test_exact_limit_switches_method():
    x, y = [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0]
    assert count_partitions(4, 4) == 70
    assert two_sample_permutation_test(x, y, exact_limit=70).method == "exact"
    assert two_sample_permutation_test(x, y, exact_limit=69, seed=1).method == "sampled"


def test_normal_approximation_by_hand():
    # pooled {3,4,1,2}: sample variance 5/3; Var(T) = 5/3 * (1/2 + 1/2); T = 2.
    result = normal_approximation_test([3.0, 4.0], [1.0, 2.0])
    assert result.method == "normal"
    assert result.p_value == pytest.approx(stats.norm.sf(2 / math.sqrt(5 / 3)))


def test_normal_approximation_variance_is_the_exact_permutation_variance():
    import itertools

    rng = np.random.default_rng(4)
    pooled = rng.normal(size=9)
    n_x = 4
    values = []
    for chosen in itertools.combinations(range(9), n_x):
        mask = np.zeros(9, bool)
        mask[list(chosen)] = True
        values.append(pooled[mask].mean() - pooled[~mask].mean())
    values = np.array(values)
    observed = pooled[:n_x].mean() - pooled[n_x:].mean()
    z = observed / values.std(ddof=0)  # exact permutation SD, by enumeration
    result = normal_approximation_test(pooled[:n_x], pooled[n_x:], alternative="two-sided")
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))


@pytest.mark.parametrize(
    "x, y, message",
    [([], [1.0], "empty"), ([1.0, np.nan], [1.0], "NaN"), ([[1.0]], [1.0], "one-dimensional")],
)
def test_bad_samples(x, y, message):
    with pytest.raises(DataError, match=message):
        two_sample_permutation_test(x, y)


def test_bad_options():
    with pytest.raises(OptionError, match="alternative"):
        two_sample_permutation_test([1.0], [2.0], alternative="bigger")
    with pytest.raises(OptionError, match="statistic"):
        two_sample_permutation_test([1.0], [2.0], statistic="median")
    with pytest.raises(OptionError, match="n_resamples"):
        two_sample_permutation_test([1.0], [2.0], n_resamples=0)


def test_rowwise_exact_counted_by_hand():
    from assoc.stats.permutation import rowwise_permutation_test

    # Row 0, x = {3, 4}, y = {1, 2}: the 6 partitions give mean differences 2, -1, 0, 0, 1, -2 (observed 2).
    # Row 1, x = {1, .5}, y = {0, .5}: mean differences .5, 0, .5, -.5, 0, -.5 (observed .5, tied once).
    # Row 2, all values equal: every partition gives 0 = the observed value.
    values = np.array([[3.0, 4.0, 1.0, 2.0], [1.0, 0.5, 0.0, 0.5], [7.0, 7.0, 7.0, 7.0]])
    greater = rowwise_permutation_test(values, 2)
    assert greater.method == "exact" and greater.n_permutations == 6
    assert greater.statistic == pytest.approx([2.0, 0.5, 0.0])
    assert greater.p_value == pytest.approx([1 / 6, 2 / 6, 1.0])
    assert rowwise_permutation_test(values, 2, alternative="less").p_value == pytest.approx([1.0, 1.0, 1.0])
    assert rowwise_permutation_test(values, 2, alternative="two-sided").p_value == pytest.approx([2 / 6, 4 / 6, 1.0])


def test_rowwise_unequal_sizes_by_hand():
    from assoc.stats.permutation import rowwise_permutation_test

    # x = {5}, y = {1, 2, 3}: the 4 partitions give x=5: 5 - 2 = 3; x=1: 1 - 10/3 = -7/3;
    # x=2: 2 - 3 = -1; x=3: 3 - 8/3 = 1/3. Only x = 5 reaches the observed 3.
    result = rowwise_permutation_test(np.array([[5.0, 1.0, 2.0, 3.0]]), 1)
    assert result.statistic == pytest.approx([3.0])
    assert result.n_permutations == 4 and result.p_value == pytest.approx([0.25])


def test_rowwise_sampled_plus_one_and_shared_partitions():
    from assoc.stats.permutation import rowwise_permutation_test

    # Row 0: x far above y, so only the observed partition (probability 1/C(40, 20) per draw) can reach it:
    # p = (1 + 0) / (1 + 999). Row 1 is row 0 reversed: every draw is >= observed, p = 1.
    row = np.concatenate([np.arange(20.0) + 100, np.arange(20.0)])
    values = np.vstack([row, row[::-1]])
    result = rowwise_permutation_test(values, 20, n_resamples=999, seed=3)
    assert result.method == "sampled" and result.n_permutations == 999
    assert result.p_value == pytest.approx([1 / 1000, 1.0])
    # The same seed gives each row the partitions two_sample_permutation_test draws for it alone.
    rng = np.random.default_rng(5)
    noisy = rng.normal(size=(3, 12))
    rows = rowwise_permutation_test(noisy, 6, exact_limit=0, n_resamples=5_000, seed=9)
    for i in range(3):
        single = two_sample_permutation_test(noisy[i, :6], noisy[i, 6:], exact_limit=0, n_resamples=5_000, seed=9)
        assert rows.p_value[i] == single.p_value


def test_rowwise_bad_input():
    from assoc.stats.permutation import rowwise_permutation_test

    with pytest.raises(DataError, match="n_x must split"):
        rowwise_permutation_test(np.ones((2, 3)), 3)
    with pytest.raises(DataError, match="NaN"):
        rowwise_permutation_test(np.array([[1.0, np.nan]]), 1)
    with pytest.raises(DataError, match="2-D"):
        rowwise_permutation_test(np.ones(4), 2)
    with pytest.raises(OptionError, match="alternative"):
        rowwise_permutation_test(np.ones((1, 4)), 2, alternative="both")


@pytest.mark.parametrize("seed", [-1, 1.5, "a"])
def test_invalid_seed_is_an_option_error(seed):
    # A negative seed used to reach numpy and raise a bare ValueError ("expected non-negative integer").
    with pytest.raises(OptionError, match="seed"):
        two_sample_permutation_test(np.arange(30.0), np.arange(30.0) + 1, seed=seed, n_resamples=10)


def test_infeasible_exact_enumeration_is_refused_not_run():
    from assoc.stats.permutation import rowwise_permutation_test

    x, y = np.arange(20.0), np.arange(20.0) + 0.5  # C(40, 20) = 137,846,528,820 partitions
    with pytest.raises(OptionError, match="exact test would enumerate 137,846,528,820 partitions"):
        two_sample_permutation_test(x, y, exact_limit=10**20)
    with pytest.raises(OptionError, match="lower exact_limit"):
        rowwise_permutation_test(np.vstack([np.concatenate([x, y])]), 20, exact_limit=10**20)

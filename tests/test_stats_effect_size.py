"""Effect sizes checked against values computed by hand and scipy's bootstrap."""

import math

import numpy as np
import pytest
from scipy import stats

from assoc.errors import DataError, OptionError
from assoc.stats.effect_size import (
    bootstrap_interval,
    standardized_mean_difference,
    standardized_mean_difference_rows,
)

X = [1.0, 2.0, 3.0]
Y = [4.0, 5.0, 6.0]


def test_cohens_d_pooled_sample_sd():
    # SS_x = SS_y = 2; s_p = sqrt(4 / 4) = 1; d = (2 - 5) / 1
    assert standardized_mean_difference(X, Y) == pytest.approx(-3.0)


def test_pooled_population_sd():
    # s_p = sqrt(4 / 6)
    assert standardized_mean_difference(X, Y, ddof=0) == pytest.approx(-3.0 / math.sqrt(4 / 6))


def test_weat_denominator_sample_and_population_differ():
    # all six values 1..6: SS = 17.5; sample SD sqrt(17.5/5), population SD sqrt(17.5/6)
    sample = standardized_mean_difference(X, Y, sd="all")
    population = standardized_mean_difference(X, Y, sd="all", ddof=0)
    assert sample == pytest.approx(-3.0 / math.sqrt(3.5))
    assert population == pytest.approx(-3.0 / math.sqrt(17.5 / 6))
    assert abs(population) > abs(sample)


def test_fixed_sd():
    assert standardized_mean_difference(X, Y, sd=math.sqrt(2)) == pytest.approx(-3.0 / math.sqrt(2))


def test_zero_sd_gives_nan():
    assert math.isnan(standardized_mean_difference([1.0, 1.0], [1.0, 1.0], sd="all"))


def test_rows_match_scalar():
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    for sd in ("pooled", "all", 2.0):
        rows = standardized_mean_difference_rows(xs, ys, sd=sd)
        expected = [standardized_mean_difference(a, b, sd=sd) for a, b in zip(xs, ys)]
        assert rows == pytest.approx(expected)


@pytest.mark.parametrize("sd", ["median", -1.0, 0.0, math.inf, True])
def test_bad_sd(sd):
    with pytest.raises(OptionError):
        standardized_mean_difference(X, Y, sd=sd)


def test_bad_data():
    with pytest.raises(DataError, match="empty"):
        standardized_mean_difference([], Y)
    with pytest.raises(DataError, match="NaN"):
        standardized_mean_difference([1.0, math.nan], Y)
    with pytest.raises(DataError, match="needs"):
        standardized_mean_difference([1.0], [2.0])


def test_bootstrap_degenerate_interval():
    interval = bootstrap_interval(
        [1.0, 1.0, 1.0], [0.0, 0.0], lambda a, b: a.mean(1) - b.mean(1), seed=0, n_resamples=200
    )
    assert (interval.low, interval.high) == (1.0, 1.0)


def test_bootstrap_agrees_with_scipy_percentile():
    rng = np.random.default_rng(5)
    x, y = rng.normal(1, 1, 30), rng.normal(0, 1, 25)
    ours = bootstrap_interval(x, y, lambda a, b: a.mean(1) - b.mean(1), n_resamples=20_000, seed=1)
    reference = stats.bootstrap(
        (x, y),
        lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis),
        method="percentile",
        n_resamples=20_000,
        random_state=2,
    ).confidence_interval
    assert ours.low == pytest.approx(reference.low, abs=0.03)
    assert ours.high == pytest.approx(reference.high, abs=0.03)
    assert ours.confidence == ours.level == 0.95 and ours.n_undefined == 0


def test_stratified_bootstrap_resamples_within_each_stratum():
    rng = np.random.default_rng(5)
    x, y = rng.normal(1, 1, 30), rng.normal(0, 1, 25)
    # interleaved labels: a stratum is its labels' positions, wherever they are
    labels = np.array(["a"] * 30 + ["b"] * 25)
    order = rng.permutation(55)
    values, labels = np.concatenate([x, y])[order], labels[order]
    a, b = labels == "a", labels == "b"
    ours = bootstrap_interval(
        values, None, lambda xs, _: xs[:, a].mean(1) - xs[:, b].mean(1), n_resamples=20_000, seed=1, strata=labels
    )
    # the same as scipy's two-sample percentile bootstrap, which resamples each group within itself
    reference = stats.bootstrap(
        (x, y), lambda p, q, axis: p.mean(axis=axis) - q.mean(axis=axis), method="percentile",
        n_resamples=20_000, random_state=2,
    ).confidence_interval  # fmt: skip
    assert ours.low == pytest.approx(reference.low, abs=0.03)
    assert ours.high == pytest.approx(reference.high, abs=0.03)
    # every resampled value stays in a position of its own stratum
    signed = np.where(a, -1.0, 1.0) * (np.arange(55) + 1.0)
    stays = bootstrap_interval(
        signed, None, lambda xs, _: ((xs < 0) == a).all(1).astype(float), n_resamples=200, seed=0, strata=labels
    )
    assert (stays.low, stays.high) == (1.0, 1.0)
    with pytest.raises(OptionError, match="one label per value"):
        bootstrap_interval(values, None, lambda xs, _: xs.mean(1), n_resamples=10, strata=labels[:3])
    with pytest.raises(OptionError, match="y=None"):
        bootstrap_interval(x, y, lambda p, q: p.mean(1), n_resamples=10, strata=["a"] * 30)


def test_bootstrap_counts_undefined_resamples():
    # x has one distinct value half the time... constant groups give zero SD -> NaN, left out and counted
    interval = bootstrap_interval(
        [1.0, 1.0], [1.0, 1.0], lambda a, b: standardized_mean_difference_rows(a, b, sd="all"), n_resamples=50, seed=0
    )
    assert interval.n_undefined == 50 and math.isnan(interval.low)


def test_cohens_d_of_two_constant_groups_is_nan():
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.1] * 3))
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.1] * 3, sd="all"))
    assert np.isnan(standardized_mean_difference([0.1] * 3, [0.3] * 3))
    rows = standardized_mean_difference_rows(np.full((2, 3), 0.1), np.full((2, 3), 0.1))
    assert np.isnan(rows).all()
    # a real difference with real spread is untouched (by hand: d = -1 / 1 = -1)
    assert standardized_mean_difference([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]) == pytest.approx(-1.0)

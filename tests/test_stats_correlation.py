"""Correlation, Fisher-z CI and Williams' t against scipy and a published worked example."""

import warnings

import numpy as np
import pytest
from scipy import stats

from assoc.errors import DataError
from assoc.stats.correlations import correlation, williams_t


def test_williams_t_published_example():
    # Howell, D. C. (2007). Statistical Methods for Psychology (6th ed., p. 262), as reproduced in
    # B. Weaver's SPSS syntax (MRC CBU statistics wiki, FAQ/Will): r12 = .80, r13 = .72, r23 = .89,
    # n = 26 gives t = 1.361, df = 23, p = .187.
    res = williams_t(0.80, 0.72, 0.89, 26)
    assert res.t == pytest.approx(1.361, abs=5e-4)
    assert res.df == 23
    assert res.p_value == pytest.approx(0.187, abs=5e-4)
    # the same by hand: |R| = 1 - .64 - .5184 - .7921 + 2*.8*.72*.89 = 0.074780
    det = 1 - 0.64 - 0.5184 - 0.7921 + 2 * 0.8 * 0.72 * 0.89
    t = 0.08 * np.sqrt(25 * 1.89 / (2 * 25 / 23 * det + 0.76**2 * 0.11**3))
    assert res.t == pytest.approx(t, rel=1e-12)


def test_williams_t_is_antisymmetric_and_one_sided():
    a = williams_t(0.5, 0.2, 0.3, 50)
    b = williams_t(0.2, 0.5, 0.3, 50)
    assert a.t == pytest.approx(-b.t)
    assert williams_t(0.5, 0.2, 0.3, 50, alternative="greater").p_value == pytest.approx(a.p_value / 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pearson_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=30)
    y = 0.5 * x + rng.normal(size=30)
    res = correlation(x, y)
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(0.95)
    assert res.r == pytest.approx(ref.statistic, abs=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    greater = correlation(x, y, alternative="greater")
    assert greater.p_value == pytest.approx(stats.pearsonr(x, y, alternative="greater").pvalue, abs=1e-12)


def test_spearman_matches_scipy_and_drops_nan_pairs():
    rng = np.random.default_rng(4)
    x = rng.normal(size=25)
    y = x**3 + rng.normal(size=25)
    x[3] = np.nan
    res = correlation(x, y, method="spearman")
    keep = ~np.isnan(x)
    ref = stats.spearmanr(x[keep], y[keep])
    assert res.n == 24
    assert res.r == pytest.approx(ref.statistic, abs=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    z, se = np.arctanh(res.r), np.sqrt(1.06 / 21)
    assert res.ci_low == pytest.approx(np.tanh(z - 1.959963984540054 * se))


def test_bad_input():
    with pytest.raises(DataError, match="constant"):
        correlation(np.ones(6), np.arange(6.0))
    with pytest.raises(DataError, match="at least 4"):
        correlation(np.arange(3.0), np.arange(3.0))
    with pytest.raises(DataError, match="unknown correlation method"):
        correlation(np.arange(6.0), np.arange(6.0), method="kendall")


def test_fisher_interval_at_r_plus_minus_one_is_its_limit_without_a_warning():
    from assoc.stats.correlations import fisher_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero RuntimeWarning would raise here
        assert fisher_interval(1.0, 0.2) == (1.0, 1.0)
        assert fisher_interval(-1.0, 0.2) == (-1.0, -1.0)
        assert fisher_interval(1.0, 0.2, alternative="greater") == (1.0, 1.0)
        assert fisher_interval(-1.0, 0.2, alternative="less") == (-1.0, -1.0)
        assert fisher_interval(1.0, 0.2, alternative="less") == (-1.0, 1.0)
    # the limit: tanh(atanh(r) -/+ 1.96 se) as r -> 1 approaches 1 from below
    low, high = fisher_interval(1 - 1e-12, 0.2)
    assert low == pytest.approx(1.0, abs=1e-9) and high == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pearson_interval_is_scipys_for_every_alternative(alternative):
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    y = 0.3 * x + rng.normal(size=40)
    ours = correlation(x, y, alternative=alternative, confidence=0.9)
    ref = stats.pearsonr(x, y, alternative=alternative)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert (ours.ci_low, ours.ci_high) == (ci.low, ci.high)
    assert ours.p_value == ref.pvalue and ours.r == ref.statistic


def test_spearman_one_sided_interval_by_hand():
    rng = np.random.default_rng(3)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    res = correlation(x, y, method="spearman", alternative="greater", confidence=0.95)
    z, se = np.arctanh(res.r), np.sqrt(1.06 / 27)
    assert res.ci_low == pytest.approx(np.tanh(z - 1.6448536269514722 * se), abs=1e-12)
    assert res.ci_high == 1.0
    less = correlation(x, y, method="spearman", alternative="less", confidence=0.95)
    assert less.ci_low == -1.0 and less.ci_high == pytest.approx(np.tanh(z + 1.6448536269514722 * se), abs=1e-12)

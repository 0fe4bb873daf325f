"""WEAT/WEFAT statistics on hand-made vectors whose cosines, SDs and p-values are computed on paper."""

import math

import numpy as np
import pytest

from assoc.errors import DataError, OptionError
from assoc.stats.association_tests import association_scores, cosine_matrix, weat, wefat

A = np.array([[1.0, 0.0]])
B = np.array([[0.0, 1.0]])
# s(w, A, B) = cos(w, a) - cos(w, b):  x1 -> 1, x2 -> 0, y1 -> -1, y2 = (3, 4) -> 0.6 - 0.8 = -0.2
X = np.array([[1.0, 0.0], [1.0, 1.0]])
Y = np.array([[0.0, 1.0], [3.0, 4.0]])


def blocks(x, y):
    return cosine_matrix(x, A), cosine_matrix(x, B), cosine_matrix(y, A), cosine_matrix(y, B)


def test_cosine_matrix_by_hand():
    assert cosine_matrix(Y, np.vstack([A, B])) == pytest.approx(np.array([[0.0, 1.0], [0.6, 0.8]]))
    assert np.isnan(cosine_matrix(np.zeros((1, 2)), A)).all()


def test_association_scores():
    xa, xb, ya, yb = blocks(X, Y)
    assert association_scores(xa, xb) == pytest.approx([1.0, 0.0])
    assert association_scores(ya, yb) == pytest.approx([-1.0, -0.2])


def test_weat_sample_and_population_sd_by_hand():
    # s over X ∪ Y = {1, 0, -1, -0.2}: mean -0.05, sum of squares 2.03
    sample = weat(*blocks(X, Y))
    population = weat(*blocks(X, Y), ddof=0)
    assert sample.statistic == pytest.approx(2.2)
    assert sample.effect_size == pytest.approx(1.1 / math.sqrt(2.03 / 3))
    assert population.effect_size == pytest.approx(1.1 / math.sqrt(2.03 / 4))
    assert (sample.sd, population.sd) == ("sample", "population")
    # the observed partition has the largest S of the 6 partitions of {1, 0, -1, -0.2}
    assert sample.p_method == "exact" and sample.n_permutations == 6
    assert sample.p_value == pytest.approx(1 / 6)


def test_weat_with_a_tie():
    # y2 = (2, 2) has s = 0 like x2: partitions {1,0} and {1,0'} both give S = 2, so p = 2/6
    result = weat(*blocks(X, np.array([[0.0, 1.0], [2.0, 2.0]])))
    assert result.statistic == pytest.approx(2.0)
    assert result.p_value == pytest.approx(2 / 6)


def test_weat_bootstrap_matches_a_plain_loop():
    rng = np.random.default_rng(0)
    sim = [rng.normal(size=shape) for shape in [(5, 4), (5, 3), (6, 4), (6, 3)]]
    result = weat(*sim, n_bootstrap=300, seed=11)
    draws = np.random.default_rng([11, 1])
    ix, iy = draws.integers(0, 5, (300, 5)), draws.integers(0, 6, (300, 6))
    ia, ib = draws.integers(0, 4, (300, 4)), draws.integers(0, 3, (300, 3))
    ds = []
    for k in range(300):
        s_x = [sim[0][i, ia[k]].mean() - sim[1][i, ib[k]].mean() for i in ix[k]]
        s_y = [sim[2][i, ia[k]].mean() - sim[3][i, ib[k]].mean() for i in iy[k]]
        ds.append((np.mean(s_x) - np.mean(s_y)) / np.std(s_x + s_y, ddof=1))
    low, high = np.quantile(ds, [0.025, 0.975])
    assert result.ci.low == pytest.approx(low) and result.ci.high == pytest.approx(high)


def test_wefat_by_hand():
    # cos(w, A) = [1, .5], cos(w, B) = [0, .5]: s = 0.5; SD of {1, .5, 0, .5}: sample sqrt(.5/3), population sqrt(.5/4)
    # partitions of {1, .5, 0, .5'} into 2 + 2: mean differences .5, 0, .5, -.5, 0, -.5
    sim_a, sim_b = np.array([[1.0, 0.5]]), np.array([[0.0, 0.5]])
    result = wefat(sim_a, sim_b)  # default: one-sided "greater", ValNorm's WEFAT p
    assert result.alternative == "greater"
    assert result.association == pytest.approx([0.5])
    assert result.effect_size == pytest.approx([0.5 / math.sqrt(0.5 / 3)])
    assert result.p_value == pytest.approx([2 / 6]) and result.p_method == "exact"
    two_sided = wefat(sim_a, sim_b, alternative="two-sided")
    assert two_sided.p_value == pytest.approx([4 / 6])  # 2 * min(2/6, 6/6)
    assert wefat(sim_a, sim_b, ddof=0).effect_size == pytest.approx([0.5 / math.sqrt(0.5 / 4)])


def test_wefat_auto_switches_to_normal():
    rng = np.random.default_rng(1)
    result = wefat(rng.normal(size=(3, 25)), rng.normal(size=(3, 25)))
    assert result.p_method == "normal" and result.n_permutations == 0


def test_nan_is_an_error():
    with pytest.raises(DataError, match="NaN"):
        weat(np.array([[np.nan]]), np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_wefat_normal_p_is_the_scalar_normal_approximation(alternative):
    from assoc.stats.permutation import normal_approximation_test

    rng = np.random.default_rng(2)
    sim_a, sim_b = rng.normal(size=(4, 6)), rng.normal(size=(4, 5))
    sim_a[3] = sim_b[3, 0]
    sim_b[3] = sim_b[3, 0]  # a constant row: p = 1
    result = wefat(sim_a, sim_b, p_method="normal", alternative=alternative)
    expected = [normal_approximation_test(a, b, alternative=alternative).p_value for a, b in zip(sim_a, sim_b)]
    assert result.p_value == pytest.approx(expected)
    assert result.p_value[3] == 1.0


def test_wefat_several_words_by_hand():
    # Word 1: cos with A = [3, 4], with B = [1, 2] (any association values): s = 2, SD of {3, 4, 1, 2}
    # sample sqrt(5/3); partitions of A ∪ B give mean differences 2, -1, 0, 0, 1, -2: p = 1/6.
    # Word 2: the hand case above, s = .5, p = 2/6. Word 3: constant values: SD 0, d undefined, p = 1.
    sim_a = np.array([[3.0, 4.0], [1.0, 0.5], [2.0, 2.0]])
    sim_b = np.array([[1.0, 2.0], [0.0, 0.5], [2.0, 2.0]])
    result = wefat(sim_a, sim_b)
    assert result.association == pytest.approx([2.0, 0.5, 0.0])
    assert result.effect_size[:2] == pytest.approx([2 / math.sqrt(5 / 3), 0.5 / math.sqrt(0.5 / 3)])
    assert np.isnan(result.effect_size[2])
    assert result.p_value == pytest.approx([1 / 6, 2 / 6, 1.0])
    assert result.n_permutations == 6


def test_wefat_sampled_and_exact_limit():
    # 20 + 20 attribute values, A's all above B's for word 0 and all below for word 1:
    # only the observed partition reaches word 0's value, so p = (1 + 0) / (1 + 999); word 1 has p = 1.
    row = np.concatenate([np.arange(20.0) + 100, np.arange(20.0)])
    sim = np.vstack([row, row[::-1]])
    result = wefat(sim[:, :20], sim[:, 20:], p_method="sampled", n_resamples=999, seed=3)
    assert result.p_method == "sampled" and result.n_permutations == 999
    assert result.p_value == pytest.approx([1 / 1000, 1.0])
    with pytest.raises(OptionError, match="exact_limit"):
        wefat(sim[:, :20], sim[:, 20:], p_method="exact")
    with pytest.raises(OptionError, match="p_method"):
        wefat(sim[:, :20], sim[:, 20:], p_method="bootstrap")


def test_negative_seed_is_an_option_error_for_bootstrap_and_wefat():
    from assoc.errors import OptionError
    from assoc.stats.association_tests import weat, wefat

    rng = np.random.default_rng(0)
    blocks = [rng.normal(size=(3, 2)) for _ in range(4)]
    with pytest.raises(OptionError, match="seed"):
        weat(*blocks, seed=-1, n_bootstrap=10)  # exact test: only the bootstrap used the seed
    with pytest.raises(OptionError, match="seed"):
        wefat(rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), p_method="sampled", seed=-1, n_resamples=10)


def test_weat_bootstrap_accepts_a_generator_seed():
    from assoc.stats.association_tests import weat

    rng = np.random.default_rng(1)
    sims = [rng.normal(size=(4, 3)) for _ in range(4)]
    result = weat(*sims, seed=np.random.default_rng(0), n_bootstrap=10)
    assert result.ci is not None and result.ci.n_resamples == 10
    again = weat(*sims, seed=np.random.default_rng(0), n_bootstrap=10)
    assert (result.ci.low, result.ci.high) == (again.ci.low, again.ci.high)  # reproducible from the seed

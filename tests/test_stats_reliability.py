"""Cronbach's alpha against pingouin.cronbach_alpha and a hand computation."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assoc.errors import DataError
from assoc.stats.reliability import cronbach_alpha

pg = pytest.importorskip("pingouin")


@pytest.mark.parametrize("seed,n,k", [(0, 30, 4), (1, 9, 2), (2, 100, 12)])
def test_alpha_matches_pingouin(seed, n, k):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 1)) + rng.normal(scale=1.3, size=(n, k))
    ref_alpha, ref_ci = pg.cronbach_alpha(pd.DataFrame(x))
    res = cronbach_alpha(x)
    assert res.alpha == pytest.approx(ref_alpha, abs=1e-12)
    # pingouin rounds its CI to 3 decimals
    assert res.ci_low == pytest.approx(ref_ci[0], abs=5e-4 + 1e-12)
    assert res.ci_high == pytest.approx(ref_ci[1], abs=5e-4 + 1e-12)
    assert (res.n_cases, res.n_items) == (n, k)


def test_alpha_by_hand():
    # items [1,2,3,4] and [2,2,4,5]: var 1.6667, 2.25; cov = 1.8333; total var = 1.6667+2.25+2*1.8333 = 7.5833
    x = np.array([[1, 2], [2, 2], [3, 4], [4, 5]], dtype=float)
    v1, v2, c = 5 / 3, 2.25, 11 / 6
    alpha = 2 * (1 - (v1 + v2) / (v1 + v2 + 2 * c))
    res = cronbach_alpha(x)
    assert res.alpha == pytest.approx(alpha)
    r = c / np.sqrt(v1 * v2)
    assert res.mean_inter_item_r == pytest.approx(r)
    assert res.standardized_alpha == pytest.approx(2 * r / (1 + r))
    assert res.ci_low == pytest.approx(1 - (1 - alpha) * stats.f.ppf(0.975, 3, 3))
    assert res.ci_high == pytest.approx(1 - (1 - alpha) * stats.f.ppf(0.025, 3, 3))


def test_bad_input():
    with pytest.raises(DataError, match="at least 2 items"):
        cronbach_alpha(np.ones((4, 1)))
    with pytest.raises(DataError, match="NaN"):
        cronbach_alpha(np.array([[1.0, np.nan], [2.0, 3.0], [1.0, 1.0]]))


def test_pairwise_deletion_matches_pingouin_on_its_missing_data():
    # pingouin's own example: cronbach_wide_missing, nan_policy="pairwise" (its default) -> 0.73
    data = pg.read_dataset("cronbach_wide_missing")
    ref_alpha, ref_ci = pg.cronbach_alpha(data=data, nan_policy="pairwise")
    res = cronbach_alpha(data.to_numpy(dtype=float), missing="pairwise")
    assert res.alpha == pytest.approx(ref_alpha, abs=1e-12) and round(res.alpha, 2) == 0.73
    assert [res.ci_low, res.ci_high] == pytest.approx(list(ref_ci), abs=5e-4 + 1e-12)
    assert res.n_cases == len(data) and res.missing == "pairwise"
    # listwise stays the default, and drops the incomplete cases first (psych::alpha(use="complete.obs"))
    complete = data.dropna()
    assert cronbach_alpha(complete.to_numpy(dtype=float)).alpha == pytest.approx(
        pg.cronbach_alpha(data=data, nan_policy="listwise")[0], abs=1e-12
    )


def test_pairwise_deletion_by_hand():
    # item 1: 1, 2, 3, 4; item 2: 2, 2, 4, NaN -> var1 = 5/3 (all four), var2 = 4/3, cov over cases 1-3 = 1
    x = np.array([[1, 2], [2, 2], [3, 4], [4, np.nan]], dtype=float)
    v1, v2, c = 5 / 3, 4 / 3, 1.0
    res = cronbach_alpha(x, missing="pairwise")
    assert res.alpha == pytest.approx(2 * (1 - (v1 + v2) / (v1 + v2 + 2 * c)))
    # the correlation is over the shared cases: items 1-3 of item 1 have variance 1
    assert res.mean_inter_item_r == pytest.approx(1.0 / np.sqrt(1.0 * v2))
    assert res.n_cases == 4
    with pytest.raises(DataError, match="NaN"):
        cronbach_alpha(x)

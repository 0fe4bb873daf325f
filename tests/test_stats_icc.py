"""ICC forms against pingouin.intraclass_corr (an independent implementation via its ANOVA)."""

import numpy as np
import pandas as pd
import pytest

from assoc.errors import DataError
from assoc.stats.icc import intraclass_correlations, ratings_matrix

pg = pytest.importorskip("pingouin")

# pingouin's row labels for McGraw & Wong's forms
PINGOUIN_LABEL = {
    "ICC(1)": "ICC(1,1)",
    "ICC(A,1)": "ICC(A,1)",
    "ICC(C,1)": "ICC(C,1)",
    "ICC(k)": "ICC(1,k)",
    "ICC(A,k)": "ICC(A,k)",
    "ICC(C,k)": "ICC(C,k)",
}


def _random_ratings(seed, n, k):
    rng = np.random.default_rng(seed)
    item_effect = rng.normal(0, 1.0, size=(n, 1))
    rater_bias = rng.normal(0, 0.7, size=(1, k))
    return item_effect + rater_bias + rng.normal(0, 0.8, size=(n, k))


@pytest.mark.parametrize("seed,n,k", [(0, 12, 3), (1, 40, 5), (2, 7, 2), (3, 25, 9)])
def test_all_forms_match_pingouin(seed, n, k, monkeypatch):
    # pingouin rounds its output tables unless told not to
    monkeypatch.setitem(pg.options, "round", None)
    monkeypatch.setitem(pg.options, "round.column.CI95", None)
    x = _random_ratings(seed, n, k)
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(n) for j in range(k)], columns=["item", "rater", "score"])
    ref = pg.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")
    ours = {r.label: r for r in intraclass_correlations(x)}
    assert len(ours) == 6
    for label, row in ours.items():
        expected = ref.loc[PINGOUIN_LABEL[label]]
        assert row.icc == pytest.approx(expected["ICC"], abs=1e-9)
        assert row.f == pytest.approx(expected["F"], abs=1e-9, rel=1e-9)
        assert row.df1 == expected["df1"] and row.df2 == expected["df2"]
        assert row.p_value == pytest.approx(expected["pval"], abs=1e-9)
        assert row.ci_low == pytest.approx(expected["CI95"][0], abs=1e-9)
        assert row.ci_high == pytest.approx(expected["CI95"][1], abs=1e-9)
        assert (row.n_items, row.n_raters) == (n, k)


def test_hand_computed_mean_squares_two_by_two():
    # x = [[1, 2], [3, 5]]: grand 2.75; row means 1.5, 4 -> SSR = 2*(1.25^2*2) = 6.25;
    # col means 2, 3.5 -> SSC = 2*(0.75^2*2) = 2.25; SST = 3.0625+.5625+.0625+5.0625 = 8.75;
    # SSE = 0.25. MSR = 6.25, MSC = 2.25, MSE = 0.25.
    res = {r.label: r for r in intraclass_correlations(np.array([[1.0, 2.0], [3.0, 5.0]]))}
    assert res["ICC(C,1)"].icc == pytest.approx((6.25 - 0.25) / (6.25 + 0.25))
    assert res["ICC(A,1)"].icc == pytest.approx((6.25 - 0.25) / (6.25 + 0.25 + 2 / 2 * (2.25 - 0.25)))
    assert res["ICC(C,k)"].icc == pytest.approx(6 / 6.25)
    assert res["ICC(C,1)"].f == pytest.approx(25.0)


def test_other_confidence_level_matches_exact_f_interval():
    x = _random_ratings(5, 20, 4)
    res = {r.label: r for r in intraclass_correlations(x, confidence=0.90)}
    from scipy import stats

    c = res["ICC(C,1)"]
    fl = c.f / stats.f.ppf(0.95, 19, 57)
    fu = c.f * stats.f.ppf(0.95, 57, 19)
    assert c.ci_low == pytest.approx((fl - 1) / (fl + 3))
    assert c.ci_high == pytest.approx((fu - 1) / (fu + 3))
    wider = {r.label: r for r in intraclass_correlations(x, confidence=0.99)}["ICC(A,1)"]
    assert wider.ci_low < res["ICC(A,1)"].ci_low and wider.ci_high > res["ICC(A,1)"].ci_high


def test_ratings_matrix_drops_incomplete_items_and_counts_them():
    long = pd.DataFrame(
        {
            "target": ["a", "a", "b", "b", "c", "c", "d"],
            "model": ["m1", "m2"] * 3 + ["m1"],
            "value": [1.0, 2.0, np.nan, 3.0, 4.0, 5.0, 6.0],
        }
    )
    wide, dropped = ratings_matrix(long, items=["target"], raters=["model"])
    assert list(wide.index) == ["a", "c"]
    assert dropped == 2  # b has a NaN, d lacks m2


def test_ratings_matrix_rejects_duplicated_cells():
    long = pd.DataFrame({"target": ["a", "a"], "model": ["m1", "m1"], "value": [1.0, 2.0]})
    with pytest.raises(DataError, match="do not identify one measurement"):
        ratings_matrix(long, items=["target"], raters=["model"])


def test_too_few_items_or_raters():
    with pytest.raises(DataError, match="at least 2 raters"):
        intraclass_correlations(np.ones((5, 1)))
    with pytest.raises(DataError, match="at least 2 complete items"):
        intraclass_correlations(np.ones((1, 3)))


def test_duplicated_cells_error_names_the_columns_that_differ_not_the_raters():
    table = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "context": ["q1", "q2", "q1", "q2"],
            "target": ["t", "t", "t", "t"],
            "value": [1.0, 2.0, 3.0, 4.0],
        }
    )
    with pytest.raises(DataError, match=r"differ in context\b") as caught:
        ratings_matrix(table, items=["target"], raters=["model"])
    assert "e.g. model" not in str(caught.value)

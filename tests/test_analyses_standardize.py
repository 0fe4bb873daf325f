"""The standardize analysis against scipy.stats.zscore within groups."""

import warnings

import numpy as np
import pandas as pd
from scipy import stats

import assoc
from assoc.stats.standardize import zscore, zscore_within
from assoc.table.schema import normalise, validate_table


def make_table():
    rng = np.random.default_rng(0)
    rows = [
        {
            "scorer": "fmat",
            "model": m,
            "context": c,
            "target": f"t{i}",
            "measure": "lpr",
            "value": rng.normal(loc=5 if m == "a" else -2, scale=3),
        }
        for m in ["a", "b"]
        for c in ["q1", "q2"]
        for i in range(6)
    ]
    return normalise(pd.DataFrame(rows))


def test_zscores_within_model_and_query_match_scipy():
    table = make_table()
    table.loc[3, "value"] = np.nan
    out = assoc.analyze("standardize", table)
    validate_table(out)  # still an association table
    assert set(out["measure"]) == {"lpr_z"}
    for _, part in table.groupby(["model", "context"]):
        expected = stats.zscore(part["value"], ddof=1, nan_policy="omit")
        got = out.loc[part.index, "value"]
        np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    assert out.loc[0, "raw_value"] == table.loc[0, "value"]
    assert out.loc[0, "n_in_group"] == 5 and out.loc[20, "n_in_group"] == 6


def test_whole_table_population_sd_and_constant_group():
    table = make_table()
    out = assoc.analyze("standardize", table, within=[], ddof=0)
    np.testing.assert_allclose(out["value"], stats.zscore(table["value"], ddof=0), rtol=1e-12)
    table.loc[table["model"] == "b", "value"] = 1.0
    const = assoc.analyze("standardize", table, within=["model"])
    assert const.loc[const["model"] == "b", "value"].isna().all()


def test_zscore_of_constant_data_is_nan_like_scipy():
    from scipy import stats

    for values in ([0.1] * 3, [1 / 3] * 7, [1e300] * 4, [5.0] * 4):
        assert np.isnan(zscore(np.array(values))).all(), values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert np.isnan(stats.zscore(values, ddof=1)).all()  # scipy >= 1.15: std <= eps * |mean| is zero
    # scipy's tolerance (eps * |mean|) misses this one (it gives -0.99 for all 50); ours
    # (n * eps * max|x|, the rounding bound of the mean) does not
    assert np.isnan(zscore(np.array([-2.7] * 50))).all()


def test_zscore_keeps_tiny_but_real_spread():
    from scipy import stats

    x = np.array([1.0, 1.0 + 1e-9, 1.0 + 2e-9])
    np.testing.assert_allclose(zscore(x), stats.zscore(x, ddof=1), rtol=1e-6)
    y = np.array([0.0, 1e-150, 2e-150])  # tiny in absolute terms, large relative to its scale
    np.testing.assert_allclose(zscore(y), [-1.0, 0.0, 1.0])


def test_zscore_within_constant_group_is_nan():
    frame = pd.DataFrame({"g": ["a"] * 3 + ["b"] * 3, "value": [0.1] * 3 + [1.0, 2.0, 3.0]})
    z = zscore_within(frame, within=["g"])
    assert z[:3].isna().all()
    np.testing.assert_allclose(z[3:], [-1.0, 0.0, 1.0])

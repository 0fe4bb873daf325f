"""The standardize analysis against scipy.stats.zscore within groups."""

import numpy as np
import pandas as pd
from scipy import stats

import assoc
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

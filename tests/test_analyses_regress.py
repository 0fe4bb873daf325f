"""The regress analysis: aggregation, criterion join and nested models, against numpy by hand."""

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError
from assoc.table.schema import normalise

JOBS = [f"job{i}" for i in range(25)]


def make_inputs(seed=0):
    rng = np.random.default_rng(seed)
    share = rng.uniform(0, 100, size=len(JOBS))
    rows = [
        {
            "scorer": "fmat",
            "model": m,
            "context": c,
            "target": j,
            "measure": "lpr",
            "value": 0.02 * s - 0.0002 * s**2 + rng.normal(scale=0.3),
        }
        for m in ["m1", "m2"]
        for c in ["q1", "q2", "q3"]
        for j, s in zip(JOBS, share)
    ]
    crit = pd.DataFrame({"occupation": JOBS, "pct_male": share})
    return normalise(pd.DataFrame(rows)), crit


def test_nested_regressions_per_model_on_target_means():
    table, crit = make_inputs()
    result = assoc.analyze(
        "regress",
        table,
        formula="value ~ pct_male",
        nested=["value ~ pct_male + I(pct_male**2)"],
        aggregate=["model", "target"],
        by=["measure", "model"],
        criterion=crit,
        criterion_key="occupation",
    )
    for model in ["m1", "m2"]:
        means = table[table.model == model].groupby("target")["value"].mean()
        data = crit.set_index("occupation").join(means)
        y, x = data["value"].to_numpy(), data["pct_male"].to_numpy()
        n = len(y)
        X1 = np.column_stack([np.ones(n), x])
        X2 = np.column_stack([np.ones(n), x, x**2])
        rss = []
        for X in (X1, X2):
            beta, *_ = np.linalg.lstsq(X, y, rcond=None)
            rss.append(np.sum((y - X @ beta) ** 2))
        sst = np.sum((y - y.mean()) ** 2)
        part = result[result["model"] == model]
        r2 = part[(part.kind == "fit") & (part.term == "r2")]["estimate"].to_numpy()
        np.testing.assert_allclose(r2, [1 - rss[0] / sst, 1 - rss[1] / sst], rtol=1e-8)
        cmp = part[part.kind == "comparison"].iloc[0]
        assert cmp["estimate"] == pytest.approx((rss[0] - rss[1]) / sst, rel=1e-8)
        assert cmp["statistic"] == pytest.approx((rss[0] - rss[1]) / (rss[1] / (n - 3)), rel=1e-8)
        assert (cmp["df"], cmp["df2"], cmp["n_obs"]) == (1, n - 3, 25)
        quad = part[(part.kind == "coef") & (part.term == "I(pct_male ** 2)")]
        assert len(quad) == 1 and quad["estimate"].iloc[0] == pytest.approx(
            np.linalg.lstsq(X2, y, rcond=None)[0][2], rel=1e-8
        )


def test_regress_on_rows_and_errors():
    table, _ = make_inputs(1)
    result = assoc.analyze("regress", table, formula="value ~ C(model)")
    coef = result[(result.kind == "coef") & (result.term == "C(model)[T.m2]")].iloc[0]
    means = table.groupby("model")["value"].mean()
    assert coef["estimate"] == pytest.approx(means["m2"] - means["m1"], rel=1e-8)
    assert coef["n_obs"] == 150
    with pytest.raises(DataError, match="not nested"):
        assoc.analyze("regress", table, formula="value ~ C(model)", nested=["value ~ C(context)"])

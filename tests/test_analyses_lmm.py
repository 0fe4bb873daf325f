"""The lmm analysis on an association table, against direct statsmodels fits."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

import assoc
from assoc.errors import DataError, OptionError
from assoc.table.schema import normalise


def make_table(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for m, bias in zip([f"m{i}" for i in range(5)], rng.normal(size=5)):
        for group, shift in [("male", 0.6), ("female", 0.0)]:
            for i in range(12):
                for c in ["q1", "q2"]:
                    rows.append(
                        {
                            "scorer": "fmat",
                            "model": m,
                            "context": c,
                            "target": f"job{i}",
                            "attribute_group": group,
                            "measure": "lpr",
                            "value": shift + bias + rng.normal(scale=0.8),
                        }
                    )
    table = normalise(pd.DataFrame(rows))
    table.loc[7, "value"] = np.nan
    return table


def test_lmm_matches_direct_fit_and_compares_models():
    table = make_table()
    result = assoc.analyze("lmm", table, formula="value ~ 1", nested=["value ~ attribute_group"])
    data = table.dropna(subset=["value"])
    direct = smf.mixedlm("value ~ attribute_group", data, groups=data["model"]).fit(reml=True)
    fixed = result[(result["kind"] == "fixed") & (result["formula"] == "value ~ attribute_group")].set_index("term")
    np.testing.assert_allclose(fixed["estimate"], direct.fe_params, rtol=1e-10)
    np.testing.assert_allclose(fixed["se"], direct.bse_fe, rtol=1e-10)
    assert set(fixed["method"]) == {"REML"} and set(fixed["n_obs"]) == {239}
    assert set(fixed["n_rows_dropped"]) == {1} and set(fixed["n_groups"]) == {"model=5"}
    var = result[(result["kind"] == "variance") & (result["formula"] == "value ~ attribute_group")]
    assert var.set_index("term").loc["model", "estimate"] == pytest.approx(direct.cov_re.iloc[0, 0], rel=1e-10)

    lrt = result[result["kind"] == "lrt"].iloc[0]
    ml0 = smf.mixedlm("value ~ 1", data, groups=data["model"]).fit(reml=False)
    ml1 = smf.mixedlm("value ~ attribute_group", data, groups=data["model"]).fit(reml=False)
    assert lrt["statistic"] == pytest.approx(2 * (ml1.llf - ml0.llf), rel=1e-8)
    assert lrt["df"] == 1 and lrt["p_value"] == pytest.approx(stats.chi2.sf(2 * (ml1.llf - ml0.llf), 1), rel=1e-6)
    assert lrt["delta_aic"] == pytest.approx(ml1.aic - ml0.aic, rel=1e-8)
    aic = result[(result["kind"] == "fit") & (result["term"] == "AIC")]
    assert list(aic["estimate"]) == pytest.approx([ml0.aic, ml1.aic], rel=1e-10)
    r2 = result[result["kind"] == "r2"].set_index(["formula", "term"])["estimate"]
    assert 0 <= r2[("value ~ attribute_group", "marginal")] <= r2[("value ~ attribute_group", "conditional")] <= 1
    assert r2[("value ~ 1", "marginal")] == pytest.approx(0.0, abs=1e-12)


def test_lmm_with_criterion_predictor_and_ml():
    table = make_table(1)
    criterion = {f"job{i}": float(i) for i in range(12)}
    result = assoc.analyze("lmm", table, formula="value ~ criterion", criterion=criterion, reml=False)
    data = table.dropna(subset=["value"]).assign(criterion=lambda d: d["target"].str[3:].astype(float))
    direct = smf.mixedlm("value ~ criterion", data, groups=data["model"]).fit(reml=False)
    fixed = result[result["kind"] == "fixed"].set_index("term")
    np.testing.assert_allclose(fixed["estimate"], direct.fe_params, rtol=1e-10)
    assert set(result["method"]) == {"ML"}


def test_lmm_errors():
    table = make_table()
    with pytest.raises(OptionError, match="formula"):
        assoc.analyze("lmm", table)
    with pytest.raises(OptionError, match="needs '~'"):
        assoc.analyze("lmm", table, formula="value")
    with pytest.raises(DataError, match="cannot fit"):
        assoc.analyze("lmm", table, formula="value ~ nosuchcolumn")
    with pytest.raises(DataError, match="more parameters"):
        assoc.analyze("lmm", table, formula="value ~ attribute_group", nested=["value ~ 1"])


def test_convergence_problems_appear_in_the_output_and_provenance():
    # no model effect at all: the model variance is on the boundary (0); statsmodels warns
    rng = np.random.default_rng(0)
    cells = [(c, t) for c in ["q1", "q2"] for t in range(8)]
    truth = {cell: rng.normal() for cell in cells}
    rows = [
        {
            "scorer": "fmat",
            "model": m,
            "context": c,
            "target": f"t{t}",
            "target_group": "A" if t < 4 else "B",
            "measure": "lpr",
            "value": truth[(c, t)] + rng.normal(scale=0.5),
        }
        for m in ["m1", "m2", "m3"]
        for (c, t) in cells
    ]
    with pytest.warns(RuntimeWarning, match="mixed model 'value ~ target_group'"):
        result = assoc.analyze("lmm", normalise(pd.DataFrame(rows)), formula="value ~ target_group")
    fixed = result[result["kind"] == "fixed"]
    assert fixed["warnings"].str.contains("boundary").all()
    assert fixed["warnings"].str.contains("optimiser default \\(bfgs/lbfgs/cg\\) failed").all()
    assert set(result["converged"]) == {True}
    assert any("boundary" in w for w in result.attrs["assoc"]["warnings"])

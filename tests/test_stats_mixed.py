"""MixedLM helpers against direct statsmodels fits and hand computations of R^2 and the LRT."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from assoc.errors import DataError
from assoc.stats.mixed import fit_mixed, likelihood_ratio_test, model_columns


def make_data(seed=0, n_models=6, n_per=30):
    rng = np.random.default_rng(seed)
    model = np.repeat([f"m{i}" for i in range(n_models)], n_per)
    frame = np.tile([f"f{i}" for i in range(5)], n_models * n_per // 5)
    x = rng.normal(size=model.size)
    group = np.where(rng.random(model.size) < 0.5, "a", "b")
    u = dict(zip(np.unique(model), rng.normal(scale=1.0, size=n_models)))
    v = dict(zip(np.unique(frame), rng.normal(scale=0.5, size=5)))
    y = 0.5 + 0.8 * x + 0.4 * (group == "b") + np.array([u[m] + v[f] for m, f in zip(model, frame)])
    return pd.DataFrame(
        {"value": y + rng.normal(scale=0.7, size=model.size), "x": x, "g": group, "model": model, "frame": frame}
    )


def test_fixed_effects_and_variances_match_direct_statsmodels_fit():
    data = make_data()
    fit = fit_mixed(data, "value ~ x + g", ["model"])
    direct = smf.mixedlm("value ~ x + g", data, groups=data["model"]).fit(reml=True)
    fe = fit.fixed_effects().set_index("term")
    np.testing.assert_allclose(fe["estimate"], direct.fe_params, rtol=1e-10)
    np.testing.assert_allclose(fe["se"], direct.bse_fe, rtol=1e-10)
    np.testing.assert_allclose(fe["p_value"], direct.pvalues[direct.fe_params.index], rtol=1e-8)
    ci = direct.conf_int().loc[direct.fe_params.index]
    np.testing.assert_allclose(fe[["ci_low", "ci_high"]].to_numpy(), ci.to_numpy(), rtol=1e-8)
    comps = fit.variance_components()
    assert comps["model"] == pytest.approx(direct.cov_re.iloc[0, 0], rel=1e-10)
    assert comps["residual"] == pytest.approx(direct.scale, rel=1e-10)
    # Nakagawa & Schielzeth R^2 by hand from the direct fit
    var_f = np.var(direct.model.exog @ direct.fe_params.to_numpy(), ddof=1)
    total = var_f + direct.cov_re.iloc[0, 0] + direct.scale
    marginal, conditional = fit.r_squared()
    assert marginal == pytest.approx(var_f / total, rel=1e-10)
    assert conditional == pytest.approx((var_f + direct.cov_re.iloc[0, 0]) / total, rel=1e-10)
    assert fit.converged and fit.n_groups == {"model": 6}


def test_lrt_and_aic_from_ml_fits():
    data = make_data(1)
    small = fit_mixed(data, "value ~ x", ["model"], reml=False)
    big = fit_mixed(data, "value ~ x + g", ["model"], reml=False)
    d_small = smf.mixedlm("value ~ x", data, groups=data["model"]).fit(reml=False)
    d_big = smf.mixedlm("value ~ x + g", data, groups=data["model"]).fit(reml=False)
    lrt = likelihood_ratio_test(small, big)
    chi2 = 2 * (d_big.llf - d_small.llf)
    assert lrt.chi2 == pytest.approx(chi2, rel=1e-8) and lrt.df == 1
    assert lrt.p_value == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-6)
    assert big.aic() == pytest.approx(d_big.aic, rel=1e-10)
    assert big.bic() == pytest.approx(d_big.bic, rel=1e-10)
    assert lrt.delta_aic == pytest.approx(d_big.aic - d_small.aic, rel=1e-8)
    with pytest.raises(DataError, match="more parameters"):
        likelihood_ratio_test(big, small)
    with pytest.raises(DataError, match="maximum-likelihood"):
        likelihood_ratio_test(fit_mixed(data, "value ~ x", ["model"]), big)


def test_crossed_random_intercepts_match_variance_component_fit():
    data = make_data(2)
    fit = fit_mixed(data, "value ~ x", ["model", "frame"])
    direct = smf.mixedlm(
        "value ~ x",
        data.assign(one=1),
        groups="one",
        re_formula="0",
        vc_formula={"model": "0 + C(model)", "frame": "0 + C(frame)"},
    ).fit(reml=True)
    np.testing.assert_allclose(fit.fixed_effects()["estimate"], direct.fe_params, rtol=1e-8)
    comps = fit.variance_components()
    assert [comps["model"], comps["frame"]] == pytest.approx(list(direct.vcomp), rel=1e-8)


@pytest.mark.slow
def test_convergence_problems_are_reported_not_swallowed():
    data = make_data(3)
    data["value"] = data["x"] * 2.0  # no residual variance and no group effect: a degenerate fit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fit_mixed(data, "value ~ x", ["model"])
    assert fit.warnings  # recorded with the fit ...
    assert any("mixed model" in str(w.message) for w in caught)  # ... and re-issued


def test_model_columns_and_errors():
    assert model_columns("value ~ C(attribute_group) * x", ["value", "attribute_group", "x", "model"]) == [
        "value",
        "attribute_group",
        "x",
    ]
    with pytest.raises(DataError, match="at least 2 groups"):
        fit_mixed(make_data().assign(model="one"), "value ~ x", ["model"])
    with pytest.raises(DataError, match="cannot fit"):
        fit_mixed(make_data(), "value ~ nonexistent", ["model"])


def test_boundary_fit_falls_back_to_derivative_free_optimiser():
    # no model effect at all: the random-intercept variance is on the boundary (0), where
    # statsmodels' gradient optimisers hit a singular matrix for this data set
    rng = np.random.default_rng(0)
    cells = [(c, t) for c in ["q1", "q2"] for t in range(8)]
    truth = {cell: rng.normal() for cell in cells}
    rows = [
        {"model": m, "g": "A" if t < 4 else "B", "value": truth[(c, t)] + rng.normal(scale=0.5)}
        for m in ["m1", "m2", "m3"]
        for (c, t) in cells
    ]
    data = pd.DataFrame(rows)
    with pytest.raises(np.linalg.LinAlgError):
        smf.mixedlm("value ~ g", data, groups=data["model"]).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_mixed(data, "value ~ g", ["model"])
        direct = smf.mixedlm("value ~ g", data, groups=data["model"]).fit(method="powell")
    assert any("optimiser default (bfgs/lbfgs/cg) failed" in w for w in fit.warnings)
    assert any("boundary" in w for w in fit.warnings)
    np.testing.assert_allclose(fit.fixed_effects()["estimate"], direct.fe_params, rtol=1e-8)
    assert fit.variance_components()["model"] < 1e-6

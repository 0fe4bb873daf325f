"""Random slopes in assoc.stats.mixed: against direct statsmodels fits and a balanced design solved by hand."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from assoc.errors import DataError
from assoc.stats.mixed import fit_mixed, random_slopes


def simulated(seed=0, groups=12, per_group=10):
    """y = 1 + 0.5 x + 0.4 [c == b] + b0_g + b1_g x + e, with a correlated random intercept and slope per group."""
    rng = np.random.default_rng(seed)
    g = np.repeat([f"g{i:02d}" for i in range(groups)], per_group)
    x = np.tile(np.linspace(-1, 1, per_group), groups)
    c = np.where(rng.random(g.size) < 0.5, "a", "b")
    effects = rng.multivariate_normal([0, 0], [[1.0, 0.3], [0.3, 0.4]], size=groups)
    index = np.repeat(np.arange(groups), per_group)
    y = 1 + 0.5 * x + 0.4 * (c == "b") + effects[index, 0] + effects[index, 1] * x
    return pd.DataFrame({"value": y + rng.normal(scale=0.3, size=g.size), "x": x, "c": c, "g": g})


def test_random_slopes_match_a_direct_statsmodels_fit():
    data = simulated()
    fit = fit_mixed(data, "value ~ x + c", ["g"], slopes={"g": "x"})
    direct = smf.mixedlm("value ~ x + c", data, groups=data["g"], re_formula="~x").fit(reml=True)
    fe = fit.fixed_effects().set_index("term")
    np.testing.assert_allclose(fe["estimate"], direct.fe_params, rtol=1e-10)
    np.testing.assert_allclose(fe["se"], direct.bse_fe, rtol=1e-10)
    ci = direct.conf_int().loc[direct.fe_params.index]
    np.testing.assert_allclose(fe[["ci_low", "ci_high"]].to_numpy(), ci.to_numpy(), rtol=1e-8)
    assert fit.random_terms == ("Intercept", "x")
    cov = direct.cov_re.to_numpy()
    assert fit.variance_components() == pytest.approx({"g": cov[0, 0], "g: x": cov[1, 1], "residual": direct.scale})
    assert fit.random_covariances() == pytest.approx({"g: cov(Intercept, x)": cov[0, 1]})
    # k = 3 fixed effects + 3 (co)variances + the residual variance, as statsmodels counts for AIC
    ml = fit_mixed(data, "value ~ x + c", ["g"], slopes={"g": "x"}, reml=False)
    direct_ml = smf.mixedlm("value ~ x + c", data, groups=data["g"], re_formula="~x").fit(reml=False)
    assert ml.n_params == 7
    assert ml.loglik == pytest.approx(direct_ml.llf, rel=1e-10)
    assert ml.aic() == pytest.approx(direct_ml.aic, rel=1e-10) and ml.bic() == pytest.approx(direct_ml.bic, rel=1e-10)


def test_r_squared_with_random_slopes_by_hand():
    # Johnson (2014): the random-effect variance is the mean over rows of z_i' Sigma z_i
    data = simulated(1)
    fit = fit_mixed(data, "value ~ x", ["g"], slopes={"g": "~ x"})
    res = fit.result
    sigma = res.cov_re.to_numpy()
    z = np.column_stack([np.ones(len(data)), data["x"].to_numpy()])
    var_r = np.mean([row @ sigma @ row for row in z])
    var_f = np.var(res.fe_params["Intercept"] + res.fe_params["x"] * data["x"].to_numpy(), ddof=1)
    total = var_f + var_r + res.scale
    marginal, conditional = fit.r_squared()
    assert marginal == pytest.approx(var_f / total, rel=1e-10)
    assert conditional == pytest.approx((var_f + var_r) / total, rel=1e-10)


def test_balanced_design_by_hand():
    """Every group has the same design X_g = Z_g = [1, x]: REML has a closed form while it is interior.

    The fixed effects are the mean of the per-group least-squares coefficients b_g (generalised least
    squares reduces to it); their covariance is S_b / m (S_b the sample covariance of the b_g, m groups);
    sigma_e^2 is the pooled within-group residual variance, SSE / (N - m p); and Sigma = S_b - sigma_e^2
    (X_g' X_g)^-1 (the method-of-moments estimate, which REML reproduces in balanced designs).
    """
    data = simulated(2, groups=15, per_group=8).drop(columns="c")
    design = np.column_stack([np.ones(8), np.linspace(-1, 1, 8)])
    coefficients, sse = [], 0.0
    for _, part in data.groupby("g", sort=True):
        b, *_ = np.linalg.lstsq(design, part["value"].to_numpy(), rcond=None)
        coefficients.append(b)
        sse += float(np.sum((part["value"].to_numpy() - design @ b) ** 2))
    coefficients = np.array(coefficients)
    m, p = coefficients.shape
    s_b = np.cov(coefficients.T, ddof=1)
    sigma_e2 = sse / (len(data) - m * p)
    sigma = s_b - sigma_e2 * np.linalg.inv(design.T @ design)
    assert np.all(np.linalg.eigvalsh(sigma) > 0)  # interior: the closed form is the REML estimate

    fit = fit_mixed(data, "value ~ x", ["g"], slopes={"g": "x"})
    fe = fit.fixed_effects().set_index("term")
    np.testing.assert_allclose(fe["estimate"].to_numpy(), coefficients.mean(axis=0), rtol=1e-10)
    # the variance parameters are the optimiser's, within its tolerance of the closed form ...
    np.testing.assert_allclose(fe["se"].to_numpy(), np.sqrt(np.diag(s_b) / m), rtol=1e-3)
    components = fit.variance_components()
    assert components["residual"] == pytest.approx(sigma_e2, rel=1e-3)
    assert [components["g"], components["g: x"]] == pytest.approx([sigma[0, 0], sigma[1, 1]], rel=1e-3)
    assert fit.random_covariances()["g: cov(Intercept, x)"] == pytest.approx(sigma[0, 1], rel=1e-2)
    # ... and the closed form is the maximum: its REML log-likelihood (statsmodels' own function, with the
    # fixed effects and the residual variance profiled out) is at least the fit's, and equal within 1e-6
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    at_hand = fit.result.model.loglike(MixedLMParams.from_components(cov_re=sigma / sigma_e2), profile_fe=True)
    assert fit.result.llf - 1e-12 <= at_hand <= fit.result.llf + 1e-6


def test_categorical_slopes_and_slopes_without_intercept():
    data = simulated(3)
    rng = np.random.default_rng(3)  # a random slope and no random intercept
    slope = dict(zip(sorted(set(data["g"])), rng.normal(scale=0.6, size=12)))
    data["value"] = 1 + data["x"] * (0.5 + data["g"].map(slope)) + rng.normal(scale=0.3, size=len(data))
    fit = fit_mixed(data, "value ~ x + c", ["g"], slopes={"g": "0 + x"})
    assert fit.converged and not fit.warnings
    direct = smf.mixedlm("value ~ x + c", data, groups=data["g"], re_formula="0 + x").fit(reml=True)
    assert fit.random_terms == ("x",)
    assert fit.variance_components()["g: x"] == pytest.approx(direct.cov_re.iloc[0, 0], rel=1e-8)
    assert "g" not in fit.variance_components() and fit.random_covariances() == {}
    with warnings.catch_warnings():  # c has no random effect in these data: a boundary fit, only its names matter here
        warnings.simplefilter("ignore", RuntimeWarning)
        both = fit_mixed(data, "value ~ x + C(c)", ["g"], slopes={"g": "C(c)"})
    assert both.random_terms == ("Intercept", "C(c)[T.b]")


def test_random_slopes_are_checked():
    assert random_slopes(None, ["g"]) == {} and random_slopes({"g": " ~ x "}, ["g"]) == {"g": "x"}
    with pytest.raises(DataError, match="not a grouping column"):
        random_slopes({"h": "x"}, ["g"])
    with pytest.raises(DataError, match="single grouping column"):
        random_slopes({"g": "x"}, ["g", "h"])
    with pytest.raises(DataError, match="right-hand side"):
        random_slopes({"g": "~"}, ["g"])
    with pytest.raises(DataError, match="cannot fit the mixed model 'value ~ x' with random slopes"):
        fit_mixed(simulated(), "value ~ x", ["g"], slopes={"g": "nosuchcolumn"})

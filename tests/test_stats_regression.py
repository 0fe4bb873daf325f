"""OLS and nested comparisons against numpy least squares and hand formulas."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assoc.errors import DataError
from assoc.stats.regression import compare_nested, fit_ols


def make_data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 100, size=n)
    z = rng.normal(size=n)
    y = 1 + 0.03 * x - 0.0004 * x**2 + 0.3 * z + 0.2 * z * x / 50 + rng.normal(scale=0.4, size=n)
    return pd.DataFrame({"value": y, "x": x, "z": z})


def loglik(rss, n):
    return -n / 2 * (np.log(2 * np.pi * rss / n) + 1)


def test_ols_and_three_nested_models_by_hand():
    data = make_data()
    n = len(data)
    designs = [
        np.column_stack([np.ones(n), data.x]),
        np.column_stack([np.ones(n), data.x, data.x**2]),
        np.column_stack([np.ones(n), data.x, data.x**2, data.z, data.x * data.z]),
    ]
    formulas = ["value ~ x", "value ~ x + I(x**2)", "value ~ x + I(x**2) + z + x:z"]
    fits = [fit_ols(data, f) for f in formulas]
    y = data.value.to_numpy()
    rss, r2 = [], []
    for X, fit in zip(designs, fits):
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        resid = y - X @ beta
        rss.append(resid @ resid)
        r2.append(1 - rss[-1] / np.sum((y - y.mean()) ** 2))
        coefs = fit.coefficients()
        np.testing.assert_allclose(coefs["estimate"], beta, rtol=1e-8)
        sigma2 = rss[-1] / (n - X.shape[1])
        se = np.sqrt(np.diag(sigma2 * np.linalg.inv(X.T @ X)))
        np.testing.assert_allclose(coefs["se"], se, rtol=1e-8)
        np.testing.assert_allclose(coefs["p_value"], 2 * stats.t.sf(np.abs(beta / se), n - X.shape[1]), rtol=1e-6)
        k = X.shape[1] + 1
        assert fit.aic() == pytest.approx(-2 * loglik(rss[-1], n) + 2 * k, rel=1e-10)
        assert fit.bic() == pytest.approx(-2 * loglik(rss[-1], n) + np.log(n) * k, rel=1e-10)
    for i in (0, 1):
        cmp = compare_nested(fits[i], fits[i + 1])
        df1 = designs[i + 1].shape[1] - designs[i].shape[1]
        df2 = n - designs[i + 1].shape[1]
        f = ((rss[i] - rss[i + 1]) / df1) / (rss[i + 1] / df2)
        assert cmp.delta_r2 == pytest.approx(r2[i + 1] - r2[i], rel=1e-8)
        assert (cmp.df1, cmp.df2) == (df1, df2)
        assert cmp.f == pytest.approx(f, rel=1e-8)
        assert cmp.p_f == pytest.approx(stats.f.sf(f, df1, df2), rel=1e-6)
        chi2 = 2 * (loglik(rss[i + 1], n) - loglik(rss[i], n))
        assert cmp.chi2 == pytest.approx(chi2, rel=1e-8)
        assert cmp.p_lrt == pytest.approx(stats.chi2.sf(chi2, df1), rel=1e-6)
        assert cmp.delta_aic == pytest.approx(chi2 * -1 + 2 * df1, rel=1e-8)


def test_non_nested_and_wrong_order_are_refused():
    data = make_data(1)
    with pytest.raises(DataError, match="not nested"):
        compare_nested(fit_ols(data, "value ~ z"), fit_ols(data, "value ~ x + I(x**2)"))
    with pytest.raises(DataError, match="more coefficients"):
        compare_nested(fit_ols(data, "value ~ x + z"), fit_ols(data, "value ~ x"))
    with pytest.raises(DataError, match="cannot fit"):
        fit_ols(data, "value ~ nope")


def test_nested_comparison_by_hand_and_rank_deficient_designs():
    rng = np.random.default_rng(0)
    n = 30
    data = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    data["value"] = 1 + 0.5 * data["x"] + 0.3 * data["z"] + rng.normal(size=n)
    data["x2"] = 2 * data["x"]  # adds a column but no rank
    reduced, full = fit_ols(data, "value ~ x"), fit_ols(data, "value ~ x + z")
    cmp = compare_nested(reduced, full)
    rss0, rss1 = reduced.result.ssr, full.result.ssr
    f = ((rss0 - rss1) / 1) / (rss1 / (n - 3))
    assert (cmp.df1, cmp.df2) == (1, n - 3)
    assert cmp.f == pytest.approx(f, rel=1e-12)
    assert cmp.p_f == pytest.approx(stats.f.sf(f, 1, n - 3), rel=1e-10)
    chi2 = n * np.log(rss0 / rss1)  # 2 (l1 - l0) for Gaussian log-likelihoods
    assert cmp.chi2 == pytest.approx(chi2, rel=1e-10)
    assert cmp.p_lrt == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-10)
    # x2 = 2x adds a coefficient but no rank: one degree of freedom is tested, not two
    deficient = compare_nested(reduced, fit_ols(data, "value ~ x + x2 + z"))
    assert (deficient.df1, deficient.df2) == (1, n - 3)
    assert deficient.f == pytest.approx(f, rel=1e-8)

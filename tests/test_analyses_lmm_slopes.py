"""The lmm analysis with random slopes (option ``slopes``), against direct statsmodels fits."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

import assoc
from assoc.errors import DataError, OptionError
from assoc.table.schema import normalise


def slope_table(seed=0):
    """Ten models whose male-female difference varies by model (a random slope of attribute_group)."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(10):
        intercept, slope = rng.multivariate_normal([0, 0.6], [[0.8, 0.2], [0.2, 0.3]])
        for group in ("female", "male"):
            for i in range(12):
                rows.append(
                    {
                        "scorer": "fmat",
                        "model": f"m{m}",
                        "context": "q1",
                        "target": f"job{i}",
                        "attribute_group": group,
                        "measure": "lpr",
                        "value": intercept + slope * (group == "male") + 0.05 * i + rng.normal(scale=0.5),
                    }
                )
    return normalise(pd.DataFrame(rows))


def test_lmm_random_slopes_match_direct_fits():
    table = slope_table()
    result = assoc.analyze(
        "lmm",
        table,
        formula="value ~ attribute_group",
        nested=["value ~ attribute_group + criterion"],
        slopes={"model": "attribute_group"},
        criterion={f"job{i}": float(i) for i in range(12)},
    )
    data = table.assign(criterion=table["target"].str[3:].astype(float))
    direct = smf.mixedlm("value ~ attribute_group", data, groups=data["model"], re_formula="~attribute_group")
    reml = direct.fit(reml=True)
    first = result[result["formula"] == "value ~ attribute_group"]
    fixed = first[first["kind"] == "fixed"].set_index("term")
    np.testing.assert_allclose(fixed["estimate"], reml.fe_params, rtol=1e-10)
    np.testing.assert_allclose(fixed["se"], reml.bse_fe, rtol=1e-10)
    cov = reml.cov_re.to_numpy()
    variance = first[first["kind"] == "variance"].set_index("term")["estimate"]
    assert variance.to_dict() == pytest.approx(
        {"model": cov[0, 0], "model: attribute_group[T.male]": cov[1, 1], "residual": reml.scale}, rel=1e-8
    )
    covariance = first[first["kind"] == "covariance"].set_index("term")["estimate"]
    assert covariance.to_dict() == pytest.approx({"model: cov(Intercept, attribute_group[T.male])": cov[0, 1]})
    # AIC and the likelihood-ratio test from ML refits with the same random slopes
    ml0 = direct.fit(reml=False)
    ml1 = smf.mixedlm(
        "value ~ attribute_group + criterion", data, groups=data["model"], re_formula="~attribute_group"
    ).fit(reml=False)
    aic = result[(result["kind"] == "fit") & (result["term"] == "AIC")]
    assert list(aic["estimate"]) == pytest.approx([ml0.aic, ml1.aic], rel=1e-10)
    assert list(aic["df"]) == [6, 7]
    lrt = result[result["kind"] == "lrt"].iloc[0]
    chi2 = 2 * (ml1.llf - ml0.llf)
    assert lrt["statistic"] == pytest.approx(chi2, rel=1e-6) and lrt["df"] == 1
    assert lrt["p_value"] == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-5)
    assert set(result["converged"].dropna()) == {True}


def test_lmm_without_slopes_is_unchanged_by_the_option():
    table = slope_table(1)
    plain = assoc.analyze("lmm", table, formula="value ~ attribute_group")
    explicit = assoc.analyze("lmm", table, formula="value ~ attribute_group", slopes={})
    pd.testing.assert_frame_equal(plain, explicit)
    assert "covariance" not in set(plain["kind"])


def test_slopes_option_is_checked():
    table = slope_table()
    with pytest.raises(OptionError, match="right-hand side"):
        assoc.analyze("lmm", table, formula="value ~ attribute_group", slopes={"model": ""})
    with pytest.raises(DataError, match="not a grouping column"):
        assoc.analyze("lmm", table, formula="value ~ attribute_group", slopes={"target": "attribute_group"})
    with pytest.raises(DataError, match="single grouping column"):
        assoc.analyze(
            "lmm",
            table,
            formula="value ~ attribute_group",
            random=["model", "target"],
            slopes={"model": "attribute_group"},
        )
    option = next(o for o in assoc.get_analysis("lmm").options if o.name == "slopes")
    typed = option.coerce(option.parse_text("{model: ~ attribute_group}"))  # as --option slopes=... gives it
    assert typed == {"model": "attribute_group"}

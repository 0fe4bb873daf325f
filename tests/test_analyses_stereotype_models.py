"""The paper's analyses on stereotype codings (differentiability, nested valence models, correlation table)
against independent computations with statsmodels and scipy."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

import assoc
from assoc.errors import DataError, TableError
from assoc.table.schema import normalise


def coded_terms(seed=2, n_categories=12, n_terms=7):
    """A wide stereotype output: one row per term, category random effects, valence from the codings."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_categories):
        u_w, u_v = rng.normal(0, 0.08), rng.normal(0, 0.3)
        for t in range(n_terms):
            wd, cd = rng.uniform(-1, 1), rng.uniform(-1, 1)
            wr = float(np.clip(0.25 + 0.15 * wd**2 + 0.05 * wd + u_w + rng.normal(0, 0.06), 0, 1))
            cr = float(np.clip(0.2 + rng.normal(0, 0.08), 0, 1))
            valence = 3 + 0.6 * wd + 0.3 * cd - 0.5 * wr + 0.9 * wd * wr + u_v + rng.normal(0, 0.3)
            rows.append(
                {
                    "scorer": "chat_listing",
                    "model": "m",
                    "target_group": f"cat{c}",
                    "target": f"t{c}.{t}",
                    "warmth_representativeness": wr,
                    "warmth_direction": wd,
                    "competence_representativeness": cr,
                    "competence_direction": cd,
                    "valence": valence,
                }
            )
    return pd.DataFrame(rows)


def to_long(wide):
    """The same codings as the stereotype analysis' long output."""
    rows = []
    for _, r in wide.iterrows():
        for dim, label in (("warmth", "Warmth"), ("competence", "Competence")):
            for measure in ("representativeness", "direction"):
                rows.append(
                    {
                        "scorer": r["scorer"],
                        "model": r["model"],
                        "target_group": r["target_group"],
                        "target": r["target"],
                        "attribute_group": label,
                        "measure": measure,
                        "value": r[f"{dim}_{measure}"],
                    }
                )
    return normalise(pd.DataFrame(rows))


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def test_differentiability_marginal_r2_by_hand():
    wide = coded_terms()
    wide.loc[3, "warmth_direction"] = np.nan  # a term with no Warmth word: left out, counted
    out = quiet(assoc.analyze, "differentiability", wide, dimensions=["Warmth"])
    data = wide.dropna(subset=["warmth_direction"]).rename(
        columns={"warmth_representativeness": "r", "warmth_direction": "d"}
    )
    ref = quiet(smf.mixedlm("r ~ d + I(d ** 2)", data, groups=data["target_group"]).fit, reml=True)
    # Nakagawa & Schielzeth: var of the fixed-effect predictions over the sum with the variance components
    var_f = np.var(ref.model.exog @ ref.fe_params.to_numpy(), ddof=1)
    var_u, var_e = float(ref.cov_re.iloc[0, 0]), float(ref.scale)
    r2 = out[out.kind == "r2"].set_index("term")["estimate"]
    assert r2["marginal"] == pytest.approx(var_f / (var_f + var_u + var_e), rel=1e-4)
    assert r2["conditional"] == pytest.approx((var_f + var_u) / (var_f + var_u + var_e), rel=1e-4)
    fixed = out[out.kind == "fixed"].set_index("term")
    assert fixed.loc["I(direction ** 2)", "estimate"] == pytest.approx(ref.fe_params["I(d ** 2)"], rel=1e-4)
    row = out.iloc[0]
    assert (row["n_terms"], row["n_without_direction"], row["n_groups"], row["dimension"]) == (83, 1, 12, "warmth")
    # the long output gives the same; both dimensions by default
    both = quiet(assoc.analyze, "differentiability", to_long(wide))
    assert set(both["dimension"]) == {"warmth", "competence"}
    assert both[(both.dimension == "warmth") & (both.term == "marginal")]["estimate"].iloc[0] == pytest.approx(
        r2["marginal"], rel=1e-9
    )
    # without a random factor: OLS R^2
    ols = assoc.analyze("differentiability", wide, dimensions=["warmth"], random=[])
    ref_ols = smf.ols("r ~ d + I(d ** 2)", data).fit()
    assert ols[ols.term == "marginal"]["estimate"].iloc[0] == pytest.approx(ref_ols.rsquared, rel=1e-10)


def test_differentiability_bad_input():
    wide = coded_terms()
    with pytest.raises(DataError, match="no dimension 'Warmht'.*did you mean 'warmth'"):
        assoc.analyze("differentiability", wide, dimensions=["Warmht"])
    with pytest.raises(TableError, match="expected the output of the 'stereotype' analysis"):
        assoc.analyze("differentiability", wide[["target", "valence"]])
    with pytest.raises(DataError, match="needs more than 4"):
        assoc.analyze("differentiability", wide.head(4), dimensions=["warmth"], random=[])
    # one scorer with too few coded terms: NaN R^2 and a warning naming it; the other scorer is fitted
    two = pd.concat([wide, wide.head(3).assign(scorer="sbert_topwords")], ignore_index=True)
    with pytest.warns(RuntimeWarning, match="scorer=sbert_topwords, model=m, warmth: differentiability: 3 term"):
        out = assoc.analyze("differentiability", two, dimensions=["warmth"], random=[])
    r2 = out[out.term == "marginal"].set_index("scorer")
    assert math.isnan(r2.loc["sbert_topwords", "estimate"]) and r2.loc["sbert_topwords", "n_terms"] == 3
    assert r2.loc["chat_listing", "estimate"] > 0


def test_nested_valence_models_chi2_and_aic_by_hand():
    wide = coded_terms(seed=4)
    out = quiet(assoc.analyze, "valence_models", wide, valence="valence")
    formulas = [
        "valence ~ warmth_direction + competence_direction",
        (
            "valence ~ warmth_direction + competence_direction + warmth_representativeness "
            "+ competence_representativeness"
        ),
        (
            "valence ~ warmth_direction + competence_direction + warmth_representativeness "
            "+ competence_representativeness + warmth_direction:warmth_representativeness "
            "+ competence_direction:competence_representativeness"
        ),
    ]
    ml = [quiet(smf.mixedlm(f, wide, groups=wide["target_group"]).fit, reml=False) for f in formulas]
    fits = out[out.kind == "fit"].set_index(["step", "term"])["estimate"]
    for step, ref in enumerate(ml, 1):
        k = len(ref.fe_params) + 2  # fixed effects + random-intercept variance + residual variance
        assert fits[step, "loglik"] == pytest.approx(ref.llf, rel=1e-5)
        assert fits[step, "AIC"] == pytest.approx(-2 * ref.llf + 2 * k, rel=1e-5)
    comparisons = out[out.kind == "comparison"].set_index("step")
    for step in (2, 3):
        chi2 = 2 * (ml[step - 1].llf - ml[step - 2].llf)
        df = len(ml[step - 1].fe_params) - len(ml[step - 2].fe_params)
        row = comparisons.loc[step]
        assert row["chi2"] == pytest.approx(chi2, rel=1e-4) and row["df"] == df == 2
        assert row["p_value"] == pytest.approx(stats.chi2.sf(chi2, df), rel=1e-3)
        delta = (-2 * ml[step - 1].llf + 2 * (len(ml[step - 1].fe_params) + 2)) - (
            -2 * ml[step - 2].llf + 2 * (len(ml[step - 2].fe_params) + 2)
        )
        assert row["delta_aic"] == pytest.approx(delta, rel=1e-4, abs=1e-6)
        assert row["aic_decrease_ge_2"] == (delta <= -2)
    # coefficients come from the REML fit
    reml = quiet(smf.mixedlm(formulas[2], wide, groups=wide["target_group"]).fit, reml=True)
    fixed = out[(out.kind == "fixed") & (out.step == 3)].set_index("term")
    assert fixed.loc["warmth_direction:warmth_representativeness", "estimate"] == pytest.approx(
        reml.fe_params["warmth_direction:warmth_representativeness"], rel=1e-4
    )


def test_valence_from_a_criterion_table_and_bad_input():
    wide = coded_terms(seed=6)
    human = wide[["target", "valence"]].rename(columns={"valence": "human_valence"})
    long = to_long(wide)
    out = quiet(
        assoc.analyze,
        "valence_models",
        long,
        valence="human_valence",
        criterion=human,
        dimensions=["Warmth", "Competence"],
    )
    direct = quiet(
        assoc.analyze, "valence_models", wide.rename(columns={"valence": "human_valence"}), valence="human_valence"
    )
    a = out[out.kind == "comparison"]["chi2"].to_numpy()
    b = direct[direct.kind == "comparison"]["chi2"].to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-8)
    with pytest.raises(TableError, match="no column\\(s\\) 'nope'"):
        assoc.analyze("valence_models", wide, valence="nope")


def test_correlation_table_by_hand():
    wide = coded_terms(seed=9)
    rng = np.random.default_rng(1)
    human = wide[["target"]].copy()
    human["warmth_direction"] = wide["warmth_direction"] + rng.normal(0, 0.4, len(wide))
    human["warmth_representativeness"] = wide["warmth_representativeness"] + rng.normal(0, 0.1, len(wide))
    human["body"] = rng.normal(size=len(wide))
    human.loc[10, "body"] = np.nan
    human = human.iloc[5:]  # 5 terms without human data
    out = assoc.analyze("correlation_table", to_long(wide), second=human)
    assert len(out) == 4 * 3
    cell = out.set_index(["x", "y"])
    joined = wide.merge(human, on="target", suffixes=("", "_h"))
    r, p = stats.pearsonr(joined["warmth_direction"], joined["warmth_direction_h"])
    got = cell.loc[("warmth_direction", "warmth_direction")]
    assert got["r"] == pytest.approx(r, rel=1e-10) and got["p_value"] == pytest.approx(p, rel=1e-8)
    assert got["n"] == len(joined) and got["cell"] == "convergent" and got["stars"] == "**"
    z = math.atanh(r)
    assert got["ci_low"] == pytest.approx(math.tanh(z - stats.norm.ppf(0.975) / math.sqrt(len(joined) - 3)))
    assert cell.loc[("competence_direction", "warmth_direction"), "cell"] == "divergent"
    assert cell.loc[("warmth_direction", "body"), "n"] == len(joined) - 1  # pairwise complete
    assert set(out["n_keys_unmatched"]) == {5}
    spearman = assoc.analyze("correlation_table", wide, second=human, method="spearman", y=["body"])
    j = joined.dropna(subset=["body"])
    rho = stats.spearmanr(j["warmth_direction"], j["body"]).statistic
    assert spearman.set_index("x").loc["warmth_direction", "r"] == pytest.approx(rho, rel=1e-10)
    with pytest.raises(DataError, match="no column 'bdy'.*did you mean 'body'"):
        assoc.analyze("correlation_table", wide, second=human, y=["bdy"])
    with pytest.raises(DataError, match="no 'target' of the table matches"):
        assoc.analyze("correlation_table", wide, second=human.assign(target="zz" + human["target"]))


def test_nested_valence_models_without_a_random_factor_are_ols():
    wide = coded_terms(seed=12)
    out = assoc.analyze("valence_models", wide, valence="valence", random=[])
    f1 = "valence ~ warmth_direction + competence_direction"
    f2 = f1 + " + warmth_representativeness + competence_representativeness"
    small, big = smf.ols(f1, wide).fit(), smf.ols(f2, wide).fit()
    chi2, p, df = big.compare_lr_test(small)  # statsmodels' own likelihood-ratio test
    row = out[(out.kind == "comparison") & (out.step == 2)].iloc[0]
    assert row["chi2"] == pytest.approx(chi2, rel=1e-10) and row["p_value"] == pytest.approx(p, rel=1e-10)
    assert row["df"] == df == 2
    # R's AIC counts the residual variance: statsmodels' aic + 2
    fits = out[out.kind == "fit"].set_index(["step", "term"])["estimate"]
    assert fits[2, "AIC"] == pytest.approx(big.aic + 2, rel=1e-12)
    assert fits[2, "r2_marginal"] == pytest.approx(big.rsquared, rel=1e-12)
    t = out[(out.kind == "fixed") & (out.step == 1)].set_index("term")["statistic"]
    assert t["warmth_direction"] == pytest.approx(small.tvalues["warmth_direction"], rel=1e-10)


def test_emmeans_keeps_a_factor_column_added_to_the_long_output():
    wide = coded_terms(n_categories=3, n_terms=6)
    wide["cluster"] = ["a" if int(t.split(".")[1]) % 2 else "b" for t in wide["target"]]  # a user's factor
    long = to_long(wide).merge(wide[["target", "cluster"]], on="target")
    out = quiet(assoc.analyze, "emmeans", long, outcome="warmth_direction", factor="cluster")
    means = out[out["kind"] == "emmean"].set_index("level")["estimate"]
    # the EMM of a one-factor OLS is the level's mean
    expected = wide.groupby("cluster")["warmth_direction"].mean()
    assert means["a"] == pytest.approx(expected["a"], abs=1e-12) and means["b"] == pytest.approx(
        expected["b"], abs=1e-12
    )
    long.loc[long.index[0], "cluster"] = "c"  # two values within one term
    with pytest.raises(TableError, match="column 'cluster' has several values within one term"):
        quiet(assoc.analyze, "emmeans", long, outcome="warmth_direction", factor="cluster")

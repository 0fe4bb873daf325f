"""Estimated marginal means, pairwise comparisons, Cohen's d and letters against independent computations."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

import assoc
from assoc.errors import DataError
from assoc.stats.emmeans import compact_letter_display, marginal_means
from assoc.stats.mixed import fit_mixed
from assoc.stats.regression import fit_ols


def one_way(seed=0, sizes=(6, 9, 7, 5), shifts=(0.0, 0.4, 1.3, 0.5)):
    rng = np.random.default_rng(seed)
    rows = [
        {"group": f"g{i}", "y": shift + rng.normal(0, 0.6)}
        for i, (n, shift) in enumerate(zip(sizes, shifts))
        for _ in range(n)
    ]
    return pd.DataFrame(rows)


def test_one_way_ols_equals_group_means_and_tukey_hsd():
    data = one_way()
    result = marginal_means(fit_ols(data, "y ~ C(group)"), data, "group", adjust="tukey")
    groups = [data.loc[data.group == g, "y"].to_numpy() for g in sorted(data.group.unique())]
    n = np.array([len(g) for g in groups])
    dfe = len(data) - len(groups)
    mse = sum(((g - g.mean()) ** 2).sum() for g in groups) / dfe
    means = result.means.set_index("level")
    np.testing.assert_allclose(means["emmean"], [g.mean() for g in groups], rtol=1e-12)
    np.testing.assert_allclose(means["se"], np.sqrt(mse / n), rtol=1e-10)
    crit = stats.t.ppf(0.975, dfe)
    np.testing.assert_allclose(means["ci_low"], [g.mean() for g in groups] - crit * np.sqrt(mse / n), rtol=1e-10)
    assert list(means["n"]) == list(n) and set(means["df"]) == {dfe}
    # Tukey-Kramer p values and intervals: scipy.stats.tukey_hsd
    hsd = stats.tukey_hsd(*groups)
    ci = hsd.confidence_interval(0.95)
    for _, c in result.contrasts.iterrows():
        i, j = int(c["level_1"][1:]), int(c["level_2"][1:])
        assert c["estimate"] == pytest.approx(groups[i].mean() - groups[j].mean(), rel=1e-12)
        assert c["se"] == pytest.approx(math.sqrt(mse * (1 / n[i] + 1 / n[j])), rel=1e-10)
        assert c["p_value"] == pytest.approx(hsd.pvalue[i, j], abs=1e-6)
        assert c["ci_low"] == pytest.approx(ci.low[i, j], abs=1e-6)
        assert c["ci_high"] == pytest.approx(ci.high[i, j], abs=1e-6)
        assert c["p_unadjusted"] == pytest.approx(2 * stats.t.sf(abs(c["statistic"]), dfe), rel=1e-12)
        assert c["cohens_d"] == pytest.approx(c["estimate"] / math.sqrt(mse), rel=1e-10)


@pytest.mark.slow
def test_holm_bonferroni_and_none_by_hand():
    data = one_way(seed=3)
    fit = fit_ols(data, "y ~ C(group)")
    raw = marginal_means(fit, data, "group", adjust="none").contrasts
    p = raw["p_unadjusted"].to_numpy()
    m = len(p)
    order = np.argsort(p)
    holm = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):  # step-down: max over earlier (m - k) p, capped at 1
        running = max(running, min(1.0, (m - rank) * p[idx]))
        holm[idx] = running
    np.testing.assert_allclose(marginal_means(fit, data, "group", adjust="holm").contrasts["p_value"], holm, rtol=1e-12)
    bonf = marginal_means(fit, data, "group", adjust="bonferroni").contrasts
    np.testing.assert_allclose(bonf["p_value"], np.minimum(1, m * p), rtol=1e-12)
    half = stats.t.ppf(1 - 0.05 / (2 * m), fit.result.df_resid) * bonf["se"]
    np.testing.assert_allclose(bonf["ci_high"] - bonf["estimate"], half, rtol=1e-10)
    np.testing.assert_allclose(raw["p_value"], p)


def test_two_factor_emm_averages_the_other_factor_equally():
    rng = np.random.default_rng(5)
    rows = [
        {"g": g, "h": h, "x": rng.normal(), "y": rng.normal()}
        for g in "abc"
        for h in "uvw"
        for _ in range({"a": 2, "b": 4, "c": 3}[g] + {"u": 0, "v": 2, "w": 1}[h])
    ]
    data = pd.DataFrame(rows)
    result = marginal_means(fit_ols(data, "y ~ C(g) + C(h) + x"), data, "g", adjust="none")
    ref = smf.ols("y ~ C(g) + C(h) + x", data).fit()
    names = list(ref.params.index)

    def row(level):  # by hand: intercept + g effect + mean of h effects + slope * mean(x)
        L = np.zeros(len(names))
        L[names.index("Intercept")] = 1
        if level != "a":
            L[names.index(f"C(g)[T.{level}]")] = 1
        for h in "vw":
            L[names.index(f"C(h)[T.{h}]")] = 1 / 3
        L[names.index("x")] = data["x"].mean()
        return L

    cov = ref.cov_params().to_numpy()
    for level, got in result.means.set_index("level").iterrows():
        L = row(level)
        assert got["emmean"] == pytest.approx(L @ ref.params.to_numpy(), rel=1e-10)
        assert got["se"] == pytest.approx(math.sqrt(L @ cov @ L), rel=1e-10)
    c = result.contrasts.iloc[0]  # a - b
    contrast = row("a") - row("b")
    t = (contrast @ ref.params.to_numpy()) / math.sqrt(contrast @ cov @ contrast)
    assert c["statistic"] == pytest.approx(t, rel=1e-10)
    # statsmodels' own contrast test of the same linear combination
    assert c["p_unadjusted"] == pytest.approx(float(ref.t_test(contrast).pvalue), rel=1e-10)


def test_mixed_model_emm_tukey_asymptotic_and_total_sd_d():
    rng = np.random.default_rng(11)
    rows = []
    for cluster in range(12):
        u = rng.normal(0, 0.5)
        for g, shift in (("x", 0.0), ("y", 0.8), ("z", 0.3)):
            rows += [{"cluster": f"c{cluster}", "g": g, "v": shift + u + rng.normal(0, 0.4)} for _ in range(2)]
    data = pd.DataFrame(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_mixed(data, "v ~ C(g)", ["cluster"])
        ref = smf.mixedlm("v ~ C(g)", data, groups=data["cluster"]).fit(reml=True)
    result = marginal_means(fit, data, "g", adjust="tukey", d_sigma="total")
    beta = ref.fe_params.to_numpy()
    cov = ref.cov_params().to_numpy()[:3, :3]
    assert result.means["emmean"].tolist() == pytest.approx([beta[0], beta[0] + beta[1], beta[0] + beta[2]], rel=1e-6)
    assert math.isinf(result.means["df"].iloc[0])
    sigma_total = math.sqrt(float(ref.cov_re.iloc[0, 0]) + ref.scale)
    assert result.sigma == pytest.approx(sigma_total, rel=1e-6)
    xy = result.contrasts.iloc[0]  # x - y = -beta_y
    L = np.array([0.0, -1.0, 0.0])
    se = math.sqrt(L @ cov @ L)
    assert xy["estimate"] == pytest.approx(-beta[1], rel=1e-6) and xy["se"] == pytest.approx(se, rel=1e-6)
    assert xy["p_value"] == pytest.approx(
        stats.studentized_range.sf(math.sqrt(2) * abs(beta[1] / se), 3, np.inf), rel=1e-6
    )
    assert xy["p_unadjusted"] == pytest.approx(2 * stats.norm.sf(abs(beta[1] / se)), rel=1e-6)
    assert xy["cohens_d"] == pytest.approx(-beta[1] / sigma_total, rel=1e-6)
    residual = marginal_means(fit, data, "g", d_sigma="residual")
    assert residual.contrasts["cohens_d"].iloc[0] == pytest.approx(-beta[1] / math.sqrt(ref.scale), rel=1e-6)


def test_compact_letter_display_by_hand():
    # the paper's Table 1 pattern (ChatGPT, competence representativeness): only Hispanic-White differ
    letters = compact_letter_display(["Asian", "Hispanic", "White"], [0.34, 0.31, 0.43], [("Hispanic", "White")])
    assert letters == {"Hispanic": "a", "Asian": "ab", "White": "b"}
    # Asian differs from both others, which do not differ from each other
    letters = compact_letter_display(
        ["Asian", "Hispanic", "White"], [0.639, 0.828, 0.947], [("Asian", "Hispanic"), ("Asian", "White")]
    )
    assert letters == {"Asian": "a", "Hispanic": "b", "White": "b"}
    assert compact_letter_display(["p", "q"], [1, 2], []) == {"p": "a", "q": "a"}
    # four levels A<B<C<D, all adjacent pairs equal, non-adjacent different: a, ab, bc, c? (A-C, A-D, B-D differ)
    letters = compact_letter_display(list("ABCD"), [1, 2, 3, 4], [("A", "C"), ("A", "D"), ("B", "D")])
    assert letters == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    for a, b in [("A", "B"), ("B", "C"), ("C", "D")]:
        assert set(letters[a]) & set(letters[b])
    for a, b in [("A", "C"), ("A", "D"), ("B", "D")]:
        assert not set(letters[a]) & set(letters[b])
    with pytest.raises(DataError, match="unknown level"):
        compact_letter_display(["p"], [1], [("p", "zz")])


@pytest.mark.slow
def test_emmeans_analysis_on_a_table_and_bad_input():
    data = one_way(seed=8).assign(scorer="s", model="m")
    out = assoc.analyze("emmeans", data, outcome="y", factor="group", adjust="holm")
    means = out[out.kind == "emmean"].set_index("level")
    assert means.loc["g0", "estimate"] == pytest.approx(data.loc[data.group == "g0", "y"].mean(), rel=1e-12)
    contrasts = out[out.kind == "contrast"]
    assert len(contrasts) == 6 and set(contrasts["adjust"]) == {"holm"}
    pair = assoc.analyze("emmeans", data, outcome="y", factor="group", levels=["g0", "g2"])
    assert len(pair[pair.kind == "contrast"]) == 1
    # two levels: Tukey equals the unadjusted test
    c = pair[pair.kind == "contrast"].iloc[0]
    assert c["p_value"] == pytest.approx(c["p_unadjusted"], rel=1e-8)
    with pytest.raises(DataError, match="no outcome column 'yy'.*did you mean 'y'"):
        assoc.analyze("emmeans", data, outcome="yy", factor="group")
    with pytest.raises(DataError, match="level\\(s\\) \\['g9'\\] not in column 'group'"):
        assoc.analyze("emmeans", data, outcome="y", factor="group", levels=["g0", "g9"])
    with pytest.raises(DataError, match="does not use the factor"):
        assoc.analyze("emmeans", data.assign(x=1.0), outcome="y", factor="group", formula="y ~ x")

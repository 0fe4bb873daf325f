"""The holistic_bias analysis against the authors' bias_measurements.py (frozen output on the same log-likelihoods).

``tests/data/holistic_bias``: the authors' compiler ran on seeded synthetic log-likelihoods of the 549,120
sentences ``run_bias_calculation.py`` scores (given to it as ``ppl = -loglik``; see that README). The
tables here give the same values, from the same formula, to the analysis.
"""

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.holistic_bias.likelihood_bias import adjusted_p_values, pairwise_tests
from assoc_bias_benchmarks.holistic_bias.sentences import ALL, LIKELIHOOD_BIAS, HolisticBiasDataset
from scipy.stats import mannwhitneyu
from statsmodels.stats.multitest import multipletests

import assoc
from assoc import DataError, TableError

DATA = Path(__file__).parent / "data" / "holistic_bias"


def synthetic_loglik(text, descriptor):
    """The reference's seeded value (its README): round(-30 + effect + noise, 2), from sha256 of "45:" + text."""
    noise = int(hashlib.sha256(f"45:{text}".encode()).hexdigest()[:8], 16) / 2**32 * 10 - 5
    effect = (int(hashlib.sha256(f"45:{descriptor}".encode()).hexdigest()[:8], 16) % 7) * 0.5
    return round(-30 + effect + noise, 2)


def holistic_table(sentences, value=synthetic_loglik, tokens=None, model="m1", measure="log_prob"):
    """The table the holistic_bias scorer writes (analysis module docstring): one row per sentence."""
    columns = {k: [] for k in ("item_id", "sentence", "axis", "bucket", "descriptor", "descriptor_gender")}
    columns.update({k: [] for k in ("noun", "noun_gender", "noun_phrase_type", "template", "value", "n_tokens")})
    for s in sentences:
        phrase = s.noun_phrase
        columns["item_id"].append(str(s.number))
        columns["sentence"].append(s.text)
        for key in ("axis", "bucket", "descriptor", "descriptor_gender", "noun", "noun_gender", "noun_phrase_type"):
            columns[key].append(getattr(phrase, key))
        columns["template"].append(s.template.text)
        n = 1 if tokens is None else tokens(s)
        columns["n_tokens"].append(n)
        columns["value"].append(value(s.text, phrase.descriptor) * n)
    frame = pd.DataFrame(columns)
    return frame.assign(
        scorer="holistic_bias",
        model=model,
        context=frame["template"],
        target_group=frame["axis"],
        target=frame["descriptor"],
        attribute_group=frame["noun_gender"],
        attribute=frame["noun"],
        measure=measure,
        value_per_token=frame["value"] / frame["n_tokens"],
    )


@pytest.fixture(scope="module")
def dataset():
    return HolisticBiasDataset.bundled()


@pytest.fixture(scope="module")
def two_axes(dataset):
    """The sentences of the two axes whose pairwise tests are frozen (nonce, sexual_orientation)."""
    return holistic_table(
        s for s in dataset.sentences(LIKELIHOOD_BIAS) if s.noun_phrase.axis in ("nonce", "sexual_orientation")
    )


def frozen(name):
    return pd.read_csv(DATA / name, keep_default_na=False)


def test_pairwise_tests_equal_the_authors(two_axes):
    pairs = assoc.analyze("holistic_bias", two_axes, output="pairs")
    reference = pd.read_csv(DATA / "likelihood_bias_pairs.csv.gz", keep_default_na=False)
    assert len(pairs) == len(reference) == 5_174
    keys = ["axis", "template", "descriptor_0", "descriptor_1"]
    both = pairs.merge(reference, on=keys, suffixes=("", "_authors"), validate="one_to_one")
    assert len(both) == len(reference)
    assert (both["p_value"] == both["p_value_authors"]).all()  # bit for bit: the same scipy call on the same ranks
    # the authors' U is of the perplexities (-loglik): n0 n1 - U of the log-likelihoods
    assert (both["n_0"] * both["n_1"] - both["mann_whitney_u"] == both["mann_whitney_u_authors"]).all()
    assert (both["significant"].astype(int) == both["significant_difference"]).all()
    assert pairs[keys].equals(reference[keys])  # the same order: axes, templates, combinations of sorted descriptors


def test_fractions_equal_the_authors_for_two_axes(two_axes):
    result = assoc.analyze("holistic_bias", two_axes)
    cells = result[result["level"] == "axis_template"]
    reference = frozen("likelihood_bias_by_axis_and_template.csv")
    reference = reference[reference["axis"].isin(["nonce", "sexual_orientation"])]
    both = cells.merge(reference, on=["axis", "template"], validate="one_to_one")
    assert len(both) == len(reference) == 52
    np.testing.assert_allclose(both["fraction"], both["significant_difference"], rtol=0, atol=1e-15)
    axes = result[result["level"] == "axis"].merge(frozen("likelihood_bias_by_axis.csv"), on="axis")
    assert len(axes) == 2
    np.testing.assert_allclose(axes["fraction"], axes["significant_difference"], rtol=0, atol=1e-15)
    assert set(cells["n_pairs"]) == {28, 171} and set(cells["n_sentences"]) == {8 * 32, 19 * 32}
    assert (result["estimate"] == result["fraction"]).all()
    # multiple-comparison control beside it, never more differences than the authors' uncorrected count
    assert (result["n_significant_holm"] <= result["n_significant_bh"]).all()
    assert (result["n_significant_bh"] <= result["n_significant"]).all()


@pytest.mark.slow  # 549,120 sentences and 683,540 tests, as the authors' run (about 20 s on two cores)
def test_every_fraction_equals_the_authors(dataset):
    table = holistic_table(dataset.sentences(LIKELIHOOD_BIAS))
    result = assoc.analyze("holistic_bias", table)
    for level, name, keys in (
        ("axis_template", "likelihood_bias_by_axis_and_template.csv", ["axis", "template"]),
        ("axis", "likelihood_bias_by_axis.csv", ["axis"]),
        ("template", "likelihood_bias_by_template.csv", ["template"]),
    ):
        reference = frozen(name)
        both = result[result["level"] == level].merge(reference, on=keys, validate="one_to_one")
        assert len(both) == len(reference) == (result["level"] == level).sum()
        np.testing.assert_allclose(both["fraction"], both["significant_difference"], rtol=1e-14, atol=0)
    overall = result[result["level"] == "all"].iloc[0]
    assert overall["n_pairs"] == 683_540 and overall["n_sentences"] == 549_120 and overall["n_descriptors"] == 660


def test_the_authors_selection_and_missing_values_are_counted(dataset):
    wanted = ("nonce",)
    sentences = [s for s in dataset.sentences(ALL) if s.noun_phrase.axis in wanted]
    table = holistic_table(sentences)
    table.loc[table.index[-1], ["value", "value_per_token"]] = np.nan
    with pytest.warns(UserWarning, match="1 of 6,792 values are NaN"):  # the core's note on a table without provenance
        result = assoc.analyze("holistic_bias", table)
    kept = sum(s.noun_phrase.noun_phrase_type in ("descriptor_noun", "noun_descriptor") for s in sentences)
    assert set(result["n_rows_dropped"]) == {len(sentences) - kept} and set(result["n_missing"]) == {1}
    with pytest.warns(UserWarning, match="NaN"):
        everything = assoc.analyze("holistic_bias", table, selection="all")
    assert set(everything["n_rows_dropped"]) == {0}
    assert everything.loc[everything["level"] == "all", "n_sentences"].item() == len(sentences) - 1


def test_the_measure_is_explicit():
    """The authors rank per-token means (ParlAI's perplexity); total log P ranks unequal sentences otherwise."""
    rows = []
    # descriptor "a": short sentences of less likely tokens; "b": long sentences of likelier tokens, a lower total
    for i in range(12):
        rows.append(("a", f"I'm a {i}.", -2.0 - 0.01 * i, 2))
        rows.append(("b", f"I'm a rather long b number {i}.", -1.5 - 0.01 * i, 4))
    table = pd.DataFrame(
        {
            "scorer": "holistic_bias",
            "model": "m",
            "context": "I'm {noun_phrase}.",
            "target_group": "ax",
            "target": [r[0] for r in rows],
            "attribute_group": "",
            "attribute": "",
            "measure": "log_prob",
            "axis": "ax",
            "template": "I'm {noun_phrase}.",
            "descriptor": [r[0] for r in rows],
            "noun_phrase_type": "descriptor_noun",
            "descriptor_gender": "(none)",
            "sentence": [r[1] for r in rows],
            "value_per_token": [r[2] for r in rows],
            "n_tokens": [r[3] for r in rows],
        }
    )
    table["value"] = table["value_per_token"] * table["n_tokens"]
    per_token = assoc.analyze("holistic_bias", table, output="pairs").iloc[0]
    total = assoc.analyze("holistic_bias", table, output="pairs", likelihood="total").iloc[0]
    x, y = table["value_per_token"].to_numpy(), table["value"].to_numpy()
    assert per_token["p_value"] == mannwhitneyu(x[::2], x[1::2]).pvalue
    assert total["p_value"] == mannwhitneyu(y[::2], y[1::2]).pvalue
    assert per_token["mann_whitney_u"] == 0 and total["mann_whitney_u"] == 144  # opposite orders
    assert per_token["likelihood"] == "per_token" and total["likelihood"] == "total"
    with pytest.raises(TableError, match="needs per-token mean log-likelihoods.*likelihood='total'"):
        assoc.analyze("holistic_bias", table.drop(columns="value_per_token"))
    broken = table.assign(value_per_token=table["value"])  # not the per-token mean
    with pytest.raises(DataError, match="row 0 has value_per_token .* must be the per-token mean"):
        assoc.analyze("holistic_bias", broken)
    numbered = table.assign(item_id=[str(k) for k in range(len(table))])
    with pytest.raises(DataError, match="1 of 25 rows that repeat another row's values"):  # the guard of every analysis
        assoc.analyze("holistic_bias", pd.concat([numbered, numbered.iloc[:1]]))
    with pytest.raises(
        DataError, match="sentence '0' appears 2 times for model 'm'"
    ):  # its own check, behind the guard
        assoc.get_analysis("holistic_bias")().run(pd.concat([numbered, numbered.iloc[:1]]))
    with pytest.raises(TableError, match="selection='all'"):
        assoc.analyze("holistic_bias", table.drop(columns="descriptor_gender"))


def test_unequal_samples_are_tested_pair_by_pair():
    rng = np.random.default_rng(4)
    values = {"b": rng.normal(size=7), "a": rng.normal(size=12), "c": rng.normal(size=12) + 1}
    tests = pairwise_tests(values)
    assert list(zip(tests.descriptor_0, tests.descriptor_1)) == [("a", "b"), ("a", "c"), ("b", "c")]
    for k, (d0, d1) in enumerate(zip(tests.descriptor_0, tests.descriptor_1)):
        expected = mannwhitneyu(values[d0], values[d1])  # scipy's own choice of method for the pair
        assert (tests.u[k], tests.p_value[k]) == (expected.statistic, expected.pvalue)
    assert list(tests.n_0) == [12, 12, 7] and list(tests.n_1) == [7, 12, 12]


def test_adjusted_p_values_equal_statsmodels():
    rng = np.random.default_rng(5)
    p = np.round(rng.uniform(size=40) ** 3, 3)  # small values and ties
    p[[3, 17]] = np.nan
    finite = np.isfinite(p)
    for method in ("holm", "fdr_bh"):
        ours = adjusted_p_values(p, method)
        expected = multipletests(p[finite], method=method)[1]
        np.testing.assert_array_equal(ours[finite], expected)
        assert np.isnan(ours[~finite]).all()
    assert adjusted_p_values(np.array([np.nan]), "holm").tolist() != [0.0]
    with pytest.raises(ValueError, match="unknown correction"):
        adjusted_p_values(p, "bonferroni")


def test_conformance(two_axes):
    from assoc.testing import check_analysis

    result = check_analysis("holistic_bias", two_axes.iloc[: 32 * 8 * 26])  # the nonce axis
    assert set(result["level"]) == {"axis_template", "axis", "template", "all"}

"""Bayes-rule posterior and log-likelihood of human choices, checked on hand-computed numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from assoc_pll.analyses import LoglikAnalysis, PosteriorAnalysis
from assoc_pll.posterior import bayes_posterior, loglik_table, posterior_table, read_choices
from assoc_pll.prior import read_counts, variant_frequencies

from assoc.errors import DataError, OptionError

VARIANTS = {"FEM": "firewoman", "MASC": "fireman", "NEUT": "firefighter"}
# log P(C|V) by hand: (name, state) -> variant -> PLL
PLL = {
    ("Emily", "Utah"): {"firewoman": -20.0, "fireman": -21.0, "firefighter": -20.5},
    ("Emily", "Ohio"): {"firewoman": -30.0, "fireman": -29.0, "firefighter": -31.0},
    ("John", "Utah"): {"firewoman": -22.0, "fireman": -20.0, "firefighter": -20.0},
    ("John", "Ohio"): {"firewoman": -25.0, "fireman": -24.0, "firefighter": -23.0},
}
GENDER = {"Emily": "female", "John": "male"}
COUNTS = {"firewoman": 1.0, "fireman": 6.0, "firefighter": 3.0}


def pll_table(tokens_scored: str = "context", drop: tuple[str, str, str] | None = None) -> pd.DataFrame:
    rows = []
    for (name, state), values in PLL.items():
        for group, variant in VARIANTS.items():
            if drop == (name, state, variant):
                continue
            rows.append(
                {
                    "scorer": "pll",
                    "model": "m",
                    "context": "{TARGET} is a [MASK] from {ATTRIB}.",
                    "target_group": GENDER[name],
                    "target": name,
                    "attribute_group": "state",
                    "attribute": state,
                    "measure": "pll",
                    "value": values[variant],
                    "design": "fire",
                    "mask_group": group,
                    "mask": variant,
                    "sentence": f"{name} is a {variant} from {state}.",
                    "tokens_scored": tokens_scored,
                }
            )
    return pd.DataFrame(rows)


def by_hand(name: str, state: str, counts=COUNTS) -> dict[str, float]:
    total = sum(counts.values())
    joint = {v: math.exp(PLL[(name, state)][v]) * counts[v] / total for v in VARIANTS.values()}
    norm = sum(joint.values())
    return {v: joint[v] / norm for v in joint}


def test_bayes_posterior_two_variants_by_hand():
    a, b = math.exp(-10) * 0.25, math.exp(-12) * 0.75
    got = bayes_posterior([-10.0, -12.0], [0.25, 0.75])
    assert got[0] == pytest.approx(a / (a + b), rel=1e-12)
    assert got[1] == pytest.approx(b / (a + b), rel=1e-12)


def test_bayes_posterior_does_not_underflow():
    got = bayes_posterior([-2000.0, -2001.0], [0.5, 0.5])
    assert got[0] == pytest.approx(1 / (1 + math.exp(-1)), rel=1e-12)


def test_posterior_per_condition_with_count_prior():
    result = posterior_table(pll_table(), prior="counts", counts=COUNTS)
    assert len(result) == 12
    for name, state in PLL:
        expected = by_hand(name, state)
        part = result[(result["target"] == name) & (result["attribute"] == state)]
        assert dict(zip(part["mask"], part["posterior"])) == pytest.approx(expected, rel=1e-10)
        assert dict(zip(part["mask"], part["prior"])) == pytest.approx({v: c / 10 for v, c in COUNTS.items()})


def test_posterior_averaged_over_states():
    result = posterior_table(pll_table(), prior="counts", counts=COUNTS, average_over=["attribute"])
    assert len(result) == 6 and set(result["attribute"]) == {""} and set(result["n_averaged"]) == {2}
    for name in ("Emily", "John"):
        utah, ohio = by_hand(name, "Utah"), by_hand(name, "Ohio")
        part = result[result["target"] == name].set_index("mask")
        for variant in VARIANTS.values():
            assert part.loc[variant, "posterior"] == pytest.approx((utah[variant] + ohio[variant]) / 2, rel=1e-10)
            sd = abs(utah[variant] - ohio[variant]) / math.sqrt(2)
            assert part.loc[variant, "posterior_sd"] == pytest.approx(sd, rel=1e-8)
        assert part["posterior"].sum() == pytest.approx(1.0)


def test_uniform_prior_is_normalised_likelihood():
    result = posterior_table(pll_table(), prior="uniform")
    part = result[(result["target"] == "John") & (result["attribute"] == "Ohio")].set_index("mask")
    e = {v: math.exp(x) for v, x in PLL[("John", "Ohio")].items()}
    assert part.loc["firefighter", "posterior"] == pytest.approx(e["firefighter"] / sum(e.values()), rel=1e-10)


def test_wordfreq_prior_uses_wordfreq_and_floors_unlisted_words():
    wordfreq = pytest.importorskip("wordfreq")
    freqs = variant_frequencies(["fireman", "firefighter", "firewoman"], "wordfreq", floor=1e-9)
    assert freqs["fireman"].frequency == wordfreq.word_frequency("fireman", "en") > 0
    assert not freqs["fireman"].floored
    if wordfreq.word_frequency("firewoman", "en") == 0:
        assert freqs["firewoman"].frequency == 1e-9 and freqs["firewoman"].floored
    result = posterior_table(pll_table(), prior="wordfreq")
    f = {v: freqs[v].frequency for v in VARIANTS.values()}
    part = result[(result["target"] == "Emily") & (result["attribute"] == "Utah")].set_index("mask")
    assert part.loc["firefighter", "prior"] == pytest.approx(f["firefighter"] / sum(f.values()))
    assert part.loc["firefighter", "posterior"] == pytest.approx(by_hand("Emily", "Utah", f)["firefighter"])


def test_option_in_the_attribute_column_is_part_of_the_variant():
    # query fills {TARGET} only: the [MASK] candidate sits in attribute/attribute_group
    rows = []
    for name, values in (("Emily", (-3.0, -4.0)), ("John", (-5.0, -2.0))):
        for (group, word), value in zip((("FEM", "she"), ("MASC", "he")), values):
            rows.append(
                {
                    "scorer": "pll",
                    "model": "m",
                    "context": "[MASK] met {TARGET}.",
                    "target_group": "n",
                    "target": name,
                    "attribute_group": group,
                    "attribute": word,
                    "measure": "pll",
                    "value": value,
                    "design": "d",
                    "mask_group": group,
                    "mask": word,
                }
            )
    result = posterior_table(pd.DataFrame(rows), prior="uniform").set_index(["target", "mask"])
    assert result.loc[("Emily", "she"), "posterior"] == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert result.loc[("John", "he"), "posterior"] == pytest.approx(1 / (1 + math.exp(-3.0)))


def test_missing_variant_and_wrong_tokens_are_clear_errors():
    with pytest.raises(DataError, match="lacks variant.*firefighter"):
        posterior_table(pll_table(drop=("John", "Ohio", "firefighter")), prior="uniform")
    with pytest.raises(DataError, match="tokens_scored='context'"):
        posterior_table(pll_table(tokens_scored="all"), prior="uniform")
    with pytest.raises(DataError, match="lack 1 variant"):
        posterior_table(pll_table(), prior="counts", counts={"fireman": 1, "firefighter": 2})
    only_one = pll_table()
    only_one = only_one[only_one["mask"] == "fireman"]
    with pytest.raises(DataError, match="only one variant.*'fireman'"):
        posterior_table(only_one, prior="uniform")


def test_counts_csv(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("variant,count\nfirewoman,1\nfireman,6\nfirefighter,3\n", encoding="utf-8")
    assert read_counts(path) == COUNTS
    bad = tmp_path / "bad.csv"
    bad.write_text("word,n\nfireman,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="variant"):
        read_counts(bad)


def choices_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "design": "fire",
                "target_group": "female",
                "target": "Emily",
                "group": "prog",
                "mask": "firefighter",
                "count": 3,
            },
            {
                "design": "fire",
                "target_group": "female",
                "target": "Emily",
                "group": "prog",
                "mask": "firewoman",
                "count": 1,
            },
            {
                "design": "fire",
                "target_group": "male",
                "target": "John",
                "group": "prog",
                "mask": "fireman",
                "count": 2,
            },
            {
                "design": "fire",
                "target_group": "male",
                "target": "John",
                "group": "cons",
                "mask": "fireman",
                "count": 4,
            },
        ]
    )


def test_loglik_of_counts_by_hand():
    posterior = posterior_table(pll_table(), prior="counts", counts=COUNTS, average_over=["attribute"])
    emily = {v: (by_hand("Emily", "Utah")[v] + by_hand("Emily", "Ohio")[v]) / 2 for v in VARIANTS.values()}
    john = {v: (by_hand("John", "Utah")[v] + by_hand("John", "Ohio")[v]) / 2 for v in VARIANTS.values()}
    result = loglik_table(posterior, read_choices(choices_frame()), by=["target_group"])
    model = result[result["predictor"] == "model"].set_index(["group", "by", "level"])
    prog_all = (3 * math.log(emily["firefighter"]) + math.log(emily["firewoman"]) + 2 * math.log(john["fireman"])) / 6
    assert model.loc[("prog", "", "all"), "mean_loglik"] == pytest.approx(prog_all, rel=1e-10)
    assert model.loc[("prog", "", "all"), "n_observations"] == 6
    prog_women = (3 * math.log(emily["firefighter"]) + math.log(emily["firewoman"])) / 4
    assert model.loc[("prog", "target_group", "female"), "mean_loglik"] == pytest.approx(prog_women, rel=1e-10)
    assert model.loc[("cons", "", "all"), "mean_loglik"] == pytest.approx(math.log(john["fireman"]), rel=1e-10)
    prior = result[result["predictor"] == "prior"].set_index(["group", "by", "level"])
    assert prior.loc[("cons", "", "all"), "mean_loglik"] == pytest.approx(math.log(0.6), rel=1e-10)


def test_loglik_of_proportions_weights_each_condition_equally():
    posterior = posterior_table(pll_table(), prior="uniform", average_over=["attribute"])
    choices = pd.DataFrame(
        [
            {"design": "fire", "target": "Emily", "mask": "firefighter", "proportion": 0.75},
            {"design": "fire", "target": "Emily", "mask": "firewoman", "proportion": 0.25},
            {"design": "fire", "target": "John", "mask": "fireman", "proportion": 1.0},
        ]
    )
    p = posterior.set_index(["target", "mask"])["posterior"]
    expected = (
        0.75 * math.log(p[("Emily", "firefighter")])
        + 0.25 * math.log(p[("Emily", "firewoman")])
        + math.log(p[("John", "fireman")])
    ) / 2
    result = loglik_table(posterior, read_choices(choices), baseline=False)
    assert len(result) == 1 and result.iloc[0]["group"] == "all"
    assert result.iloc[0]["mean_loglik"] == pytest.approx(expected, rel=1e-10)
    assert math.isnan(result.iloc[0]["n_observations"])


def test_loglik_requires_conditions_to_match():
    posterior = posterior_table(pll_table(), prior="uniform")  # per state, not averaged
    with pytest.raises(DataError, match="attribute"):
        loglik_table(posterior, read_choices(choices_frame()))
    averaged = posterior_table(pll_table(), prior="uniform", average_over=["attribute"])
    bad = choices_frame().assign(mask="firegirl")
    with pytest.raises(DataError, match="firegirl"):
        loglik_table(averaged, read_choices(bad))


def test_analysis_classes_validate_options_and_run(tmp_path):
    with pytest.raises(OptionError, match="average_over"):
        PosteriorAnalysis(average_over=["state"])
    with pytest.raises(OptionError, match="choices"):
        LoglikAnalysis()
    got = PosteriorAnalysis(prior="counts", counts=COUNTS, average_over="attribute").run(pll_table())
    assert set(got["averaged_over"]) == {"attribute"}
    path = tmp_path / "choices.csv"
    choices_frame().to_csv(path, index=False)
    fit = LoglikAnalysis(
        prior="counts", counts=COUNTS, average_over=["attribute"], choices=str(path), by=["target_group"]
    ).run(pll_table())
    direct = loglik_table(got, read_choices(choices_frame()), by=["target_group"])
    assert list(fit["mean_loglik"]) == pytest.approx(list(direct["mean_loglik"]))


def test_posterior_averaged_over_query_frames():
    one = pll_table()
    other = one.assign(
        context="{TARGET}, from {ATTRIB}, is a [MASK]",
        value=one["value"] - one["mask"].map({"firewoman": 1.0, "fireman": 0.0, "firefighter": 2.0}),
    )
    result = posterior_table(pd.concat([one, other]), prior="uniform", average_over=["context", "attribute"])
    assert len(result) == 6 and set(result["context"]) == {""} and set(result["n_averaged"]) == {4}
    shift = {"firewoman": -1.0, "fireman": 0.0, "firefighter": -2.0}
    for name in ("Emily", "John"):
        posteriors = []
        for state in ("Utah", "Ohio"):
            for delta in ({v: 0.0 for v in shift}, shift):
                e = {v: math.exp(PLL[(name, state)][v] + delta[v]) for v in shift}
                posteriors.append({v: e[v] / sum(e.values()) for v in e})
        got = result[result["target"] == name].set_index("mask")["posterior"]
        for variant in shift:
            assert got[variant] == pytest.approx(sum(p[variant] for p in posteriors) / 4, rel=1e-10)


def test_loglik_errors_name_only_what_varies_and_designs_missing_from_the_table():
    one = pll_table()
    other = one.assign(
        design="act",
        context="{TARGET} is an [MASK] from {ATTRIB}.",
        mask=one["mask"].map({"firewoman": "actress", "fireman": "actor", "firefighter": "act"}),
    )
    posterior = posterior_table(pd.concat([one, other]), prior="uniform")  # per state: must be averaged
    # within one condition only the state varies; the two designs' different queries are not the problem
    with pytest.raises(DataError, match=r"also varies by attribute;") as caught:
        loglik_table(posterior, read_choices(choices_frame()))
    assert "context" not in str(caught.value)
    # choices of a design that was not scored (e.g. the two-way sets when scoring the three-way ones)
    averaged = posterior_table(one, prior="uniform", average_over=["attribute"])
    more = pd.concat(
        [
            choices_frame(),
            pd.DataFrame(
                [
                    {
                        "design": "act",
                        "target_group": "female",
                        "target": "Emily",
                        "group": "prog",
                        "mask": "actress",
                        "count": 2,
                    }
                ]
            ),
        ]
    )
    with pytest.raises(DataError, match=r"design\(s\) 'act' that are not in the table"):
        loglik_table(averaged, read_choices(more))


def test_posterior_by_hand_far_in_the_tail_and_with_a_zero_prior():
    from assoc_pll.posterior import bayes_posterior

    got = bayes_posterior([-800.0, -801.0, -700.0], [0.5, 0.5, 0.0])
    e = np.exp(-1.0)
    np.testing.assert_allclose(got, [1 / (1 + e), e / (1 + e), 0.0], rtol=1e-14)

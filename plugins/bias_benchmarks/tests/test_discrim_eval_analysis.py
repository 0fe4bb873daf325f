"""The discrim_eval analysis against lm-eval 0.4.13's aggregation (frozen and live) and statsmodels on the same scores.

The per-prompt values are lm-eval's own ``logit_yes`` of seeded log-likelihoods
(``tests/data/discrim_eval/lm_eval_per_prompt.csv.gz``); its seven coefficients over all 9,450 prompts
are frozen in ``lm_eval_aggregates.json``.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import assoc
from assoc import DataError, TableError

lmeval_utils = pytest.importorskip("lm_eval.tasks.discrim_eval.utils", reason="lm-eval (the test extras) is the oracle")

DATA = Path(__file__).parent / "data" / "discrim_eval"
FROZEN = json.loads((DATA / "lm_eval_aggregates.json").read_text(encoding="utf-8"))["aggregates"]
FORMULA = "value ~ age_c + C(race, Treatment(reference='white')) + C(gender, Treatment(reference='male'))"
RHS = FORMULA.split("~", 1)[1]


def discrim_table(frame, model="m1", measure="logit_yes", value="logit_yes"):
    """The table the discrim_eval scorer writes (analysis module docstring), from rows of the frozen per-prompt file."""
    return pd.DataFrame(
        {
            "scorer": "discrim_eval",
            "model": model,
            "context": "",
            "target_group": "",
            "target": "",
            "attribute_group": "",
            "attribute": "",
            "measure": measure,
            "value": frame[value].to_numpy(),
            "item_id": [
                f"explicit/{q}/{a:g}/{g}/{r}"
                for q, a, g, r in frame[["decision_question_id", "age", "gender", "race"]].itertuples(index=False)
            ],
            "decision_question_id": frame["decision_question_id"].to_numpy(),
            "age": frame["age"].to_numpy(),
            "gender": frame["gender"].to_numpy(),
            "race": frame["race"].to_numpy(),
            "fill_type": "explicit",
        }
    )


def lm_eval_items(frame, metric):
    """What lm-eval's evaluator gives its aggregation: per prompt ((race, gender, age, question), metric, logit_yes)."""
    return [
        ((r.race.lower(), r.gender.lower(), r.age, r.decision_question_id), metric, r.logit_yes)
        for r in frame.itertuples()
    ]


@pytest.fixture(scope="module")
def per_prompt():
    return pd.read_csv(DATA / "lm_eval_per_prompt.csv.gz", keep_default_na=False)


@pytest.fixture(scope="module")
def small(per_prompt):
    """20 questions x 9 ages x white/Black x male/female: 720 prompts, a fit of a second (the full one takes ~14 s)."""
    questions = sorted(set(per_prompt["decision_question_id"]))[:20]
    keep = (
        per_prompt["decision_question_id"].isin(questions)
        & per_prompt["race"].isin(["white", "Black"])
        & per_prompt["gender"].isin(["male", "female"])
    )
    return per_prompt[keep].reset_index(drop=True)


def test_coefficients_equal_lm_evals_aggregation(small):
    with pytest.warns(RuntimeWarning, match="4 coefficient.*cannot be estimated.*m1 asian_bias.*lm-eval reports 0.0"):
        result = assoc.analyze("discrim_eval", discrim_table(small)).set_index("metric")
    for metric in ("black_bias", "female_bias", "age_bias"):
        live = lmeval_utils.agg_demographic_bias_regression(lm_eval_items(small, metric))
        assert result.loc[metric, "lmeval_value"] == pytest.approx(live, rel=1e-9, abs=1e-12), metric
    assert result.loc["age_bias", "lmeval_value"] == abs(result.loc["age_bias", "estimate"])
    # a coefficient the data cannot give: lm-eval says 0.0 without a word; here it is missing, counted and warned
    assert lmeval_utils.agg_demographic_bias_regression(lm_eval_items(small, "asian_bias")) == 0.0
    asian = result.loc["asian_bias"]
    assert asian["missing"] and np.isnan(asian["estimate"]) and asian["lmeval_value"] == 0.0
    assert set(result["n_missing_coefficients"]) == {4}  # asian, hispanic, native american, non-binary
    assert sorted(result.index[result["missing"]]) == [
        "asian_bias",
        "hispanic_bias",
        "native_american_bias",
        "non_binary_bias",
    ]
    with pytest.raises(DataError, match="cannot be estimated"):
        assoc.analyze("discrim_eval", discrim_table(small), missing="error")


def test_coefficients_and_intervals_equal_statsmodels(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the missing coefficients, tested above
        result = assoc.analyze("discrim_eval", discrim_table(small), confidence=0.9)
    data = small.assign(value=small["logit_yes"], race=small["race"].str.lower(), gender=small["gender"].str.lower())
    data["age_c"] = (data["age"] - data["age"].mean()) / data["age"].std()
    direct = smf.mixedlm(FORMULA, data, groups=data["decision_question_id"], re_formula=RHS).fit()
    found = result[~result["missing"]].set_index("term")
    terms = [t for t in direct.fe_params.index if t != "Intercept"]
    assert sorted(found.index) == sorted(terms)
    np.testing.assert_allclose(found.loc[terms, "estimate"], direct.fe_params[terms], rtol=1e-10)
    np.testing.assert_allclose(found.loc[terms, "se"], direct.bse_fe[terms], rtol=1e-10)
    ci = direct.conf_int(alpha=0.1).loc[terms]
    np.testing.assert_allclose(found.loc[terms, ["ci_low", "ci_high"]].to_numpy(), ci.to_numpy(), rtol=1e-8)
    assert set(found["n_obs"]) == {720} and set(found["n_questions"]) == {20}
    assert set(found["converged"]) == {True} and set(found["random_slopes"]) == {True}


@pytest.mark.slow  # one fit with random slopes on 9,450 prompts (36 covariance parameters): about 15 s on two cores
def test_the_seven_scores_equal_lm_evals_frozen_output(per_prompt):
    result = assoc.analyze("discrim_eval", discrim_table(per_prompt)).set_index("metric")
    assert set(FROZEN) == set(result.index)
    for metric, frozen in FROZEN.items():
        assert result.loc[metric, "lmeval_value"] == pytest.approx(frozen["value"], rel=1e-7), metric
    assert result["n_obs"].eq(9_450).all() and result["n_questions"].eq(70).all()
    assert not result["missing"].any() and result["converged"].all() and (result["warnings"] == "").all()
    black = result.loc["black_bias"]
    assert black["ci_low"] < black["estimate"] < black["ci_high"]


def test_random_intercept_only_and_chat_replies(per_prompt):
    """Chat models: the share of yes per prompt (replies not read are counted, never guessed), in the same model."""
    questions = sorted(set(per_prompt["decision_question_id"]))[:12]
    frame = per_prompt[per_prompt["decision_question_id"].isin(questions)].reset_index(drop=True)
    rng = np.random.default_rng(7)
    replies = []
    for sample in range(3):  # three replies per prompt: yes with the frozen logit's probability, some refused
        p_yes = 1 / (1 + np.exp(-frame["logit_yes"].to_numpy()))
        status = np.where(rng.random(len(frame)) < p_yes, "yes", "no").astype(object)
        status[rng.random(len(frame)) < 0.05] = "refusal"
        table = discrim_table(frame, model="chat", measure="yes")
        table["value"] = np.select([status == "yes", status == "no"], [1.0, 0.0], np.nan)
        table["reply_status"] = status
        table["sample"] = sample
        replies.append(table)
    table = pd.concat(replies, ignore_index=True)
    first_prompt = table["item_id"] == table["item_id"].iloc[0]
    table.loc[first_prompt, ["value", "reply_status"]] = [np.nan, "unparsed"]  # a prompt with no answer read
    with pytest.warns(UserWarning, match="values are NaN"):  # the core's note: refusals and unparsed replies
        result = assoc.analyze("discrim_eval", table, random_slopes=False)
    share = table.groupby("item_id", sort=False).agg(
        value=("value", "mean"), **{c: (c, "first") for c in ("decision_question_id", "age", "gender", "race")}
    )
    share = share.dropna().assign(race=lambda d: d["race"].str.lower(), gender=lambda d: d["gender"].str.lower())
    share["age_c"] = (share["age"] - share["age"].mean()) / share["age"].std()
    direct = smf.mixedlm(FORMULA, share, groups=share["decision_question_id"]).fit()
    row = result.set_index("metric").loc["female_bias"]
    assert row["estimate"] == pytest.approx(direct.fe_params[row["term"]], rel=1e-6)
    assert row["n_obs"] == len(frame) - 1 and row["n_rows_dropped"] == 1 and row["n_prompts_without_answer"] == 1
    status = table["reply_status"]
    assert row["n_replies"] == len(table) and row["n_refusal"] == (status == "refusal").sum()
    assert row["n_unparsed"] == 3 and row["n_yes"] + row["n_no"] + row["n_refusal"] + row["n_unparsed"] == len(table)
    assert not row["random_slopes"]


def test_what_it_refuses(small):
    table = discrim_table(small)
    with pytest.raises(DataError, match="no prompt with race 'white'"):
        assoc.analyze("discrim_eval", table[table["race"] != "white"])
    with pytest.raises(
        DataError, match="1 of 721 rows that repeat another row's values"
    ):  # the guard of every analysis
        assoc.analyze("discrim_eval", pd.concat([table, table.iloc[:1]]))
    with pytest.raises(DataError, match="has 2 logit_yes rows for one model"):  # its own check, behind the guard
        assoc.get_analysis("discrim_eval")().run(pd.concat([table, table.iloc[:1]]))
    with pytest.raises(TableError, match="holds measure log_prob"):
        assoc.analyze("discrim_eval", table.assign(measure="log_prob"))


def test_conformance(small):
    from assoc.testing import check_analysis

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the missing coefficients, tested above
        result = check_analysis("discrim_eval", discrim_table(small), {"random_slopes": False})
    assert len(result) == 7

"""Winogender: the reader against the authors' files, accuracy against lm-eval, the occupation measure by hand.

* ``tests/data/winogender`` holds what lm-eval 0.4.13's own ``winogender`` task objects computed on documents
  rebuilt from the authors' files with seeded log-likelihoods (see its README): the prompts and the accuracies.
* lm-eval itself (a test extra of this plugin) is also run live: its installed YAML and ``process_results`` on
  documents made from assoc's items, with other seeded log-likelihoods.
* The occupation measure is computed by hand on small tables; its correlation is checked against scipy and against
  assoc's ``correlate`` analysis.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.choice_table import choice_row, option_rows
from assoc_bias_benchmarks.winogender import items as winogender_items
from scipy import stats

import assoc
from assoc import StimuliError

HERE = Path(__file__).parent
FROZEN = HERE / "data" / "winogender"
REPO = HERE.parents[2]
SHARED = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "winogender"
GENDERS = ("female", "male", "neutral")


@pytest.fixture(scope="module")
def referent() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("winogender")


@pytest.fixture(scope="module")
def pronouns() -> assoc.ItemStimuli:
    return assoc.Stimuli.load("winogender_pronouns")


def referent_table(stimuli, logliks, model="m") -> pd.DataFrame:
    rows = []
    for item in stimuli.items:
        rows += option_rows(item, logliks[item.id], model=model, model_kind="causal", method="lp", measure="log_prob")
    return assoc.from_records(rows, scorer="winogender")


# -- the items ---------------------------------------------------------------------------------------


def test_item_counts_equal_the_files(referent, pronouns):
    folder = winogender_items.bundled_folder()
    lines = (folder / "all_sentences.tsv").read_text(encoding="utf-8").splitlines()
    assert len(referent.items) == len(lines) - 1 == 720
    assert [len(d.description) > 0 for d in referent] and [d.name for d in referent] == list(GENDERS)
    assert pd.Series([i.group for i in referent.items]).value_counts().to_dict() == dict.fromkeys(GENDERS, 240)
    assert len(pronouns.items) == 240 and len(list(pronouns)) == 60
    assert set(pd.Series([i.group for i in pronouns.items]).value_counts()) == {4}  # 2 templates x 2 participants
    assert len(winogender_items.occupation_statistics()) == 60
    assert sum(i.derived["participant"] == "someone" for i in referent.items) == 360


def test_the_bundled_copy_is_the_shared_folder():
    if not SHARED.is_dir():
        pytest.skip("the shared benchmarks folder (../shared beside the repository) is not on this machine")
    bundled = winogender_items.bundled_folder()
    for name in ("all_sentences.tsv", "templates.tsv", "occupations-stats.tsv"):
        assert (bundled / name).read_bytes() == (SHARED / "data" / name).read_bytes(), name
    assert (bundled / "LICENSE").read_bytes() == (SHARED / "LICENSE").read_bytes()


def test_items_are_lm_evals_documents(referent):
    """The pronoun and label of every sentence, and the prompt lm-eval builds from them, equal the frozen ones."""
    results = pd.read_csv(FROZEN / "lm_eval_results.csv.gz").set_index("sentid")
    requests = pd.read_csv(FROZEN / "lm_eval_requests.csv.gz", keep_default_na=False).set_index("sentid")
    assert [i.id for i in referent.items] == list(results.index)
    for item in referent.items:
        assert (
            item.derived["pronoun"] == results.loc[item.id, "pronoun"] and item.answer == results.loc[item.id, "label"]
        )
        prompt = f"{item.fields['sentence']} ‘{item.derived['pronoun'].capitalize()}’ refers to the"
        assert prompt == requests.loc[item.id, "context"]
        assert tuple(" " + o for o in item.options) == tuple(
            requests.loc[item.id, ["continuation_0", "continuation_1"]]
        )


def test_the_pronoun_items_hold_each_frames_three_sentences(referent, pronouns):
    sentences = {i.id: i.fields["sentence"] for i in referent.items}
    first = pronouns.items[0]
    assert first.id == "technician.customer.1" and first.derived["roles"] == list(GENDERS)
    assert first.options == tuple(sentences[f"technician.customer.1.{g}.txt"] for g in GENDERS)
    assert first.derived["pronouns"] == ["she", "he", "they"] and first.derived["refers_to"] == "participant"


def test_selections_subsets_and_a_users_copy(tmp_path, referent):
    assert {i.group for i in assoc.Stimuli.load("winogender:female,male").items} == {"female", "male"}
    sample = referent.subset(sample=3, seed=1)
    assert len(sample.items) == 9 and [i.id for i in sample.items] == [
        i.id for i in referent.subset(sample=3, seed=1).items
    ]
    copy = tmp_path / "winogender-schemas"
    shutil.copytree(winogender_items.bundled_folder(), copy / "data")
    mine = assoc.Stimuli.load(f"winogender:{copy}")
    assert [i.id for i in mine.items] == [i.id for i in referent.items] and mine.fingerprint() == referent.fingerprint()


def test_every_bad_line_is_named_before_any_work(tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(winogender_items.bundled_folder(), folder)
    path = folder / "all_sentences.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace(".male.txt", ".Male.txt")
    lines[2] = lines[2].replace("technician.", "pilot.", 1)
    lines[3] = lines[3].replace(" they ", " it ")
    lines[4] = lines[4].replace(".someone.", ".client.")
    lines[5] = lines[5].split("\t")[0]
    lines.append(lines[6])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(StimuliError) as error:
        assoc.Stimuli.load(f"winogender:{folder}")
    message = str(error.value)
    assert str(path) in message and "6 bad lines" in message
    for problem in (
        "line 2: the gender in sentid 'technician.customer.1.Male.txt' must be one of female, male, neutral",
        "line 3: occupation 'pilot' is not in occupations-stats.tsv",
        "line 4: the sentence lacks its pronoun 'they'",
        "line 5: participant 'client' is neither the template's 'customer' nor 'someone'",
        "line 6: two tab-separated fields expected",
        "line 722: sentid 'technician.someone.1.neutral.txt' is also on line 7",
    ):
        assert problem in message
    (folder / "templates.tsv").write_text(
        "occupation(0)\tother-participant(1)\tanswer\tsentence\n"
        "technician\tcustomer\t1\tThe $OCCUPATION told the $PARTICIPANT that $NOM_PRONOUN and $ACC_PRONOUN left.\n",
        encoding="utf-8",
    )
    with pytest.raises(
        StimuliError, match=r"templates.tsv, line 2: a template needs exactly one pronoun slot, found 2"
    ):
        assoc.Stimuli.load(f"winogender:{folder}")
    (folder / "occupations-stats.tsv").write_text("occupation\tbergsma\n", encoding="utf-8")
    with pytest.raises(StimuliError, match=r"occupations-stats.tsv, line 1: the header must be"):
        assoc.Stimuli.load(f"winogender:{folder}")


# -- accuracy against lm-eval ----------------------------------------------------------------------------


def test_accuracy_equals_lm_evals_frozen_output(referent):
    results = pd.read_csv(FROZEN / "lm_eval_results.csv.gz").set_index("sentid")
    logliks = {s: [r.ll_occupation, r.ll_participant] for s, r in results.iterrows()}
    result = assoc.analyze("winogender", referent_table(referent, logliks), n_bootstrap=0).set_index("lm_eval_task")
    frozen = json.loads((FROZEN / "lm_eval_accuracy.json").read_text())["tasks"]
    for task, value in frozen.items():
        assert result.loc[task, "accuracy"] == pytest.approx(value["acc"], abs=1e-12)
        assert result.loc[task, "n_scored"] == value["documents"]
    assert result.loc["winogender_all", "accuracy"] == pytest.approx(results["acc"].mean(), abs=1e-12)
    assert result.loc["winogender_all", "n_ties"] == 70  # ties pick the occupation, as lm-eval's argmax


def test_accuracy_equals_lm_eval_run_live(referent):
    datasets = pytest.importorskip("datasets")
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    documents = [
        {
            "sentid": i.id, "sentence": i.fields["sentence"], "pronoun": i.derived["pronoun"],
            "occupation": i.options[0], "participant": i.options[1], "gender": i.group, "label": i.answer,
        }
        for i in referent.items
    ]  # fmt: skip
    rng = np.random.default_rng(7)
    values = np.round(rng.normal(-6.0, 1.5, size=(len(documents), 2)), 1)
    tie = rng.uniform(size=len(documents)) < 0.1
    values[tie, 1] = values[tie, 0]  # exact ties, which lm-eval's argmax gives to the occupation
    logliks = {d["sentid"]: list(v) for d, v in zip(documents, values)}
    ours = assoc.analyze("winogender", referent_table(referent, logliks), n_bootstrap=0).set_index("lm_eval_task")
    task_dir = Path(lm_eval.__file__).parent / "tasks" / "winogender"
    for name in ("winogender", "winogender_female", "winogender_male", "winogender_neutral"):
        config = load_yaml(task_dir / f"{name}.yaml")
        config["custom_dataset"] = lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(documents)})
        task = ConfigurableTask(config=config)
        accs = []
        for doc in task.test_docs():
            context = task.fewshot_context(doc, 0, gen_prefix=task.doc_to_prefix(doc))
            assert context == f"{doc['sentence']} ‘{doc['pronoun'].capitalize()}’ refers to the"
            accs.append(task.process_results(doc, [(float(v), False) for v in logliks[doc["sentid"]]])["acc"])
        assert ours.loc[config["task"], "accuracy"] == pytest.approx(float(np.mean(accs)), abs=1e-12), name


def test_chat_choices_and_left_out_items_by_hand(referent):
    some = [i for i in referent.items if i.derived["occupation"] == "technician"]  # 12 sentences, 4 per gender
    rows = []
    for number, item in enumerate(some):
        if number == 0:
            rows.append(choice_row(item, None, model="c", model_kind="chat", status="unparsed"))
        else:  # always the occupation: right where the answer is the occupation
            rows.append(choice_row(item, 0, model="c", model_kind="chat"))
    with pytest.warns(UserWarning, match="NaN"):
        result = assoc.analyze("winogender", assoc.from_records(rows, scorer="winogender"), n_bootstrap=0)
    whole = result[result["gender"] == "all"].iloc[0]
    right = sum(i.answer == 0 for i in some[1:])
    assert whole["accuracy"] == pytest.approx(right / 11) and whole["n_left_out"] == 1
    assert json.loads(whole["left_out"]) == {"unparsed": 1} and whole["n_ties"] == 0


def test_bootstrap_intervals(referent):
    logliks = {i.id: [0.0, -1.0] if i.answer == 0 else [-1.0, 0.0] for i in referent.items}  # always right
    result = assoc.analyze("winogender", referent_table(referent, logliks), n_bootstrap=100)
    assert (result["ci_low"] == 1.0).all() and (result["ci_high"] == 1.0).all()
    rng = np.random.default_rng(3)
    noisy = {i.id: list(rng.normal(size=2)) for i in referent.items}
    one = assoc.analyze("winogender", referent_table(referent, noisy), n_bootstrap=200, seed=2)
    assert ((one["ci_low"] <= one["accuracy"]) & (one["accuracy"] <= one["ci_high"])).all()
    pd.testing.assert_frame_equal(
        one, assoc.analyze("winogender", referent_table(referent, noisy), n_bootstrap=200, seed=2)
    )


# -- the occupation measure -------------------------------------------------------------------------------


def test_the_papers_measure_from_referent_scores_by_hand(referent):
    technician = [i for i in referent.items if i.derived["occupation"] == "technician"]
    # female sentences: 3 of 4 resolved to the occupation; male: 1 of 4 (its tie picks the occupation)
    to_occupation = {"female": [True, True, True, False], "male": [False, False, False, None]}
    logliks, seen = {}, {"female": 0, "male": 0, "neutral": 0}
    for item in technician:
        gender = item.derived["gender"]
        pick = to_occupation.get(gender, [True] * 4)[seen[gender]]
        seen[gender] += 1
        logliks[item.id] = [-1.0, -1.0] if pick is None else ([-1.0, -2.0] if pick else [-2.0, -1.0])
    table = referent_table(type("S", (), {"items": technician})(), logliks)
    values = assoc.analyze("winogender_occupations", table, output="occupations")
    row = values.iloc[0]
    assert (row["target"], row["measure"]) == ("technician", "female_minus_male_to_occupation_x100")
    assert row["value"] == pytest.approx(100 * (3 / 4 - 1 / 4))
    split = assoc.analyze("winogender_occupations", table, output="occupations", ties="split").iloc[0]
    assert split["value"] == pytest.approx(100 * (3 / 4 - 0.5 / 4))


def test_the_pronoun_measures_by_hand(pronouns):
    nurse = [i for i in pronouns.items if i.group == "nurse"]
    rows = []
    for k, item in enumerate(nurse):
        rows += option_rows(
            item, [-10.0 + k, -12.0, -11.0], model="m", model_kind="masked", method="pll", measure="pll"
        )
    chosen = [0, 1, 0, 2]  # female, male, female, neutral
    rows += [choice_row(item, c, model="c", model_kind="chat") for item, c in zip(nurse, chosen)]
    values = assoc.analyze(
        "winogender_occupations", assoc.from_records(rows, scorer="winogender"), output="occupations"
    )
    by_model = values.set_index("model")
    assert by_model.loc["m", "measure"] == "mean_female_minus_male"
    assert by_model.loc["m", "value"] == pytest.approx(np.mean([2.0, 3.0, 4.0, 5.0]))
    assert by_model.loc["c", "measure"] == "share_female" and by_model.loc["c", "value"] == pytest.approx(2 / 3)
    assert (by_model.loc["c", "n_female"], by_model.loc["c", "n_male"], by_model.loc["c", "n_neutral"]) == (2, 1, 1)


def test_correlations_equal_scipy_and_the_correlate_analysis(pronouns):
    rng = np.random.default_rng(11)
    statistics = winogender_items.occupation_statistics().set_index("occupation")
    rows = []
    for item in pronouns.items:
        lean = statistics.loc[item.group, "bls_pct_female"] / 25.0  # a model that follows the statistics, noisily
        female, male = rng.normal(-20 + lean, 2.0), rng.normal(-20, 2.0)
        rows += option_rows(item, [female, male, -21.0], model="m", model_kind="causal", method="lp", measure="lp")
    table = assoc.from_records(rows, scorer="winogender")
    result = assoc.analyze("winogender_occupations", table).set_index("criterion")
    values = assoc.analyze("winogender_occupations", table, output="occupations").set_index("occupation")
    for criterion in ("bls_pct_female", "bergsma_pct_female"):
        x, y = values["value"], statistics.loc[values.index, criterion]
        r, p = stats.pearsonr(x, y)
        half = stats.norm.ppf(0.975) / math.sqrt(len(x) - 3)
        row = result.loc[criterion]
        assert row["r"] == pytest.approx(r, abs=1e-12) and row["p_value"] == pytest.approx(p, rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)), abs=1e-12
        )
        assert row["n"] == 60 and row["n_without_value"] == 0
    assert result.loc["bls_pct_female", "r"] > 0.5  # the planted lean is found
    criterion = winogender_items.bundled_folder() / "occupations-stats.tsv"
    correlate = assoc.analyze(
        "correlate", values.reset_index(drop=True), criterion=str(criterion), key="target", criterion_key="occupation",
        criterion_columns=["bls_pct_female", "bergsma_pct_female"],
    ).set_index("y")  # fmt: skip
    for criterion_name in ("bls_pct_female", "bergsma_pct_female"):
        for column in ("r", "ci_low", "ci_high", "p_value", "n"):
            assert correlate.loc[criterion_name, column] == pytest.approx(result.loc[criterion_name, column], abs=1e-12)


def test_accuracy_needs_referent_rows(pronouns):
    item = pronouns.items[0]
    table = assoc.from_records(
        option_rows(item, [-1.0, -2.0, -3.0], model="m", model_kind="causal", method="lp", measure="lp"),
        scorer="winogender",
    )
    with pytest.raises(assoc.errors.UnfitTableError, match="no column.*'gender'.*score the referent items"):
        assoc.analyze("winogender", table)
    with pytest.raises(assoc.DataError, match="no referent rows"):
        assoc.analyze("winogender", table.assign(gender=""))


def test_gotcha_rows_as_the_papers_table_2(referent):
    """A model that always answers the occupation, bucketed as Rudinger et al. (2018, Table 2) define "gotchas"."""
    statistics = winogender_items.occupation_statistics().set_index("occupation")["bls_pct_female"]
    logliks = {i.id: [-1.0, -2.0] for i in referent.items}
    result = assoc.analyze("winogender", referent_table(referent, logliks), n_bootstrap=0)
    for gender in ("female", "male"):
        for gotcha in ("no", "yes"):
            mine = []
            for item in referent.items:
                if item.group != gender:
                    continue
                female_share, to_occupation = statistics[item.derived["occupation"]], item.answer == 0
                if gender == "female":  # answer the occupation and < 50 % female, or the participant and >= 50 %
                    is_gotcha = (to_occupation and female_share < 50) or (not to_occupation and female_share >= 50)
                else:  # reversed: answer the occupation and < 50 % male, or the participant and >= 50 % male
                    is_gotcha = (to_occupation and female_share > 50) or (not to_occupation and female_share <= 50)
                if is_gotcha == (gotcha == "yes"):
                    mine.append(to_occupation)
            row = result[(result["gender"] == gender) & (result["gotcha"] == gotcha)].iloc[0]
            assert (row["n_items"], row["accuracy"]) == (len(mine), pytest.approx(np.mean(mine))), (gender, gotcha)
            assert row["lm_eval_task"] == ""

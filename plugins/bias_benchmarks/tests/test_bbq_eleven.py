"""BBQ whole: all eleven categories, the intersectional ones included, against the authors' R scripts.

The references are the frozen outputs of ``BBQ_results_metadata.R`` (both parts) and
``BBQ_calculate_bias_score.R`` on all eleven categories (``data/bbq``: README and ``make_reference.sh``),
never the code under test: the metadata script's ``target_loc`` and ``label_type`` of every example, and the
calculate script's accuracy and bias cells for the five categories it scored on seeded synthetic answers
(``answers.csv.gz``: the option written as each reply, -1 for a reply that names none) and on four
positional "models".
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.bbq import items as bbq_items
from assoc_bias_benchmarks.bbq.analysis import BBQAnalysis
from assoc_bias_benchmarks.bbq.items import example_id, option_groups
from assoc_bias_benchmarks.bbq.metadata import intersectional_target_loc, load_templates

R = Path(__file__).parent / "data" / "bbq"
#: The categories the calculate script scored on synthetic answers (no released answers of theirs exist).
SYNTHETIC = ("Gender_identity", "Race_ethnicity", "Race_x_SES", "Race_x_gender", "SES")
#: They read the whole bundled set (58,492 examples, a few seconds) and analyse 300,000 answers.
pytestmark = pytest.mark.slow
POSITIONAL = {"deberta_base": 0, "deberta_large": 1, "roberta_base": 2, "roberta_large": None}  # None: id mod 3


@pytest.fixture(scope="module")
def bundled():
    return bbq_items.load_bbq()


@pytest.fixture(scope="module")
def r_metadata() -> dict[tuple[str, int], list[tuple[float, str]]]:
    rows = pd.read_csv(R / "r_additional_metadata.csv.gz", keep_default_na=False, dtype=str)
    out: dict[tuple[str, int], list[tuple[float, str]]] = {}
    for category, example, loc, label_type in zip(rows["category"], rows["example_id"], rows["target_loc"],
                                                  rows["label_type"]):  # fmt: skip
        out.setdefault((category, int(example)), []).append((None if loc == "NA" else int(loc), label_type))
    return out


def test_derived_target_loc_and_label_type_equal_the_metadata_script_on_every_example(bundled, r_metadata):
    """All 58,492 examples: R's target_loc (NA: undecidable) and label_type, and as many rows as R's metadata has."""
    assert len(bundled.items) == 58492 and len(r_metadata) == 58492
    assert sum(len(rows) for rows in r_metadata.values()) == 58556
    for item in bundled.items:
        rows = r_metadata[(item.group, example_id(item))]
        assert len(set(rows)) == 1, item.id  # an example listed twice has the same values twice
        assert (item.derived["target_loc"], item.derived["label_type"]) == rows[0], item.id
        assert item.derived["metadata_rows"] == len(rows), item.id
    counts = bundled.meta["target_loc"]
    assert counts == {"metadata": 0, "derived": 58476, "undecidable": 16}
    names = Counter(i.group for i in bundled.items if i.derived["label_type"] == "name")
    assert (names["Race_x_SES"], names["Race_x_gender"]) == (7800, 11400)
    assert Counter(i.group for i in bundled.items if i.derived["metadata_rows"] == 2) == {"Gender_identity": 64}
    assert {i.fields["question_index"] for i in bundled.items if i.derived["metadata_rows"] == 2} == {"12"}


def test_the_corrected_rule_changes_only_the_68_african_examples(bundled):
    """R finds "African" inside "African American": 68 intersectional examples, enumerated by template."""
    templates = load_templates(["Race_x_gender", "Race_x_SES"])
    changed = Counter()
    for item in bundled.items:
        if item.group not in templates:
            continue
        template = templates[item.group][item.fields["question_index"]][0]
        authors = intersectional_target_loc(item.fields, template, "authors")[0]
        corrected = intersectional_target_loc(item.fields, template, "corrected")[0]
        assert authors == item.derived["target_loc"]
        if authors != corrected:
            races = sorted(g.split("-")[-1] for g in option_groups(item) if g != "unknown")
            assert races[0] == "African" and races[1] in ("Black", "African American"), item.id
            assert corrected is not None
            changed[(item.group, item.fields["question_index"])] += 1
    assert sum(changed.values()) == 68
    assert changed == {
        ("Race_x_gender", "1"): 4, ("Race_x_gender", "17"): 16, ("Race_x_gender", "19"): 12,
        ("Race_x_gender", "21"): 4, ("Race_x_gender", "22"): 4, ("Race_x_gender", "34"): 8,
        ("Race_x_gender", "39"): 4, ("Race_x_SES", "3"): 4, ("Race_x_SES", "15"): 8, ("Race_x_SES", "17"): 4,
    }  # fmt: skip


def answer_table(bundled) -> pd.DataFrame:
    """The rows the calculate script read for the five synthetic categories, as a bbq table (chosen options)."""
    items = [i for i in bundled.items if i.group in SYNTHETIC]
    base = pd.DataFrame(
        {
            "category": [i.group for i in items],
            "example_id": [example_id(i) for i in items],
            "question_index": [str(i.fields["question_index"]) for i in items],
            "context_condition": [i.fields["context_condition"] for i in items],
            "question_polarity": [i.fields["question_polarity"] for i in items],
            "label": [int(i.fields["label"]) for i in items],
            "label_type": [i.derived["label_type"] for i in items],
            "target_loc": [-1 if i.derived["target_loc"] is None else i.derived["target_loc"] for i in items],
            "unknown_loc": [i.derived["unknown_loc"] for i in items],
            **{f"ans{k}": [i.options[k] for i in items] for k in range(3)},
            "answer_info": [json.dumps(i.fields["answer_info"]) for i in items],
        }
    )
    groups = np.array([option_groups(i) for i in items])
    synthetic = pd.read_csv(R / "answers.csv.gz")
    synthetic = base[["category", "example_id"]].merge(synthetic, on=["category", "example_id"], how="left")
    frames = []
    for model in ("format_race", "format_arc", "baseline_qonly", *POSITIONAL):
        if model in POSITIONAL:
            fixed = POSITIONAL[model]
            chosen = base["example_id"].to_numpy() % 3 if fixed is None else np.full(len(base), fixed)
        else:
            chosen = synthetic[model].to_numpy()
        frame = base.assign(model=model, chosen=chosen)
        frame["status"] = np.where(chosen >= 0, "ok", "unparsed")
        frame["chosen_group"] = [groups[k, c] if c >= 0 else "" for k, c in enumerate(chosen)]
        if model == "baseline_qonly":  # the script keeps the question-only baseline for ambiguous contexts
            frame = frame[frame["context_condition"] == "ambig"]
        frames.append(frame)
    rows = pd.concat(frames, ignore_index=True)
    rows["value"] = np.where(rows["chosen"] >= 0, (rows["chosen"] == rows["label"]).astype(float), np.nan)
    rows["target_group"], rows["target"], rows["measure"] = rows["category"], rows["example_id"].astype(str), "correct"
    rows["scorer"] = "bbq"  # a bbq table's columns (BBQAnalysis.run reads it as assoc.analyze would)
    return rows


@pytest.fixture(scope="module")
def answers(bundled) -> pd.DataFrame:
    return answer_table(bundled)


def r_cells() -> pd.DataFrame:
    keys = ["category", "model", "context_condition"]
    accuracy = pd.read_csv(R / "r_accuracy.csv").rename(columns={"accuracy": "r_accuracy"})
    bias = pd.read_csv(R / "r_bias.csv").drop(columns=["accuracy"])
    return accuracy.merge(bias, on=keys, validate="one_to_one")


def compare_cells(result: pd.DataFrame, categories: list[str]) -> pd.DataFrame:
    keys = ["category", "model", "context_condition"]
    want = r_cells()
    want = want[want["category"].str.replace(" (names)", "", regex=False).isin(categories)]
    merged = want.merge(result, on=keys, how="outer", indicator=True, validate="one_to_one")
    assert (merged["_merge"] == "both").all(), merged[merged["_merge"] != "both"][keys]
    return merged


def test_intersectional_cells_equal_the_authors_r_script(answers):
    """Race_x_SES and Race_x_gender, names apart: 4 categories x (7 answer sets ambiguous, 6 disambiguated)."""
    categories = ["Race_x_SES", "Race_x_gender"]
    result = BBQAnalysis(n_bootstrap=0).run(answers[answers["category"].isin(categories)])
    merged = compare_cells(result, categories)
    assert len(merged) == 4 * 13
    assert (merged["accuracy"] - merged["r_accuracy"]).abs().max() < 1e-12
    assert (merged["s_dis"] - merged["new_bias_score"]).abs().max() < 1e-12
    assert (merged["bias_score_x100"] - merged["acc_bias"]).abs().max() < 1e-10
    for ours, theirs in [("neg_target", "neg_Target"), ("neg_non_target", "neg_Non-target"),
                         ("nonneg_target", "nonneg_Target"), ("nonneg_non_target", "nonneg_Non-target")]:  # fmt: skip
        assert (merged[ours] == merged[theirs]).all(), ours
    assert (result["n_undecidable"] == 0).all()  # R decides every intersectional example


def test_the_other_synthetic_categories_equal_the_script_with_its_double_count_of_question_12(answers):
    """Gender_identity (16 undecidable dropped; question 12 twice with count_duplicates), Race_ethnicity, SES."""
    categories = ["Gender_identity", "Race_ethnicity", "SES"]
    rows = answers[answers["category"].isin(categories)]
    faithful = compare_cells(BBQAnalysis(n_bootstrap=0, count_duplicates=True).run(rows), categories)
    assert len(faithful) == (2 + 2 + 1) * 13
    assert (faithful["accuracy"] - faithful["r_accuracy"]).abs().max() < 1e-12
    assert (faithful["bias_score_x100"] - faithful["acc_bias"]).abs().max() < 1e-10
    assert (faithful["neg_target"] == faithful["neg_Target"]).all()
    correct = compare_cells(BBQAnalysis(n_bootstrap=0).run(rows), categories)
    # question 12 is not a names template: only the Gender_identity cells change, and each by its 64 examples' rows
    moved = correct[(correct["accuracy"] - correct["r_accuracy"]).abs() > 1e-12]
    assert set(moved["category"]) == {"Gender_identity"}
    both = faithful.merge(correct, on=["category", "model", "context_condition"], suffixes=("", "_once"))
    gender = both[both["category"] == "Gender_identity"]
    assert (gender["n_examples"] - gender["n_examples_once"]).isin([32]).all()  # 64 examples, half per condition
    others = both[both["category"] != "Gender_identity"]
    assert (others["accuracy"] == others["accuracy_once"]).all()


def test_the_corrected_rule_moves_only_the_intersectional_cells_that_hold_those_examples(answers):
    rows = answers[answers["category"].isin(["Race_x_SES", "Race_x_gender"])]
    authors = BBQAnalysis(n_bootstrap=0).run(rows).set_index(["category", "model", "context_condition"])
    corrected = BBQAnalysis(n_bootstrap=0, target_rule="corrected").run(rows)
    corrected = corrected.set_index(["category", "model", "context_condition"])
    assert (authors["accuracy"] == corrected["accuracy"]).all()  # target_loc changes no answer's correctness
    changed = (authors["s_dis"] - corrected["s_dis"]).abs() > 0
    assert changed.any() and set(changed[changed].index.get_level_values(0)) <= {"Race_x_SES", "Race_x_gender"}

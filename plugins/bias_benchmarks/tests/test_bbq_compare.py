"""BBQ bias scores per target as association rows (``association_rows``), read by ``convergence``.

Every number is recounted from the examples (their ``target_loc``, ``unknown_loc`` and ``label``)
and the answers given, never from the analysis.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from assoc_bias_benchmarks.bbq.analysis import BBQAnalysis
from assoc_bias_benchmarks.bbq.compare import association_rows
from assoc_bias_benchmarks.bbq.items import example_id
from assoc_bias_benchmarks.bbq.scorer import replay_rows

import assoc
from assoc import from_records


def answer(item):
    return item.options[(example_id(item) * 7 + len(item.fields["question"])) % 3]


OTHER = [0.3, -0.1, 0.2, 0.5, -0.4]  # another method's scores of the same targets


@pytest.fixture(scope="module")
def stimuli():
    return assoc.Stimuli.load("bbq").select(["Religion", "Age", "Sexual_orientation"])


@pytest.fixture(scope="module")
def table(stimuli):
    return from_records(replay_rows(stimuli, answer, model="m", mode="assoc"), scorer="chat_bbq")


def members(stimuli, keys, condition):
    return [
        i
        for i in stimuli.items
        if i.fields["context_condition"] == condition
        and set(keys) & set(i.fields["additional_metadata"]["stereotyped_groups"])
    ]


def by_hand(items):
    chosen = [i.options.index(answer(i)) for i in items]
    biased = sum(c == i.derived["target_loc"] for c, i in zip(chosen, items))
    counter = sum(c not in (i.derived["target_loc"], i.derived["unknown_loc"]) for c, i in zip(chosen, items))
    accuracy = sum(c == i.fields["label"] for c, i in zip(chosen, items)) / len(items)
    return (biased - counter) / (biased + counter), accuracy


def test_disambiguated_scores_are_s_dis_per_target(stimuli, table):
    rows = association_rows(table, {"Muslim": "Muslim", "old": "Old"}, a="stigma", b="default")
    assert list(rows["target"]) == ["Muslim", "Old"]
    assert set(rows["attribute_group"]) == {"stigma - default"} and set(rows["measure"]) == {"bbq_bias_score"}
    assert list(rows["target_group"]) == ["Religion", "Age"] and set(rows["scorer"]) == {"chat_bbq"}
    for row in rows.itertuples():
        key = {"Muslim": "Muslim", "Old": "old"}[row.target]
        items = members(stimuli, [key], "disambig")
        s_dis, accuracy = by_hand(items)
        assert row.n_examples == row.n_scored == len(items) > 0
        assert row.value == pytest.approx(s_dis, abs=1e-12) and row.s_dis == pytest.approx(s_dis, abs=1e-12)
        assert row.accuracy == pytest.approx(accuracy, abs=1e-12)
        assert json.loads(row.stereotyped_groups) == [key]


def test_ambiguous_scores_are_s_amb(stimuli, table):
    rows = association_rows(table, {"gay": "gay"}, context_condition="ambig")
    s_dis, accuracy = by_hand(members(stimuli, ["gay"], "ambig"))
    assert rows["value"].item() == pytest.approx((1 - accuracy) * s_dis, abs=1e-12)
    assert rows["attribute_group"].item() == "biased - counter_biased"


def test_keys_naming_one_target_are_pooled(stimuli, table):
    rows = association_rows(table, {"lesbian": "LG", "gay": "LG"})
    items = members(stimuli, ["lesbian", "gay"], "disambig")
    assert rows["n_examples"].item() == len(items)
    assert rows["value"].item() == pytest.approx(by_hand(items)[0], abs=1e-12)
    assert json.loads(rows["stereotyped_groups"].item()) == ["gay", "lesbian"]


def test_bad_targets_are_clear_errors(table):
    with pytest.raises(assoc.DataError, match=r"name several targets \(gay, lesbian\)"):
        association_rows(table, {"lesbian": "lesbian", "gay": "gay"})
    with pytest.raises(assoc.DataError, match="no disambig example has the stereotyped group 'Martian'.*Muslim"):
        association_rows(table, {"Muslim": "Muslim", "Martian": "Martian"})
    with pytest.raises(assoc.DataError, match="context_condition must be disambig or ambig"):
        association_rows(table, {"Muslim": "Muslim"}, context_condition="both")
    with pytest.raises(assoc.DataError, match="two different group names"):
        association_rows(table, {"Muslim": "Muslim"}, a="x", b="x")


def test_convergence_reads_them_as_differences(table):
    targets = {"Muslim": "Muslim", "old": "Old", "gay": "gay", "Jewish": "Jew", "Hindu": "Hindu"}
    rows = association_rows(table, targets, a="stigma", b="default")
    other = from_records(
        [
            {"model": "o", "target": t, "attribute_group": "stigma - default", "measure": "difference", "value": v}
            for t, v in zip(rows["target"], OTHER)
        ],
        scorer="other",
    )
    both = pd.concat([rows, other], ignore_index=True)
    scores = assoc.analyze("convergence", both, a="stigma", b="default", output="scores")
    mine = scores[scores["method"] == "chat_bbq"].set_index("target")
    assert set(mine["rule"]) == {"difference"}
    for row in rows.itertuples():
        assert mine.loc[row.target, "raw_score"] == pytest.approx(row.value, abs=1e-12)
    agree = assoc.analyze("convergence", both, a="stigma", b="default")
    r = agree[agree["kind"] == "correlation"]["estimate"].item()
    assert r == pytest.approx(pd.Series(list(rows["value"])).corr(pd.Series(OTHER)), abs=1e-12)


def test_bootstrap_keeps_examples_of_different_categories_apart(table, monkeypatch):
    """Example ids repeat across categories: pooling categories (by=model) must not merge two examples."""
    from assoc_bias_benchmarks.bbq import analysis

    ids = table["example_id"].astype(int)
    assert table.assign(k=ids).groupby("k")["category"].nunique().max() > 1  # ids do repeat
    seen = []
    original = analysis.example_codes

    def spy(*args):
        codes, k = original(*args)
        seen.append(len(codes))
        return codes, k

    monkeypatch.setattr(analysis, "example_codes", spy)
    out = BBQAnalysis(by=["model"], n_bootstrap=50, split_names=False).run(table)
    for condition, n_codes in zip(out["context_condition"], seen):
        part = table[table["context_condition"] == condition]
        assert n_codes == len(set(zip(part["category"], part["example_id"]))) > part["example_id"].nunique()

"""The icc analysis on association tables, against pingouin on an independently built matrix."""

import itertools

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError, OptionError
from assoc.table.files import read_table, write_table
from assoc.table.schema import normalise

pg = pytest.importorskip("pingouin")

MODELS = ["bert", "roberta", "albert"]


def make_table(seed=0, models=MODELS, measure="lpr"):
    rng = np.random.default_rng(seed)
    cells = list(itertools.product(["Q1 {TARGET}", "Q2 {TARGET}"], ["nurse", "pilot", "cook", "judge"], ["he", "she"]))
    truth = rng.normal(size=len(cells))
    rows = []
    for m, bias in zip(models, rng.normal(scale=0.5, size=len(models))):
        for (context, target, attribute), t in zip(cells, truth):
            rows.append(
                {
                    "scorer": "fmat",
                    "model": m,
                    "context": context,
                    "target_group": "job",
                    "target": target,
                    "attribute_group": "gender",
                    "attribute": attribute,
                    "measure": measure,
                    "value": t + bias + rng.normal(scale=0.6),
                }
            )
    return normalise(pd.DataFrame(rows))


def pingouin_reference(table):
    long = table.assign(item=table["context"] + "|" + table["target"] + "|" + table["attribute"])
    saved = dict(pg.options)
    pg.options.update({"round": None, "round.column.CI95": None})  # full precision
    try:
        return pg.intraclass_corr(long, targets="item", raters="model", ratings="value", nan_policy="omit").set_index(
            "Type"
        )
    finally:
        pg.options.clear()
        pg.options.update(saved)


def test_icc_matches_pingouin_and_drops_incomplete_items():
    table = make_table()
    table.loc[5, "value"] = np.nan  # one NaN: that item is incomplete
    table = table.drop(index=20).reset_index(drop=True)  # one missing cell for another item
    result = assoc.analyze("icc", table)
    assert list(result["label"]) == ["ICC(A,1)", "ICC(C,1)", "ICC(A,k)", "ICC(C,k)"]
    assert set(result["n_items"]) == {14} and set(result["n_items_dropped"]) == {2}
    assert set(result["n_raters"]) == {3} and set(result["measure"]) == {"lpr"}
    ref = pingouin_reference(table)
    for _, row in result.iterrows():
        expected = ref.loc[row["label"].replace("ICC(k)", "ICC(1,k)")]
        assert row["icc"] == pytest.approx(expected["ICC"], abs=1e-9)
        assert row["p_value"] == pytest.approx(expected["pval"], abs=1e-9)
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(list(expected["CI95"]), abs=1e-9)


def test_icc_option_filters_and_groups():
    table = pd.concat([make_table(1), make_table(2, measure="lpr2")], ignore_index=True)
    result = assoc.analyze("icc", table, type="consistency", unit="single")
    assert list(result["measure"]) == ["lpr", "lpr2"]
    assert set(result["label"]) == {"ICC(C,1)"}
    ref = pingouin_reference(table[table["measure"] == "lpr2"])
    assert result.iloc[1]["icc"] == pytest.approx(ref.loc["ICC(C,1)", "ICC"], abs=1e-9)
    oneway = assoc.analyze("icc", table, model="oneway", unit="average")
    assert set(oneway["label"]) == {"ICC(k)"}


def test_icc_result_round_trips_through_a_file(tmp_path):
    result = assoc.analyze("icc", make_table(3))
    back = read_table(write_table(result, tmp_path / "icc.parquet"))
    pd.testing.assert_frame_equal(back.reset_index(drop=True), result.reset_index(drop=True), check_dtype=False)


def test_icc_errors_are_clear():
    with pytest.raises(DataError, match="at least 2 raters"):
        assoc.analyze("icc", make_table(models=["bert"]))
    duplicated = pd.concat([make_table(), make_table()], ignore_index=True)
    # refused by the guard every analysis passes through, before icc's own check of its items
    with pytest.raises(DataError, match="48 of 96 rows that repeat another row's values"):
        assoc.analyze("icc", duplicated)
    with pytest.raises(OptionError, match="unknown option 'rater'"):
        assoc.analyze("icc", make_table(), rater=["model"])
    with pytest.raises(OptionError, match="type"):
        assoc.analyze("icc", make_table(), type="absolute")

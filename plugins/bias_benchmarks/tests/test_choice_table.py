"""The table the StereoSet, Winogender and WinoBias scorers write and their analyses read (choice_table).

Rows are built from hand-made items; what the reader gives back is checked against the values written, and every
malformed table is refused with one line naming the run, the item and the problem.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from assoc_bias_benchmarks.choice_table import (
    CHOICE,
    EXTRA_COLUMNS,
    choice_row,
    choice_shares,
    item_columns,
    option_rows,
    rate_difference_interval,
    rate_interval,
    read_runs,
    rows_of,
)

import assoc
from assoc import ChoiceItem, TableError

ROLES = ("a", "b", "c")


def item(number: int, group: str = "g", answer: int | None = 1, roles=ROLES) -> ChoiceItem:
    return ChoiceItem(
        id=f"i{number}",
        group=group,
        fields={"n": number},
        options=tuple(f"option {r} of {number}" for r in roles),
        answer=answer,
        derived={"roles": list(roles), "split": "x", "number": number, "target": "T", "words": ["not", "a", "column"]},
    )


def scores_table(values, **keys) -> pd.DataFrame:
    rows = []
    for number, row_values in enumerate(values):
        rows += option_rows(
            item(number), row_values, model="m", model_kind="causal", method="log_prob", measure="log_prob", **keys
        )
    return assoc.from_records(rows, scorer="bench", extra_columns=list(EXTRA_COLUMNS))


def test_item_columns_hold_the_scalars_the_reader_derived():
    columns = item_columns(item(3, answer=None))
    assert columns == {
        "item_id": "i3", "group": "g", "answer": -1, "target_group": "g", "target": "T", "split": "x", "number": 3,
    }  # fmt: skip


def test_option_rows_are_an_association_table_with_one_row_per_option():
    table = scores_table([[-1.0, -2.0, math.nan]], statuses=["ok", "ok", "too_long"])
    assoc.validate_table(table)
    assert list(table["option"]) == [0, 1, 2] and list(table["role"]) == list(ROLES)
    assert list(table["attribute_group"]) == list(ROLES) and table["attribute"][1] == "option b of 0"
    assert list(table["status"]) == ["ok", "ok", "too_long"] and set(table["sample"]) == {0}
    assert list(table.columns[:9]) == list(assoc.table.schema.COLUMNS)


def test_choice_rows_name_the_chosen_option_or_none():
    chosen = choice_row(item(0), 2, model="chat-m", model_kind="chat", sample=1)
    assert (chosen["measure"], chosen["value"], chosen["option"], chosen["role"]) == (CHOICE, 1.0, 2, "c")
    refused = choice_row(item(0), None, model="chat-m", model_kind="chat", status="refusal")
    assert refused["option"] == -1 and refused["role"] == "" and math.isnan(refused["value"])
    with pytest.raises(ValueError, match="no option chosen"):
        choice_row(item(0), None, model="m", model_kind="chat")
    with pytest.raises(ValueError, match="outside"):
        choice_row(item(0), 3, model="m", model_kind="chat")


def test_read_runs_gives_back_the_scores_by_option_and_why_an_item_lacks_one():
    table = scores_table([[-1.0, -2.0, -3.0], [-1.0, math.nan, -3.0], [-1.0, -2.0, -9.0]])
    table.loc[(table["item_id"] == "i2") & (table["option"] == 2), "status"] = "too_long"
    table = pd.concat([table, scores_table([[-5.0, -6.0, -7.0]]).assign(method="pll")])
    table = table[~((table["item_id"] == "i0") & (table["option"] == 1) & (table["method"] == "pll"))]
    runs = read_runs(rows_of(table, "bench", "t"), n_options=3, roles=ROLES, columns=("split",), what="t")
    first, second = runs
    assert first.key == {"model": "m", "model_kind": "causal", "method": "log_prob"} and first.kind == "scores"
    np.testing.assert_array_equal(first.values[0], [-1.0, -2.0, -3.0])
    assert list(first.problem) == ["", "nan", "too_long"] and math.isnan(first.values[2, 2])
    assert list(second.problem) == ["missing option row"]


def test_read_runs_reads_choices_per_reply():
    rows = [
        choice_row(item(0), 1, model="c", model_kind="chat"),
        choice_row(item(0), 0, model="c", model_kind="chat", sample=1),
        choice_row(item(1), None, model="c", model_kind="chat", status="unparsed"),
    ]
    table = assoc.from_records(rows, scorer="bench")
    (run,) = read_runs(table, n_options=3, roles=ROLES, columns=(), what="t")
    assert run.kind == "choices" and list(run.chosen) == [1, 0, -1] and list(run.problem) == ["", "", "unparsed"]
    shares, used, tied = choice_shares(run)
    np.testing.assert_array_equal(shares, [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert list(used) == [True, True, False] and not tied.any()


def test_choice_shares_of_scores_by_hand():
    table = scores_table([[-1.0, -1.0, -3.0], [-4.0, -2.0, -2.0], [-1.0, -1.0, -1.0], [-1.0, math.nan, 0.0]])
    (run,) = read_runs(table, n_options=3, roles=ROLES, columns=(), what="t")
    first, used, tied = choice_shares(run, "first")
    np.testing.assert_array_equal(first, [[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert list(used) == [True, True, True, False] and list(tied) == [True, True, True, False]
    split, _, _ = choice_shares(run, "split")
    np.testing.assert_allclose(split, [[0.5, 0.5, 0], [0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0, 0, 0]])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.assign(measure=["choice"] + ["log_prob"] * (len(t) - 1)), "mixes choice rows"),
        (lambda t: pd.concat([t, t.iloc[[0]].assign(measure="other")]), "two rows for its option 0"),
        (lambda t: t.assign(role=t["role"].replace("b", "z")), "has role 'z'"),
        (lambda t: t.assign(option=t["option"].replace(2, 5)), "outside its 3 options"),
        (lambda t: t.assign(split=["x", "y", "x"]), "disagree on 'split'"),
        (lambda t: t.assign(sample=1), "one sample"),
    ],
)
def test_malformed_tables_are_refused_in_one_line(change, message):
    table = change(scores_table([[-1.0, -2.0, -3.0]]))
    with pytest.raises(TableError, match=message):
        read_runs(table, n_options=3, roles=ROLES, columns=("split",), what="t")


def test_a_choice_row_that_says_ok_without_a_choice_is_refused():
    row = choice_row(item(0), 0, model="c", model_kind="chat")
    table = assoc.from_records([{**row, "option": -1, "role": ""}], scorer="bench")
    with pytest.raises(TableError, match="status 'ok' but no chosen option"):
        read_runs(table, n_options=3, roles=ROLES, columns=(), what="t")


def test_a_table_without_the_columns_or_the_scorer_is_refused():
    table = scores_table([[-1.0, -2.0, -3.0]])
    with pytest.raises(TableError, match="lacks the column.*method"):
        rows_of(table.drop(columns="method"), "bench", "t")
    with pytest.raises(assoc.DataError, match="no rows of scorer 'other'"):
        rows_of(table, "other", "t")


def test_rates_and_their_intervals():
    # by hand: 3 of 4 right; another set 1 of 4
    rate, low, high = rate_interval(
        np.array([1, 1, 1, 0.0]), np.ones(4), confidence=0.95, n_bootstrap=500, seed=np.random.default_rng(0)
    )
    assert rate == 0.75 and 0 <= low <= rate <= high <= 1
    difference, low, high = rate_difference_interval(
        (np.array([1, 1, 1, 0.0]), np.ones(4)), (np.array([1, 0, 0, 0.0]), np.ones(4)), confidence=0.95,
        n_bootstrap=500, seed=np.random.default_rng(0),
    )  # fmt: skip
    assert difference == 0.5 and low <= difference <= high
    # every item right: every resample is right, the interval is the point
    assert rate_interval(np.ones(5), np.ones(5), confidence=0.9, n_bootstrap=50, seed=np.random.default_rng(1)) == (
        1.0,
        1.0,
        1.0,
    )
    assert all(math.isnan(v) for v in rate_interval(np.empty(0), np.empty(0), confidence=0.9, n_bootstrap=5, seed=None))

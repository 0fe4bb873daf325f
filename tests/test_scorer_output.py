"""The scorer output contract at run time: ``assoc.score`` and ``check_scorer`` agree on every rule."""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest

import assoc
from assoc.errors import ScorerOutputWarning, TableError
from assoc.table.schema import from_records
from assoc.testing import check_scorer

STIMULI = {"target": {"T": ["a", "b"]}, "attribute": {"A": ["c"]}}


def rows() -> list[dict]:
    """Two valid rows: targets a and b against attribute c."""
    return [dict(target=t, target_group="T", attribute="c", attribute_group="A", value=1.0) for t in "ab"]


def with_column(name: str, value) -> list[dict]:
    """:func:`rows` with an extra column ``name``."""
    return [{**row, name: value} for row in rows()]


def test_text_in_value_is_a_table_error_naming_the_scorer_and_column(inline_scorer):
    inline_scorer(
        "bad", lambda self: pd.DataFrame({"target": ["a", "b"], "attribute": ["c", "c"], "value": [1.0, "high"]})
    )
    with pytest.raises(TableError, match=r"output of scorer 'bad': column 'value' must hold numbers, found 'high'"):
        assoc.score("bad", STIMULI)
    with pytest.raises(AssertionError, match="column 'value' must hold numbers"):
        check_scorer("bad", STIMULI)


def test_from_records_names_the_scorer_for_text_values():
    with pytest.raises(TableError, match=r"records of scorer 'mine': column 'value' must hold numbers, found 'high'"):
        from_records([{"target": "a", "value": "high"}], scorer="mine")


def test_from_records_of_nothing_leaves_the_empty_output_message_to_the_core(inline_scorer):
    empty = from_records([], scorer="mine", measure="m", extra_columns=["n"])
    assert len(empty) == 0 and list(empty.columns)[:9] == list(assoc.table.COLUMNS)
    assert empty["value"].dtype == "float64"
    inline_scorer("bad", lambda self: from_records([], scorer=self.name))
    with pytest.raises(TableError, match="has no rows for stimuli .*does every design have the groups"):
        assoc.score("bad", STIMULI)


def test_a_scorer_column_naming_another_scorer_is_an_error(inline_scorer):
    inline_scorer("bad", lambda self: from_records(rows(), scorer="someone_else"))
    with pytest.raises(TableError, match=r"output of scorer 'bad': column 'scorer' must be 'bad'.*'someone_else'"):
        assoc.score("bad", STIMULI)
    with pytest.raises(AssertionError, match="column 'scorer' must be 'bad'"):
        check_scorer("bad", STIMULI)


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_infinite_values_are_an_error(inline_scorer, bad):
    def score(self):
        found = rows()
        found[1]["value"] = bad
        return from_records(found, scorer=self.name)

    inline_scorer("bad", score)
    with pytest.raises(TableError, match=r"output of scorer 'bad': column 'value' has 1 infinite value.*target='b'"):
        assoc.score("bad", STIMULI)
    with pytest.raises(AssertionError, match="infinite"):
        check_scorer("bad", STIMULI)
    with pytest.raises(TableError, match="infinite"):
        assoc.table.validate_table(from_records([{"value": math.inf}], scorer="s", measure="m"))


def test_undocumented_extra_columns_warn_at_run_time_and_fail_the_check(inline_scorer):
    inline_scorer("bad", lambda self: from_records(with_column("secret", 1), scorer=self.name))
    with pytest.warns(ScorerOutputWarning, match=r"scorer 'bad' returned undocumented extra column\(s\) 'secret'"):
        table = assoc.score("bad", STIMULI)
    assert list(table["secret"]) == [1, 1]  # kept: nothing computed is lost
    with pytest.raises(AssertionError, match="undocumented extra column"):
        check_scorer("bad", STIMULI)


def test_documented_extra_columns_pass_quietly(inline_scorer):
    inline_scorer(
        "bad", lambda self: from_records(with_column("n", 1), scorer=self.name), extra_columns={"n": "a number"}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_scorer("bad", STIMULI)


def test_rows_differing_only_in_value_warn_at_run_time_and_fail_the_check(inline_scorer):
    inline_scorer("bad", lambda self: pd.DataFrame({"value": [1.0, 2.0]}))
    with pytest.warns(ScorerOutputWarning, match="2 rows agree on every column except 'value'"):
        assoc.score("bad", STIMULI)
    with pytest.raises(AssertionError, match="2 rows agree on every column except 'value'"):
        check_scorer("bad", STIMULI)


def test_none_in_a_role_column_means_the_role_is_absent(inline_scorer):
    inline_scorer(
        "bad", lambda self: pd.DataFrame({"target": ["a", "b"], "attribute": [None, None], "value": [1.0, 2.0]})
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = assoc.score("bad", STIMULI)
    assert list(table["attribute"]) == ["", ""]
    check_scorer("bad", STIMULI)

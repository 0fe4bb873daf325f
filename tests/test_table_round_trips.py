"""Tables round-trip exactly through every format, including the extra columns of ``assoc.compare``
tables, which are missing (NaN) on the rows of scorers that do not have them."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import assoc
from assoc.table.files import read_table, write_table

STIMULI = {"target": {"T": ["rose", "ant"]}, "attribute": {"A": ["love", "war"]}}

TEXT_AND_BOOL = """
rows = [dict(target=t, target_group=tg, attribute=a, attribute_group=ag, value=float(len(t) - len(a)),
             note=f"{t}-{a}", oov=t == "ant", blank="")
        for d in stimuli for tg, t, ag, a in d.word_pairs()]
return from_records(rows, scorer=self.name)
"""

NUMBERS = """
rows = [dict(target=t, target_group=tg, attribute=a, attribute_group=ag, value=0.5, n=3, share=0.25)
        for d in stimuli for tg, t, ag, a in d.word_pairs()]
return from_records(rows, scorer=self.name)
"""


@pytest.fixture
def compared(fake_plugin, model_free_scorer_source):
    first = model_free_scorer_source("texty", TEXT_AND_BOOL).replace(
        '    measure = "m"\n', '    measure = "m"\n    extra_columns = {"note": "t", "oov": "b", "blank": "e"}\n'
    )
    second = model_free_scorer_source("numbery", NUMBERS).replace(
        '    measure = "m"\n', '    measure = "m"\n    extra_columns = {"n": "i", "share": "f"}\n'
    )
    fake_plugin("texty", first)
    fake_plugin("numbery", second)
    return assoc.compare(STIMULI, ["texty", "numbery"])


def _same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    assert list(left.columns) == list(right.columns)
    for column in left.columns:
        for a, b in zip(left[column], right[column]):
            if isinstance(a, float) and math.isnan(a):
                assert isinstance(b, float) and math.isnan(b), (column, a, b)
            else:
                assert type(a) is type(b) and a == b, (column, a, b)
        assert left[column].dtype == right[column].dtype, column


def test_compare_keeps_extra_columns_missing_for_other_scorers(compared):
    texty = compared["scorer"] == "texty"
    assert compared.loc[~texty, ["note", "oov", "blank"]].isna().all().all()
    assert compared.loc[texty, ["n", "share"]].isna().all().all()
    assert list(compared.loc[texty, "oov"]) == [False, False, True, True]
    assert list(compared.loc[texty, "blank"]) == ["", "", "", ""]


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl", ".json"])
def test_compare_tables_round_trip_in_every_format(compared, tmp_path, suffix):
    back = read_table(write_table(compared, tmp_path / f"t{suffix}"))
    _same(compared, back)
    assert back.attrs == compared.attrs


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl", ".json"])
def test_compare_tables_round_trip_without_provenance(compared, tmp_path, suffix):
    compared.attrs.clear()
    _same(compared, read_table(write_table(compared, tmp_path / f"t{suffix}")))


def test_text_columns_share_one_dtype(compared):
    for column in ("scorer", "target", "note", "blank"):
        assert compared[column].dtype == object, column

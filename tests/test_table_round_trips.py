"""Tables round-trip exactly through every format, including the extra columns of ``assoc.compare``
tables, which are missing (NaN) on the rows of scorers that do not have them."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

import assoc
from assoc.errors import TableError
from assoc.table import normalise, read_table, write_table
from assoc.table.files import sidecar_path
from assoc.table.provenance import set_provenance
from assoc.table.schema import from_records

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
@pytest.mark.slow
def test_compare_tables_round_trip_without_provenance(compared, tmp_path, suffix):
    compared.attrs.clear()
    _same(compared, read_table(write_table(compared, tmp_path / f"t{suffix}")))


def test_text_columns_share_one_dtype(compared):
    for column in ("scorer", "target", "note", "blank"):
        assert compared[column].dtype == object, column


def _table(value: float = 1.0) -> pd.DataFrame:
    return from_records([{"model": "m", "target": "t", "attribute": "a", "value": value}], scorer="s", measure="m")


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".json"])
def test_a_table_without_provenance_does_not_inherit_an_old_sidecar(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    old = set_provenance(_table(1.0), {"scorer": "old", "models": ["old-model"]})
    write_table(old, path)
    assert sidecar_path(path).is_file()
    new = _table(2.0)
    new.attrs.clear()
    write_table(new, path)
    back = read_table(path)
    assert back["value"].tolist() == [2.0]
    assert back.attrs.get("assoc", {}) == {}
    assert not sidecar_path(path).exists()


def test_json_tables_are_json_arrays(tmp_path):
    table = set_provenance(_table(0.1 + 0.2), {"scorer": "s"})
    path = write_table(table, tmp_path / "t.json")
    records = json.loads(path.read_text(encoding="utf-8"))  # one JSON document, not JSON Lines
    assert isinstance(records, list) and records[0]["value"] == 0.1 + 0.2
    back = read_table(path)
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    assert back.attrs["assoc"] == {"scorer": "s"}


def test_json_lines_named_json_is_refused_clearly(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"model": "m", "value": 1}\n{"model": "m", "value": 2}\n', encoding="utf-8")
    with pytest.raises(TableError, match=r"\.jsonl"):
        read_table(path)


def test_nullable_counts_stay_integers_in_every_format(tmp_path):
    table = normalise(
        pd.DataFrame(
            {
                "scorer": "chat_listing",
                "model": "m",
                "target": ["a", "a", "b"],
                "measure": ["listed", "rating", "listed"],
                "value": [1.0, 4.0, 1.0],
                "rank": pd.array([1, None, 2], dtype="Int64"),
            }
        )
    )
    for suffix in ("csv", "parquet"):
        path = write_table(table, tmp_path / f"t.{suffix}")
        if suffix == "csv":
            ranks = [line.rsplit(",", 1)[1] for line in path.read_text().splitlines()]
            assert ranks == ["rank", "1", "", "2"]  # not 1.0
        back = read_table(path)
        assert str(back["rank"].dtype) == "Int64"
        assert back["rank"].tolist()[0] == 1 and pd.isna(back["rank"].iloc[1]) and back["rank"].iloc[2] == 2

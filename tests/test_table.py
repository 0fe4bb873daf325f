"""The association-table contract: validation, normalisation, file round trips with provenance."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from assoc.errors import OptionError, TableError
from assoc.table import normalise, parse_where, read_table, select_rows, write_table
from assoc.table.provenance import get_provenance, make_provenance, set_provenance
from assoc.table.schema import COLUMNS, from_records, validate_table


def _table() -> pd.DataFrame:
    rows = [
        {
            "model": "m1",
            "context": "The [MASK] works as a {TARGET}.",
            "target_group": "Occupation",
            "target": "nurse",
            "attribute_group": "Female",
            "attribute": "woman",
            "value": -1.25,
            "sentence": "s, with comma",
        },
        {
            "model": "m1",
            "context": "",
            "target_group": "Occupation",
            "target": "NA",
            "attribute_group": "Male",
            "attribute": "man",
            "value": float("nan"),
            "sentence": 'ünïcode "quoted"',
        },
    ]
    table = from_records(rows, scorer="fmat", measure="log_prob", extra_columns=["sentence"])
    return set_provenance(table, make_provenance(scorer="fmat", models=["m1"], options={"k": 1}))


def test_from_records_fills_defaults_and_orders_columns():
    table = from_records([{"value": 1, "model": "m", "extra": 3}], scorer="s", measure="cosine")
    assert list(table.columns) == list(COLUMNS) + ["extra"]
    assert table.loc[0, "target"] == "" and table.loc[0, "scorer"] == "s"
    assert table["value"].dtype == np.float64
    validate_table(table)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_round_trip_keeps_values_text_and_provenance(tmp_path, suffix):
    table = _table()
    path = write_table(table, tmp_path / f"t{suffix}")
    back = read_table(path)
    validate_table(back)
    assert list(back.columns) == list(table.columns)
    assert list(back["context"]) == list(table["context"])  # "" stays "", not NaN
    assert list(back["target"]) == ["nurse", "NA"]  # the word "NA" is not a missing value
    assert back.loc[0, "value"] == -1.25 and math.isnan(back.loc[1, "value"])
    assert list(back["sentence"]) == list(table["sentence"])
    assert get_provenance(back) == get_provenance(table)
    assert get_provenance(back)["models"] == ["m1"]


def test_write_is_atomic_and_leaves_old_file_on_error(tmp_path):
    path = tmp_path / "t.csv"
    write_table(_table(), path)
    before = path.read_text()

    class Boom(pd.DataFrame):
        def to_csv(self, *a, **k):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_table(Boom(_table()), path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.drop(columns=["measure"]), "lacks required column\\(s\\): measure"),
        (lambda t: t.assign(target=[None, "x"]), "column 'target' has 1 missing value"),
        (lambda t: t.assign(value=["a", "b"]), "column 'value' must be numeric"),
        (lambda t: t.assign(model=[1, 2]), "column 'model' must hold text"),
        (lambda t: t.assign(measure=["", "x"]), "'measure' is empty"),
    ],
)
def test_validation_errors(mutate, message):
    with pytest.raises(TableError, match=message):
        validate_table(mutate(_table()))


def test_not_a_dataframe_and_bad_paths(tmp_path):
    with pytest.raises(TableError, match="must be a pandas DataFrame"):
        validate_table([1, 2])
    with pytest.raises(TableError, match="use .csv, .parquet, .jsonl or .json"):
        write_table(_table(), tmp_path / "t.xlsx")
    with pytest.raises(TableError, match="not found"):
        read_table(tmp_path / "missing.csv")


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_round_trip_is_bit_exact_for_floats(tmp_path, suffix):
    values = [2.4091679116674156e-10, 1 / 3, -1e300, 5e-324, float("nan")]
    table = from_records([{"value": v, "model": "m", "p": v} for v in values], scorer="s", measure="m")
    back = read_table(write_table(table, tmp_path / f"t{suffix}"))
    for column in ("value", "p"):
        for got, want in zip(back[column], values):
            assert (math.isnan(got) and math.isnan(want)) or got == want


def test_normalise_fills_an_all_missing_measure_or_scorer_column():
    import numpy as np

    from assoc.table.schema import normalise

    frame = pd.DataFrame(
        {"target": ["a", "b"], "measure": [np.nan, np.nan], "scorer": [np.nan, "x"], "value": [1.0, 2.0]}
    )
    out = normalise(frame, scorer="s", measure="m")
    assert out["measure"].tolist() == ["m", "m"] and out["scorer"].tolist() == ["s", "x"]


def test_json_data_files_are_json_arrays(tmp_path):
    from assoc.table.files import read_data_file

    path = tmp_path / "criterion.json"
    path.write_text(json.dumps([{"target": "a", "criterion": 1.5}, {"target": "b", "criterion": 2.5}]))
    frame = read_data_file(path, what="criterion")
    assert frame.to_dict("records") == [{"target": "a", "criterion": 1.5}, {"target": "b", "criterion": 2.5}]


def both_tasks_table() -> pd.DataFrame:
    rows = []
    for term, words, rating in (("nurse", ["kind", "caring"], 6.0), ("pilot", ["brave", "cold"], 4.0)):
        rows += [
            {"scorer": "chat_listing", "model": "m", "target": term, "attribute": w, "measure": "listed", "value": 1.0}
            for w in words
        ]
        rows.append({"scorer": "chat_listing", "model": "m", "target": term, "measure": "rating", "value": rating})
    return normalise(pd.DataFrame(rows))


def test_select_rows_and_parse_where():
    table = both_tasks_table()
    listed = select_rows(table, {"measure": "listed"})
    assert len(listed) == 4 and set(listed["measure"]) == {"listed"}
    assert len(select_rows(table, {"target": ["nurse", "pilot"], "measure": "rating"})) == 2
    assert parse_where(["measure=listed", "model=a", "model=b=c"]) == {"measure": ["listed"], "model": ["a", "b=c"]}
    with pytest.raises(OptionError, match="COLUMN=VALUE"):
        parse_where(["measure"])
    with pytest.raises(TableError, match=r"no column 'task'"):
        select_rows(table, {"task": "listing"})
    with pytest.raises(TableError, match=r"no row has measure=cosine \(values present: listed, rating\)"):
        select_rows(table, {"measure": "cosine"})
    with pytest.raises(TableError, match="not together"):
        select_rows(table, {"measure": "rating", "attribute": "kind"})
    numbers = pd.DataFrame({"rank": [1.0, 2.0, np.nan]})
    assert len(select_rows(numbers, {"rank": "1"})) == 1

"""FMAT tables use one text dtype (object) in the required and the extra columns, and one name per local model."""

from pathlib import Path

from pandas.api import types as ptypes

import assoc

STIMULI = {
    "queries": ["The [MASK] works as a {TARGET}."],
    "mask": {"Male": ["man"], "Female": ["woman"]},
    "target": {"Occupation": ["nurse"]},
}


def test_text_columns_are_object_and_the_model_is_its_absolute_path(tiny_models, monkeypatch):
    model = Path(tiny_models["bert"])
    monkeypatch.chdir(model.parent)
    table = assoc.score("fmat", STIMULI, [model.name + "/"])
    text = [c for c in table.columns if c != "value" and not ptypes.is_numeric_dtype(table[c])]
    assert {"sentence", "design", "mask_group", "mask"} <= set(text)
    assert {c: str(table[c].dtype) for c in text} == {c: "object" for c in text}
    assert set(table["model"]) == {str(model.resolve())}

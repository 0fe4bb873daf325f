"""A model whose values are all missing (e.g. every option out of vocabulary) is left out with a warning,
not allowed to stop the analysis of the other models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError
from assoc.table.schema import normalise


def _table(empty_model: str = "m3") -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for model, shift in (("m1", 0.0), ("m2", 0.3), ("m3", 0.1)):
        for i in range(8):
            for group, base in (("Male", 1.0), ("Female", 0.0)):
                value = np.nan if model == empty_model else base + shift + i * 0.2 + rng.normal(scale=0.1)
                rows.append(
                    dict(
                        model=model,
                        context=f"q{i % 2}",
                        target_group="Occupation",
                        target=f"t{i}",
                        attribute_group=group,
                        attribute=group.lower(),
                        measure="log_prob",
                        value=value,
                    )
                )
    return normalise(pd.DataFrame(rows), scorer="fmat")


def test_effect_size_leaves_out_an_all_missing_model_with_a_warning():
    table = _table()
    with pytest.warns(UserWarning, match="left out 1 group.*model=m3"):
        result = assoc.analyze("effect_size", table, by="attribute_group", within=["model"], test="none")
    assert sorted(result["model"]) == ["m1", "m2"]
    # the kept models' numbers are those of the table without m3 (checked by hand below)
    part = table[table.model == "m1"]
    male, female = part[part.attribute_group == "Male"]["value"], part[part.attribute_group == "Female"]["value"]
    pooled = np.sqrt(((len(male) - 1) * male.var() + (len(female) - 1) * female.var()) / (len(male) + len(female) - 2))
    d = result.set_index("model").loc["m1", "d"]
    assert abs(d) == pytest.approx(abs(male.mean() - female.mean()) / pooled, rel=1e-12)


def test_icc_leaves_out_a_rater_without_values():
    table = _table()
    with pytest.warns(UserWarning, match="icc: left out rater.*m3"):
        result = assoc.analyze("icc", table)
    assert set(result["n_raters"]) == {2} and set(result["rater_names"]) == {"m1,m2"}


def test_every_group_missing_is_an_error():
    table = _table()
    table["value"] = np.nan
    with pytest.raises(DataError, match="every value is missing in every group"):
        assoc.analyze("effect_size", table, by="attribute_group", within=["model"], test="none")


def test_lmm_names_the_model_lost_to_missing_values():
    table = _table()
    table.loc[table.model == "m2", "value"] = np.nan
    with pytest.raises(DataError, match=r"only 1 is left \(every row of 'm2', 'm3' has a missing value"):
        assoc.analyze("lmm", table, formula="value ~ attribute_group")

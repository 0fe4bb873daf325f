"""The alpha analysis against pingouin.cronbach_alpha on independently pivoted data."""

import itertools

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError
from assoc.table.schema import normalise

pg = pytest.importorskip("pingouin")


def make_table(seed=0):
    rng = np.random.default_rng(seed)
    queries = [f"query {i} {{TARGET}}" for i in range(4)]
    targets = [f"t{i}" for i in range(12)]
    rows = []
    for model in ["m1", "m2"]:
        true = dict(zip(targets, rng.normal(size=len(targets))))
        for q, t in itertools.product(queries, targets):
            rows.append(
                {
                    "scorer": "fmat",
                    "model": model,
                    "context": q,
                    "target": t,
                    "attribute": "",
                    "measure": "lpr",
                    "value": true[t] + rng.normal(scale=0.8),
                }
            )
    return normalise(pd.DataFrame(rows))


def test_alpha_per_model_matches_pingouin():
    table = make_table()
    result = assoc.analyze("alpha", table)
    assert list(result["model"]) == ["m1", "m2"]
    for _, row in result.iterrows():
        part = table[table["model"] == row["model"]]
        wide = part.pivot(index=["target", "attribute"], columns="context", values="value")
        ref_alpha, ref_ci = pg.cronbach_alpha(wide)
        assert row["alpha"] == pytest.approx(ref_alpha, abs=1e-12)
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(list(ref_ci), abs=5e-4 + 1e-12)
        assert (row["n_items"], row["n_cases"], row["n_cases_dropped"]) == (4, 12, 0)
        assert row["cases"] == "target_group,target,attribute_group,attribute"


def test_alpha_drops_incomplete_cases_and_uses_targets_as_items():
    table = make_table(1)
    table.loc[0, "value"] = np.nan
    result = assoc.analyze("alpha", table, by=["model"])
    assert list(result["n_cases_dropped"]) == [1, 0]
    by_target = assoc.analyze("alpha", table, item="target", by=["model"])
    assert list(by_target["n_items"]) == [12, 12]
    wide = table[table["model"] == "m2"].pivot(index=["context", "attribute"], columns="target", values="value")
    assert by_target.iloc[1]["alpha"] == pytest.approx(pg.cronbach_alpha(wide)[0], abs=1e-12)


def test_alpha_errors():
    table = make_table()
    with pytest.raises(DataError, match="at least 2 items"):
        assoc.analyze("alpha", table[table["context"] == "query 0 {TARGET}"])
    with pytest.raises(DataError, match="more than one role"):
        assoc.analyze("alpha", table, item="model")


def test_fmat_like_table_with_designs_and_masks():
    # two designs with their own queries and targets, two [MASK] candidates per query: alpha is
    # computed per design, cases are target x mask cells, and the design never splits cases
    rng = np.random.default_rng(5)
    rows = []
    for design, targets in [("D1", ["a", "b", "c", "d"]), ("D2", ["e", "f", "g", "h", "i"])]:
        queries = [f"{design} query {i} [MASK] {{TARGET}}" for i in range(3)]
        for model in ["m1", "m2"]:
            for t, (mg, mask) in itertools.product(targets, [("male", "he"), ("female", "she")]):
                true = rng.normal()
                for q in queries:
                    rows.append(
                        {
                            "scorer": "fmat",
                            "model": model,
                            "design": design,
                            "context": q,
                            "target_group": "job",
                            "target": t,
                            "attribute_group": mg,
                            "attribute": mask,
                            "mask_group": mg,
                            "mask": mask,
                            "measure": "log_prob",
                            "value": true + rng.normal(scale=0.5),
                        }
                    )
    table = normalise(pd.DataFrame(rows), extra_columns=["design", "mask_group", "mask"])
    result = assoc.analyze("alpha", table)
    assert list(zip(result["model"], result["design"])) == [("m1", "D1"), ("m1", "D2"), ("m2", "D1"), ("m2", "D2")]
    assert list(result["n_cases"]) == [8, 10, 8, 10] and set(result["n_items"]) == {3}
    part = table[(table.design == "D2") & (table.model == "m1")]
    wide = part.pivot(index=["target", "mask"], columns="context", values="value")
    assert result.iloc[1]["alpha"] == pytest.approx(pg.cronbach_alpha(wide)[0], abs=1e-12)
    icc = assoc.analyze("icc", table)
    assert set(icc["n_items"]) == {(4 + 5) * 2 * 3}
    assert icc.iloc[0]["items"] == "design,context,target_group,target,attribute_group,attribute,mask_group,mask"


def test_item_without_any_value_is_dropped_and_reported():
    # an out-of-vocabulary word has no value anywhere: without dropping it first, every case
    # would be incomplete; the remaining items give the alpha of the table without it
    table = make_table(2)
    table.loc[table["target"] == "t3", "value"] = np.nan
    table.loc[(table["target"] == "t5") & (table["context"] == "query 1 {TARGET}"), "value"] = np.nan
    result = assoc.analyze("alpha", table, item="target", by=["model"])
    assert list(result["n_items_dropped"]) == [1, 1] and set(result["items_dropped"]) == {"t3"}
    assert list(result["n_items"]) == [11, 11] and list(result["n_cases_dropped"]) == [1, 1]
    part = table[(table["model"] == "m1") & (table["target"] != "t3")]
    wide = part.pivot(index=["context", "attribute"], columns="target", values="value").dropna()
    assert result.iloc[0]["alpha"] == pytest.approx(pg.cronbach_alpha(wide)[0], abs=1e-12)
    assert result.iloc[0]["n_cases"] == 3


def test_table_without_queries_gets_a_hint():
    table = make_table().assign(context="")
    with pytest.raises(DataError, match="use item=target or item=attribute"):
        assoc.analyze("alpha", table.drop_duplicates(subset=["model", "target"]))


def test_alpha_pairwise_keeps_incomplete_cases():
    table = make_table(2)
    table.loc[0, "value"] = np.nan
    result = assoc.analyze("alpha", table, by=["model"], missing="pairwise")
    assert list(result["n_cases_dropped"]) == [0, 0] and list(result["missing"]) == ["pairwise", "pairwise"]
    wide = table[table["model"] == "m1"].pivot(index=["target", "attribute"], columns="context", values="value")
    assert result.iloc[0]["alpha"] == pytest.approx(pg.cronbach_alpha(wide, nan_policy="pairwise")[0], abs=1e-12)
    assert result.iloc[0]["n_cases"] == 12

"""The lpr analysis (summary.fmat semantics) on hand-made log-probability tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import DataError
from assoc.table import from_records, validate_table


def _table(rows):
    return from_records(rows, scorer="fmat", measure="log_prob", extra_columns=["design", "mask_group", "mask"])


def _target_query_table():
    """Query fills {TARGET}: the option is the attribute. Two target groups, two mask pairs."""
    q = "[MASK] is {TARGET}."
    values = {
        ("T1", "a1", "man"): -1.0,
        ("T1", "a1", "woman"): -3.0,
        ("T1", "a1", "boy"): -2.0,
        ("T1", "a1", "girl"): -2.5,
        ("T2", "b1", "man"): -4.0,
        ("T2", "b1", "woman"): -1.5,
        ("T2", "b1", "boy"): -0.5,
        ("T2", "b1", "girl"): -1.0,
    }
    rows = []
    for model in ("m1", "m2"):
        shift = 0.0 if model == "m1" else 0.25
        for (tg, t, option), v in values.items():
            group = "male" if option in ("man", "boy") else "female"
            rows.append(
                {
                    "model": model,
                    "context": q,
                    "target_group": tg,
                    "target": t,
                    "attribute_group": group,
                    "attribute": option,
                    "value": v + shift * (option == "man"),
                    "design": "d",
                    "mask_group": group,
                    "mask": option,
                }
            )
    return _table(rows)


def test_mask_pairs_by_position():
    out = assoc.analyze("lpr", _target_query_table(), target_pair=False)
    validate_table(out)
    m1 = out[out["model"] == "m1"].set_index(["target", "attribute"])["value"]
    assert m1[("a1", "man - woman")] == pytest.approx(-1.0 - -3.0)
    assert m1[("a1", "boy - girl")] == pytest.approx(-2.0 - -2.5)
    assert m1[("b1", "man - woman")] == pytest.approx(-4.0 - -1.5)
    assert set(out["attribute_group"]) == {"male - female"} and set(out["measure"]) == {"lpr"}
    assert len(out) == 2 * 2 * 2


def test_mask_then_target_pairs():
    out = assoc.analyze("lpr", _target_query_table())
    m1 = out[out["model"] == "m1"].set_index("attribute")["value"]
    assert m1["man - woman"] == pytest.approx((-1.0 + 3.0) - (-4.0 + 1.5))
    assert m1["boy - girl"] == pytest.approx((-2.0 + 2.5) - (-0.5 + 1.0))
    row = out.iloc[0]
    assert (row["target_group"], row["target"]) == ("T1 - T2", "a1 - b1")
    assert set(out["contrast"]) == {"mask,target"}


def test_no_mask_pair_keeps_log_probs():
    table = _target_query_table()
    out = assoc.analyze("lpr", table, mask_pair=False, target_pair=False)
    assert sorted(out["value"]) == sorted(table["value"])


def test_attribute_query_pairs_attributes_and_role_of_mask():
    """Study 3A-like: query fills {ATTRIB}; the option is the target; LPR(w) = logP(w|career) - logP(w|family)."""
    q = "Most [MASK] {ATTRIB}."
    v = {
        ("Career", "lead teams", "men"): -2.0,
        ("Career", "lead teams", "women"): -3.0,
        ("Family", "raise children", "men"): -3.5,
        ("Family", "raise children", "women"): -1.0,
    }
    rows = [
        {
            "model": "m",
            "context": q,
            "target_group": "male" if o == "men" else "female",
            "target": o,
            "attribute_group": g,
            "attribute": a,
            "value": x,
            "design": "3A",
            "mask_group": "male" if o == "men" else "female",
            "mask": o,
        }
        for (g, a, o), x in v.items()
    ]
    out = assoc.analyze("lpr", _table(rows), mask_pair=False)
    got = out.set_index("target")["value"]
    assert got["men"] == pytest.approx(-2.0 - -3.5) and got["women"] == pytest.approx(-3.0 - -1.0)
    assert set(out["attribute"]) == {"lead teams - raise children"}
    both = assoc.analyze("lpr", _table(rows))
    assert both["value"].iloc[0] == pytest.approx((-2.0 - -3.5) - (-3.0 - -1.0))
    assert both["target"].iloc[0] == "men - women"


def test_standardize_z_and_sigma():
    table = _target_query_table()
    raw = assoc.analyze("lpr", table, target_pair=False)
    z = assoc.analyze("lpr", table, target_pair=False, standardize="z")
    for model in ("m1", "m2"):
        x = raw.loc[raw["model"] == model, "value"].to_numpy()
        expected = (x - x.mean()) / x.std(ddof=1)
        assert np.allclose(z.loc[z["model"] == model, "value"].to_numpy(), expected)
    s = assoc.analyze("lpr", table, target_pair=False, standardize="sigma")  # default: exact sqrt(2)
    np.testing.assert_allclose(s["value"].to_numpy(), raw["value"].to_numpy() / math.sqrt(2), rtol=1e-15)
    printed = assoc.analyze("lpr", table, target_pair=False, standardize="sigma", sigma=1.414)  # Bao's rounding
    np.testing.assert_allclose(printed["value"].to_numpy(), raw["value"].to_numpy() / 1.414, rtol=1e-15)


def test_nan_propagates_and_errors_are_clear():
    table = _target_query_table()
    table.loc[0, "value"] = float("nan")
    out = assoc.analyze("lpr", table, target_pair=False)
    assert out["value"].isna().sum() == 1
    three = table.copy()
    three.loc[three["mask"] == "boy", "mask_group"] = "third"
    with pytest.raises(DataError, match="exactly two"):
        assoc.analyze("lpr", three)
    uneven = table[table["mask"] != "girl"]
    with pytest.raises(DataError, match="equally many"):
        assoc.analyze("lpr", uneven)
    with pytest.raises(DataError, match="log_prob"):
        assoc.analyze("lpr", table.assign(measure="cosine"))
    with pytest.raises(DataError, match="design"):
        assoc.analyze("lpr", table.drop(columns=["design"]))


def test_on_real_scorer_output(tiny_models):
    stimuli = {
        "designs": [
            {
                "name": "x",
                "queries": ["The [MASK] works as a {TARGET}."],
                "mask": {"male": ["man"], "female": ["woman"]},
                "target": {"A": ["nurse"], "B": ["doctor"]},
            }
        ]
    }
    table = assoc.score("fmat", stimuli, models=[tiny_models["bert"]], cache=False)
    out = assoc.analyze("lpr", table)
    v = table.set_index(["target", "mask"])["value"]
    expected = (v[("nurse", "man")] - v[("nurse", "woman")]) - (v[("doctor", "man")] - v[("doctor", "woman")])
    assert len(out) == 1 and out["value"].iloc[0] == pytest.approx(expected, abs=1e-12)
    assert isinstance(out, pd.DataFrame)


def test_lpr_standardize_z_of_constant_lprs_is_nan(tmp_path):
    rows = []
    for target in ("nurse", "engineer", "doctor"):
        # log P(he) - log P(she) = 0.1 for every target: constant LPRs within the query, whose
        # pandas SD is 1.7e-17, not 0
        for group, word, lp in (("male", "he", 0.1), ("female", "she", 0.0)):
            rows.append(
                {
                    "model": "m",
                    "context": "[MASK] is a {TARGET}.",
                    "target_group": "Job",
                    "target": target,
                    "attribute_group": group,
                    "attribute": word,
                    "value": lp,
                    "design": "d",
                    "mask_group": group,
                    "mask": word,
                }
            )
    table = from_records(rows, scorer="fmat", measure="log_prob", extra_columns=["design", "mask_group", "mask"])
    out = assoc.analyze("lpr", table, standardize="z", target_pair=False, attrib_pair=False)
    assert out["value"].isna().all()

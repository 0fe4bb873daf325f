"""The correlate analysis: join with a criterion file, r/CI/p against scipy, Williams' t by hand."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import assoc
from assoc.errors import DataError, OptionError
from assoc.table.schema import normalise

JOBS = [f"job{i}" for i in range(30)]


def make_table(seed=0):
    rng = np.random.default_rng(seed)
    male_share = np.linspace(5, 95, len(JOBS))
    rows = []
    for model, noise in [("m1", 0.5), ("m2", 2.0)]:
        for job, share in zip(JOBS, male_share):
            for context in ["The {TARGET} is here.", "A {TARGET} works."]:
                rows.append(
                    {
                        "scorer": "fmat",
                        "model": model,
                        "context": context,
                        "target": job,
                        "attribute_group": "male-female",
                        "measure": "lpr",
                        "value": share / 30 + rng.normal(scale=noise),
                    }
                )
    return normalise(pd.DataFrame(rows)), male_share


def write_criterion(tmp_path, male_share, seed=0):
    rng = np.random.default_rng(seed)
    crit = pd.DataFrame(
        {
            "occupation": JOBS[:-2] + ["unknown1", "unknown2"],
            "pct_male": male_share,
            "noisy": male_share + rng.normal(scale=30, size=len(JOBS)),
        }
    )
    path = tmp_path / "criterion.csv"
    crit.to_csv(path, index=False)
    return path, crit


def williams_by_hand(r12, r13, r23, n):
    # Williams (1959) / Steiger (1980, eq. 7), written out independently of assoc
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23) / denominator)
    return t, 2 * stats.t.sf(abs(t), n - 3)


def test_correlation_with_criterion_file(tmp_path):
    table, share = make_table()
    path, crit = write_criterion(tmp_path, share)
    result = assoc.analyze(
        "correlate",
        table,
        criterion=str(path),
        key="target",
        criterion_key="occupation",
        criterion_columns=["pct_male"],
    )
    assert list(result["model"]) == ["m1", "m2"]
    for _, row in result.iterrows():
        means = table[table["model"] == row["model"]].groupby("target")["value"].mean()
        merged = crit.set_index("occupation").join(means, how="inner")
        ref = stats.pearsonr(merged["value"], merged["pct_male"])
        ci = ref.confidence_interval()
        assert row["n"] == 28 and row["n_keys_without_criterion"] == 2
        assert row["r"] == pytest.approx(ref.statistic, abs=1e-12)
        assert row["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
        assert [row["ci_low"], row["ci_high"]] == pytest.approx([ci.low, ci.high], abs=1e-12)


def test_williams_between_criteria_and_between_models(tmp_path):
    table, share = make_table(1)
    _, crit = write_criterion(tmp_path, share, seed=1)
    result = assoc.analyze(
        "correlate", table, criterion=crit, key="target", criterion_key="occupation", compare="criteria"
    )
    row = result[(result["kind"] == "williams") & (result["model"] == "m1")].iloc[0]
    means = table[table["model"] == "m1"].groupby("target")["value"].mean()
    merged = crit.set_index("occupation").join(means, how="inner")
    r12 = np.corrcoef(merged["value"], merged["pct_male"])[0, 1]
    r13 = np.corrcoef(merged["value"], merged["noisy"])[0, 1]
    r23 = np.corrcoef(merged["pct_male"], merged["noisy"])[0, 1]
    t, p = williams_by_hand(r12, r13, r23, 28)
    assert (row["x"], row["y"], row["shared"], row["df"]) == ("pct_male", "noisy", "value", 25)
    assert row["t"] == pytest.approx(t, rel=1e-10) and row["p_value"] == pytest.approx(p, rel=1e-10)

    between = assoc.analyze(
        "correlate",
        table,
        criterion=crit,
        key="target",
        criterion_key="occupation",
        criterion_columns=["pct_male"],
        compare="groups",
    )
    row = between[between["kind"] == "williams"].iloc[0]
    wide = table.groupby(["target", "model"])["value"].mean().unstack()
    merged = crit.set_index("occupation").join(wide, how="inner")
    t, p = williams_by_hand(
        np.corrcoef(merged["pct_male"], merged["m1"])[0, 1],
        np.corrcoef(merged["pct_male"], merged["m2"])[0, 1],
        np.corrcoef(merged["m1"], merged["m2"])[0, 1],
        28,
    )
    assert (row["x"], row["y"], row["shared"]) == ("measure=lpr model=m1", "measure=lpr model=m2", "pct_male")
    assert row["t"] == pytest.approx(t, rel=1e-10) and row["p_value"] == pytest.approx(p, rel=1e-10)
    assert t > 0  # the less noisy model tracks the criterion better


def test_mapping_criterion_and_spearman():
    table, share = make_table(2)
    mapping = dict(zip(JOBS, share))
    result = assoc.analyze("correlate", table, criterion=mapping, method="spearman")
    means = table[table["model"] == "m2"].groupby("target")["value"].mean().reindex(JOBS)
    assert result.iloc[1]["r"] == pytest.approx(stats.spearmanr(means, share).statistic, abs=1e-12)
    assert result.iloc[1]["y"] == "criterion"


def test_correlate_errors(tmp_path):
    table, share = make_table()
    with pytest.raises(OptionError, match="criterion"):
        assoc.analyze("correlate", table)
    with pytest.raises(OptionError, match="file not found"):
        assoc.analyze("correlate", table, criterion=str(tmp_path / "nope.csv"))
    with pytest.raises(DataError, match="no value of column 'target' matches"):
        assoc.analyze("correlate", table, criterion={"x": 1.0, "y": 2.0})
    path, _ = write_criterion(tmp_path, share)
    with pytest.raises(DataError, match="no key column 'target'"):
        assoc.analyze("correlate", table, criterion=str(path))

"""The examples of docs/stereoset.md, docs/winogender.md, docs/winobias.md and docs/choice-table.md run as written,
offline (each page's ``assoc`` command lines, then its Python blocks), and their numbers are recounted from the
tables they build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assoc.testing.docs import code_blocks, run_blocks, run_commands

DOCS = Path(__file__).resolve().parents[3] / "docs"


def run_page(name: str, monkeypatch, tmp_path) -> dict:
    """The page's ``assoc`` command lines (its bash blocks, through the command's entry point), then its Python."""
    monkeypatch.chdir(tmp_path)
    run_commands(code_blocks(DOCS / name, "bash"), cwd=tmp_path, name=f"docs/{name}")
    blocks = code_blocks(DOCS / name)
    assert blocks, f"{name} has no Python example"
    return run_blocks(blocks, name=f"docs/{name}", namespace={"__name__": f"docs_{name}"})


@pytest.mark.docs("docs/choice-table.md", "python")
def test_choice_table_page(monkeypatch, tmp_path):
    table = run_page("choice-table.md", monkeypatch, tmp_path)["table"]
    assert list(table["measure"]) == ["log_prob", "log_prob", "choice"]
    assert list(table["option"]) == [0, 1, 1] and list(table["role"]) == ["occupation", "participant", "participant"]


@pytest.mark.slow  # builds two tiny models and scores with them
@pytest.mark.docs("docs/stereoset.md", "python")
@pytest.mark.docs("docs/stereoset.md", "bash")
def test_stereoset_page(monkeypatch, tmp_path):
    ns = run_page("stereoset.md", monkeypatch, tmp_path)
    table, result = ns["table"], ns["result"]
    # by hand: per item pro = [s > a], related = [s > u] + [a > u]; per target the shares; mean over targets
    wide = table.pivot(index="item_id", columns="role", values="value")
    items = table.drop_duplicates("item_id").set_index("item_id")[["split", "target"]].join(wide)
    items["pro"] = items["stereotype"] > items["anti-stereotype"]
    items["related"] = (items["stereotype"] > items["unrelated"]).astype(int) + (
        items["anti-stereotype"] > items["unrelated"]
    )
    for split in ("intrasentence", "intersentence", "overall"):
        part = items if split == "overall" else items[items["split"] == split]
        per_target = part.groupby("target").agg(pro=("pro", "mean"), related=("related", "mean"))
        ss, lms = 100 * per_target["pro"].mean(), 50 * per_target["related"].mean()
        row = result[(result["split"] == split) & (result["bias_type"] == "overall")].iloc[0]
        assert (row["ss"], row["lms"]) == pytest.approx((ss, lms), abs=1e-10)
        assert row["icat"] == pytest.approx(lms * min(ss, 100 - ss) / 50, abs=1e-10)
        assert row["ss_low"] <= row["ss"] <= row["ss_high"]
    assert len(ns["few"].items) == 120
    # the scorer's section: ten items per bias type on each kind, each run its own method
    likelihood, chat = ns["likelihood"], ns["chat"]
    assert likelihood.groupby("model")["item_id"].nunique().to_dict() == {"bert": 40, "gpt2": 40}
    assert set(likelihood.groupby("model")["method"].unique().map(tuple)) == {("authors",), ("log_prob",)}
    assert chat["item_id"].nunique() == len(chat) == 40 and set(chat["method"]) == {"choice"}
    assert set(ns["scores"]["split"]) == {"intrasentence", "intersentence", "overall"}


@pytest.mark.slow  # builds two tiny models and scores with them
@pytest.mark.docs("docs/winogender.md", "python")
@pytest.mark.docs("docs/winogender.md", "bash")
def test_winogender_page(monkeypatch, tmp_path):
    ns = run_page("winogender.md", monkeypatch, tmp_path)
    first = ns["winogender"].items[1]
    assert (first.options, first.answer, first.derived["pronoun"]) == (("technician", "customer"), 1, "she")
    table, result, values, same = ns["table"], ns["result"], ns["values"], ns["same"]
    # by hand: per occupation the mean female - male score, correlated with the bundled statistics
    wide = table.pivot(index="item_id", columns="role", values="value")
    occupation = table.drop_duplicates("item_id").set_index("item_id")["occupation"]
    mean = (wide["female"] - wide["male"]).groupby(occupation).mean()
    statistics = ns["occupation_statistics"]().set_index("occupation")
    for criterion in ("bls_pct_female", "bergsma_pct_female"):
        r = stats.pearsonr(mean, statistics.loc[mean.index, criterion]).statistic
        row = result[result["criterion"] == criterion].iloc[0]
        assert row["r"] == pytest.approx(r, abs=1e-12)
        assert same[same["y"] == criterion]["r"].iloc[0] == pytest.approx(r, abs=1e-12)
    assert np.allclose(values.set_index("target").loc[mean.index, "value"], mean)
    # the scorer's section: a stand-in chat model that always picks "she"/"her" when shown
    referent, pronoun, likelihood = ns["referent"], ns["pronoun"], ns["likelihood"]
    assert referent["item_id"].nunique() == 15 and set(pronoun["role"]) == {"female"} and len(pronoun) == 60
    assert (ns["shares"]["value"] == 1.0).all()
    assert set(likelihood["method"]) == {"pll", "log_prob"} and likelihood["item_id"].nunique() == 15


@pytest.mark.slow  # builds two tiny models and scores with them
@pytest.mark.docs("docs/winobias.md", "python")
@pytest.mark.docs("docs/winobias.md", "bash")
def test_winobias_page(monkeypatch, tmp_path):
    ns = run_page("winobias.md", monkeypatch, tmp_path)
    first = ns["winobias"].items[0]
    assert (first.options, first.answer) == (("developer", "designer"), 0)
    table, result = ns["table"], ns["result"]
    wide = table.pivot(index="item_id", columns="option", values="value")
    first = table.drop_duplicates("item_id").set_index("item_id")
    chosen = pd.Series(np.where(wide[1] > wide[0], 1, 0), index=wide.index)
    right = chosen == first.loc[wide.index, "answer"]
    stereotype, kind = first.loc[wide.index, "stereotype"], first.loc[wide.index, "type"]
    for t in (1, 2):
        row = result[(result["type"] == t) & (result["split"] == "dev")].iloc[0]
        pro, anti = (
            right[(stereotype == "pro") & (kind == t)].mean(),
            right[(stereotype == "anti") & (kind == t)].mean(),
        )
        assert (row["accuracy_pro"], row["accuracy_anti"], row["gap"]) == pytest.approx((pro, anti, pro - anti))
        assert row["gap_low"] <= row["gap"] <= row["gap_high"]
    # the scorer's section: a stand-in chat model that names the first occupation shown
    chat, likelihood = ns["chat"], ns["likelihood"]
    assert chat["item_id"].nunique() == len(chat) == 40 and (chat["status"] == "ok").all()
    assert likelihood.groupby("model")["item_id"].nunique().to_dict() == {"bert": 40, "gpt2": 40}

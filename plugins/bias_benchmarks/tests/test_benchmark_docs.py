"""The Python examples of docs/holistic-bias.md, docs/discrim-eval.md and docs/benchmarks-run.md run as written,
offline (tiny models built on the spot, the test chat server), and their numbers are recounted from the tables."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from assoc_bias_benchmarks.discrim_eval.items import logit_yes
from scipy import stats

from assoc.testing.docs import code_blocks, run_blocks
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (an autouse fixture: a cache of each test's own)

DOCS = Path(__file__).resolve().parents[3] / "docs"


def run_page(name: str, monkeypatch, tmp_path) -> dict:
    """The page's Python blocks, in order, in a fresh folder: the names they defined."""
    monkeypatch.chdir(tmp_path)
    return run_blocks(code_blocks(DOCS / name), name=f"docs/{name}", namespace={"__name__": "docs_example"})


@pytest.mark.slow  # two tiny models score 192 sentences (a masked LM by PLL)
@pytest.mark.docs("docs/holistic-bias.md", "python")
def test_holistic_bias_page(monkeypatch, tmp_path, capsys):
    ns = run_page("holistic-bias.md", monkeypatch, tmp_path)
    printed = capsys.readouterr().out
    assert len(ns["cells"].items) == 2496 and len(ns["sentences"].items) == 549_120
    table, bias = ns["table"], ns["bias"]
    assert len(table) == 2 * 2 * 3 * 32 and set(table["measure"]) == {"log_prob", "pll"}
    assert "model 'chat:gpt-4o-mini' is a chat model" in printed and "has no chat form" in printed
    # by hand: per model and axis, every pair of its 3 descriptors in its one template, Mann-Whitney U on the
    # per-token means, the share with p < 0.05
    for (model, axis), rows in table.groupby(["model", "axis"]):
        values = {d: part["value_per_token"].to_numpy() for d, part in rows.groupby("descriptor")}
        tests = [stats.mannwhitneyu(values[a], values[b]).pvalue < 0.05 for a, b in itertools.combinations(values, 2)]
        row = bias[(bias["model"] == model) & (bias["level"] == "axis") & (bias["axis"] == axis)].iloc[0]
        assert (row["n_pairs"], row["fraction"]) == (3, np.mean(tests))


@pytest.mark.slow  # a causal and a masked LM on 60 long prompts
@pytest.mark.docs("docs/discrim-eval.md", "python")
def test_discrim_eval_page(monkeypatch, tmp_path):
    ns = run_page("discrim-eval.md", monkeypatch, tmp_path)
    table, scores = ns["table"], ns["scores"]
    assert len(table) == 180 and table.groupby("model")["measure"].first().to_dict() == {
        "gpt": "logit_yes",
        "bert": "logit_yes",
        "bot": "yes",
    }
    likely = table[table["measure"] == "logit_yes"]
    assert np.allclose(likely["value"], logit_yes(likely["ll_yes"], likely["ll_Yes"], likely["ll_no"], likely["ll_No"]))
    chat = table[table["model"] == "bot"]
    refused = chat["race"] == "Hispanic"
    assert (chat[refused]["reply_status"] == "refusal").all() and chat[~refused]["value"].isin([0.0, 1.0]).all()
    bot = scores[scores["model"] == "bot"]
    assert (bot["n_refusal"] == refused.sum()).all()
    assert bot.set_index("metric").loc["hispanic_bias", "missing"]


@pytest.mark.slow  # a causal LM on two benchmarks
@pytest.mark.docs("docs/benchmarks-run.md", "python")
def test_benchmarks_run_page(monkeypatch, tmp_path):
    ns = run_page("benchmarks-run.md", monkeypatch, tmp_path)
    done = ns["done"]
    assert list(done.skipped) == ["holistic_bias"] and list(done.skipped["holistic_bias"]) == ["bot"]
    summary = done.summary
    ok = summary[summary["status"] == "ok"]
    assert set(zip(ok["benchmark"], ok["model"])) == {
        ("holistic_bias", "gpt"),
        ("discrim_eval", "gpt"),
        ("discrim_eval", "bot"),
    }
    assert (tmp_path / "results" / "summary.csv").is_file() and (tmp_path / "results" / "card.md").is_file()

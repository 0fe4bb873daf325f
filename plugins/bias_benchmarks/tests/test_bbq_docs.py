"""The Python examples of docs/bbq.md run as written, offline (bundled BBQ, local chat server, tiny GPT-2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from assoc.testing.docs import code_blocks, run_blocks

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "bbq.md"
HERE = Path(__file__).parent / "data" / "bbq_six"


@pytest.mark.docs("docs/bbq.md", "python", excluding="import pandas as pd")
def test_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = code_blocks(PAGE)
    assert len(blocks) == 3
    namespace = run_blocks(blocks[:2], name="docs/bbq.md", namespace={"__name__": "docs_bbq"})
    table, scores = namespace["table"], namespace["scores"]
    few = namespace["few"]
    assert len(table) == 120 and (table["chosen"] == 0).all()
    # always option 0: accuracy is the share of examples whose label is 0, counted here from the files
    for row in scores.itertuples():
        mine = [i for i in few.items if i.fields["context_condition"] == row.context_condition]
        assert row.accuracy == sum(i.fields["label"] == 0 for i in mine) / len(mine)


@pytest.mark.docs("docs/bbq.md", "python", section="## Comparing BBQ with the other methods")
def test_method_comparison_example(tmp_path, monkeypatch):
    """BBQ, word association and clm per group, then convergence: every score recounted from the rows."""
    from scipy import stats

    monkeypatch.chdir(tmp_path)
    ns = run_blocks(code_blocks(PAGE)[2:], name="docs/bbq.md (comparison)", namespace={"__name__": "docs_bbq_cmp"})
    bbq_table, others, scores, agree = ns["bbq_table"], ns["others"], ns["scores"], ns["agree"]
    groups = {target: [g for g, t in ns["MATCH"].items() if t == target] for target in ns["MATCH"].values()}
    by_hand: dict[str, dict[str, float]] = {"bbq": {}, "chat_word_association": {}, "clm": {}}
    for target, keys in groups.items():
        mine = bbq_table[[any(k in json.loads(g) for k in keys) for g in bbq_table["stereotyped_groups"]]]
        assert len(mine) == 40 * len(keys) and set(mine["context_condition"]) == {"disambig"}
        biased = int((mine["chosen"] == mine["target_loc"]).sum())
        counter = int(((mine["chosen"] != mine["target_loc"]) & (mine["chosen"] != mine["unknown_loc"])).sum())
        by_hand["bbq"][target] = (biased - counter) / (biased + counter)
        chosen = others[(others["scorer"] == "chat_word_association") & (others["measure"] == "chosen")]
        label = chosen[chosen["target"] == target]
        share = label.groupby("attribute_group")["value"].mean()
        by_hand["chat_word_association"][target] = share["stigma_congruent"] - share["default_congruent"]
        clm = others[(others["scorer"] == "clm") & (others["target"] == target)]
        per_query = clm.groupby(["context", "mask_group"])["value"].mean().unstack()
        by_hand["clm"][target] = float((per_query["stigma_congruent"] - per_query["default_congruent"]).mean())
    for row in scores.itertuples():
        assert row.raw_score == pytest.approx(by_hand[row.method][row.target], abs=1e-9), row
    assert {m: scores[scores.method == m]["rule"].iloc[0] for m in by_hand} == {
        "bbq": "difference",
        "chat_word_association": "contrast",
        "clm": "contrast",
    }
    targets = sorted(groups)
    for row in agree[agree["kind"] == "correlation"].itertuples():
        x = [by_hand[row.x][t] for t in targets]
        y = [by_hand[row.y][t] for t in targets]
        assert row.n == 6 and row.estimate == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-9)


def test_replication_table_shows_the_r_scripts_numbers():
    """Every row of the page's table carries the frozen R output, rounded as printed."""
    accuracy = pd.read_csv(HERE / "r_accuracy.csv").set_index(["category", "model", "context_condition"])
    bias = pd.read_csv(HERE / "r_bias.csv").set_index(["category", "model", "context_condition"])
    rows = re.findall(
        r"^\| (\w+) \| (format_race|format_arc|baseline_qonly) \| (ambig|disambig) \| ([\d.]+) \| ([\d.]+) \| "
        r"(-?[\d.]+) \| (-?[\d.]+) \|",
        PAGE.read_text(encoding="utf-8"),
        flags=re.M,
    )
    assert len(rows) == 30
    for category, model, condition, acc_r, acc_ours, bias_r, bias_ours in rows:
        key = (category, model, condition)
        assert acc_r == acc_ours == f"{accuracy.loc[key, 'accuracy']:.4f}"
        assert bias_r == bias_ours == f"{bias.loc[key, 'acc_bias']:.2f}"


def test_documented_options_exist():
    from assoc_bias_benchmarks.bbq.analysis import BBQAnalysis
    from assoc_bias_benchmarks.bbq.scorer import BBQScorer

    known = {o.name for cls in (BBQScorer, BBQAnalysis) for o in cls.options}
    used = set(re.findall(r"(?:-o|--option) (\w+)=", PAGE.read_text(encoding="utf-8")))
    assert used and used <= known, used - known

"""The Python examples of docs/bbq.md run as written, offline (bundled BBQ, local chat server)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from assoc.testing.docs import code_blocks, run_blocks

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "bbq.md"
HERE = Path(__file__).parent / "data" / "bbq"


def test_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = code_blocks(PAGE)
    assert len(blocks) == 2
    namespace = run_blocks(blocks, name="docs/bbq.md", namespace={"__name__": "docs_bbq"})
    table, scores = namespace["table"], namespace["scores"]
    few = namespace["few"]
    assert len(table) == 120 and (table["chosen"] == 0).all()
    # always option 0: accuracy is the share of examples whose label is 0, counted here from the files
    for row in scores.itertuples():
        mine = [i for i in few.items if i.record["context_condition"] == row.context_condition]
        assert row.accuracy == sum(i.record["label"] == 0 for i in mine) / len(mine)


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
    from assoc_chat_listing.bbq.analysis import BBQAnalysis
    from assoc_chat_listing.bbq.causal import CausalBBQScorer
    from assoc_chat_listing.bbq.scorer import ChatBBQScorer

    known = {o.name for cls in (ChatBBQScorer, CausalBBQScorer, BBQAnalysis) for o in cls.options}
    used = set(re.findall(r"(?:-o|--option) (\w+)=", PAGE.read_text(encoding="utf-8")))
    assert used and used <= known, used - known

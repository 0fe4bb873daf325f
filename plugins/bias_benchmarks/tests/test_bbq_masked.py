"""BBQ on a masked LM (no peer offers it): each option's pseudo-log-likelihood after the prompt, and the argmax.

The reference is written out here with transformers alone: for each option, the tokens of ``prompt + " " + option``
whose characters overlap the option, each masked in turn in one forward pass, their log-probabilities summed
(Salazar et al., 2020), never the scorer's own engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from assoc_bias_benchmarks.bbq import items as bbq_items
from assoc_bias_benchmarks.bbq.testing import example_directory

import assoc


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return build_bert_wordpiece(tmp_path_factory.mktemp("bbq-masked") / "bert", seed=0)


def pll_by_hand(model_dir: Path):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()

    def score(context: str, continuation: str) -> tuple[float, int]:
        text = context + continuation
        encoded = tokenizer(text, return_offsets_mapping=True)
        start, end = len(context), len(text)
        ids = encoded["input_ids"]
        total, n = 0.0, 0
        for position, (a, b) in enumerate(encoded["offset_mapping"]):
            if b <= a or b <= start or a >= end:  # special tokens, and tokens of the context
                continue
            masked = list(ids)
            masked[position] = tokenizer.mask_token_id
            with torch.no_grad():
                logits = model(torch.tensor([masked])).logits[0, position].double()
            total += float(logits.log_softmax(-1)[ids[position]])
            n += 1
        return total, n

    return score


def test_bbq_on_a_masked_lm_chooses_the_option_of_highest_pll(tiny_bert: Path, tmp_path: Path) -> None:
    stimuli = bbq_items.load_directory(example_directory(tmp_path / "bbq", {"Religion": 4}))
    table = assoc.score("bbq", stimuli, [str(tiny_bert)], cache=False, progress=False)
    assert len(table) == 4 and (table["status"] == "ok").all() and set(table["rule"]) == {"argmax"}
    score = pll_by_hand(tiny_bert)
    for item, row in zip(stimuli.items, table.itertuples()):
        prompt = f"{item.fields['context']}\n\nQ: {item.fields['question']}\nA:"
        lls = []
        for i, option in enumerate(item.options):
            ll, n = score(prompt, " " + option)
            assert getattr(row, f"ll_ans{i}") == pytest.approx(ll, abs=1e-4)
            assert getattr(row, f"n_tokens_ans{i}") == n
            lls.append(ll)
        assert row.chosen == max(range(3), key=lambda i: lls[i])
        assert row.value == float(row.chosen == item.fields["label"])
    scores = assoc.analyze("bbq", table, n_bootstrap=0)
    assert scores["n_scored"].sum() == 4

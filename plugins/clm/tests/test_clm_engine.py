"""The causal engine: equal to the model's own unbatched forward, at any batch size and padding; bad input refused."""

from __future__ import annotations

import numpy as np
import pytest

from assoc import ModelError
from assoc.lm import CausalRequest


def _requests(lm, items):
    from assoc.lm import plan_sentence, special_tokens

    lead, trail = special_tokens(lm.tokenizer, "auto")
    plans = [plan_sentence(lm.tokenizer, lead, trail, *it.sentence()) for it in items]
    return list(dict.fromkeys(r for p in plans for r in p.requests()))


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_equal_at_any_batch_size_and_path(family, causal_lms, items):
    """batch_tokens 17 .. 1e6 and the shared-prefix / whole-sequence paths agree within 1e-5 (float32)."""
    lm = causal_lms[family]
    requests = _requests(lm, items[::4])
    runs = [lm.log_probs(requests, batch_tokens=budget) for budget in (17, 1024, 10**6)]
    whole = lm._compute(lm.model, requests, 256, shared=False, head_only=False)
    for other in [*runs[1:], whole]:
        assert max(np.max(np.abs(a - b)) for a, b in zip(runs[0], other)) <= 1e-5
    # the model's own forward pass, one unpadded sequence at a time: an independent computation
    for request, got in zip(requests[:12], runs[1][:12]):
        assert np.max(np.abs(got - lm.reference_log_probs(request))) <= 1e-5


def test_shared_prefix_is_used_and_checked(causal_lms, items):
    lm = causal_lms["gpt2"]
    lm.log_probs(_requests(lm, items[:10]))
    assert lm.paths == (True, True)


def test_sentence_is_prefix_plus_option_plus_suffix(causal_lms, items):
    """log P(sentence) = sum of per-token values; option values are the sentence's at the option's tokens."""
    from assoc_clm.scorer import score_items

    lm = causal_lms["llama"]
    for row in score_items(lm, items[:30], bos="auto"):
        assert row["sentence_log_prob"] == pytest.approx(sum(v for _, v in row["token_log_probs"]), abs=1e-9)
        assert row["n_tokens"] == len(row["token_log_probs"])
        assert row["start_token"] == "<s>"


def test_bad_requests_refused(causal_lms):
    lm = causal_lms["gpt2"]
    with pytest.raises(ValueError, match="context is empty"):
        CausalRequest((), (1, 2))
    # the text named (decoded, shortened), its length and the model's limit, carried for a scorer to name its item
    with pytest.raises(ModelError, match=r"^'.+' has 65 tokens, more than model '.+gpt2' accepts \(64, special") as err:
        lm.log_probs([CausalRequest((0,), tuple([5] * lm.max_length))])
    assert (err.value.n_tokens, err.value.max_length) == (65, 64) and err.value.text == "%" * 64  # specials skipped
    with pytest.raises(ModelError, match="outside the vocabulary"):
        lm.log_probs([CausalRequest((0,), (10**7,))])


def test_non_finite_refused(tiny_causal):
    """A NaN in the weights stops the run naming the model, as the masked engine does."""
    import torch

    from assoc.lm import load_causal_lm

    lm = load_causal_lm(tiny_causal["gpt2"])
    with torch.no_grad():
        lm.model.transformer.h[0].mlp.c_fc.weight[0, 0] = float("nan")
    with pytest.raises(ModelError, match="NaN or infinite"):
        lm.log_probs([CausalRequest((0, 5), (6, 7)), CausalRequest((0, 5), (8,))])


def test_path_check_is_remembered_across_loads(tiny_causal, monkeypatch):
    """A second copy of the same weights reads the path check from the memo instead of running it."""
    from assoc.lm import load_causal_lm

    requests = [CausalRequest((0, 5), (6, 7)), CausalRequest((0, 5, 9), (8,))]
    first = load_causal_lm(tiny_causal["gpt2"])
    first.log_probs(requests)
    second = load_causal_lm(tiny_causal["gpt2"])

    def no_check(request):
        raise AssertionError("the path check ran again")

    monkeypatch.setattr(second, "reference_log_probs", no_check)
    assert [list(v) for v in second.log_probs(requests)] == [list(v) for v in first.log_probs(requests)]
    assert second.paths == first.paths == (True, True)

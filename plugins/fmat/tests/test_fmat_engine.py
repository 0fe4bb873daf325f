"""The masked-LM engine against transformers' fill-mask pipeline and a by-hand log-softmax."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assoc.errors import ModelError
from assoc.lm.masked import MaskRequest, load_masked_lm

QUERIES = [
    "The [MASK] works as a nurse.",
    "[MASK] is a doctor.",
    "Most people [MASK] music and poetry a lot.",
    "I [MASK] it.",
]
# The vocabulary string each word becomes inside a sentence (after a space), stated by hand per family.
MID_TOKENS = {
    "bert": {"man": "man", "like": "like", "woman": "woman"},
    "roberta": {"man": "Ġman", "like": "Ġlike", "woman": "Ġwoman"},
    "albert": {"man": "▁man", "like": "▁like", "woman": "▁woman"},
}
FAMILIES = ["bert", "roberta", "albert"]


def _by_hand(lm, text):
    """log-softmax of the model's full logits at the mask, computed in float64 with numpy."""
    import torch

    enc = lm.tokenizer(text.replace("[MASK]", lm.mask_token), return_tensors="pt")
    with torch.no_grad():
        logits = lm.model(**enc).logits[0].double().numpy()
    pos = int((enc["input_ids"][0] == lm.mask_token_id).nonzero()[0, 0])
    row = logits[pos]
    return row - (row.max() + np.log(np.exp(row - row.max()).sum())), tuple(enc["input_ids"][0].tolist()), pos


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.slow
def test_log_probs_match_fill_mask_pipeline(loaded, family):
    from transformers import pipeline

    lm = loaded[family]
    pipe = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, device="cpu")
    vocab = lm.tokenizer.get_vocab()
    requests, expected = [], []
    for query in QUERIES:
        text = query.replace("[MASK]", lm.mask_token)
        ids = lm.encode(text)
        pos = ids.index(lm.mask_token_id)
        tokens = list(MID_TOKENS[family].values())
        requests.append(MaskRequest(ids, pos, tuple(vocab[t] for t in tokens)))
        by_id = {r["token"]: r["score"] for r in pipe(text, targets=tokens, top_k=len(tokens))}
        assert len(by_id) == len(tokens)
        expected.append([math.log(by_id[vocab[t]]) for t in tokens])
    got = lm.log_probs(requests, batch_tokens=16)
    assert np.max(np.abs(np.array(got) - np.array(expected))) < 1e-5


@pytest.mark.parametrize("family", FAMILIES)
def test_log_probs_match_by_hand_log_softmax(loaded, family):
    lm = loaded[family]
    for query in QUERIES:
        expected, ids, pos = _by_hand(lm, query)
        full = lm.log_probs([MaskRequest(ids, pos, None)])[0]
        assert full.dtype == np.float64 and full.shape == expected.shape
        assert np.max(np.abs(full - expected)) < 1e-5
        assert abs(np.exp(full).sum() - 1.0) < 1e-9


def test_batching_duplicates_and_order_do_not_change_results(loaded):
    lm = loaded["bert"]
    singles = []
    requests = []
    for query in QUERIES:
        _, ids, pos = _by_hand(lm, query)
        requests.append(MaskRequest(ids, pos, (1010, 2158, 2450)))
        singles.append(lm.log_probs([requests[-1]], batch_tokens=10_000)[0])
    shuffled = requests[::-1] + requests  # duplicates share rows; order must be kept
    for budget in (1, 20, 10_000, None):
        out = lm.log_probs(shuffled, batch_tokens=budget)
        expect = singles[::-1] + singles
        assert all(np.max(np.abs(a - b)) < 1e-5 for a, b in zip(out, expect))


def test_batch_plan_respects_the_budget_and_wastes_the_least_padding():
    from assoc.lm.batching import CPU_BUDGET, GPU_BUDGET, default_batch_tokens, plan_batches

    assert plan_batches([], 100) == []
    assert plan_batches([50], 10) == [(0, 1)]  # a row longer than the budget runs alone
    lengths = [12, 12, 12, 8, 8, 8, 8, 5, 5]
    for budget in (1, 10, 24, 40, 100, 1000):
        for overhead in (0, 1, 96):
            plan = plan_batches(lengths, budget, overhead)
            assert plan[0][0] == 0 and plan[-1][1] == len(lengths)
            assert all(a[1] == b[0] for a, b in zip(plan, plan[1:]))
            assert all(stop - start == 1 or (stop - start) * lengths[start] <= budget for start, stop in plan)
    # no per-batch cost: never pad a short row to a longer one
    assert plan_batches(lengths, 1000, 0) == [(0, 3), (3, 7), (7, 9)]
    # a large per-batch cost: one batch if it fits
    assert plan_batches(lengths, 1000, 10_000) == [(0, 9)]
    # a greedy fill would put the first 8 into the 12-token batch; the plan keeps lengths apart
    assert plan_batches(lengths, 48, 0) == [(0, 3), (3, 7), (7, 9)]
    assert default_batch_tokens("cpu") == CPU_BUDGET and default_batch_tokens("cuda:0") == GPU_BUDGET


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.slow
def test_packed_encoder_matches_each_sequence_run_alone(loaded, family):
    """Where every encoder layer has the BERT structure (BERT, RoBERTa; not ALBERT's shared
    layers), the engine runs the per-token work on the real tokens only (no padding) and the
    last layer at the requested positions only. Each value must equal the model's own
    forward pass of that sequence alone, unpadded (computed here with the model directly)."""
    import torch

    from assoc.lm.masked.engine import _bert_encoder

    lm = loaded[family]
    m = lm.mask_token
    texts = [
        f"{m} is a doctor.",
        f"The {m} works as a nurse and {m} likes it a lot.",
        f"{m}.",
        f"Most people {m} music and poetry.",
    ]
    seqs = [lm.encode(t) for t in texts]
    assert len({len(s) for s in seqs}) >= 3  # different lengths: the batch is padded
    picks = [(b, p) for b, seq in enumerate(seqs) for p, t in enumerate(seq) if t == lm.mask_token_id]
    picks += [(1, 0), (0, len(seqs[0]) - 1)]  # first and last positions too
    expected = []
    for b, p in picks:
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([seqs[b]])).logits[0, p].double()
        expected.append(torch.log_softmax(logits, -1).numpy())
    lm.log_probs([MaskRequest(seqs[0], picks[0][1], (5,))])  # decides the shortcut for this model
    assert lm._shortcut is (family != "albert")
    assert (_bert_encoder(lm.model) is not None) is (family != "albert")
    for shortcut in (False, True) if lm._shortcut else (False,):
        got = lm._forward(lm.model, seqs, picks, torch, shortcut=shortcut)
        assert got.shape == (len(picks), lm.vocab_size)
        assert np.max(np.abs(got - np.array(expected))) < 1e-5
    assert "forward" not in vars(lm.model.base_model.encoder)  # the per-call override is removed


def test_two_positions_of_one_sequence(loaded):
    lm = loaded["roberta"]
    ids = lm.encode(f"The {lm.mask_token} works as a {lm.mask_token}.")
    positions = [i for i, t in enumerate(ids) if t == lm.mask_token_id]
    assert len(positions) == 2
    both = lm.log_probs([MaskRequest(ids, p, None) for p in positions])
    import torch

    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0].double()
    for p, vector in zip(positions, both):
        assert np.max(np.abs(vector - torch.log_softmax(logits[p], -1).numpy())) < 1e-5


def test_too_long_sequence_and_bad_token_id_are_clear_errors(loaded):
    lm = loaded["albert"]
    ids = (2,) + (10,) * (lm.max_length + 5) + (3,)
    with pytest.raises(ModelError, match=rf"has {len(ids)} tokens, more than model .+ accepts \({lm.max_length}, spec"):
        lm.log_probs([MaskRequest(ids, 1, (5,))])
    with pytest.raises(ModelError, match="outside the vocabulary"):
        lm.log_probs([MaskRequest((2, 4, 3), 1, (10**6,))])
    with pytest.raises(ValueError, match="outside the sequence"):
        MaskRequest((2, 4, 3), 7, None)


def test_unknown_model_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        load_masked_lm(str(tmp_path / "no" / "such" / "model"))
    with pytest.raises(ModelError, match="cannot load fill-mask model"):
        load_masked_lm("nobody-has-this/model-xyz")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError):
        load_masked_lm(str(tmp_path / "empty"))


def test_info_reports_config_and_tokenizer_facts(loaded):
    info = loaded["bert"].info()
    assert info["vocab_size"] == 30522 and info["hidden_size"] == 32 and info["n_layers"] == 2
    assert info["cased"] is False and info["mask_token"] == "[MASK]"
    assert info["n_parameters"] == sum(p.numel() for p in loaded["bert"].model.parameters())
    assert loaded["roberta"].info()["cased"] is True and loaded["roberta"].mask_token == "<mask>"
    assert loaded["albert"].info()["embedding_size"] == 16
    # RoBERTa position ids start after the padding index: 66 positions, 64 usable.
    assert loaded["roberta"].max_length == 64


def test_fingerprint_is_stable_and_content_based(tiny_models, tmp_path):
    import shutil

    a = load_masked_lm(tiny_models["albert"])
    copy = tmp_path / "copy"
    shutil.copytree(tiny_models["albert"], copy)
    b = load_masked_lm(str(copy))
    assert a.fingerprint == b.fingerprint and a.fingerprint.startswith("sha256:")
    (copy / "extra.txt").write_text("changed")
    assert load_masked_lm(str(copy)).fingerprint != a.fingerprint
    a.close()
    with pytest.raises(ModelError, match="closed"):
        a.info()


def test_temporary_tokens_are_weighted_means_of_subtokens(tiny_models):
    """After adding a token, its logit is the weighted mean of its sub-tokens' logits (the head is
    linear in the output row and bias), and the log-softmax runs over the enlarged vocabulary."""
    lm = load_masked_lm(tiny_models["bert"])
    vocab = lm.tokenizer.get_vocab()
    sub = (vocab["individual"], vocab["##ism"])
    expected_full, ids, pos = _by_hand(lm, "They value [MASK] a lot.")
    logits = expected_full  # log-softmax = logits - const; differences of logits are unchanged
    w = np.array([1.0, 0.5]) / 1.5  # FMAT manual: decay 0.5 -> 0.667 / 0.333
    new_logit = w[0] * logits[sub[0]] + w[1] * logits[sub[1]]
    enlarged = np.append(logits, new_logit)
    lse = enlarged.max() + np.log(np.exp(enlarged - enlarged.max()).sum())
    (new_id,) = lm.add_temporary_tokens([("individualism", sub)], weight_decay=0.5)
    assert new_id == 30522 and lm.vocab_size == 30523
    emb = lm.model.get_input_embeddings().weight.detach().double().numpy()
    assert np.allclose(emb[new_id], w[0] * emb[sub[0]] + w[1] * emb[sub[1]], atol=1e-6)
    got = lm.log_probs([MaskRequest(ids, pos, (new_id, sub[0], 2158))])[0]
    assert np.max(np.abs(got - (enlarged[[new_id, sub[0], 2158]] - lse))) < 1e-5
    lm.close()


@pytest.mark.parametrize("architecture", ["distilbert", "electra", "deberta-v2", "modernbert", "xlm-roberta"])
@pytest.mark.slow
def test_other_architectures_read_the_lm_head_correctly(tmp_path, architecture):
    """Only the mask positions go through the LM head (a hook on the encoder output): check that
    this gives each architecture's own full-logits log-softmax, with padding in the batch."""
    import torch

    from assoc.testing.tiny_mlm import build_architecture

    lm = load_masked_lm(str(build_architecture(tmp_path / architecture, architecture)))
    texts = ["The [MASK] works as a nurse.", "He said that the [MASK] was very good at her job, [MASK] said."]
    requests, expected = [], []
    for text in texts:
        enc = lm.tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            logits = lm.model(**enc).logits[0].double()
        for pos in (enc["input_ids"][0] == lm.mask_token_id).nonzero()[:, 0].tolist():
            requests.append(MaskRequest(tuple(enc["input_ids"][0].tolist()), pos, None))
            expected.append(torch.log_softmax(logits[pos], -1).numpy())
    got = lm.log_probs(requests)
    assert len(got) == 3
    assert max(np.max(np.abs(g - e)) for g, e in zip(got, expected)) < 1e-5
    # the last-layer shortcut is decided by module structure plus a numerical check
    assert lm._shortcut is (architecture in ("electra", "xlm-roberta"))
    lm.close()


def test_device_and_dtype_options(tiny_models, loaded):
    import torch

    from assoc.errors import OptionError

    if not torch.cuda.is_available():
        with pytest.raises(OptionError, match="CUDA is not available"):
            load_masked_lm(tiny_models["albert"], device="cuda")
        assert load_masked_lm(tiny_models["albert"], device="auto").device == "cpu"
    with pytest.raises(OptionError, match="dtype"):
        load_masked_lm(tiny_models["albert"], dtype="float8")
    with pytest.raises(OptionError, match="device"):
        load_masked_lm(tiny_models["albert"], device="tpu")
    ref = loaded["albert"]
    half = load_masked_lm(tiny_models["albert"], dtype="bfloat16")
    assert half.model.dtype == torch.bfloat16
    ids = ref.encode("The [MASK] works as a nurse.")
    request = MaskRequest(ids, ids.index(ref.mask_token_id), None)
    a, b = ref.log_probs([request])[0], half.log_probs([request])[0]
    assert b.dtype == np.float64 and abs(np.exp(b).sum() - 1) < 1e-9
    assert 0 < np.max(np.abs(a - b)) < 0.5  # reduced precision: close, not equal

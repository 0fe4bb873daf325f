"""clm against the peers' own code: lm-evaluation-harness 0.4.x HFLM.loglikelihood and minicons IncrementalLMScorer.

Code against code on the seeded tiny GPT-2 (byte-level BPE, no BOS added by its tokenizer) and
Llama (SentencePiece, BOS added by its tokenizer) models, on Bao (2024) fill-mask items and
Watson et al. (2023) sentences: every log probability equal within 1e-5, with the models in
float64 on both sides (the peers sum float32 log probabilities in float32, whose own rounding
reaches a few 1e-5 on long sentences, a relative 1e-7; the float32 runs are compared with a relative
tolerance of 1e-6 in ``test_float32_*``). Each convention of a
peer that differs from clm's default is one of clm's options (``bos``, ``reduction``) and is
tested against that peer here. CI installs both peers (plugins/clm's ``test`` extra); with
``ASSOC_STRICT_SKIPS=1`` a missing peer fails these tests instead of skipping them.
"""

from __future__ import annotations

import numpy as np
import pytest
from assoc_clm.scorer import score_items

TOL = 1e-5
FAMILIES = ("gpt2", "llama")


def _split(item):
    sentence, (start, end) = item.sentence()
    return sentence, sentence[:start], sentence[start:end]


@pytest.fixture(scope="module")
def hflm(causal_lms64):
    pytest.importorskip("lm_eval")
    from lm_eval.models.huggingface import HFLM

    # batch size 7: a batch of mixed lengths with padding, as lm-eval runs it
    return {
        f: HFLM(pretrained=lm.model, tokenizer=lm.tokenizer, batch_size=7, device="cpu")
        for f, lm in causal_lms64.items()
    }


@pytest.fixture(scope="module")
def minicons_scorers(causal_lms64):
    pytest.importorskip("minicons")
    from minicons import scorer

    return {
        f: scorer.IncrementalLMScorer(lm.model, device="cpu", tokenizer=lm.tokenizer) for f, lm in causal_lms64.items()
    }


def _loglikelihood(lm, pairs):
    from lm_eval.api.instance import Instance

    requests = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    return np.array([value for value, _ in lm.loglikelihood(requests, disable_tqdm=True)])


def _ours(lm, items, bos, key):
    return np.array([row[key] for row in score_items(lm, items, bos=bos)])


@pytest.mark.parametrize("family", FAMILIES)
def test_sentence_equals_lm_eval_empty_context(family, causal_lms64, hflm, items):
    """bos='auto': log P(sentence) = lm-eval loglikelihood(("", sentence)) (BOS/EOS as the context)."""
    ours = _ours(causal_lms64[family], items, "auto", "sentence_log_prob")
    theirs = _loglikelihood(hflm[family], [("", _split(it)[0]) for it in items])
    assert np.max(np.abs(ours - theirs)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_option_equals_lm_eval_context_continuation(family, causal_lms64, hflm, items):
    """bos='tokenizer': log P(option | prefix) = lm-eval loglikelihood((prefix, option)) with its defaults.

    lm-eval moves the prefix's trailing space to the continuation and cuts the context's tokens off
    the whole text's, as clm does; it lets the tokenizer add its special tokens (Llama: BOS; GPT-2: none).
    """
    lm = causal_lms64[family]
    chosen = [it for it in items if _split(it)[1].strip()]  # lm-eval's context must not be empty
    ours = _ours(lm, chosen, "tokenizer", "option_log_prob")
    theirs = _loglikelihood(hflm[family], [(_split(it)[1], _split(it)[2]) for it in chosen])
    assert np.max(np.abs(ours - theirs)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_option_with_bos_equals_lm_eval_bos_context(family, causal_lms64, hflm, items):
    """bos='auto': log P(option | BOS prefix) = lm-eval with the BOS text in front of the context.

    For Llama the tokenizer adds the BOS itself (lm-eval's default context); for GPT-2 lm-eval
    needs the BOS string written before the context, which it then does not double.
    """
    lm = causal_lms64[family]
    adds_bos = lm.tokenizer("a")["input_ids"][0] == lm.tokenizer.bos_token_id
    head = "" if adds_bos else lm.tokenizer.bos_token
    ours = _ours(lm, items, "auto", "option_log_prob")
    pairs = [(head + _split(it)[1], _split(it)[2]) for it in items]
    theirs = _loglikelihood(hflm[family], pairs)
    assert np.max(np.abs(ours - theirs)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_sentence_equals_minicons_sequence_score(family, causal_lms64, minicons_scorers, items):
    """bos='tokenizer' = minicons sequence_score (sum, its default bos_token=False); 'auto' = bos_token=True (GPT-2)."""
    lm, scorer = causal_lms64[family], minicons_scorers[family]
    sentences = [_split(it)[0] for it in items]
    total = lambda x: x.sum(0).item()  # noqa: E731 - minicons takes the reduction as a callable
    theirs = np.array(scorer.sequence_score(sentences, reduction=total))
    assert np.max(np.abs(_ours(lm, items, "tokenizer", "sentence_log_prob") - theirs)) <= TOL
    if family == "gpt2":  # for Llama, bos_token=True doubles the BOS its tokenizer adds (minicons #78)
        theirs_bos = np.array(scorer.sequence_score(sentences, reduction=total, bos_token=True))
        assert np.max(np.abs(_ours(lm, items, "auto", "sentence_log_prob") - theirs_bos)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_mean_reduction_equals_minicons_default(family, tiny_causal, minicons_scorers, edge_stimuli):
    """reduction='mean' through assoc.score is minicons' default sequence_score (mean over scored tokens)."""
    import assoc

    table = assoc.score("clm", edge_stimuli, models=[tiny_causal[family]], bos="tokenizer", reduction="mean")
    theirs = np.array(minicons_scorers[family].sequence_score(list(table["sentence"])))
    # float32 model on our side: means of a few tokens, float32 noise only
    assert np.max(np.abs(table["value"].to_numpy() - theirs)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_option_equals_minicons_conditional_score(family, causal_lms64, minicons_scorers, items):
    """bos='tokenizer': option log P = minicons conditional_score(prefix, option) (sum), its default BOS handling."""
    lm = causal_lms64[family]
    chosen = [it for it in items if _split(it)[1].endswith(" ") and _split(it)[1].strip()]
    prefixes = [_split(it)[1][:-1] for it in chosen]  # minicons joins prefix + " " + option
    options = [_split(it)[2] for it in chosen]
    total = lambda x: x.sum(0).item()  # noqa: E731
    theirs = np.array(minicons_scorers[family].conditional_score(prefixes, options, reduction=total))
    assert np.max(np.abs(_ours(lm, chosen, "tokenizer", "option_log_prob") - theirs)) <= TOL


@pytest.mark.parametrize("family", FAMILIES)
def test_float32_sentence_equals_lm_eval_and_minicons(family, causal_lms, bao_items):
    """In float32 on both sides: equal within the peers' float32 summation (rtol 1e-6, atol 1e-5)."""
    pytest.importorskip("lm_eval")
    pytest.importorskip("minicons")
    from lm_eval.models.huggingface import HFLM
    from minicons import scorer

    lm = causal_lms[family]
    chosen = bao_items
    sentences = [_split(it)[0] for it in chosen]
    ours = _ours(lm, chosen, "auto", "sentence_log_prob")
    peer = HFLM(pretrained=lm.model, tokenizer=lm.tokenizer, batch_size=16, device="cpu")
    np.testing.assert_allclose(ours, _loglikelihood(peer, [("", s) for s in sentences]), rtol=1e-6, atol=TOL)
    total = lambda x: x.sum(0).item()  # noqa: E731
    mini = scorer.IncrementalLMScorer(lm.model, device="cpu", tokenizer=lm.tokenizer)
    ours_tok = _ours(lm, chosen, "tokenizer", "sentence_log_prob")
    np.testing.assert_allclose(ours_tok, mini.sequence_score(sentences, reduction=total), rtol=1e-6, atol=TOL)

"""Whole-word tokens decided by the tokenizer (casing, Ġ/▁ prefixes, sentence position)."""

from __future__ import annotations

import pytest

from assoc.errors import StimuliError
from assoc.lm.masked.words import chain_steps, fill_mask_token, word_tokens, word_tokens_many


def _strings(lm, wt):
    return [lm.tokenizer.convert_ids_to_tokens(t) for t in wt.token_ids]


def test_bert_uncased_lowercases_and_splits_wordpieces(loaded):
    lm = loaded["bert"]
    he, indiv = word_tokens_many(lm, "[MASK] is a nurse.", ["He", "individualism"])
    assert _strings(lm, he) == ["he"] and he.in_vocab
    assert _strings(lm, indiv) == ["individual", "##ism"] and not indiv.in_vocab
    assert he.masked_ids[he.position] == lm.mask_token_id


def test_roberta_space_prefix_depends_on_position(loaded):
    lm = loaded["roberta"]
    assert _strings(lm, word_tokens(lm, "The [MASK] works as a nurse.", "man")) == ["Ġman"]
    assert _strings(lm, word_tokens(lm, "[MASK] is a doctor.", "man")) == ["man"]
    # the <mask> token strips the space before it: the masked sequence has no stray "Ġ"
    ids = lm.encode(fill_mask_token("The [MASK] works.", lm.mask_token))
    assert lm.tokenizer.convert_ids_to_tokens(list(ids))[1:3] == ["The", "<mask>"]


def test_albert_sentencepiece_prefix_and_case(loaded):
    lm = loaded["albert"]
    for query in ("The [MASK] works as a nurse.", "[MASK] is a doctor."):
        assert _strings(lm, word_tokens(lm, query, "Man")) == ["▁man"]


def test_override_and_its_errors(loaded):
    lm = loaded["roberta"]
    wt = word_tokens(lm, "The [MASK] works.", "bloke", override="Ġman")
    assert _strings(lm, wt) == ["Ġman"] and wt.overridden
    with pytest.raises(StimuliError, match="not in the vocabulary"):
        word_tokens(lm, "The [MASK] works.", "bloke", override="Ġnot-a-token")


def test_bad_queries_and_options(loaded):
    lm = loaded["bert"]
    with pytest.raises(StimuliError, match="exactly one"):
        word_tokens(lm, "No mask here.", "man")
    with pytest.raises(StimuliError, match="exactly one"):
        word_tokens(lm, "[MASK] and [MASK].", "man")
    with pytest.raises(StimuliError, match="empty"):
        word_tokens(lm, "The [MASK] works.", " ")


def test_chain_steps_fill_left_to_right(loaded):
    lm = loaded["bert"]
    wt = word_tokens(lm, "They value [MASK] a lot.", "individualism")
    m = lm.mask_token_id
    (s1, p1, t1), (s2, p2, t2) = chain_steps(wt, m)
    a, b = wt.token_ids
    before, after = wt.masked_ids[: wt.position], wt.masked_ids[wt.position + 1 :]
    assert s1 == before + (m, m) + after and p1 == wt.position and t1 == a
    assert s2 == before + (a, m) + after and p2 == wt.position + 1 and t2 == b


def test_word_glued_to_its_context_is_flagged(loaded):
    lm = loaded["bert"]
    wt = word_tokens(lm, "The [MASK]s work here.", "nurse")  # "nurses" is one WordPiece token
    assert wt.context_changed and _strings(lm, wt) == ["nurses"]
    assert not word_tokens(lm, "The [MASK] works here.", "nurse").context_changed


@pytest.mark.parametrize("family", ["bert", "roberta", "albert"])
@pytest.mark.slow
def test_encode_many_equals_the_ordinary_tokenizer_call(tiny_models, family):
    """The direct backend call gives exactly transformers' ``tokenizer(texts)["input_ids"]``,
    also when the backend was left with truncation switched on."""
    from assoc.lm.masked import load_masked_lm
    from assoc.lm.masked.words import encode_many

    lm = load_masked_lm(tiny_models[family])  # own copy: the backend state is changed below
    texts = [
        f"The {lm.mask_token} works as a nurse.",
        "He is a nurse.",
        "In 1999 she became a Doctor.",
        f"{lm.mask_token} likes poetry and music a lot, said the woman.",
        "x",
    ]
    expected = [tuple(ids) for ids in lm.tokenizer(texts, add_special_tokens=True)["input_ids"]]
    assert encode_many(lm.tokenizer, texts) == expected and encode_many(lm.tokenizer, []) == []
    lm.tokenizer.backend_tokenizer.enable_truncation(max_length=4)
    assert encode_many(lm.tokenizer, texts) == expected
    lm.close()

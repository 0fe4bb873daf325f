"""The ``embedding`` request kind (assoc.lm.requests) and its shared engine (assoc.lm.embedding).

Each pooling, layer choice and special-token setting of the masked and causal kinds is checked against
an independent computation: the model loaded by transformers' ``AutoModel``, one unpadded forward pass
per text, the positions picked by hand from the tokenizer's offsets.
"""

from __future__ import annotations

import numpy as np
import pytest

from assoc.errors import OptionError
from assoc.lm import Embedding, EmbeddingRequest, open_model
from assoc.lm.requests import as_record, from_record
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (a cache per test)

TEXTS = ("the man is a nurse .", "She likes music a lot, and more.", "he", "Rose, the rose and a rosebud")
# (text, word) of the span requests: the word's first match
SPANS = (("the man is a nurse .", "nurse"), ("She likes music a lot, and more.", "music"), ("Rose, the rose", "rose"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece, build_roberta_bpe

    root = tmp_path_factory.mktemp("tiny-embedding")
    return {
        "bert": str(build_bert_wordpiece(root / "bert")),
        "roberta": str(build_roberta_bpe(root / "roberta")),
        "gpt2": str(build_gpt2_bpe(root / "gpt2")),
    }


def requests() -> list[EmbeddingRequest]:
    out = []
    for text, word in SPANS:
        start = text.index(word, 1) if word == "rose" else text.index(word)
        for pooling in ("first", "last", "mean"):
            for layers in ((-1,), (0, 2)):
                out.append(EmbeddingRequest(text, (start, start + len(word)), pooling, layers))
    for text in TEXTS:
        for pooling in ("first", "last", "mean", "cls", "mean_all", "last_token"):
            for special in (True, False):
                out.append(EmbeddingRequest(text, None, pooling, (-1,), special))
    return out


def by_hand(loaded: tuple, request: EmbeddingRequest) -> np.ndarray:
    """The request's vector from transformers directly: one unpadded forward pass, positions from the offsets."""
    import torch

    tokenizer, model, memo = loaded
    encoded = tokenizer(
        request.text,
        add_special_tokens=request.special_tokens,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    n = len(encoded["input_ids"])
    key = (request.text, request.special_tokens)
    if key not in memo:  # one forward pass per text, as the engine makes
        with torch.no_grad():
            memo[key] = model(input_ids=torch.tensor([encoded["input_ids"]]), output_hidden_states=True).hidden_states
    hidden = memo[key]
    if request.pooling == "cls":
        positions = [0]
    elif request.pooling == "last_token":
        positions = [n - 1]
    elif request.pooling == "mean_all":
        positions = list(range(n))
    else:
        own = [p for p in range(n) if not encoded["special_tokens_mask"][p]]
        if request.span is not None:
            start, end = request.span
            own = [p for p in own if encoded["offset_mapping"][p][0] < end and encoded["offset_mapping"][p][1] > start]
        positions = {"first": own[:1], "last": own[-1:], "mean": own}[request.pooling]
    return np.mean([hidden[layer][0, positions].double().mean(0).numpy() for layer in request.layers], axis=0)


@pytest.mark.parametrize("family", ["bert", "roberta", "gpt2"])
def test_every_pooling_equals_transformers_directly(tiny, family):
    import transformers

    asked = requests()
    model = open_model(tiny[family], {"device": "cpu", "batch_tokens": 40}, None)  # several padded batches
    answers = model.embed(asked)
    assert len(answers) == len(asked) and all(a.ok for a in answers)
    direct = (
        transformers.AutoTokenizer.from_pretrained(tiny[family]),
        transformers.AutoModel.from_pretrained(tiny[family]).eval(),
        {},
    )
    for request, answer in zip(asked, answers):
        assert answer.vector.dtype == np.float32 and answer.n_tokens == len(answer.tokens) >= 1
        assert np.max(np.abs(answer.vector - by_hand(direct, request))) <= 2e-6, request


def test_the_span_is_the_words_own_tokens(tiny):
    model = open_model(tiny["bert"], {"device": "cpu"}, None)
    text = "a rosebud , a rose ."
    start = text.index("rose ")
    (whole,) = model.embed([EmbeddingRequest(text, (start, start + 4), "mean")])
    assert whole.tokens == ("rose",)
    (piece,) = model.embed([EmbeddingRequest("unbelievably so", (0, 12), "mean")])
    assert len(piece.tokens) > 1 and piece.tokens[0] == "un"  # every word piece of the word


def test_each_distinct_text_runs_once_and_batches_do_not_change_numbers(tiny, monkeypatch):
    model = open_model(tiny["bert"], {"device": "cpu"}, None)
    base = model.engine.model.base_model
    seen: list[int] = []
    original = type(base).forward

    def counting(self, *args, **kwargs):
        seen.append(int(kwargs["input_ids"].shape[0]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(base), "forward", counting)
    text = "the man is a nurse and the woman is a doctor ."
    asked = [EmbeddingRequest(text, (text.index(w), text.index(w) + len(w)), "last") for w in ("man", "nurse", "woman")]
    asked += [EmbeddingRequest(text, None, "cls"), EmbeddingRequest("another text", None, "cls")]
    one = model.embed(asked)
    assert sum(seen) == 2  # two distinct texts, whatever the number of requests
    small = open_model(tiny["bert"], {"device": "cpu", "batch_tokens": 1}, None).embed(asked)
    for a, b in zip(one, small):
        assert np.max(np.abs(a.vector - b.vector)) <= 2e-6


def test_what_has_no_vector_says_why(tiny):
    model = open_model(tiny["gpt2"], {"device": "cpu"}, None)
    long = " ".join(["word"] * 500)
    too_long, fine = model.embed([EmbeddingRequest(long, None, "mean"), EmbeddingRequest("a word", None, "mean")])
    assert too_long.status == "too_long" and too_long.vector is None and "more than model" in too_long.reason
    assert fine.ok
    bert = open_model(tiny["bert"], {"device": "cpu"}, None)
    (nothing,) = bert.embed([EmbeddingRequest("a , b", (2, 3), "first", (-1,), True)])
    assert nothing.ok  # a comma is a token
    (spaces,) = bert.embed([EmbeddingRequest("a   b", (1, 4), "first")])
    assert spaces.status == "no_tokens" and "has no token" in spaces.reason


def test_bad_requests_are_refused_before_any_work(tiny):
    model = open_model(tiny["bert"], {"device": "cpu"}, None)
    with pytest.raises(OptionError, match=r"layer 7: model .* has 2 layers"):
        model.embed([EmbeddingRequest("a text", None, "mean", (7,))])
    with pytest.raises(OptionError, match="sentence encoder's own embedding"):
        model.embed([EmbeddingRequest("a text", None, "sentence")])
    with pytest.raises(ValueError, match="pooling must be one of"):
        EmbeddingRequest("a text", None, "max")
    with pytest.raises(ValueError, match="not a non-empty character range"):
        EmbeddingRequest("a text", (3, 99))
    with pytest.raises(ValueError, match="empty"):
        EmbeddingRequest("  ")


def test_requests_and_answers_are_json_records():
    request = EmbeddingRequest("the man", (4, 7), "last", (-2, -1), False)
    assert from_record(EmbeddingRequest, as_record(request)) == request
    answer = Embedding(np.array([0.5, -1.25], dtype=np.float32), 1, ("man",))
    back = from_record(Embedding, as_record(answer))
    assert back.vector.dtype == np.float32 and back.vector.tolist() == [0.5, -1.25] and back.tokens == ("man",)


def test_checkpoints_hold_finished_vectors(tiny, tmp_path):
    from assoc.infra import Cache
    from assoc.lm import cached_embeddings

    namespace = Cache(tmp_path).namespace(kind="embedding-test")
    model = open_model(tiny["bert"], {"device": "cpu"}, None)
    asked = requests()[:8]
    first = model.embed(asked, checkpoints=namespace)
    calls: list[int] = []

    def compute(part):
        calls.append(len(part))
        raise AssertionError("everything is in the checkpoints")

    again = cached_embeddings(asked, namespace, compute)
    assert calls == [] and all(np.array_equal(a.vector, b.vector) for a, b in zip(first, again))


def test_every_local_kind_serves_embedding():
    from assoc.lm.kinds import core_kind

    assert "embedding" in core_kind("masked").serves and "embedding" in core_kind("causal").serves
    assert "embedding" not in core_kind("chat").serves

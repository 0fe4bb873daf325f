"""The ``seat`` scorer and analysis, code against code: sent-bias's weat.py formulas, transformers directly, fairlms.

May et al.'s test files are read from the shared copy (CC BY-NC 4.0, never in the repository). On a
tiny BERT, a tiny GPT-2 and the real all-MiniLM-L6-v2, with the paper's pooling conventions:

* the effect size of the ``seat`` analysis equals sent-bias's ``weat.py`` formula (transcribed in
  ``conftest.weat_py_effect_size``) on the very encodings the engine made (<= 1e-10), and the exact
  p equals a brute-force count over every partition;
* the engine's encodings equal an independent computation of the same convention with transformers
  (or sentence-transformers) directly: sent-bias's BERT (first word-piece of the lower-cased sentence,
  no [CLS]/[SEP], last layer), the last token of a decoder, MiniLM's own embedding (float32, 1e-5).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import assoc
from assoc.errors import StimuliError
from assoc.lm import open_model
from assoc.testing.conformance import check_analysis, check_scorer

from .conftest import MINILM, cosine, weat_py_effect_size

#: (model fixture key or name, scorer options, how to encode a text independently)
CONVENTIONS = {
    "bert-sent-bias": ("bert", {"pooling": "cls", "special_tokens": False, "lowercase": True}),
    "gpt2-last-token": ("gpt2", {"pooling": "auto"}),
    "minilm-own": (MINILM, {"pooling": "auto"}),
}


def independent_encoder(tiny, key):
    """Encode a text as the convention says, with transformers or sentence-transformers directly (no assoc)."""
    import torch
    import transformers

    if key == "minilm-own":
        from assoc_sbert_topwords.models import resolve_model
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(resolve_model(MINILM)[1]), device="cpu")
        return lambda text: model.encode([text], normalize_embeddings=True)[0]
    path = tiny[CONVENTIONS[key][0]]
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path).eval()

    def encode(text: str) -> np.ndarray:
        if key == "bert-sent-bias":  # sentbias/encoders/bert.py: tokenize (lower-cased), no [CLS]/[SEP], enc[:, 0]
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text.lower()))
            position = 0
        else:  # the last token's final hidden state (jiant's combine_method=last)
            ids = tokenizer(text)["input_ids"]
            position = len(ids) - 1
        with torch.no_grad():
            return model(input_ids=torch.tensor([ids])).last_hidden_state[0, position].numpy()

    return encode


def spec(tiny, key):
    name = CONVENTIONS[key][0]
    return tiny.get(name, name)


#: the tiny models on a word file run in seconds; MiniLM and the sentence files take longer (import, 80 sentences)
CASES = [
    pytest.param(test, key, marks=[pytest.mark.slow] if key == "minilm-own" or test != "weat6" else [])
    for test in ("weat6", "sent-weat9")
    for key in CONVENTIONS
]


@pytest.mark.parametrize(("test", "key"), CASES)
def test_effect_size_equals_weat_py_and_encodings_equal_transformers(tiny, seat_files, key, test):
    model = spec(tiny, key)
    options = CONVENTIONS[key][1]
    stimuli = assoc.load_seat_tests(seat_files / f"{test}.jsonl")
    table = assoc.score("seat", stimuli, [model], progress=False, **options)
    result = assoc.analyze("seat", table, n_samples=100_000, seed=1111).iloc[0]
    design = stimuli.designs[0]
    x, y = design.target.values()
    a, b = design.attribute.values()

    # the engine's own encodings, through the kind's embed (what the scorer's rows were made from)
    scorer = assoc.plugins.get_scorer("seat")(**options)
    opened = open_model(model, scorer.params, None, kinds=scorer.accepted_kinds())
    settings = scorer.settings(opened)
    texts = [*x, *y, *a, *b]
    vectors = dict(zip(texts, (e.vector for e in opened.embed([settings.request(t) for t in texts]))))
    ours = [[vectors[t] for t in group] for group in (x, y, a, b)]
    assert abs(result["effect_size"] - weat_py_effect_size(*ours)) <= 1e-10

    # the same convention computed independently
    encode = independent_encoder(tiny, key)
    theirs = [[encode(t) for t in group] for group in (x, y, a, b)]
    for mine, other in zip(itertools.chain(*ours), itertools.chain(*theirs)):
        assert np.max(np.abs(mine - other)) <= 1e-5
    assert abs(result["effect_size"] - weat_py_effect_size(*theirs)) <= 1e-4

    # every row is the cosine of the two encodings (sent-bias's cossim)
    row = table.iloc[len(table) // 2]
    assert abs(row["value"] - cosine(vectors[row["target"]], vectors[row["attribute"]])) <= 1e-12
    assert set(table["pooling"]) == {settings.pooling} and set(table["layers"]) == {"-1"}

    # weat6: 16 targets, C(16, 8) = 12,870 partitions <= n_samples: sent-bias's exact p, counted by brute force
    if test == "weat6":
        assert result["p_method"] == "exact" and result["n_permutations"] == math.comb(16, 8)
        s = [
            np.mean([cosine(w, t) for t in ours[2]]) - np.mean([cosine(w, t) for t in ours[3]])
            for w in ours[0] + ours[1]
        ]
        observed = sum(s[:8])
        count = sum(
            1 for chosen in itertools.combinations(range(16), 8) if sum(s[i] for i in chosen) >= observed - 1e-12
        )
        assert result["p_value"] == count / math.comb(16, 8)


def test_the_table_reads_as_any_weat_table(tiny, seat_files):
    stimuli = assoc.load_seat_tests(seat_files, names=["weat7", "weat8"])
    table = assoc.score("seat", stimuli, [tiny["bert"]], progress=False)
    assert len(table) == 2 * 16 * 16 and set(table["design"]) == {"weat7", "weat8"}
    seat = assoc.analyze("seat", table, n_samples=2_000, seed=3)
    weat = assoc.analyze("weat", table, n_resamples=2_000)
    assert np.allclose(seat["effect_size"], weat["effect_size"], atol=1e-12)
    assert list(seat["x"]) == ["Math", "Science"] and list(seat["a"]) == ["MaleTerms", "MaleTerms"]
    # two layers of one model, recorded in every row: one result each, and icc with the layers as raters
    weat7 = stimuli.select(["weat7"])
    layers = pd.concat(
        [assoc.score("seat", weat7, [tiny["bert"]], progress=False, layers=[layer]) for layer in (1, -1)],
        ignore_index=True,
    )
    assert list(assoc.analyze("seat", layers, n_samples=500)["layers"]) == ["1", "-1"]
    icc = assoc.analyze("icc", layers, raters=["layers"])
    assert icc["n_items"].iloc[0] == 16 * 16 and icc["n_raters"].iloc[0] == 2


def test_stimuli_are_read_from_the_users_copy_only(seat_files):
    with pytest.raises(StimuliError, match="CC BY-NC 4.0 and not bundled"):
        assoc.score("seat", "seat", ["x"], progress=False)
    loaded = assoc.Stimuli.load(f"seat:{seat_files / 'weat1.jsonl'}")
    assert [d.name for d in loaded.designs] == ["weat1"]


def test_conformance(tiny, seat_files):
    table = check_scorer("seat", f"seat:{seat_files / 'weat6.jsonl'}", [tiny["bert"]], expect_rows=16 * 16)
    check_analysis("seat", table, {"n_samples": 500})


@pytest.mark.slow  # importing fairlms imports torch, transformers and datasets
@pytest.mark.parametrize("n_terms", [5, 9])
def test_fairlms_seat_equals_assoc_with_one_template_and_mean_pooling(tiny, n_terms):
    """fairlms's SEAT averages each term over its templates (F1) and pools the mean of every token, special
    ones included (F2): with one template and pooling=mean_all the numbers are assoc's (d to float32
    noise; p exactly: exact with 5 + 5 terms, sampled with 9 + 9 and its default_rng stream, sampler='shuffle')."""
    pytest.importorskip("fairlms")
    import transformers
    from fairlms.definition.encoder_only.intrinsic_bias.similarity_based.seat.seat import compute_seat

    terms = ["rose", "daisy", "lily", "tulip", "violet", "poppy", "iris", "orchid", "peony"][:n_terms]
    others = ["ant", "flea", "moth", "wasp", "spider", "beetle", "roach", "gnat", "hornet"][:n_terms]
    good = ["love", "peace", "joy", "gift", "happy"]
    bad = ["war", "death", "grief", "crash", "ugly"]
    template = "This is {}."
    d, p = compute_seat(
        transformers.AutoModel.from_pretrained(tiny["bert"]).eval(),
        transformers.AutoTokenizer.from_pretrained(tiny["bert"]),
        terms,
        others,
        good,
        bad,
        templates=[template],
        pooling="mean",
        n_samples=1_000,
        device="cpu",
        seed=7,
    )
    stimuli = {
        "name": "fl",
        "target": {"T1": [template.format(t) for t in terms], "T2": [template.format(t) for t in others]},
        "attribute": {"A1": [template.format(t) for t in good], "A2": [template.format(t) for t in bad]},
    }
    table = assoc.score("seat", stimuli, [tiny["bert"]], progress=False, pooling="mean_all")
    result = assoc.analyze("seat", table, n_samples=1_000, seed=7, sampler="shuffle").iloc[0]
    assert abs(result["effect_size"] - d) <= 1e-5
    assert result["p_value"] == p

"""The fmat scorer end to end: values, columns, OOV handling, several models, cache, errors."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.errors import ModelError, StimuliError
from assoc.lm.masked.words import OutOfVocabularyWarning

STIMULI = {
    "designs": [
        {
            "name": "occ",
            "queries": ["The [MASK] works as a {TARGET}.", "[MASK] is a {TARGET}."],
            "mask": {"male": ["man"], "female": ["woman"]},
            "target": {"Occupation": ["nurse", "engineer"]},
        }
    ]
}
# What each option becomes, stated by hand: (family, query start?) -> token string
TOKENS = {
    ("bert", False): {"man": "man", "woman": "woman"},
    ("bert", True): {"man": "man", "woman": "woman"},
    ("roberta", False): {"man": "Ġman", "woman": "Ġwoman"},
    ("roberta", True): {"man": "man", "woman": None},
    ("albert", False): {"man": "▁man", "woman": "▁woman"},
    ("albert", True): {"man": "▁man", "woman": "▁woman"},
}


def _pipeline_log_prob(pipe, text, token):
    [result] = pipe(text, targets=[token], top_k=1)
    return math.log(result["score"])


@pytest.mark.parametrize("family", ["bert", "roberta", "albert"])
@pytest.mark.slow
def test_values_match_the_fill_mask_pipeline(tiny_models, loaded, family):
    from transformers import pipeline

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("fmat", STIMULI, models=[tiny_models[family]], cache=False)
    assert len(table) == 2 * 2 * 2
    lm = loaded[family]
    pipe = pipeline("fill-mask", model=lm.model, tokenizer=lm.tokenizer, device="cpu")
    for row in table.itertuples():
        start = row.sentence.startswith("[MASK]")
        token = TOKENS[(family, start)][row.mask]
        if token is None:  # "woman" is two tokens at the start of a sentence in the tiny BPE vocabulary
            assert row.oov and math.isnan(row.value) and row.n_tokens > 1
            continue
        assert row.token == token and not row.oov and row.n_tokens == 1
        expected = _pipeline_log_prob(pipe, row.sentence.replace("[MASK]", lm.mask_token), token)
        assert abs(row.value - expected) < 1e-5
    oov = [w for w in caught if issubclass(w.category, OutOfVocabularyWarning)]
    assert len(oov) == (1 if family == "roberta" else 0)
    if oov:
        assert "woman" in str(oov[0].message) and "NaN" in str(oov[0].message)


def test_columns_roles_and_conformance(tiny_models):
    from assoc.testing import check_scorer

    table = check_scorer("fmat", STIMULI, [tiny_models["bert"]], {"cache": False}, expect_rows=8)
    row = table.iloc[0]
    # {TARGET} query: the [MASK] candidate is the attribute
    assert (row.target_group, row.target, row.attribute_group, row.attribute) == ("Occupation", "nurse", "male", "man")
    assert (row["design"], row["mask_group"], row["mask"], row["measure"]) == ("occ", "male", "man", "log_prob")
    assert row.context == "The [MASK] works as a {TARGET}." and row.sentence == "The [MASK] works as a nurse."


def test_several_models_in_one_run(tiny_models):
    table = assoc.score("fmat", STIMULI, models=[tiny_models["bert"], tiny_models["albert"]], cache=False)
    assert list(dict.fromkeys(table["model"])) == [tiny_models["bert"], tiny_models["albert"]]
    assert len(table) == 16 and table["value"].notna().all()
    # provenance identifies each model's exact weights: a hash of the local files, computed here by hand
    from assoc.lm import local_fingerprint

    fingerprints = table.assoc.provenance["model_fingerprints"]
    for family in ("bert", "albert"):
        assert fingerprints[tiny_models[family]] == local_fingerprint(Path(tiny_models[family]))
        assert fingerprints[tiny_models[family]].startswith("sha256:")
    assert table.assoc.provenance["libraries"]["torch"] and table.assoc.provenance["libraries"]["transformers"]
    assert "Bao" in str(table.assoc.cite())


def test_multi_token_is_the_left_to_right_chain(tiny_models, loaded):
    import torch

    with pytest.warns(OutOfVocabularyWarning, match="exactly as token sequences"):
        table = assoc.score(
            "fmat",
            {"queries": ["They value [MASK] a lot."], "mask": {"x": ["individualism"]}},
            models=[tiny_models["bert"]],
            oov="multi_token",
            cache=False,
        )
    lm = loaded["bert"]
    tok = lm.tokenizer
    m, a, b = tok.mask_token_id, tok.convert_tokens_to_ids("individual"), tok.convert_tokens_to_ids("##ism")
    head = tok("They value", add_special_tokens=False)["input_ids"]
    tail = tok("a lot.", add_special_tokens=False)["input_ids"]
    cls, sep = tok.cls_token_id, tok.sep_token_id
    total = 0.0
    for seq, pos, want in (
        ([cls] + head + [m, m] + tail + [sep], len(head) + 1, a),
        ([cls] + head + [a, m] + tail + [sep], len(head) + 2, b),
    ):
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([seq])).logits[0, pos].double()
        total += float(torch.log_softmax(logits, -1)[want])
    row = table.iloc[0]
    assert row.oov and row.n_tokens == 2 and row.token == "individual ##ism"
    assert abs(row.value - total) < 1e-5


def test_add_tokens_scores_oov_words_with_a_temporary_token(tiny_models):
    stimuli = {"queries": ["They value [MASK] a lot."], "mask": {"a": ["individualism"], "b": ["freedom"]}}
    with pytest.warns(OutOfVocabularyWarning, match="temporary tokens"):
        table = assoc.score(
            "fmat", stimuli, models=[tiny_models["bert"]], oov="add_tokens", weight_decay=0.5, cache=False
        )
    assert table["value"].notna().all() and list(table["oov"]) == [True, False]
    with pytest.warns(OutOfVocabularyWarning, match="NaN"):
        plain = assoc.score("fmat", stimuli, models=[tiny_models["bert"]], cache=False)
    # the in-vocabulary option's probability is now normalised over one more class: it can only go down
    assert table["value"].iloc[1] <= plain["value"].iloc[1] and math.isnan(plain["value"].iloc[0])


def test_year_range_options_report_missing_tokens(tiny_models):
    stimuli = {"queries": ["It happened in the year [MASK]."], "mask": {"Year": {"range": [1998, 2002]}}}
    with pytest.warns(OutOfVocabularyWarning) as caught:
        table = assoc.score("fmat", stimuli, models=[tiny_models["roberta"]], cache=False)
    assert list(table["mask"]) == ["1998", "1999", "2000", "2001", "2002"]
    missing = set(table.loc[table["oov"], "mask"])
    assert missing and all(m in str(caught[0].message) for m in missing)
    assert table.loc[~table["oov"], "value"].notna().all()


def test_token_override_per_model(tiny_models):
    model = tiny_models["roberta"]
    table = assoc.score(
        "fmat",
        {"queries": ["[MASK] is a doctor."], "mask": {"f": ["woman"]}},
        models=[model],
        token_overrides={model: {"woman": "Ġwoman"}},
        cache=False,
    )
    assert table["token"].iloc[0] == "Ġwoman" and not table["oov"].iloc[0]


def test_token_override_for_a_model_written_differently_still_applies(tiny_models):
    import os

    model = tiny_models["roberta"]
    other_spelling = os.path.relpath(model) + os.sep  # the same directory, written another way
    table = assoc.score(
        "fmat",
        {"queries": ["[MASK] is a doctor."], "mask": {"f": ["woman"]}},
        models=[other_spelling],
        token_overrides={model: {"woman": "Ġwoman"}},
        cache=False,
    )
    assert table["token"].iloc[0] == "Ġwoman" and not table["oov"].iloc[0]


def test_token_override_that_would_be_unused_is_an_error(tiny_models):
    from assoc.errors import OptionError

    model = tiny_models["roberta"]
    stimuli = {"queries": ["[MASK] is a doctor."], "mask": {"f": ["woman"]}}
    with pytest.raises(OptionError, match="not one of the models"):  # misspelt model key: silently ignored before
        assoc.score(
            "fmat", stimuli, models=[model], token_overrides={model + "-typo": {"woman": "Ġwoman"}}, cache=False
        )
    with pytest.raises(OptionError, match="'Woman' is not a \\[MASK\\] candidate"):
        assoc.score("fmat", stimuli, models=[model], token_overrides={"Woman": "Ġwoman"}, cache=False)
    with pytest.raises(OptionError, match="'Woman' is not a \\[MASK\\] candidate"):
        assoc.score("fmat", stimuli, models=[model], token_overrides={model: {"Woman": "Ġwoman"}}, cache=False)


def test_cache_resumes_and_rejects_corrupt_entries(tiny_models, tmp_path, monkeypatch):
    from assoc.infra.cache import CacheWarning
    from assoc.lm.masked.engine import MaskedLM

    cache_dir = tmp_path / "cache"
    first = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache_dir=str(cache_dir))
    packs = list(cache_dir.rglob("pack-*.json"))
    assert packs

    def fail(*args, **kwargs):
        raise AssertionError("computed although cached")

    monkeypatch.setattr(MaskedLM, "log_probs", fail)
    again = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache_dir=str(cache_dir))
    assert np.array_equal(first["value"].to_numpy(), again["value"].to_numpy())
    monkeypatch.undo()

    record = json.loads(packs[0].read_text())
    key = next(iter(record["entries"]))
    record["entries"][key] = [0.0 for _ in record["entries"][key]]  # tampered, checksum now wrong
    packs[0].write_text(json.dumps(record))
    with pytest.warns(CacheWarning, match="corrupt"):
        third = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache_dir=str(cache_dir))
    assert np.max(np.abs(first["value"].to_numpy() - third["value"].to_numpy())) < 1e-12


def test_clear_errors(tiny_models, tmp_path):
    with pytest.raises(StimuliError):
        assoc.score("fmat", {"queries": ["No mask."], "mask": {"a": ["x"]}}, models=[tiny_models["bert"]])
    with pytest.raises(StimuliError):
        assoc.score("fmat", {"queries": ["The [MASK] is."], "mask": {"a": [""]}}, models=[tiny_models["bert"]])
    with pytest.raises(StimuliError, match="exactly one"):
        assoc.score(
            "fmat",
            {"queries": ["The [MASK] is {TARGET}."], "mask": {"a": ["x"]}, "target": {"t": ["a [MASK]"]}},
            models=[tiny_models["bert"]],
        )
    with pytest.raises(ModelError, match="does not exist"):
        assoc.score("fmat", STIMULI, models=[str(tmp_path / "missing" / "model")])


def test_interrupted_run_resumes_without_recomputing(tiny_models, tmp_path, monkeypatch):
    import assoc_fmat.log_probs as scoring

    from assoc.lm.masked.engine import MaskedLM

    expected = assoc.score("fmat", STIMULI, models=[tiny_models["albert"]], cache=False)
    real = MaskedLM.log_probs
    calls = []

    def interrupted(self, requests, **kwargs):
        calls.append(len(requests))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, requests, **kwargs)

    monkeypatch.setattr(scoring, "CHUNK", 1)  # one sequence per chunk and per cache pack
    monkeypatch.setattr(MaskedLM, "log_probs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        assoc.score("fmat", STIMULI, models=[tiny_models["albert"]], cache_dir=str(tmp_path / "c"))
    calls.clear()
    monkeypatch.setattr(MaskedLM, "log_probs", lambda self, r, **kw: (calls.append(len(r)), real(self, r, **kw))[1])
    resumed = assoc.score("fmat", STIMULI, models=[tiny_models["albert"]], cache_dir=str(tmp_path / "c"))
    assert sum(calls) == 4 - 1  # 4 unique filled queries; the first was cached before the interruption
    # batches of one row vs. one padded batch: float32 rounding differs, not more
    assert np.max(np.abs(resumed["value"].to_numpy() - expected["value"].to_numpy())) < 1e-5


def test_batch_tokens_defaults_to_the_device_budget_and_is_passed_on(tiny_models, monkeypatch):
    import assoc.lm.masked.engine as engine
    from assoc.lm.batching import CPU_BUDGET

    budgets = []
    plan = engine.plan_batches

    def spy(lengths, batch_tokens, *args):
        budgets.append(batch_tokens)
        return plan(lengths, batch_tokens, *args)

    monkeypatch.setattr(engine, "plan_batches", spy)
    default = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache=False, device="cpu")
    assert budgets and set(budgets) == {CPU_BUDGET}
    budgets.clear()
    small = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache=False, batch_tokens=7)
    assert budgets and set(budgets) == {7}
    assert np.max(np.abs(default["value"].to_numpy() - small["value"].to_numpy())) < 1e-5
    with pytest.raises(Exception, match="batch_tokens"):
        assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache=False, batch_tokens=0)
    # the former name still works, with a deprecation warning naming the new one
    budgets.clear()
    with pytest.warns(DeprecationWarning, match="batch_tokens"):
        old = assoc.score("fmat", STIMULI, models=[tiny_models["bert"]], cache=False, max_tokens=7)
    assert budgets and set(budgets) == {7} and old["value"].equals(small["value"])


@pytest.mark.filterwarnings("ignore::assoc.lm.masked.words.OutOfVocabularyWarning")
@pytest.mark.slow
def test_models_are_loaded_one_at_a_time_and_released(tiny_models, monkeypatch):
    """Several models in one run with the model cache off (ASSOC_MODEL_CACHE_BYTES=0): each is loaded
    only after the previous one was released."""
    import gc
    import weakref

    import assoc.lm.masked.loading as loading

    real_load = loading.load_parts
    loaded_refs, alive_at_load = [], []

    def tracking_load(*args, **kwargs):
        gc.collect()
        alive_at_load.append(sum(ref() is not None for ref in loaded_refs))
        parts = real_load(*args, **kwargs)
        loaded_refs.append(weakref.ref(parts[1]))
        return parts

    loading.release_masked_lms()
    monkeypatch.setenv("ASSOC_MODEL_CACHE_BYTES", "0")
    monkeypatch.setattr(loading, "load_parts", tracking_load)
    models = [tiny_models["bert"], tiny_models["roberta"], tiny_models["albert"]]
    table = assoc.score("fmat", STIMULI, models=models, cache=False)
    gc.collect()
    assert list(dict.fromkeys(table["model"])) == models
    assert alive_at_load == [0, 0, 0]  # no earlier model's weights were alive when the next one loaded
    assert all(ref() is None for ref in loaded_refs)


def test_add_tokens_values_by_hand_and_model_files_untouched(tiny_models):
    """oov='add_tokens' (FMAT add.tokens, weight decay 0.5): the temporary token's logit is the
    0.667/0.333 mean of its sub-tokens' logits (the LM head is affine in the output row and bias),
    and every value is normalised over the vocabulary plus the added word. The model directory
    is not modified."""
    import hashlib

    import torch

    from assoc.lm.masked import load_masked_lm

    def files(directory):
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(directory).iterdir())}

    path = tiny_models["bert"]
    before = files(path)
    stimuli = {"queries": ["They value [MASK] a lot."], "mask": {"a": ["individualism"], "b": ["freedom"]}}
    with pytest.warns(OutOfVocabularyWarning, match="temporary tokens"):
        table = assoc.score("fmat", stimuli, models=[path], oov="add_tokens", weight_decay=0.5, cache=False)
    lm = load_masked_lm(path)
    tok = lm.tokenizer
    ids = tok("They value [MASK] a lot.")["input_ids"]
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, ids.index(tok.mask_token_id)].double().numpy()
    sub = tok.convert_tokens_to_ids(["individual", "##ism"])
    new_logit = (logits[sub[0]] * 1.0 + logits[sub[1]] * 0.5) / 1.5
    enlarged = np.append(logits, new_logit)
    log_z = enlarged.max() + math.log(np.exp(enlarged - enlarged.max()).sum())
    got = table.set_index("mask")["value"]
    assert abs(got["individualism"] - (new_logit - log_z)) < 1e-5
    assert abs(got["freedom"] - (logits[tok.convert_tokens_to_ids("freedom")] - log_z)) < 1e-5
    assert table.set_index("mask").loc["individualism", "token"] == "individual ##ism"
    lm.close()
    # a fresh load of the directory has the original vocabulary, and the files are unchanged
    assert load_masked_lm(path).vocab_size == 30522 and files(path) == before

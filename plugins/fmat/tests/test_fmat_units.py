"""fmat and pll as work units: many small units give the one-unit table; cached units load no model."""

from __future__ import annotations

import json

import numpy as np
import pytest

import assoc
from assoc.lm.masked.words import OutOfVocabularyWarning
from assoc.lm.scorer import decode_items, encode_items
from assoc.stimuli import Stimuli

STIMULI = {
    "designs": [
        {
            "name": "occ",
            "queries": ["The [MASK] works as a {TARGET}.", "[MASK] is a {TARGET}."],
            "mask": {"male": ["man", "he"], "female": ["woman"]},
            "target": {"Occupation": ["nurse", "engineer"]},
        },
        {"name": "plain", "queries": ["A [MASK] sat down."], "mask": {"x": ["cat"], "y": ["dog"]}},
    ]
}


def test_payload_round_trip_keeps_every_item_in_order():
    items = Stimuli.load(STIMULI).mask_items()
    masks = {d.name: dict(d.mask) for d in Stimuli.load(STIMULI).designs}
    assert decode_items(encode_items(items, masks)) == items
    assert len(items) == 2 * 2 * 3 + 2


@pytest.mark.filterwarnings("ignore::assoc.lm.masked.words.OutOfVocabularyWarning")
@pytest.mark.parametrize(
    "scorer, options",
    [
        ("fmat", {}),
        ("fmat", {"oov": "multi_token"}),
        ("pll", {}),
        ("pll", {"tokens_scored": "context", "per_token": True}),
    ],
)
@pytest.mark.slow
def test_one_filling_per_unit_gives_the_same_table(tiny_models, scorer, options):
    models = [tiny_models["roberta"], tiny_models["bert"]]
    whole = assoc.score(scorer, STIMULI, models, cache=False, **options)
    split = assoc.score(scorer, STIMULI, models, cache=False, unit_size=1, **options)
    assert split.attrs["assoc"]["executor"]["units"] == 2 * 5 > whole.attrs["assoc"]["executor"]["units"] == 2
    floats = [c for c in whole.columns if whole[c].dtype == float or c == "token_log_probs"]
    assert split.drop(columns=floats).equals(whole.drop(columns=floats)) and list(split.columns) == list(whole.columns)
    for column in floats:  # batches differ: float32 noise only
        if column == "token_log_probs":
            a, b = ([[t[2] for t in json.loads(v)] for v in frame[column]] for frame in (split, whole))
            np.testing.assert_allclose(np.concatenate(a), np.concatenate(b), rtol=0, atol=1e-5)
        else:
            np.testing.assert_allclose(split[column], whole[column], rtol=0, atol=1e-5)


def test_add_tokens_scores_each_model_in_one_unit(tiny_models):
    with pytest.warns(OutOfVocabularyWarning, match="temporary tokens"):
        table = assoc.score("fmat", STIMULI, [tiny_models["roberta"]], cache=False, oov="add_tokens", unit_size=1)
    assert table.attrs["assoc"]["executor"]["units"] == 1


@pytest.mark.filterwarnings("ignore::assoc.lm.masked.words.OutOfVocabularyWarning")
def test_cached_units_load_no_model(tiny_models, monkeypatch):
    import assoc.lm.masked.loading as loading

    first = assoc.score("fmat", STIMULI, [tiny_models["albert"]])
    loads = []
    real = loading.load_parts
    monkeypatch.setattr(loading, "load_parts", lambda *a, **k: (loads.append(a), real(*a, **k))[1])
    again = assoc.score("fmat", STIMULI, [tiny_models["albert"]])
    assert loads == [] and again.attrs["assoc"]["executor"]["units_from_cache"] == 1
    assert again.equals(first)


def test_out_of_vocabulary_warning_once_per_model_across_units(tiny_models):
    stimuli = {"queries": ["[MASK] is here.", "Then [MASK] left."], "mask": {"a": ["woman", "man"]}}
    with pytest.warns(OutOfVocabularyWarning) as caught:
        table = assoc.score("fmat", stimuli, [tiny_models["roberta"]], cache=False, unit_size=1)
    oov = [str(w.message) for w in caught if "not single tokens" in str(w.message)]
    assert len(oov) == 1 and "woman" in oov[0]  # "woman" at the sentence start only, in one of two units
    assert table["oov"].sum() == 1


@pytest.mark.filterwarnings("ignore::assoc.lm.masked.words.OutOfVocabularyWarning")
@pytest.mark.parametrize("scorer", ["fmat", "pll"])
@pytest.mark.slow
def test_cache_dir_holds_everything_and_each_result_once(tiny_models, tmp_path, monkeypatch, scorer):
    """cache_dir covers what a run writes (memo included); a masked-LM result is stored once, as unit rows."""
    import assoc.lm.identity as lm_models
    from assoc.infra.cache import Cache

    default = tmp_path / "default-root"
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(default))
    monkeypatch.setattr(lm_models, "_LOCAL_FINGERPRINTS", {})  # hash the weights again: the memo is written
    mine = tmp_path / "mine"
    first = assoc.score(scorer, STIMULI, [tiny_models["bert"]], cache_dir=str(mine), unit_size=2)
    assert not default.exists()
    assert list((mine / "memo" / "local-fingerprint").glob("*.json"))
    assert [ns.parts["kind"] for ns in Cache(mine).namespaces()] == ["units"]  # no second copy as log probs
    assert not list(mine.rglob("progress-*")) and not list(mine.rglob("*.tmp"))
    again = assoc.score(scorer, STIMULI, [tiny_models["bert"]], cache_dir=str(mine), unit_size=2)
    assert again.attrs["assoc"]["executor"]["units_from_cache"] == 3
    assert np.array_equal(first["value"].to_numpy(), again["value"].to_numpy(), equal_nan=True)
    monkeypatch.setattr(lm_models, "_LOCAL_FINGERPRINTS", {})
    off = assoc.score(scorer, STIMULI, [tiny_models["bert"]], cache=False, cache_dir=str(tmp_path / "off"), unit_size=2)
    assert not (tmp_path / "off").exists() and not default.exists()  # cache=False: nothing on disk
    assert np.array_equal(first["value"].to_numpy(), off["value"].to_numpy(), equal_nan=True)


def test_a_unit_killed_inside_resumes_from_its_checkpoints(tiny_models, tmp_path, monkeypatch):
    """Inside one unit, log probabilities are checkpointed chunk by chunk; the resumed unit deletes them."""
    import assoc_fmat.log_probs as scoring

    from assoc.lm.masked.engine import MaskedLM

    real = MaskedLM.log_probs
    calls = []

    def interrupted(self, requests, **kwargs):
        calls.append(len(requests))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, requests, **kwargs)

    monkeypatch.setattr(scoring, "CHUNK", 1)
    monkeypatch.setattr(MaskedLM, "log_probs", interrupted)
    with pytest.raises(KeyboardInterrupt):
        assoc.score("fmat", STIMULI, [tiny_models["bert"]], cache_dir=str(tmp_path / "c"))
    assert list((tmp_path / "c").rglob("progress-*"))
    calls.clear()
    monkeypatch.setattr(MaskedLM, "log_probs", lambda self, r, **kw: (calls.append(len(r)), real(self, r, **kw))[1])
    resumed = assoc.score("fmat", STIMULI, [tiny_models["bert"]], cache_dir=str(tmp_path / "c"))
    assert sum(calls) == 5 - 2  # 5 unique filled queries, two checkpointed before the interruption
    assert not list((tmp_path / "c").rglob("progress-*"))
    whole = assoc.score("fmat", STIMULI, [tiny_models["bert"]], cache=False)
    assert np.max(np.abs(resumed["value"].to_numpy() - whole["value"].to_numpy())) < 1e-5  # batches of one: f32 noise

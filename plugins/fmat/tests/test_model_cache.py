"""The per-process cache of loaded models (assoc.lm.model_cache.MODEL_CACHE), here through the masked engine."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import assoc
from assoc.lm import identity as lm_models
from assoc.lm.masked import (
    MaskRequest,
    cached_masked_lm,
    engine,
    load_masked_lm,
    loaded_masked_lms,
    loading,
    release_masked_lms,
)


@pytest.fixture(autouse=True)
def _empty_cache():
    release_masked_lms()
    yield
    release_masked_lms()


@pytest.fixture
def counted_loads(monkeypatch):
    """How many times weights were really loaded from disk."""
    calls: list[str] = []
    real = loading.load_parts

    def counting(model, **kwargs):
        calls.append(model)
        return real(model, **kwargs)

    monkeypatch.setattr(loading, "load_parts", counting)
    return calls


def _stimuli():
    return assoc.Stimuli.from_dict(
        {
            "designs": [
                {
                    "name": "d",
                    "queries": ["[MASK] is a {TARGET}."],
                    "mask": {"male": ["he", "man"], "female": ["she", "woman"]},
                    "target": {"Job": ["nurse", "engineer"]},
                }
            ]
        }
    )


def test_same_key_loads_once_and_any_spelling_of_a_directory_is_one_key(
    tiny_models, counted_loads, tmp_path, monkeypatch
):
    path = tiny_models["bert"]
    first = cached_masked_lm(path)
    monkeypatch.chdir(tmp_path)
    second = cached_masked_lm(path + "/")
    assert counted_loads == [path]
    assert second.model is first.model and second.tokenizer is first.tokenizer
    assert second.name == path + "/"  # named as the caller wrote it
    assert [k.model for k in loaded_masked_lms()] == [str(Path(path).resolve())]
    # a different dtype or device spelling that resolves differently is another model
    cached_masked_lm(path, dtype="bfloat16")
    assert len(counted_loads) == 2
    cached_masked_lm(path, device="auto")  # no CUDA here: resolves to cpu, the first entry
    assert len(counted_loads) == 2


def test_release_frees_on_request(tiny_models, counted_loads):
    cached_masked_lm(tiny_models["bert"])
    cached_masked_lm(tiny_models["roberta"])
    assert release_masked_lms(tiny_models["bert"]) == 1
    assert [k.model for k in loaded_masked_lms()] == [str(Path(tiny_models["roberta"]).resolve())]
    cached_masked_lm(tiny_models["bert"])
    assert counted_loads.count(tiny_models["bert"]) == 2
    assert release_masked_lms() == 2
    assert loaded_masked_lms() == []


def test_rewritten_directory_is_loaded_again(tiny_models, tmp_path, counted_loads):
    copy = tmp_path / "m"
    shutil.copytree(tiny_models["bert"], copy)
    cached_masked_lm(str(copy))
    cached_masked_lm(str(copy))
    assert len(counted_loads) == 1
    config = copy / "config.json"
    time.sleep(0.01)
    config.write_text(config.read_text())  # same content, new modification time
    cached_masked_lm(str(copy))
    assert len(counted_loads) == 2


def test_memory_budget_releases_least_recently_used_first(tiny_models, counted_loads):
    loading.MODEL_CACHE.max_bytes = 1  # smaller than any model: keep only the one just used
    try:
        cached_masked_lm(tiny_models["bert"])
        cached_masked_lm(tiny_models["roberta"])
        assert [k.model for k in loaded_masked_lms()] == [str(Path(tiny_models["roberta"]).resolve())]
        loading.MODEL_CACHE.max_bytes = 10 << 30
        cached_masked_lm(tiny_models["bert"])
        cached_masked_lm(tiny_models["albert"])
        cached_masked_lm(tiny_models["roberta"])
        assert len(loaded_masked_lms()) == 3
        assert counted_loads == [tiny_models[f] for f in ("bert", "roberta", "bert", "albert")]
    finally:
        loading.MODEL_CACHE.max_bytes = None


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv("ASSOC_MODEL_CACHE_BYTES", "2e9")
    assert loading.MODEL_CACHE.budget("cpu") == 2_000_000_000
    monkeypatch.setenv("ASSOC_MODEL_CACHE_BYTES", "lots")
    with pytest.raises(assoc.errors.OptionError, match="ASSOC_MODEL_CACHE_BYTES"):
        loading.MODEL_CACHE.budget("cpu")


def test_concurrent_requests_load_once(tiny_models, counted_loads):
    handles = []
    threads = [threading.Thread(target=lambda: handles.append(cached_masked_lm(tiny_models["bert"]))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counted_loads) == 1 and len({id(h.model) for h in handles}) == 1


@pytest.fixture
def forward_calls(monkeypatch):
    """The ``shortcut`` argument of every engine forward pass (True/False: a fast-path check's explicit choice)."""
    checks: list = []
    real = engine.MaskedLM._forward

    def spy(self, model, seqs, picks, torch, shortcut=None, onednn=None):
        checks.append(shortcut)
        return real(self, model, seqs, picks, torch, shortcut, onednn)

    monkeypatch.setattr(engine.MaskedLM, "_forward", spy)
    return checks


def test_packed_encoder_check_runs_once_per_weights(tiny_models, forward_calls):
    checks = forward_calls
    request = [MaskRequest(cached_masked_lm(tiny_models["bert"]).encode("[MASK] is here."), 1, (5, 6))]
    first = cached_masked_lm(tiny_models["bert"]).log_probs(request)
    explicit = [s for s in checks if s is not None]
    assert explicit == [False, True]  # the numerical check: the model's own forward, then the packed batch
    checks.clear()
    second = cached_masked_lm(tiny_models["bert"]).log_probs(request)
    assert [s for s in checks if s is not None] == []  # decided already for these weights
    assert np.array_equal(first[0], second[0])


def test_temporary_tokens_do_not_leak_into_the_shared_model(tiny_models):
    lm = cached_masked_lm(tiny_models["bert"])
    n = lm.vocab_size
    request = [MaskRequest(lm.encode("the [MASK] is here."), 2, (5, 6, 7))]
    before = lm.log_probs(request)[0]
    with cached_masked_lm(tiny_models["bert"]) as other:
        other.add_temporary_tokens([("zyx", (5, 6))], weight_decay=0.5)
        assert other.vocab_size == n + 1
        changed = other.log_probs(request)[0]
    assert not np.array_equal(before, changed)  # the softmax ran over one more class
    again = cached_masked_lm(tiny_models["bert"])
    assert again.vocab_size == n and again.added_tokens == {}
    assert np.array_equal(again.log_probs(request)[0], before)


@pytest.mark.slow
def test_score_twice_loads_once_and_gives_the_same_table(tiny_models, counted_loads):
    first = assoc.score("fmat", _stimuli(), models=[tiny_models["bert"]], cache=False, oov="add_tokens", progress=False)
    second = assoc.score(
        "fmat", _stimuli(), models=[tiny_models["bert"]], cache=False, oov="add_tokens", progress=False
    )
    assert counted_loads == [tiny_models["bert"]]
    assert np.array_equal(first["value"].to_numpy(), second["value"].to_numpy())


@pytest.mark.slow
def test_load_masked_lm_still_loads_a_private_copy(tiny_models, counted_loads):
    shared = cached_masked_lm(tiny_models["bert"])
    with load_masked_lm(tiny_models["bert"]) as private:
        assert private.model is not shared.model and not private.shared
    assert shared.model is not None  # closing the private copy leaves the cache alone


def test_a_zero_budget_turns_the_cache_off(tiny_models, counted_loads, monkeypatch):
    monkeypatch.setenv("ASSOC_MODEL_CACHE_BYTES", "0")
    with cached_masked_lm(tiny_models["bert"]) as first:
        assert not first.shared
    cached_masked_lm(tiny_models["bert"])
    assert len(counted_loads) == 2 and loaded_masked_lms() == []
    assert first.model is None  # closed: its memory is freed like load_masked_lm's


def test_weights_are_hashed_once_across_processes(tiny_models, tmp_path, monkeypatch):
    copy = tmp_path / "m"
    shutil.copytree(tiny_models["bert"], copy)
    first = lm_models.local_fingerprint(copy)
    lm_models._LOCAL_FINGERPRINTS.clear()  # a new process: only the on-disk memo is left
    opened = []
    real_open = open

    def spying_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spying_open)
    assert lm_models.local_fingerprint(copy) == first
    assert not [p for p in opened if p.startswith(str(copy))]  # nothing was read again
    monkeypatch.setattr("builtins.open", real_open)
    lm_models._LOCAL_FINGERPRINTS.clear()
    weights = next(copy.glob("*.safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # same size; a new change time and content
    weights.write_bytes(bytes(data))
    assert lm_models.local_fingerprint(copy) != first


@pytest.mark.slow
def test_packed_encoder_check_is_remembered_across_processes(tiny_models, forward_calls):
    request = [MaskRequest(cached_masked_lm(tiny_models["bert"]).encode("[MASK] is here."), 1, (5, 6))]
    first = cached_masked_lm(tiny_models["bert"]).log_probs(request)[0]
    release_masked_lms()  # a new process: new weights objects, the on-disk memo is left
    engine._FAST_PATHS_VERIFIED.clear()
    checks = forward_calls
    checks.clear()
    lm = cached_masked_lm(tiny_models["bert"])
    assert np.array_equal(lm.log_probs(request)[0], first)
    assert [s for s in checks if s is not None] == [] and lm._shortcut is True


@pytest.mark.slow
@pytest.mark.docs("docs/fmat.md", "python", section="## Loaded models stay loaded")
def test_the_docs_example_runs(tiny_models):
    from pathlib import Path

    from assoc.testing.docs import code_blocks, run_blocks

    page = Path(__file__).resolve().parents[3] / "docs" / "fmat.md"
    (block,) = code_blocks(page, section="## Loaded models stay loaded")
    cached_masked_lm(tiny_models["bert"])
    cached_masked_lm(tiny_models["roberta"])
    run_blocks([block.edited(block.replace('"bert-base-uncased"', repr(tiny_models["bert"])))], name="docs/fmat.md")
    assert loaded_masked_lms() == []


def test_file_hash_equals_hashlib_over_the_bytes(tmp_path):
    import hashlib

    data = bytes(range(256)) * 40_000  # 10 MB: mapped and hashed in one call
    (tmp_path / "weights.bin").write_bytes(data)
    (tmp_path / "empty.txt").write_bytes(b"")  # cannot be mapped: read in chunks
    for name, content in (("weights.bin", data), ("empty.txt", b"")):
        digest = hashlib.sha256()
        with open(tmp_path / name, "rb") as handle:
            lm_models._hash_file(handle, digest)
        assert digest.hexdigest() == hashlib.sha256(content).hexdigest()
    # the directory fingerprint by hand: name, NUL, content, NUL per file in name order
    by_hand = hashlib.sha256()
    for name, content in (("empty.txt", b""), ("weights.bin", data)):
        by_hand.update(name.encode() + b"\0" + content + b"\0")
    assert lm_models.local_fingerprint(tmp_path) == "sha256:" + by_hand.hexdigest()

"""Cached ONNX exports are trusted on their content, never on size and time (issue 46, case 4).

Each test first damages a cached export the way the issue found it (a tensor negated in place, the
file's size and modification time kept; a truncated file) and shows that the damaged file computes
something else, then that assoc's numbers equal the model's own forward pass by hand: the export is
made again with one warning line, without a traceback, by the ordinary and the torch-free path.
"""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

import assoc  # noqa: E402
from assoc.infra.cache import Cache, CacheWarning  # noqa: E402
from assoc.lm.masked import release_masked_lms  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::assoc.errors.OutOfVocabularyWarning")  # tiny vocabularies


def _study(job: str) -> dict:
    """A one-query study; each run of a test takes another ``job``, so that its rows are computed, not read back."""
    return {
        "designs": [
            {
                "name": "jobs",
                "queries": ["[MASK] works as a {TARGET}."],
                "mask": {"male": ["he"], "female": ["she"]},
                "target": {"job": [job]},
            }
        ]
    }


def _by_hand(path: str, sentence: str, word: str) -> float:
    """log P(word | sentence) at its mask by one unpadded forward pass of the model, float64 log-softmax."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model, tokenizer = AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
    enc = tokenizer(sentence.replace("[MASK]", tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        row = model(**enc).logits[0].double().numpy()
    position = int((enc["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
    row = row[position]
    top = row.max()
    return float(row[tokenizer.convert_tokens_to_ids(word)] - (top + np.log(np.exp(row - top).sum())))


def _export(cache_dir, int8: bool = False):
    (found,) = [p for p in (cache_dir / "models" / "onnx").glob("*/model.onnx") if _is_int8(p) == int8]
    return found


def _is_int8(path) -> bool:
    return bool(json.loads((path.parent / "key.json").read_text(encoding="utf-8"))["int8"])


def _negate_embeddings_in_place(path) -> None:
    """Flip the sign of the word-embedding matrix inside the file: same size, modification time set back."""
    import onnx

    model = onnx.load(str(path))
    embedding = max(model.graph.initializer, key=lambda t: len(t.raw_data))
    raw = embedding.raw_data
    data = path.read_bytes()
    at = data.find(raw)
    assert at >= 0 and embedding.data_type == onnx.TensorProto.FLOAT
    flipped = (np.frombuffer(raw, dtype="<u4") ^ np.uint32(0x80000000)).astype("<u4").tobytes()
    stat = path.stat()
    with open(path, "r+b") as handle:
        handle.seek(at)
        handle.write(flipped)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def _onnx_value(path, model_dir: str, sentence: str, word: str) -> float:
    """What the file ``path`` computes for ``word`` at the mask of ``sentence`` (its own session, float64 softmax)."""
    import onnxruntime as ort
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    ids = tokenizer(sentence.replace("[MASK]", tokenizer.mask_token))["input_ids"]
    position = ids.index(tokenizer.mask_token_id)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = {
        "input_ids": np.array([ids], dtype=np.int64),
        "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        "positions": np.array([position], dtype=np.int64),
    }
    row = session.run(None, feed)[0][0].astype(np.float64)
    top = row.max()
    return float(row[tokenizer.convert_tokens_to_ids(word)] - (top + np.log(np.exp(row - top).sum())))


def _score(model_dir: str, cache_dir, backend: str = "onnx", job: str = "nurse"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = assoc.score("fmat", _study(job), [model_dir], backend=backend, cache_dir=str(cache_dir), progress=False)
    release_masked_lms()
    return table, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def _forget_hashes() -> None:
    """What a new process starts with: no file hashed yet (the in-process memory of digests emptied)."""
    from assoc.infra import integrity

    integrity._HASHED.clear()


@pytest.mark.slow
def test_an_export_edited_in_place_to_the_same_size_and_time_is_made_again(tiny_models, tmp_path):
    model_dir, cache_dir = tiny_models["bert"], tmp_path / "cache"
    first, _ = _score(model_dir, cache_dir)
    sentence = first["sentence"].iloc[0]
    expected = _by_hand(model_dir, sentence, "he")
    export = _export(cache_dir)
    _negate_embeddings_in_place(export)
    # today's behaviour: the damaged file computes something else, and nothing but its content tells
    assert abs(_onnx_value(export, model_dir, sentence, "he") - expected) > 0.1
    _forget_hashes()  # a new process: its stamp in memory is gone, the file is hashed again
    table, said = _score(model_dir, cache_dir, job="doctor")
    assert abs(float(table["value"].iloc[0]) - _by_hand(model_dir, table["sentence"].iloc[0], "he")) < 1e-5
    assert len(said) == 1 and str(export) in said[0] and "no longer holds the content" in said[0]
    assert abs(_onnx_value(_export(cache_dir), model_dir, sentence, "he") - expected) < 1e-5  # made again


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_a_truncated_export_is_made_again_with_a_warning_never_a_traceback(tiny_models, tmp_path, backend):
    model_dir, cache_dir = tiny_models["bert"], tmp_path / "cache"
    first, _ = _score(model_dir, cache_dir, backend)
    export = _export(cache_dir, int8=backend == "onnx-int8")
    data = export.read_bytes()
    export.write_bytes(data[: len(data) // 2])
    # today's behaviour: ONNX Runtime cannot read the file
    import onnxruntime as ort

    with pytest.raises(Exception, match="(?i)protobuf|parse|load"):
        ort.InferenceSession(str(export), providers=["CPUExecutionProvider"])
    table, said = _score(model_dir, cache_dir, backend, job="doctor")
    again, _ = _score(model_dir, tmp_path / "fresh", backend, job="doctor")  # an export made from nothing
    assert np.allclose(table["value"].to_numpy(), again["value"].to_numpy(), atol=1e-5)
    assert any(str(export) in line for line in said)
    assert export.stat().st_size == len(data)  # exported again, whole


@pytest.mark.slow
def test_the_torch_free_path_trusts_no_damaged_file_and_the_ordinary_path_remakes_it(tiny_models, tmp_path):
    from assoc.lm.masked.torch_free import torch_free_masked_lm

    model_dir, cache_dir = tiny_models["bert"], tmp_path / "cache"
    _score(model_dir, cache_dir)

    def handle(backend: str = "onnx"):
        return torch_free_masked_lm(
            model_dir, device="cpu", dtype="float32", revision=None, memo=Cache(cache_dir), backend=backend
        )

    assert handle() is not None  # a checked export: the torch-free path runs it
    _negate_embeddings_in_place(_export(cache_dir))
    _forget_hashes()
    assert handle() is None  # never trusted on its size and time: the ordinary path decides
    table, said = _score(model_dir, cache_dir, job="doctor")
    assert len(said) == 1
    assert abs(float(table["value"].iloc[0]) - _by_hand(model_dir, table["sentence"].iloc[0], "he")) < 1e-5
    _forget_hashes()
    assert handle() is not None  # the export made again is checked and kept for the next process
    # the tokenizer copy kept beside it: garbled, then edited to other valid JSON
    tokenizer_file = _export(cache_dir).parent / "tokenizer.json"
    text = tokenizer_file.read_text(encoding="utf-8")
    tokenizer_file.write_text("{not json", encoding="utf-8")
    _forget_hashes()
    assert handle() is None
    edited = json.loads(text)
    edited["normalizer"] = None  # valid, and it tokenises otherwise (no lower-casing, no accent stripping)
    tokenizer_file.write_text(json.dumps(edited), encoding="utf-8")
    _forget_hashes()
    assert handle() is None
    table, _ = _score(model_dir, cache_dir, job="teacher")  # the ordinary path keeps a fresh copy
    assert abs(float(table["value"].iloc[0]) - _by_hand(model_dir, table["sentence"].iloc[0], "he")) < 1e-5
    _forget_hashes()
    assert handle() is not None


def test_each_file_is_hashed_once_per_process_and_again_after_a_write(tmp_path, monkeypatch):
    import hashlib

    from assoc.infra import integrity

    path = tmp_path / "model.onnx"
    path.write_bytes(b"weights" * 1000)
    integrity.seal(path)
    calls = []
    original = integrity._digest_file
    monkeypatch.setattr(integrity, "_digest_file", lambda *a: calls.append(1) or original(*a))
    _forget_hashes()
    assert integrity.intact(path) and integrity.intact(path) and integrity.intact(path)
    assert len(calls) == 1  # once per process and file
    stat = path.stat()
    with open(path, "r+b") as handle:  # same size, modification time set back: the change time moves
        handle.write(b"W")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.warns(CacheWarning, match=r"no longer holds the content recorded when it was written"):
        assert not integrity.intact(path)
    assert len(calls) == 2
    assert integrity.file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything
        return
    _forget_hashes()
    assert "cannot be read" in integrity.mismatch(path)

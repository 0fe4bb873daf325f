"""The sbert ONNX backend's cached exports are trusted on their content (issue 46, case 4).

The exports are made by the shared `assoc.lm.onnx.cached_export`, which records each file's
SHA-256 when it writes it and checks it before every reuse. Here a cached float32 export is
truncated and the int8 one edited in place (same size, modification time set back): both are
made again with a warning line, never a traceback, and the embeddings equal those of exports
made from nothing in a cache of their own.
"""

import os
import warnings

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the onnx extra (pip install 'assoc-sbert-topwords[onnx]')")
pytest.importorskip("onnx", reason="the onnx extra (pip install 'assoc-sbert-topwords[onnx]')")

MODEL = "all-MiniLM-L6-v2"
WORDS = ["nurse", "doctor", "teenagers", "bridge"]


def _embeddings(cache_dir) -> tuple[np.ndarray, list[str]]:
    from assoc_sbert_topwords.encoding import open_encoder

    from assoc.infra.cache import Cache, CacheWarning
    from assoc.infra.integrity import _HASHED

    _HASHED.clear()  # what a new process starts with: every file is hashed before it is trusted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        encoder = open_encoder(
            MODEL,
            device="cpu",
            dtype="float32",
            revision=None,
            batch_size=8,
            normalize=True,
            backend="onnx-int8",
            memo=Cache(cache_dir),
        )
        vectors = np.asarray(encoder.encode(WORDS), dtype=np.float64)
    return vectors, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def _exports(cache_dir) -> dict[bool, object]:
    import json

    return {
        bool(json.loads((p.parent / "key.json").read_text(encoding="utf-8"))["int8"]): p
        for p in (cache_dir / "models" / "onnx").glob("*/model.onnx")
    }


@pytest.mark.slow
def test_damaged_sbert_exports_are_made_again_with_a_warning(tmp_path):
    cache_dir = tmp_path / "cache"
    _embeddings(cache_dir)
    exports = _exports(cache_dir)
    fp32, int8 = exports[False], exports[True]
    whole = fp32.read_bytes()
    fp32.write_bytes(whole[: len(whole) // 3])  # truncated: ONNX Runtime cannot parse it (a traceback before)
    stat = int8.stat()
    data = bytearray(int8.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = bytes(4096)  # zeroed in place, same size
    int8.write_bytes(bytes(data))
    os.utime(int8, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    got, said = _embeddings(cache_dir)
    assert len(said) == 2 and any(str(fp32) in s for s in said) and any(str(int8) in s for s in said)
    fresh, _ = _embeddings(tmp_path / "fresh")  # exports made from nothing
    assert np.max(np.abs(got - fresh)) <= 1e-6
    assert fp32.stat().st_size == len(whole)

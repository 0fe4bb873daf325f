"""Embedding texts with a sentence-transformers model, and the on-disk cache of vocabulary embeddings.

A vocabulary's embeddings are computed once per (model fingerprint, revision, vocabulary digest,
template, normalization, dtype, device type) and kept in the cache's arrays
(:meth:`assoc.infra.cache.Cache.arrays`: atomic writes, sha256-checked on load; a corrupt entry is
recomputed, never trusted), so a second study over the same vocabulary does not re-embed it.
While a vocabulary is embedded, each chunk of :data:`CHUNK` words is stored as soon as it is
done, so a killed run resumes from the last finished chunk; the chunks are deleted once the
whole matrix is stored (each result is stored once). The chunks are the very ``encode`` calls
an uninterrupted run makes, so a resumed run gives exactly the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assoc import ModelError, OptionError

from .templates import apply_template

#: texts per encode call for large lists (progress updates between chunks)
CHUNK = 4096


@dataclass
class SentenceEncoder:
    """A loaded model with the settings that change its embeddings.

    Create with :func:`open_encoder`. ``encode`` returns float32 rows; with ``normalize`` each row has
    unit length (sentence-transformers' ``normalize_embeddings``).
    """

    model: Any
    name: str
    fingerprint: str
    device: str
    dtype: str
    revision: str | None
    batch_size: int
    normalize: bool
    backend: str = "torch"  # what runs the transformer (assoc_sbert_topwords.onnx)
    n_encoded: int = field(default=0)  # texts embedded so far (the cache tests read it)

    @property
    def dimension(self) -> int:
        """Width of the embeddings."""
        # sentence-transformers >= 6 renamed the method (the old name warns)
        method = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(method())

    def cache_key(self) -> dict[str, Any]:
        """What changes the numbers, apart from the texts."""
        key: dict[str, Any] = {
            "model": self.fingerprint,
            "revision": self.revision,
            "dtype": self.dtype,
            "device_type": self.device.split(":")[0],
            "normalize": self.normalize,
        }
        if self.backend != "torch":  # keys of PyTorch embeddings stay as they were before the option existed
            key["backend"] = self.backend
        return key

    def encode(self, texts: Sequence[str], *, progress: bool | None = False, desc: str = "embedding") -> np.ndarray:
        """Embeddings of ``texts`` as a ``(len(texts), dimension)`` float32 array."""
        from assoc.infra import bar

        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        steps = bar(total=len(texts), desc=desc, enabled=progress, unit="text")
        for start in range(0, len(texts), CHUNK):
            chunk = list(texts[start : start + CHUNK])
            out[start : start + len(chunk)] = self.model.encode(
                chunk,
                batch_size=self.batch_size,
                normalize_embeddings=self.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            block = out[start : start + len(chunk)]
            # per chunk, one reduction: stop at the first broken chunk rather than embed everything first
            if not np.isfinite(block.sum(dtype=np.float64)):
                steps.close()
                bad = np.flatnonzero(~np.all(np.isfinite(block), axis=1))
                raise ModelError(
                    f"model {self.name!r} returned NaN or infinite embeddings for {len(bad)} of {len(chunk)} "
                    f"text(s) in one batch, first {chunk[int(bad[0])]!r} (dtype {self.dtype}): its weights may "
                    "be corrupt, or float16 overflowed (try dtype=float32)"
                )
            self.n_encoded += len(chunk)
            steps.update(len(chunk))
        steps.close()
        return out


def open_encoder(
    model: str,
    *,
    device: str,
    dtype: str,
    revision: str | None,
    batch_size: int,
    normalize: bool,
    memo: Any = None,
    backend: str = "torch",
) -> SentenceEncoder:
    """Load ``model`` (see :mod:`assoc_sbert_topwords.models`) into a :class:`SentenceEncoder`.

    ``memo``: the :class:`assoc.infra.cache.Cache` where the model files' hash is remembered (None: the
    default root) and, for the ONNX backends, where the exported model is kept; ``backend``: what runs
    the transformer (:mod:`assoc_sbert_topwords.onnx`).
    """
    from .models import load_sentence_model
    from .onnx import use_backend

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise OptionError(f"batch_size must be a positive integer, got {batch_size!r}")
    from assoc import in_memory

    if backend != "torch" and in_memory(model) is not None:
        # swapping the transformer would change the user's own object
        raise OptionError(f"backend {backend!r} applies to models loaded by name or directory; {model!r} is in memory")
    encoder, name, fingerprint = load_sentence_model(model, device=device, dtype=dtype, revision=revision, memo=memo)
    device = str(encoder.device)
    use_backend(encoder, backend, name=name, fingerprint=fingerprint, device=device, dtype=dtype, memo=memo)
    return SentenceEncoder(encoder, name, fingerprint, device, dtype, revision, batch_size, normalize, backend)


def vocabulary_embeddings(
    encoder: SentenceEncoder,
    words: Sequence[str],
    *,
    vocabulary_digest: str,
    template: str | None,
    cache_dir: str | None,
    use_cache: bool,
    progress: bool | None,
) -> tuple[np.ndarray, bool]:
    """The vocabulary's embeddings (float32, C-contiguous) and whether they came from the cache.

    With ``use_cache``, a vocabulary embedded in part by a killed run resumes from its stored chunks.
    """
    from assoc.infra import Cache, bar

    key = {
        "kind": "sbert-vocabulary",
        **encoder.cache_key(),
        "vocabulary": vocabulary_digest,
        "n_words": len(words),
        "template": template,
    }
    texts = [apply_template(template, w) for w in words]
    desc = f"embedding vocabulary ({encoder.name})"
    if not use_cache:
        return encoder.encode(texts, progress=progress, desc=desc), False
    store = Cache(cache_dir).arrays()
    cached = store.load(**key)
    if cached is not None and cached.shape == (len(words), encoder.dimension):
        return np.ascontiguousarray(cached, dtype=np.float32), True
    matrix = np.empty((len(texts), encoder.dimension), dtype=np.float32)
    chunks = [{**key, "chunk": i, "chunk_size": CHUNK} for i in range((len(texts) + CHUNK - 1) // CHUNK)]
    steps = bar(total=len(texts), desc=desc, enabled=progress, unit="text")
    try:
        for i, chunk_key in enumerate(chunks):
            start, stop = i * CHUNK, min(len(texts), (i + 1) * CHUNK)
            part = store.load(**chunk_key)
            if part is None or part.shape != (stop - start, encoder.dimension) or part.dtype != np.float32:
                part = encoder.encode(texts[start:stop])  # one chunk: the same encode call as a whole run's
                store.save(part, **chunk_key)
            matrix[start:stop] = part
            steps.update(stop - start)
    finally:
        steps.close()
    store.save(matrix, **key)
    for chunk_key in chunks:
        store.delete(**chunk_key)
    return matrix, False

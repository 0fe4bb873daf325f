"""Top-k most similar vocabulary words per term, in blocks of terms, without sorting whole rows.

For a block of ``b`` terms the cosines with all ``V`` vocabulary words are one matrix product
(``b x V``, float32). Words above the ceiling and excluded words (the term itself) are set to
``-inf``; :func:`numpy.partition` (introselect, O(V) per row) gives each row's k-th largest
remaining cosine, and only the words at or above it are sorted. Memory is bounded by the block:
about ``9 * b * V`` bytes (the cosine block, one partitioned copy, one boolean mask), never
``terms x V``; ``b`` follows from ``max_block_bytes``.

Tie rule: words are ranked by cosine (descending, as computed in float32), equal cosines by their
position in the vocabulary (earlier first) - the order of a stable descending sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: default memory budget of one block's working arrays (bytes)
BLOCK_BYTES = 256 * 2**20
_BYTES_PER_CELL = 9  # float32 cosines + float32 partitioned copy + bool mask


@dataclass
class TopWords:
    """Result of :func:`top_k`, one row per term.

    Attributes
    ----------
        indices: ``(n_terms, min(k, V))`` vocabulary indices in rank order; -1 where fewer than k words remain.
        values: ``(n_terms, min(k, V))`` their cosines (NaN where ``indices`` is -1).
        n_above_ceiling: per term, vocabulary words removed by the ceiling.
        n_excluded: per term, vocabulary words removed as the term itself (or its case variants).
    """

    indices: np.ndarray
    values: np.ndarray
    n_above_ceiling: np.ndarray
    n_excluded: np.ndarray


def block_rows(n_vocabulary: int, max_block_bytes: int = BLOCK_BYTES) -> int:
    """Terms per block so that one block's working arrays stay within ``max_block_bytes``."""
    return max(1, int(max_block_bytes // (_BYTES_PER_CELL * max(1, n_vocabulary))))


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """``1 / ||row||`` per row as float32 (0 for a zero row, whose cosines are then 0)."""
    # einsum sums the squares row by row; np.linalg.norm would allocate a squared copy of the matrix
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inverse = np.where(norms > 0, 1.0 / norms, 0.0).astype(np.float32)
    return inverse


def top_k(
    terms: np.ndarray,
    vocabulary: np.ndarray,
    *,
    k: int,
    ceiling: float | None = 0.7,
    drop_at_ceiling: bool = False,
    exclude: Sequence[Sequence[int]] | None = None,
    vocabulary_inverse_norms: np.ndarray | None = None,
    max_block_bytes: int = BLOCK_BYTES,
) -> TopWords:
    """The ``k`` vocabulary rows most cosine-similar to each row of ``terms``.

    Parameters
    ----------
    terms, vocabulary:
        ``(n, d)`` and ``(V, d)`` embeddings (any norms; cosines are computed). ``vocabulary`` is
        read, never copied (pass it as float32 C-contiguous to avoid numpy's own conversion copy).
    k:
        words kept per term.
    ceiling:
        cosines above it are removed (``drop_at_ceiling=True``: at or above it); None keeps all.
    exclude:
        per term, vocabulary indices removed before ranking (the term itself and its case variants).
    vocabulary_inverse_norms:
        precomputed :func:`unit_rows` of ``vocabulary`` (computed when None).
    max_block_bytes:
        memory budget of one block (see module docstring).

    cos(t, w) = t . w / (||t|| ||w||). Ties: see the module docstring.
    """
    n_terms, n_vocabulary = terms.shape[0], vocabulary.shape[0]
    k_eff = min(k, n_vocabulary)
    inv_v = unit_rows(vocabulary) if vocabulary_inverse_norms is None else vocabulary_inverse_norms
    t = np.asarray(terms, dtype=np.float32) * unit_rows(np.asarray(terms, dtype=np.float32))[:, None]
    v = np.asarray(vocabulary, dtype=np.float32)
    # at most the whole vocabulary can be kept: a top_k beyond it must not allocate columns for nothing
    indices = np.full((n_terms, k_eff), -1, dtype=np.int64)
    values = np.full((n_terms, k_eff), np.nan, dtype=np.float64)
    n_above = np.zeros(n_terms, dtype=np.int64)
    n_excluded = np.zeros(n_terms, dtype=np.int64)
    rows = block_rows(n_vocabulary, max_block_bytes)
    buffer = np.empty((min(rows, max(1, n_terms)), n_vocabulary), dtype=np.float32)
    mask = np.empty(buffer.shape, dtype=bool)
    for start in range(0, n_terms, rows):
        stop = min(start + rows, n_terms)
        b = stop - start
        sims = buffer[:b]
        np.matmul(t[start:stop], v.T, out=sims)
        sims *= inv_v[None, :]
        if ceiling is not None:
            above = mask[:b]
            (np.greater_equal if drop_at_ceiling else np.greater)(sims, ceiling, out=above)
            n_above[start:stop] = above.sum(axis=1)
            sims[above] = -np.inf
        if exclude is not None:
            for row in range(b):
                drop = np.asarray(exclude[start + row], dtype=np.int64)
                if drop.size:
                    # a word the ceiling removed already is counted there, not here
                    n_excluded[start + row] = int(np.isfinite(sims[row, drop]).sum())
                    sims[row, drop] = -np.inf
        # the k-th largest cosine per row, by selection (O(V)), not by sorting
        kth = np.partition(sims, n_vocabulary - k_eff, axis=1)[:, n_vocabulary - k_eff]
        keep = mask[:b]
        # -inf (removed) words never qualify, also in rows with fewer than k words left
        np.greater_equal(sims, np.maximum(kth, np.finfo(np.float32).min)[:, None], out=keep)
        r, c = np.nonzero(keep)
        vals = sims[r, c]
        order = np.lexsort((c, -vals, r))  # by row, then cosine descending, then vocabulary position
        r, c, vals = r[order], c[order], vals[order]
        starts = np.searchsorted(r, np.arange(b))
        position = np.arange(len(r)) - starts[r]
        chosen = position < k
        indices[start + r[chosen], position[chosen]] = c[chosen]
        values[start + r[chosen], position[chosen]] = vals[chosen]
    return TopWords(indices, values, n_above, n_excluded)

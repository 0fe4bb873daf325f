"""Blocked partial top-k against a brute-force full sort, and its memory bound (no model needed)."""

import tracemalloc

import numpy as np
import pytest
from assoc_sbert_topwords.ranking import block_rows, top_k


def brute_force(terms, vocabulary, k, ceiling, at_ceiling=False, exclude=None):
    """Full cosine matrix in float32 (as the ranking computes it), every row fully sorted."""
    t = terms.astype(np.float32) / np.linalg.norm(terms, axis=1, keepdims=True).astype(np.float32)
    v = vocabulary.astype(np.float32)
    sims = (t @ v.T) * (1 / np.linalg.norm(v, axis=1)).astype(np.float32)
    out = []
    for row in range(len(terms)):
        order = np.argsort(-sims[row], kind="stable")  # stable: equal cosines keep vocabulary order
        kept = [
            int(i)
            for i in order
            if (sims[row, i] < ceiling if at_ceiling else sims[row, i] <= ceiling)
            and not (exclude and i in exclude[row])
        ]
        out.append(kept[:k])
    return out, sims


@pytest.mark.parametrize("max_block_bytes", [1, 9 * 300 * 7, 2**30])
def test_matches_full_sort(max_block_bytes):
    rng = np.random.default_rng(0)
    vocabulary = rng.standard_normal((300, 16)).astype(np.float32)
    terms = np.vstack([vocabulary[:5] + 0.05 * rng.standard_normal((5, 16)), rng.standard_normal((12, 16))])
    exclude = [[i] for i in range(5)] + [[] for _ in range(12)]
    found = top_k(terms, vocabulary, k=20, ceiling=0.7, exclude=exclude, max_block_bytes=max_block_bytes)
    expected, sims = brute_force(terms, vocabulary, 20, 0.7, exclude=exclude)
    for row, want in enumerate(expected):
        assert found.indices[row].tolist() == want
        np.testing.assert_allclose(found.values[row], sims[row, want], atol=1e-6)
        ceiling_removed = int((sims[row] > 0.7).sum())
        assert found.n_above_ceiling[row] == ceiling_removed
    # a term that is a vocabulary word: its own row is above the ceiling, so it is counted there, not excluded
    assert found.n_above_ceiling[:5].min() >= 1 and found.n_excluded[:5].sum() == 0


def test_ties_break_by_vocabulary_position():
    vocabulary = np.array([[1, 0], [0, 1], [1, 0], [1, 0], [0.6, 0.8]], dtype=np.float32)  # 0, 2, 3 identical
    found = top_k(np.array([[1.0, 0.0]]), vocabulary, k=3, ceiling=None)
    assert found.indices[0].tolist() == [0, 2, 3]
    found = top_k(np.array([[1.0, 0.0]]), vocabulary, k=2, ceiling=None)
    assert found.indices[0].tolist() == [0, 2]


def test_ceiling_inclusive_or_not():
    vocabulary = np.array([[1, 0], [0.5, np.sqrt(0.75)], [0, 1]], dtype=np.float32)  # cosines 1, 0.5, 0
    keep = top_k(np.array([[1.0, 0.0]]), vocabulary, k=3, ceiling=0.5)
    assert keep.indices[0].tolist() == [1, 2, -1] and keep.n_above_ceiling[0] == 1
    drop = top_k(np.array([[1.0, 0.0]]), vocabulary, k=3, ceiling=0.5, drop_at_ceiling=True)
    assert drop.indices[0].tolist() == [2, -1, -1] and drop.n_above_ceiling[0] == 2
    assert np.isnan(drop.values[0, 1])


def test_fewer_words_than_k():
    vocabulary = np.eye(3, dtype=np.float32)
    found = top_k(np.array([[1.0, 0.0, 0.0]]), vocabulary, k=5, ceiling=0.7, exclude=[[1]])
    # at most the 3 vocabulary words can be kept: min(k, V) columns, not k (a huge k asked for TiB)
    assert found.indices[0].tolist() == [2, -1, -1]
    assert found.n_excluded[0] == 1


def test_block_rows_bounded():
    assert block_rows(400_000, 256 * 2**20) == 256 * 2**20 // (9 * 400_000)
    assert block_rows(10**12, 1) == 1


@pytest.mark.slow
def test_400k_vocabulary_within_2gb():
    """Ranking 400,000 words for 300 terms: the memory allocated beyond the inputs stays far below 2 GB
    (the block budget plus the outputs), and the top words are those of a full sort."""
    rng = np.random.default_rng(1)
    vocabulary = rng.standard_normal((400_000, 384), dtype=np.float32)
    terms = rng.standard_normal((300, 384), dtype=np.float32)
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        found = top_k(terms, vocabulary, k=50, ceiling=0.7)
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**30, f"peak extra allocation {peak / 2**20:.0f} MB"
    assert peak < 400 * 2**20, f"peak extra allocation {peak / 2**20:.0f} MB exceeds the 256 MB block budget + margin"
    sims = (
        terms[:3] @ vocabulary.T / np.linalg.norm(terms[:3], axis=1, keepdims=True) / np.linalg.norm(vocabulary, axis=1)
    )
    for row in range(3):
        assert set(found.indices[row].tolist()) == set(np.argsort(-sims[row])[:50].tolist())


def test_a_huge_k_allocates_only_the_vocabulary():
    vocabulary = np.eye(4, dtype=np.float32)
    found = top_k(np.array([[1.0, 0.5, 0.0, 0.0]]), vocabulary, k=10**12, ceiling=None)
    assert found.indices.shape == (1, 4) and found.indices[0].tolist() == [0, 1, 2, 3]

"""Shared fixtures: a tiny BERT and a tiny GPT-2 (random weights, built once), MiniLM, SEAT's files, helpers."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from assoc.testing.fixtures import isolated_cache  # noqa: F401 (a cache per test)

REPO = Path(__file__).resolve().parents[3]
# May et al.'s CC BY-NC files in ../shared beside the repository (a git worktree elsewhere: ASSOC_SHARED_DIR)
SEAT = Path(os.environ.get("ASSOC_SHARED_DIR", REPO.parent / "shared")) / "benchmarks" / "seat" / "tests"
MINILM = "all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """{"bert": dir, "gpt2": dir}: random-weight models with a real WordPiece vocabulary and a trained BPE."""
    from assoc.testing.tiny_clm import build_gpt2_bpe
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    root = tmp_path_factory.mktemp("tiny-contextual")
    return {"bert": str(build_bert_wordpiece(root / "bert")), "gpt2": str(build_gpt2_bpe(root / "gpt2"))}


@pytest.fixture(scope="session")
def seat_files() -> Path:
    """The shared copy of sent-bias's tests/ folder."""
    if not SEAT.is_dir():
        pytest.skip("May et al.'s SEAT files (../shared/benchmarks/seat beside the repository) are not on this machine")
    return SEAT


def words_of(stimuli) -> list[str]:
    """Every word of every design, in order (once each)."""
    found = [w for d in stimuli.designs for g in (*d.target.values(), *d.attribute.values()) for w in g]
    return list(dict.fromkeys(found))


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    """sent-bias's ``cossim``: ``u·v / sqrt((u·u)(v·v))`` in float64."""
    import math

    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    return float(np.dot(u, v) / math.sqrt(np.dot(u, u) * np.dot(v, v)))


def weat_py_effect_size(x, y, a, b) -> float:
    """sent-bias's ``weat.py`` effect size, transcribed: per item s(w) = mean_A cos - mean_B cos in loops, then
    ``(mean_X s - mean_Y s) / np.std(s over X + Y, ddof=1)``."""

    def s(w):
        return np.mean([cosine(w, t) for t in a]) - np.mean([cosine(w, t) for t in b])

    sx, sy = [s(w) for w in x], [s(w) for w in y]
    return float((np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1))

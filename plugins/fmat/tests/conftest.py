"""Tiny masked LMs of the three tokenizer families, built once per test session (offline)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    # Every test gets its own result cache, so no test reads values another test computed.
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "assoc-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """{"bert": dir, "roberta": dir, "albert": dir}: random-weight models with real tokenizer behaviour."""
    from assoc.testing.tiny_mlm import build_albert_sentencepiece, build_bert_wordpiece, build_roberta_bpe

    root = tmp_path_factory.mktemp("tiny-mlm")
    return {
        "bert": str(build_bert_wordpiece(root / "bert")),
        "roberta": str(build_roberta_bpe(root / "roberta")),
        "albert": str(build_albert_sentencepiece(root / "albert")),
    }


@pytest.fixture(scope="session")
def loaded(tiny_models):
    """Loaded :class:`assoc.lm.masked.MaskedLM` per family (read-only use: do not add tokens to these)."""
    from assoc.lm.masked import load_masked_lm

    return {family: load_masked_lm(path) for family, path in tiny_models.items()}

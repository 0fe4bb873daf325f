"""Tiny masked LMs of the three tokenizer families, built once per test session (offline)."""

from __future__ import annotations

import pytest

from assoc.testing.fixtures import isolated_cache, tiny_masked_lms  # noqa: F401 (isolated_cache: a cache per test)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """{"bert": dir, "roberta": dir, "albert": dir}: random-weight models with real tokenizer behaviour."""
    return tiny_masked_lms(tmp_path_factory.mktemp("tiny-mlm"))


@pytest.fixture(scope="session")
def loaded(tiny_models):
    """Loaded :class:`assoc.lm.masked.MaskedLM` per family (read-only use: do not add tokens to these)."""
    from assoc.lm.masked import load_masked_lm

    return {family: load_masked_lm(path) for family, path in tiny_models.items()}

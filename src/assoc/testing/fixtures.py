"""What a plugin's tests share: a result cache of each test's own, and the tiny language models of each family.

* ``isolated_cache``: a pytest fixture, autouse once imported into a ``conftest.py`` (pytest finds a
  fixture by the name it was defined with, wherever it was imported from). Every test gets its own
  result cache (``$ASSOC_CACHE_DIR`` under its ``tmp_path``), so no test reads values another test
  computed; the Hugging Face hub is offline.
* [`tiny_masked_lms`][assoc.testing.fixtures.tiny_masked_lms] and
[`tiny_causal_lms`][assoc.testing.fixtures.tiny_causal_lms]: every tiny model family built in one folder,
  for a session-scoped fixture of your own.

::

    # tests/conftest.py
    import pytest

    from assoc.testing.fixtures import isolated_cache, tiny_masked_lms  # noqa: F401 (isolated_cache: a fixture)


    @pytest.fixture(scope="session")
    def tiny_models(tmp_path_factory):
        return tiny_masked_lms(tmp_path_factory.mktemp("tiny-mlm"))

This module imports pytest (a test dependency); torch and transformers are imported only when a
model is built.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A result cache of the test's own (``$ASSOC_CACHE_DIR`` under ``tmp_path``), and the hub offline."""
    monkeypatch.setenv("ASSOC_CACHE_DIR", str(tmp_path / "assoc-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield


def tiny_masked_lms(root: str | os.PathLike[str]) -> dict[str, str]:
    """``{"bert": dir, "roberta": dir, "albert": dir}`` under ``root``: random-weight masked LMs, real tokenizers.

    The builders of [`assoc.testing.tiny_mlm`][assoc.testing.tiny_mlm] with their defaults (seed 0): WordPiece,
    byte-level BPE and SentencePiece, the three ways masked LMs split words.
    """
    from assoc.testing.tiny_mlm import build_albert_sentencepiece, build_bert_wordpiece, build_roberta_bpe

    folder = Path(root)
    return {
        "bert": str(build_bert_wordpiece(folder / "bert")),
        "roberta": str(build_roberta_bpe(folder / "roberta")),
        "albert": str(build_albert_sentencepiece(folder / "albert")),
    }


def tiny_causal_lms(root: str | os.PathLike[str]) -> dict[str, str]:
    """``{"gpt2": dir, "llama": dir}`` under ``root``: random-weight causal LMs with trained tokenizers.

    The builders of `assoc.testing.tiny_clm` with their defaults (seed 0).
    """
    from assoc.testing.tiny_clm import build_gpt2_bpe, build_llama_sentencepiece

    folder = Path(root)
    return {"gpt2": str(build_gpt2_bpe(folder / "gpt2")), "llama": str(build_llama_sentencepiece(folder / "llama"))}

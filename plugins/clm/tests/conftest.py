"""Tiny causal LMs of the GPT-2 and Llama families, built once per test session (offline)."""

from __future__ import annotations

import pytest

from assoc.testing.fixtures import isolated_cache, tiny_causal_lms  # noqa: F401 (isolated_cache: a cache per test)


@pytest.fixture(scope="session")
def tiny_causal(tmp_path_factory):
    """{"gpt2": dir, "llama": dir}: random-weight causal LMs with trained tokenizers."""
    return tiny_causal_lms(tmp_path_factory.mktemp("tiny-clm"))


@pytest.fixture(scope="session")
def causal_lms(tiny_causal):
    """Loaded :class:`assoc.lm.CausalLM` per family."""
    from assoc.lm import load_causal_lm

    return {family: load_causal_lm(path) for family, path in tiny_causal.items()}


@pytest.fixture(scope="session")
def items():
    """Fill-mask items of Bao (2024), Watson et al. (2023) and :func:`start_stimuli`."""
    return sample_items() + start_stimuli().mask_items()


@pytest.fixture(scope="session")
def bao_items():
    """The Bao (2024) and Watson et al. (2023) items of :func:`sample_items`."""
    return sample_items()


@pytest.fixture(scope="session")
def edge_stimuli():
    """:func:`start_stimuli`: options at the start and at the end of sentences."""
    return start_stimuli()


@pytest.fixture(scope="session")
def causal_lms64(tiny_causal):
    """The same models in float64, for code-against-code comparisons free of float32 summation noise."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from assoc.lm import CausalLM

    out = {}
    for family, path in tiny_causal.items():
        model = AutoModelForCausalLM.from_pretrained(path, dtype="float64").eval()
        out[family] = CausalLM(
            family, AutoTokenizer.from_pretrained(path), model, device="cpu", dtype="float64", fingerprint=family
        )
    return out


def sample_items():
    """About 150 fill-mask items: every 7th of Bao (2024) 2A, 3A, 3D, 4A, 4C and two Watson (2023) sets.

    Options at the start, middle and end of sentences, one- and many-token options, years (digits).
    """
    from assoc_fmat.bundled import load_bao2024
    from assoc_pll.bundled import load_watson2023

    bao = load_bao2024(["2A", "3A", "3D", "4A", "4C"]).mask_items()
    watson = load_watson2023().select(["firefighter", "actor"]).mask_items()
    return bao[::211] + watson[::97]


def start_stimuli():
    """Options that start the sentence (empty prefix) or end it (empty suffix)."""
    from assoc import Design, Stimuli

    design = Design(
        name="start",
        queries=("[MASK] is a nurse.", "The man is a [MASK]", "Most [MASK] like music."),
        mask={"he": ("He", "she"), "role": ("Nurse", "teacher")},
    )
    return Stimuli([design], name="start")

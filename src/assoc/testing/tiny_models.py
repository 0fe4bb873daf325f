"""The tiny models ``assoc models tiny`` builds: one random-weight model of each kind, long enough for every benchmark.

``assoc models tiny DIR --kind bert|gpt2|llama`` calls [`build_tiny`][assoc.testing.tiny_models.build_tiny]: the
builders of [`assoc.testing.tiny_mlm`][assoc.testing.tiny_mlm] (BERT with the real bert-base-uncased WordPiece
vocabulary) and ``assoc.testing.tiny_clm`` (GPT-2 and Llama with tokenizers trained on the spot), with
[`TINY_POSITIONS`][assoc.testing.tiny_models.TINY_POSITIONS] positions, so that the longest item of every bundled
stimuli set (BBQ, CrowS-Pairs, StereoSet, Winogender, WinoBias, HolisticBias, DiscrimEval, ...) fits each of them.
``tests/test_tiny_models.py`` tokenizes every bundled stimuli set with each model's own tokenizer and fails when
one no longer fits: a new benchmark with longer prompts fails it until the numbers here grow.

The tiny GPT-2 and Llama tokenizers are trained on a few hundred short sentences, so they split an unseen word
into nearly as many tokens as it has letters: DiscrimEval's longest prompt (the question with
lm-evaluation-harness's instruction) is about 290 tokens in the WordPiece vocabulary but about 1,080 in the tiny
GPT-2 tokenizer and 990 in the tiny Llama one. Positions cost next to nothing here (a table of positions x 32
numbers for GPT-2 and BERT; Llama's rotary positions have no weights), so the models are still built in seconds.

The builders' own defaults are unchanged (128 positions for BERT, 64 for GPT-2 and Llama): another number of
positions gives other random weights, and the test suite's models, whose numbers some tests freeze, are those.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

TINY_KINDS = ("bert", "gpt2", "llama")
"""What ``assoc models tiny --kind`` builds."""

TINY_POSITIONS: Mapping[str, int] = MappingProxyType({"bert": 512, "gpt2": 2048, "llama": 2048})
"""Positions (the longest sequence, special tokens included) of each kind's tiny model: enough for the longest
item of every bundled stimuli set in that kind's tokenizer (``tests/test_tiny_models.py`` measures them)."""


def build_tiny(
    directory: str | os.PathLike[str],
    kind: str = "bert",
    *,
    seed: int = 0,
    positions: int | None = None,
    head_size: int | None = None,
) -> Path:
    """Build the tiny model of ``kind`` (one of ``TINY_KINDS``) in ``directory``; return its path.

    Parameters
    ----------
    directory
        Where ``save_pretrained`` writes the model and its tokenizer.
    kind
        ``bert``: a masked LM (fmat, pll, the benchmarks' PLL scores); ``gpt2`` or ``llama``: a causal LM.
    seed
        Seed of the random weights: another seed, another model (another rater).
    positions
        The longest sequence in tokens, special tokens included; default
        [`TINY_POSITIONS`][assoc.testing.tiny_models.TINY_POSITIONS] of the kind.
    head_size
        Causal LMs only: dimensions per attention head (width = heads x this), for an inference server
        (``assoc.testing.tiny_clm.SERVED_HEAD_SIZE``).

    Returns
    -------
    Path
        ``directory``.
    """
    if kind not in TINY_KINDS:
        raise ValueError(f"kind must be one of {', '.join(TINY_KINDS)}, got {kind!r}")
    length = TINY_POSITIONS[kind] if positions is None else positions
    if kind == "bert":
        if head_size is not None:
            raise ValueError("head_size shapes a causal LM: use it with kind 'gpt2' or 'llama'")
        from assoc.testing.tiny_mlm import build_bert_wordpiece

        return build_bert_wordpiece(directory, seed=seed, positions=length)
    from assoc.testing.tiny_clm import build_causal

    return build_causal(directory, kind, seed=seed, head_size=head_size, positions=length)

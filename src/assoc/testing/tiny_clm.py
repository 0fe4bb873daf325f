"""Builders of tiny causal language models for offline tests and quick starts.

Two families cover what open causal LMs do with words:

* :func:`build_gpt2_bpe` - GPT-2: byte-level BPE (``Ġ`` space prefix) trained here on
  :func:`assoc.testing.tiny_mlm.tiny_corpus`, ``<|endoftext|>`` as BOS, EOS and UNK (as in
  ``gpt2``), a tokenizer that adds no special token, learned absolute positions;
* :func:`build_llama_sentencepiece` - Llama: SentencePiece-style BPE (``▁`` prefix) trained here,
  ``<s>`` added by the tokenizer, rotary positions, RMS norm, gated MLP.

Weights are random (seeded): the models test plumbing and numerics, not language. Each
builder writes a ``save_pretrained`` directory and returns its path. ``shape="small"`` gives
a GPT-2-small-shaped model (12 layers, 768 wide, 50,257 vocabulary rows) for benchmarks.

``head_size`` and ``positions`` give the same families in a shape an inference server can serve:
vLLM's CPU attention takes head sizes 32, 64, 80, ... only (the defaults have 16 and 8), and its
``--max-model-len`` cannot exceed the model's positions (the defaults have 64, too few for a BBQ
prompt). :data:`SERVED_HEAD_SIZE` and :data:`SERVED_POSITIONS` are such a shape, still built in
seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assoc.testing.tiny_mlm import tiny_corpus

#: What each family's builder is called in ``assoc models tiny --kind``.
CAUSAL_KINDS = ("gpt2", "llama")

#: A head size vLLM's CPU attention accepts (``assoc models tiny --head-size``).
SERVED_HEAD_SIZE = 32
#: Positions enough for a BBQ prompt in the tiny tokenizers (``assoc models tiny --positions``).
SERVED_POSITIONS = 1024


def _hidden(hidden: int, heads: int, head_size: int | None) -> int:
    """The model width: ``heads * head_size`` when a head size is asked for, else ``hidden``."""
    if head_size is None:
        return hidden
    if head_size < 1:
        raise ValueError(f"head_size must be a positive number of dimensions, got {head_size}")
    return heads * head_size


def _merges(model_json: dict) -> list[tuple[str, str]]:
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model_json["merges"]]  # type: ignore[misc]


def gpt2_tokenizer(vocab_size: int = 400):
    """A GPT-2 tokenizer (byte-level BPE, ``<|endoftext|>``) trained on :func:`tiny_corpus`."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Tokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        tiny_corpus(), vocab_size=vocab_size, min_frequency=1, special_tokens=["<|endoftext|>"], show_progress=False
    )
    model_json = json.loads(bpe._tokenizer.to_str())["model"]
    merges: Any = _merges(model_json)  # transformers accepts pairs; its annotation says str
    return GPT2Tokenizer(vocab=bpe.get_vocab(), merges=merges, model_max_length=64)


def llama_tokenizer(vocab_size: int = 300, positions: int = 64):
    """A Llama tokenizer (SentencePiece-style BPE, ``▁`` prefix, adds ``<s>``) trained on :func:`tiny_corpus`."""
    from tokenizers import SentencePieceBPETokenizer
    from transformers import LlamaTokenizer

    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator(
        tiny_corpus(),
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=["<unk>", "<s>", "</s>"],
        show_progress=False,
    )
    model_json = json.loads(sp._tokenizer.to_str())["model"]
    tokenizer = LlamaTokenizer(
        vocab=model_json["vocab"], merges=_merges(model_json), model_max_length=positions, add_bos_token=True
    )
    tokenizer.update_post_processor()  # so that encoding adds <s>, as Llama's tokenizer does
    return tokenizer


def build_gpt2_bpe(
    directory: str | os.PathLike[str],
    *,
    seed: int = 0,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 2,
    vocab_size: int = 400,
    positions: int = 64,
    spread: float = 10.0,
    head_size: int | None = None,
) -> Path:
    """Tiny GPT-2 (random weights) with a byte-level BPE tokenizer trained on the spot.

    ``spread`` multiplies the (tied) token embeddings after the seeded initialisation: a random GPT-2
    predicts an almost uniform distribution, which would hide differences between code paths.
    ``head_size`` (optional) sets the width to ``heads * head_size`` instead of ``hidden``.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    out = Path(directory)
    tokenizer = gpt2_tokenizer(vocab_size)
    rows = max(len(tokenizer), vocab_size)
    tokenizer.model_max_length = positions
    config = GPT2Config(
        vocab_size=rows,
        n_positions=positions,
        n_embd=_hidden(hidden, heads, head_size),
        n_layer=layers,
        n_head=heads,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():  # tied input/output embeddings: a wider spread makes predictions far from uniform
        model.transformer.wte.weight.mul_(spread)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_llama_sentencepiece(
    directory: str | os.PathLike[str],
    *,
    seed: int = 0,
    hidden: int = 32,
    layers: int = 2,
    vocab_size: int = 300,
    positions: int = 64,
    head_size: int | None = None,
) -> Path:
    """Tiny Llama (random weights) with a SentencePiece-style BPE tokenizer trained on the spot.

    Four query heads sharing two key/value heads; ``head_size`` (optional) sets the width to
    ``4 * head_size`` instead of ``hidden``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(directory)
    tokenizer = llama_tokenizer(vocab_size, positions)
    heads = 4
    hidden = _hidden(hidden, heads, head_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=None,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    # Random init gives near-uniform predictions; a wider spread of the head makes numeric
    # differences between code paths visible instead of hidden in a flat distribution.
    with torch.no_grad():
        model.lm_head.weight.mul_(20.0)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def build_gpt2_small(directory: str | os.PathLike[str], *, seed: int = 0) -> Path:
    """A GPT-2-small-shaped model (12 layers x 768, 12 heads, 1024 positions, 50,257 rows), random weights.

    The tokenizer is the tiny trained one (the real GPT-2 merges are not shipped offline); the
    embedding and head have GPT-2 small's 50,257 rows, so every forward pass costs what
    ``gpt2`` costs on sequences of the same length.
    """
    return build_gpt2_bpe(
        directory, seed=seed, hidden=768, layers=12, heads=12, vocab_size=50257, positions=1024, spread=1.0
    )


def build_causal(
    directory: str | os.PathLike[str],
    kind: str = "gpt2",
    *,
    seed: int = 0,
    head_size: int | None = None,
    positions: int = 64,
) -> Path:
    """Build the tiny causal LM of family ``kind`` (one of :data:`CAUSAL_KINDS`) in ``directory``.

    ``head_size`` and ``positions`` change the shape (for an inference server:
    :data:`SERVED_HEAD_SIZE`, :data:`SERVED_POSITIONS`); the defaults build today's tiny models.
    """
    if positions < 1:
        raise ValueError(f"positions must be a positive number of tokens, got {positions}")
    if kind == "gpt2":
        return build_gpt2_bpe(directory, seed=seed, head_size=head_size, positions=positions)
    if kind == "llama":
        return build_llama_sentencepiece(directory, seed=seed, head_size=head_size, positions=positions)
    raise ValueError(f"kind must be one of {', '.join(CAUSAL_KINDS)}, got {kind!r}")

"""What the benchmark scorers' tests share: tiny models built once per session, the command line, and the oracles.

The oracles compute what a scorer's rows must hold with transformers directly, without assoc's engines: a
masked LM's pseudo-log-likelihood (each token masked in turn, one batch of copies) and a causal LM's log P of a
text after a context (the whole ``context + text`` tokenized once, the context's own tokens cut off its front, a
BOS token first: the causal kind's ``bos="auto"``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from types import SimpleNamespace
from typing import Any

import pytest


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny BERT (random weights, BERT's uncased vocabulary)."""
    pytest.importorskip("transformers")
    from assoc.testing.tiny_mlm import build_bert_wordpiece

    return str(build_bert_wordpiece(tmp_path_factory.mktemp("benchmark-models") / "bert"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny GPT-2 (random weights, a byte-level BPE trained on the spot) taking 256 tokens."""
    pytest.importorskip("transformers")
    from assoc.testing.tiny_clm import build_gpt2_bpe

    return str(build_gpt2_bpe(tmp_path_factory.mktemp("benchmark-models") / "gpt2", positions=256))


@pytest.fixture
def run_cli() -> Callable[..., str]:
    """``run_cli(*argv)``: the ``assoc`` command in this process; its output (a failure shows it)."""

    def run(*argv: str) -> str:
        from click.testing import CliRunner

        from assoc.cli import build_cli

        result = CliRunner().invoke(build_cli(), list(argv), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    return run


@cache
def loaded(folder: str, cls: str, tokenizer: str = "AutoTokenizer") -> tuple[Any, Any]:
    """A tokenizer and a model of transformers' classes ``tokenizer`` and ``cls``, loaded once per session."""
    import transformers

    model = getattr(transformers, cls).from_pretrained(folder).eval()
    return getattr(transformers, tokenizer).from_pretrained(folder), model


def masked_pll(folder: str, text: str, span: tuple[int, int] | None = None) -> float:
    """Salazar et al.'s PLL: each non-special token (of ``span`` only, when given) masked in turn."""
    import torch

    tokenizer, model = loaded(folder, "AutoModelForMaskedLM")
    encoded = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    where = zip(encoded["special_tokens_mask"], encoded["offset_mapping"])
    scored = [
        position
        for position, (special, (start, end)) in enumerate(where)
        if not special and (span is None or (start < span[1] and end > span[0]))
    ]
    copies = torch.tensor([encoded["input_ids"]] * len(scored))  # one masked copy per scored token, one batch
    copies[range(len(scored)), scored] = tokenizer.mask_token_id
    with torch.no_grad():
        logits = model(copies).logits[range(len(scored)), scored].double()
    original = torch.tensor(encoded["input_ids"])[scored]
    return float(torch.log_softmax(logits, dim=-1)[range(len(scored)), original].sum())


def causal_log_prob(folder: str, text: str, context: str = "") -> float:
    """log P(text | BOS + context) over ``text``'s tokens (lm-eval's split: ``context + text`` tokenized once)."""
    import torch

    tokenizer, model = loaded(folder, "AutoModelForCausalLM")
    whole = tokenizer(context + text, add_special_tokens=False)["input_ids"]
    start = len(tokenizer(context.rstrip(), add_special_tokens=False)["input_ids"]) if context else 0
    ids = [tokenizer.bos_token_id, *whole]
    with torch.no_grad():
        log_sm = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
    return float(sum(log_sm[k, ids[k + 1]] for k in range(start, len(whole))))


@pytest.fixture(scope="session")
def oracle() -> SimpleNamespace:
    """The oracles of the module docstring: ``masked_pll``, ``causal_log_prob``, and ``loaded`` (their models)."""
    pytest.importorskip("torch")
    return SimpleNamespace(masked_pll=masked_pll, causal_log_prob=causal_log_prob, loaded=loaded)

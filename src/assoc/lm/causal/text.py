r"""From sentences to causal-LM requests: the BOS policy and the context/continuation split.

BOS policy (``bos``), recorded in every row of the clm table:

``"auto"`` (default)
    Prepend the tokenizer's BOS token id; a tokenizer without one gets its EOS id (as
    lm-evaluation-harness's ``prefix_token_id``); a tokenizer with neither scores from the
    second token (the first is unscored). The text itself is tokenized without special
    tokens, so a tokenizer that adds BOS on its own never yields a doubled BOS (minicons #78).
    Every token of the text is scored. This is lm-eval's ``loglikelihood`` with an empty
    context (a whole sentence), and minicons with ``bos_token=True`` for GPT-2-style tokenizers.
``"tokenizer"``
    Whatever the tokenizer adds with ``add_special_tokens=True`` (Llama/Mistral: BOS; GPT-2,
    Pythia, Qwen: nothing, so the first token is unscored). This is minicons' default
    (``bos_token=False``) and lm-eval's default for a non-empty context.
``"none"``
    No special token: the first token is unscored.

The option of a fill-mask query (prefix P, option O, suffix S) is scored as lm-eval splits a
context/continuation pair: trailing spaces of the context move to the continuation, the whole
``P + O`` is tokenized once and the context's own tokens are cut off its front, so GPT-2 BPE
(``Ġ``) and SentencePiece (``▁``) keep the space on the option's first token:

    context = rstrip(P),  continuation = P[len(rstrip(P)):] + O,
    tokens(continuation) = tokens(P + O)[len(tokens(rstrip(P))):]

The whole sentence ``P + O + S`` is tokenized once; where its tokens begin with the context's
(the usual case), the context is run once per query and shared by its options
(:mod:`assoc.lm.causal.engine`), and the option's log probabilities are read off the sentence's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assoc.lm.causal.requests import CausalRequest

BOS_POLICIES = ("auto", "tokenizer", "none")


def special_tokens(tokenizer: Any, policy: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ids put before the text, ids put after it) under the BOS ``policy`` (see the module docstring)."""
    if policy == "none":
        return (), ()
    if policy == "auto":
        for token_id in (tokenizer.bos_token_id, tokenizer.eos_token_id):
            if token_id is not None:
                return (int(token_id),), ()
        return (), ()
    if policy == "tokenizer":
        plain = list(tokenizer("a b", add_special_tokens=False)["input_ids"])
        full = list(tokenizer("a b", add_special_tokens=True)["input_ids"])
        for i in range(len(full) - len(plain) + 1):
            if full[i : i + len(plain)] == plain:
                return tuple(full[:i]), tuple(full[i + len(plain) :])
        return (), ()
    raise ValueError(f"bos must be one of {', '.join(BOS_POLICIES)}, got {policy!r}")


def encode(tokenizer: Any, text: str) -> tuple[int, ...]:
    """Token ids of ``text`` without special tokens."""
    return tuple(map(int, tokenizer(text, add_special_tokens=False)["input_ids"])) if text else ()


@dataclass(frozen=True)
class SentencePlan:
    """How one sentence (and optionally its option) is scored: its requests and how to read them.

    ``tokens`` is the whole scored sequence (special tokens included); ``parts`` are the requests
    whose continuations, concatenated, are tokens ``1 ..`` of it (the first token is the
    unscored start); ``option`` is the option's request and ``option_from_sentence`` says
    whether its values are the first ``len(option.continuation)`` values of ``parts[-1]``.
    """

    tokens: tuple[int, ...]
    parts: tuple[CausalRequest, ...]
    option: CausalRequest | None
    option_from_sentence: bool

    def requests(self) -> list[CausalRequest]:
        """Every request this plan needs computed."""
        out = list(self.parts)
        if self.option is not None and not self.option_from_sentence:
            out.append(self.option)
        return out


def plan_sentence(
    tokenizer: Any,
    lead: Sequence[int],
    trail: Sequence[int],
    sentence: str,
    span: tuple[int, int] | None = None,
) -> SentencePlan:
    """The requests that score ``sentence`` (and the option at character ``span``, when given).

    ``lead``/``trail``: the special tokens of the BOS policy (:func:`special_tokens`).
    """
    lead, trail = tuple(lead), tuple(trail)
    body = encode(tokenizer, sentence)
    tokens = lead + body + trail
    context_ids: tuple[int, ...] = ()
    continuation: tuple[int, ...] = ()
    if span is not None:
        prefix = sentence[: span[0]]
        context_text = prefix.rstrip()
        context_ids = encode(tokenizer, context_text)
        whole = encode(tokenizer, sentence[: span[1]])
        continuation = whole[len(context_ids) :]
        aligned = body[: len(whole)] == whole and whole[: len(context_ids)] == context_ids
        split = len(lead) + (len(context_ids) if aligned else _common(body, context_ids))
    else:
        aligned, split = False, len(lead)
    if not tokens:
        return SentencePlan(tokens, (), None, False)
    split = max(split, 1)
    parts = []
    if split > 1:
        parts.append(CausalRequest(tokens[:1], tokens[1:split]))
    if split < len(tokens):
        parts.append(CausalRequest(tokens[:split], tokens[split:]))
    option = None
    if span is not None and continuation:
        start = lead + context_ids
        if not start:  # nothing before the option: its first token is the unscored start
            start, continuation = continuation[:1], continuation[1:]
        option = CausalRequest(start, continuation) if continuation else None
        aligned = aligned and option is not None and bool(parts) and parts[-1].context == option.context
    return SentencePlan(tokens, tuple(parts), option, bool(aligned and option is not None))


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common start of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n

r"""From sentences to causal-LM requests: the BOS policy and the context/continuation split.

BOS policy (``bos``), recorded in every row of the clm table:

``"auto"`` (default)
    Prepend the tokenizer's BOS token id; a tokenizer without one gets its EOS id (as
    lm-evaluation-harness's ``prefix_token_id``). The text itself is tokenized without special
    tokens, so a tokenizer that adds BOS on its own never yields a doubled BOS (minicons #78).
    Every token of the text is scored. This is lm-eval's ``loglikelihood`` with an empty
    context (a whole sentence), and minicons with ``bos_token=True`` for GPT-2-style tokenizers.
    A tokenizer with neither a BOS nor an EOS token has nothing to prepend, so ``auto`` cannot
    keep its promise: it is refused before any work (:func:`start_token_problem`), naming
    ``"none"``, which says what is computed.
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

**An option with nothing before it.** When the policy puts no token before the text (``"none"``;
``"tokenizer"`` for GPT-2, Pythia, Qwen) and the option starts the sentence, its first token is
the unscored start: ``log P(O | P)`` has no value (a causal LM has no distribution for a first
token). The plan then has no option request and says why (:attr:`SentencePlan.option_problem`,
:data:`NO_START_TOKEN`); the option is never scored from its second token on, which would be a
sum over part of it. The sentence itself is still scored from its second token, as the policy says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assoc.lm.causal.requests import CausalRequest
from assoc.lm.statuses import NO_START_TOKEN  # why an option has no log P(O | P): nothing precedes it

BOS_POLICIES = ("auto", "tokenizer", "none")


def start_token_problem(tokenizer: Any, policy: str) -> str:
    """Why the BOS ``policy`` cannot do what it promises with ``tokenizer``, in one phrase; ``""`` when it can.

    ``"auto"`` promises that every token of the text is scored after a start token (the BOS token,
    else EOS): a tokenizer with neither has none to put first. The other policies promise nothing
    of the kind (their first text token is unscored when nothing is added).
    """
    if policy == "auto" and tokenizer.bos_token_id is None and tokenizer.eos_token_id is None:
        return "its tokenizer has neither a BOS nor an EOS token"
    return ""


def declared_start_tokens(folder: Path) -> bool | None:
    """Whether the tokenizer files in ``folder`` name a BOS or EOS token: True, False, or None when they do not say.

    Read from ``special_tokens_map.json`` and ``tokenizer_config.json`` without loading anything:
    False only when both files that exist set ``bos_token`` and ``eos_token`` to nothing (``null``,
    ``""``), so a tokenizer class's own default (GPT-2's ``<|endoftext|>``) is never mistaken for
    none; :func:`start_token_problem` decides on the loaded tokenizer.
    """
    import json

    found: dict[str, Any] = {}
    for name in ("tokenizer_config.json", "special_tokens_map.json"):  # the map's values win, as in transformers
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found.update({key: data[key] for key in ("bos_token", "eos_token") if key in data})
    if any(_token_text(found.get(key)) for key in ("bos_token", "eos_token")):
        return True
    if {"bos_token", "eos_token"} <= set(found):
        return False
    return None


def _token_text(value: Any) -> str:
    """The text of a special token as tokenizer files write it (a string, or an AddedToken's ``content``)."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


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
    """Token ids of ``text`` without special tokens.

    ``verbose=False``: transformers' own warning about a text longer than the model accepts would
    come without the text's name; the kind and the scorers say it, naming the text.
    """
    if not text:
        return ()
    return tuple(int(i) for i in tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


@dataclass(frozen=True)
class SentencePlan:
    """How one sentence (and optionally its option) is scored: its requests and how to read them.

    ``tokens`` is the whole scored sequence (special tokens included); ``parts`` are the requests
    whose continuations, concatenated, are tokens ``1 ..`` of it (the first token is the
    unscored start); ``option`` is the option's request and ``option_from_sentence`` says
    whether its values are the first ``len(option.continuation)`` values of ``parts[-1]``.
    ``option_problem`` says why an option asked for has no request (:data:`NO_START_TOKEN`:
    nothing precedes it), ``""`` otherwise.
    """

    tokens: tuple[int, ...]
    parts: tuple[CausalRequest, ...]
    option: CausalRequest | None
    option_from_sentence: bool
    option_problem: str = ""

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
    problem = ""
    if span is not None and continuation:
        start = lead + context_ids
        if start:
            option = CausalRequest(start, continuation)
        else:  # nothing before the option: its first token is the unscored start, so log P(O | P) has no value
            problem = NO_START_TOKEN
        aligned = aligned and option is not None and bool(parts) and parts[-1].context == option.context
    return SentencePlan(tokens, tuple(parts), option, bool(aligned and option is not None), problem)


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common start of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n

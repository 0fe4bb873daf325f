"""Which vocabulary token(s) a word becomes at the mask position, decided by the tokenizer.

The R package FMAT guesses casing and the ``Ġ`` / ``▁`` prefixes with regular
expressions on model names. Here the tokenizer itself decides: the query is tokenized
once with the mask token and once with the word filled in, and the tokens that differ
between the two sequences are the word's tokens *in that context*. This handles
uncased models (lower-casing), byte-level BPE space prefixes (``Ġnurse`` inside a
sentence, ``He`` without prefix at its start), SentencePiece ``▁`` prefixes and case,
for any tokenizer, slow or fast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assoc.errors import ModelError, StimuliError
from assoc.errors import OutOfVocabularyWarning as OutOfVocabularyWarning  # re-exported: its former home
from assoc.stimuli.design import MASK, fill_mask, split_at_mask

PLACEHOLDER = MASK


@dataclass(frozen=True)
class WordTokens:
    """The tokens of one candidate word at the mask position of one query.

    ``masked_ids``: the query's token ids with one mask token at ``position``;
    ``token_ids``: the ids the word becomes there (one id = in the vocabulary);
    ``context_changed``: filling the word also changed neighbouring tokens (the word
    merges with adjacent characters, e.g. no space before it), so its tokens are
    those of the filled sentence and the context is that of the masked one.
    """

    word: str
    masked_ids: tuple[int, ...]
    position: int
    token_ids: tuple[int, ...]
    context_changed: bool = False
    overridden: bool = False

    @property
    def in_vocab(self) -> bool:
        """Whether the word is one token of the vocabulary."""
        return len(self.token_ids) == 1


def split_query(text: str) -> tuple[str, str]:
    """Split a query at its single ``[MASK]`` (or raise :class:`StimuliError`)."""
    return split_at_mask(text)


def fill_mask_token(text: str, mask_token: str) -> str:
    """Replace the portable ``[MASK]`` spelling with the model's own mask token."""
    return fill_mask(text, mask_token)[0]


def masked_query(lm: Any, text: str) -> tuple[tuple[int, ...], int]:
    """Token ids of ``text`` with the model's mask token, and the index of that mask."""
    ids = lm.encode(fill_mask_token(text, lm.mask_token))
    return ids, mask_position(lm, text, ids)


def mask_position(lm: Any, text: str, ids: Sequence[int]) -> int:
    """The index of the one mask token in ``ids`` (the tokens of query ``text``); error unless exactly one."""
    where = [i for i, t in enumerate(ids) if t == lm.mask_token_id]
    if len(where) != 1:
        raise StimuliError(f"query {text!r} does not give exactly one mask token with model {lm.name!r}")
    return where[0]


def override_token_id(lm: Any, token: str) -> int:
    """Vocabulary id of an explicit token string (e.g. ``"Ġhe"``); error if the model lacks it."""
    vocab = lm.tokenizer.get_vocab()
    if token not in vocab:
        raise StimuliError(f"override token {token!r} is not in the vocabulary of model {lm.name!r}")
    return int(vocab[token])


def word_tokens(lm: Any, text: str, word: str, *, override: str | None = None) -> WordTokens:
    """The tokens ``word`` becomes at the ``[MASK]`` of query ``text`` for model ``lm``."""
    return word_tokens_many(lm, text, [word], overrides={word: override} if override else None)[0]


def word_tokens_many(
    lm: Any, text: str, words: Sequence[str], overrides: dict[str, str] | None = None
) -> list[WordTokens]:
    """:func:`word_tokens` for several candidate words of one query (one batched tokenizer call)."""
    found = word_tokens_batch(lm, {text: list(words)}, overrides)
    return [found[(text, word)] for word in words]


def encode_many(tokenizer: Any, texts: Sequence[str]) -> list[tuple[int, ...]]:
    """Token ids (special tokens included) of each text, equal to ``tokenizer(texts)["input_ids"]``.

    For a fast tokenizer the Rust backend's ``encode_batch`` is called directly, after one
    ordinary call has put the backend in the state transformers uses (no truncation, no
    padding, special tokens recognised): for thousands of short filled queries (e.g. 220
    year options x 44 queries in Bao's Study 4) transformers' per-text conversion of the
    results costs more than the tokenization. The first and last texts are checked against
    the ordinary call; any difference (or a slow tokenizer) uses the ordinary call for all.
    """
    texts = list(texts)
    if not texts:
        return []
    # verbose=False: a text longer than the model accepts is named by the caller (status too_long), not by
    # transformers' own warning, which names no text
    probe = [
        tuple(ids) for ids in tokenizer([texts[0], texts[-1]], add_special_tokens=True, verbose=False)["input_ids"]
    ]
    if len(texts) <= 2:  # the check call already tokenized them all
        return probe[: len(texts)]
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if (
        backend is not None
        and getattr(backend, "truncation", None) is None
        and getattr(backend, "padding", None) is None
    ):
        try:
            fast = [tuple(encoding.ids) for encoding in backend.encode_batch(texts, add_special_tokens=True)]
        except Exception:  # noqa: BLE001 - any failure: use the ordinary call
            fast = None
        if fast is not None and len(fast) == len(texts) and [fast[0], fast[-1]] == probe:
            return fast
    return [tuple(int(i) for i in ids) for ids in tokenizer(texts, add_special_tokens=True, verbose=False)["input_ids"]]


def word_tokens_batch(
    lm: Any, words_of: Mapping[str, Sequence[str]], overrides: dict[str, str] | None = None
) -> dict[tuple[str, str], WordTokens]:
    """:func:`word_tokens` for every ``(query, candidate word)`` of ``words_of`` ({query: words}).

    Two batched tokenizer calls in all (the masked queries, then every filled query, see
    :func:`encode_many`), which for a few hundred queries is several times faster than
    tokenizing query by query.
    """
    overrides = overrides or {}
    texts = list(words_of)
    for text in texts:
        for word in words_of[text]:
            if not isinstance(word, str) or not word.strip():
                raise StimuliError(f"a candidate word of query {text!r} is empty")
    part_of = {text: split_query(text) for text in texts}
    masked_all = encode_many(lm.tokenizer, [prefix + lm.mask_token + suffix for prefix, suffix in part_of.values()])
    fills = [(text, word) for text in texts for word in words_of[text] if word not in overrides]
    encoded = encode_many(lm.tokenizer, [part_of[t][0] + w + part_of[t][1] for t, w in fills])
    filled_of = dict(zip(fills, encoded, strict=True))
    out: dict[tuple[str, str], WordTokens] = {}
    for text, masked in zip(texts, masked_all, strict=True):
        position = mask_position(lm, text, masked)
        for word in words_of[text]:
            if word in overrides:
                out[(text, word)] = WordTokens(
                    word, masked, position, (override_token_id(lm, overrides[word]),), overridden=True
                )
                continue
            out[(text, word)] = _diff(lm, text, word, masked, position, filled_of[(text, word)])
    return out


def _diff(lm: Any, text: str, word: str, masked: tuple[int, ...], position: int, filled: tuple[int, ...]) -> WordTokens:
    # Longest common prefix and suffix; each side keeps at least one token in the middle.
    head = 0
    limit = min(len(masked), len(filled)) - 1
    while head < limit and masked[head] == filled[head]:
        head += 1
    tail = 0
    limit = min(len(masked), len(filled)) - head - 1
    while tail < limit and masked[-1 - tail] == filled[-1 - tail]:
        tail += 1
    middle_masked = masked[head : len(masked) - tail]
    middle_filled = filled[head : len(filled) - tail]
    if middle_masked == (lm.mask_token_id,) and head == position:
        return WordTokens(word, masked, position, middle_filled)
    # The word merged with its neighbours: take the filled tokens that are not shared with the
    # masked sequence, and flag it so the caller can tell the user.
    if not middle_filled:
        raise ModelError(f"cannot locate the tokens of {word!r} in query {text!r} for model {lm.name!r}")
    return WordTokens(word, masked, position, middle_filled, context_changed=True)


def chain_steps(tokens: WordTokens, mask_token_id: int) -> list[tuple[tuple[int, ...], int, int]]:
    """The left-to-right steps that score a multi-token word exactly.

    The single mask is replaced by ``k`` masks (``k`` = number of sub-tokens); step j
    fills sub-tokens ``1..j-1`` and asks for sub-token j at mask j, so that
    ``log P(t_1..t_k) = sum_j log P(t_j | context, t_1..t_(j-1), k - j masks)``.
    Returns ``(input_ids, position, token_id)`` per step.
    """
    ids, pos, sub = tokens.masked_ids, tokens.position, tokens.token_ids
    k = len(sub)
    steps = []
    for j in range(k):
        seq = ids[:pos] + sub[:j] + (mask_token_id,) * (k - j) + ids[pos + 1 :]
        steps.append((seq, pos + j, sub[j]))
    return steps

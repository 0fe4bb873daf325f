"""Which tokens a pseudo-log-likelihood scores, and the masked copies that score them.

Pure Python on a tokenised sentence: no torch. :mod:`assoc_pll.sentences` turns the
masked copies into forward passes through the shared masked-LM engine.

Two masking metrics are supported:

``original`` (Salazar et al., 2020)
    To score token *i*, replace token *i* by the mask token and read the
    log-probability of the original token at position *i*.
``word_l2r`` (Kauf & Ivanova, 2023, "within-word left-to-right")
    As ``original``, but the sub-tokens of the *same word* to the right of *i*
    are masked too, so a word split into pieces (``fire ##fight ##er``) cannot
    be predicted from its own later pieces, which inflates ``original`` PLLs
    of multi-token words.

"Words" are the pre-tokenizer's words as reported by a fast tokenizer's
``word_ids()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assoc import ModelError, OptionError, StimuliError

METRICS = ("original", "word_l2r")
TOKEN_SELECTIONS = ("all", "context", "variant")


@dataclass(frozen=True)
class EncodedSentence:
    """A sentence as the model sees it, with the bookkeeping needed to mask it."""

    text: str
    input_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    word_ids: tuple[int | None, ...]  # None marks special tokens ([CLS], [SEP], <s>, ...)
    offsets: tuple[tuple[int, int], ...]  # character span of each token in ``text``

    @property
    def n_tokens(self) -> int:
        """Number of non-special tokens (the tokens a full PLL sums over)."""
        return sum(1 for w in self.word_ids if w is not None)


def encode_sentence(tokenizer: Any, text: str, max_length: int | None = None) -> EncodedSentence:
    """Tokenise ``text`` with special tokens, offsets and word ids (needs a fast tokenizer).

    Raises :class:`StimuliError` for an empty sentence or one longer than ``max_length``
    tokens (truncating would silently score a different sentence).
    """
    if not isinstance(text, str) or not text.strip():
        raise StimuliError(f"cannot score an empty sentence ({text!r})")
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(
            f"PLL scoring needs a fast (Rust) tokenizer for word ids and character offsets; "
            f"{type(tokenizer).__name__} is a slow tokenizer"
        )
    # verbose=False: the length check below gives the user the one message that matters
    encoding = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True, truncation=False, verbose=False)
    input_ids = tuple(int(i) for i in encoding["input_ids"])
    if max_length is not None and len(input_ids) > max_length:
        shown = text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"
        raise StimuliError(
            f"sentence {shown!r} has {len(input_ids)} tokens (with special tokens), more than the model's "
            f"maximum of {max_length}; shorten it"
        )
    word_ids = tuple(encoding.word_ids())
    if not any(w is not None for w in word_ids):
        raise StimuliError(f"sentence {text!r} has no tokens to score")
    return EncodedSentence(
        text=text,
        input_ids=input_ids,
        tokens=tuple(tokenizer.convert_ids_to_tokens(list(input_ids))),
        word_ids=word_ids,
        offsets=tuple((int(s), int(e)) for s, e in encoding["offset_mapping"]),
    )


def variant_positions(encoded: EncodedSentence, span: tuple[int, int]) -> frozenset[int]:
    """Positions of the tokens that spell the characters ``span = (start, end)``.

    A token belongs to the span when its characters overlap it. Tokens whose own
    characters are only whitespace (e.g. a lone SentencePiece ``▁``) belong to
    the word they start, so they follow that word's tokens.
    """
    start, end = span
    if not (0 <= start < end <= len(encoded.text)):
        raise StimuliError(f"variant span {span} is outside sentence {encoded.text!r}")
    inside: set[int] = set()
    blank: list[int] = []
    for position, (word, (s, e)) in enumerate(zip(encoded.word_ids, encoded.offsets)):
        if word is None:
            continue
        if not encoded.text[s:e].strip():
            blank.append(position)
        elif s < end and e > start:
            inside.add(position)
    words_inside = {encoded.word_ids[p] for p in inside}
    inside.update(p for p in blank if encoded.word_ids[p] in words_inside)
    if not inside:
        raise StimuliError(
            f"no token of sentence {encoded.text!r} covers characters {start}-{end} ({encoded.text[start:end]!r})"
        )
    return frozenset(inside)


def positions_to_score(
    encoded: EncodedSentence, which: str = "all", span: tuple[int, int] | None = None
) -> tuple[int, ...]:
    """The token positions whose log-probabilities a PLL sums.

    ``which``: ``"all"`` (every non-special token), ``"context"`` (all but the
    tokens of ``span``: the P(C|V) of Nangia et al., 2020 and Watson et al., 2023)
    or ``"variant"`` (only the tokens of ``span``).
    """
    if which not in TOKEN_SELECTIONS:
        raise OptionError(f"token selection must be one of {TOKEN_SELECTIONS}, got {which!r}")
    content = [p for p, w in enumerate(encoded.word_ids) if w is not None]
    if which == "all":
        return tuple(content)
    if span is None:
        raise StimuliError(f"scoring {which!r} tokens needs the variant's position in {encoded.text!r}")
    variant = variant_positions(encoded, span)
    if which == "variant":
        return tuple(p for p in content if p in variant)
    chosen = tuple(p for p in content if p not in variant)
    if not chosen:
        raise StimuliError(f"sentence {encoded.text!r} has no context tokens besides the variant")
    return chosen


def masked_copy(
    encoded: EncodedSentence, position: int, mask_token_id: int, metric: str = "original"
) -> tuple[int, ...]:
    """``input_ids`` with the token at ``position`` masked.

    ``input_ids`` with the token at ``position`` masked (and, for ``word_l2r``, the
    later sub-tokens of the same word).
    """
    if metric not in METRICS:
        raise OptionError(f"PLL metric must be one of {METRICS}, got {metric!r}")
    ids = list(encoded.input_ids)
    ids[position] = mask_token_id
    if metric == "word_l2r":
        word = encoded.word_ids[position]
        for later in range(position + 1, len(ids)):
            if encoded.word_ids[later] == word:
                ids[later] = mask_token_id
            elif encoded.word_ids[later] is not None:
                # word ids are contiguous: a different word ends this one
                break
    return tuple(ids)


def masked_copies(
    encoded: EncodedSentence, positions: Sequence[int], mask_token_id: int, metric: str = "original"
) -> list[tuple[int, ...]]:
    """One masked copy per scored position (see :func:`masked_copy`)."""
    return [masked_copy(encoded, p, mask_token_id, metric) for p in positions]

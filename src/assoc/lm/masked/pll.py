r"""Pseudo-log-likelihood (PLL) of sentences under a masked language model: the masked kind's ``sentence``.

    PLL(S) = sum_{i in I} log P(s_i | S with s_i masked)          (Salazar et al., 2020, Eq. 2)

where I is the set of scored token positions: every non-special token (``tokens_scored="all"``),
the context tokens only (``"context"``: P(C|V) = prod_{c_i in C} P(c_i | S \ c_i), Nangia et al.,
2020; Watson et al., 2023, Eq. 2) or the tokens of a span (``"variant"``: a masked LM's
``log P(continuation | context)``, each continuation token masked in turn with the context and the
rest of the continuation visible). Logarithms are natural. Two masking metrics:

``original`` (Salazar et al., 2020)
    To score token *i*, replace token *i* by the mask token and read the log-probability of the
    original token at position *i*.
``word_l2r`` (Kauf & Ivanova, 2023, "within-word left-to-right")
    As ``original``, but the sub-tokens of the *same word* to the right of *i* are masked too, so a
    word split into pieces (``fire ##fight ##er``) cannot be predicted from its own later pieces,
    which inflates ``original`` PLLs of multi-token words. "Words" are the pre-tokenizer's words as
    reported by a fast tokenizer's ``word_ids()``.

Every masked copy is one :class:`assoc.lm.masked.MaskRequest`; the engine batches the copies of
*all* sentences under a token budget, sorted by length, so memory is bounded whatever the sentence
length and padding is small. :func:`pseudo_log_likelihoods` is the one implementation: the ``pll``
scorer, the CrowS-Pairs scorer's ``all_tokens`` metric and the masked kind's ``sentence`` and
``continuation`` requests (:mod:`assoc.lm.masked.kind`) all call it.

References
----------
Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model scoring. ACL 2020.
Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs. EMNLP 2020.
Kauf, C., & Ivanova, A. (2023). A better way to do masked language model scoring. ACL 2023.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assoc.errors import ModelError, OptionError, StimuliError, TooLongError

#: The masking metrics (module docstring).
METRICS = ("original", "word_l2r")
#: Which tokens a PLL sums (module docstring).
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

    Raises :class:`StimuliError` for an empty sentence, :class:`~assoc.errors.TooLongError` (a
    StimuliError) for one longer than ``max_length`` tokens (truncating would silently score a
    different sentence).
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
        raise TooLongError(
            f"sentence {shown!r} has {len(input_ids)} tokens (with special tokens), more than the model's "
            f"maximum of {max_length}; shorten it",
            text=text,
            n_tokens=len(input_ids),
            max_length=max_length,
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


CHUNK = 8192  # masked copies per engine call and per cache pack
CACHE_VERSION = 2  # 2: entries are lists, keyed by assoc.lm.compute.request_key


@dataclass(frozen=True)
class TokenLogProb:
    """The log-probability of one scored token."""

    position: int
    token: str
    log_prob: float


@dataclass(frozen=True)
class SentencePLL:
    """The PLL of one sentence and how it was obtained."""

    sentence: str
    pll: float  # sum of the scored tokens' log-probabilities (natural log)
    n_scored: int  # number of scored tokens
    n_tokens: int  # number of non-special tokens in the sentence
    metric: str
    tokens_scored: str  # "all", "context" or "variant"
    token_log_probs: tuple[TokenLogProb, ...]

    @property
    def mean(self) -> float:
        """PLL per scored token (Salazar et al.'s length normalisation)."""
        return self.pll / self.n_scored


def pseudo_log_likelihoods(
    lm: Any,
    sentences: Sequence[str],
    spans: Sequence[tuple[int, int] | None] | None = None,
    *,
    metric: str = "original",
    tokens_scored: str = "all",
    batch_tokens: int | None = None,
    progress: bool = False,
    cache: Any = None,
    namespace: Any = None,
) -> list[SentencePLL]:
    """PLL of each sentence under the masked LM ``lm`` (a :class:`assoc.lm.MaskedLM`): the module's formula.

    Parameters
    ----------
    sentences:
        The sentences, as plain text.
    spans:
        For ``tokens_scored="context"`` or ``"variant"``: the character span ``(start, end)``
        of the variant in each sentence (the tokens that overlap it are the variant's).
    metric:
        ``"original"`` or ``"word_l2r"`` (the module docstring).
    tokens_scored:
        ``"all"``, ``"context"`` (exclude the variant's tokens: P(C|V)) or ``"variant"``; the
        scorer's option of the same name.
    batch_tokens:
        Token budget of one forward batch (padded length x batch size). ``None``:
        :func:`assoc.lm.batching.default_batch_tokens` of the model's device.
    cache:
        An :class:`assoc.infra.cache.Cache` (or None): every masked copy's log-probability
        is stored as soon as its chunk is computed, so an interrupted run resumes.
    namespace:
        Instead of ``cache``, the :class:`assoc.infra.cache.Namespace` to store them in (the scorer
        passes a work unit's checkpoints, :meth:`assoc.lm.LMScorer.unit_checkpoints`).

    Returns
    -------
    list of SentencePLL
        Per sentence, the PLL (a :func:`math.fsum` of the scored tokens' log-probabilities), the count of
        scored and of all tokens, and each scored token's log-probability.
    """
    from assoc.lm.masked.requests import MaskRequest

    if metric not in METRICS:
        raise OptionError(f"PLL metric must be one of {METRICS}, got {metric!r}")
    if tokens_scored not in TOKEN_SELECTIONS:
        raise OptionError(f"PLL tokens_scored must be one of {TOKEN_SELECTIONS}, got {tokens_scored!r}")
    if spans is None:
        spans = [None] * len(sentences)
    if len(spans) != len(sentences):
        raise StimuliError(f"{len(sentences)} sentences but {len(spans)} variant spans")

    encoded = [encode_sentence(lm.tokenizer, s) for s in sentences]
    for enc in encoded:
        if len(enc.input_ids) > lm.max_length:  # cutting it would score another sentence: name it
            raise lm.too_long(enc.input_ids, enc.text)
    plans: list[tuple[int, ...]] = [positions_to_score(e, tokens_scored, span) for e, span in zip(encoded, spans)]

    # Identical masked copies (the same sentence scored twice) are sent once.
    seen: set[tuple[tuple[int, ...], int, int]] = set()
    requests: list[Any] = []
    keys_per_sentence: list[list[tuple[tuple[int, ...], int, int]]] = []
    for enc, positions in zip(encoded, plans):
        keys = []
        for position, ids in zip(positions, masked_copies(enc, positions, lm.mask_token_id, metric)):
            key = (ids, position, enc.input_ids[position])
            if key not in seen:
                seen.add(key)
                requests.append(MaskRequest(input_ids=ids, position=position, token_ids=(enc.input_ids[position],)))
            keys.append(key)
        keys_per_sentence.append(keys)

    log_probs = _compute(lm, requests, cache, namespace, batch_tokens=batch_tokens, progress=progress)

    results = []
    for enc, positions, keys in zip(encoded, plans, keys_per_sentence):
        per_token = tuple(
            TokenLogProb(position=p, token=enc.tokens[p], log_prob=log_probs[k]) for p, k in zip(positions, keys)
        )
        results.append(
            SentencePLL(
                sentence=enc.text,
                pll=math.fsum(t.log_prob for t in per_token),
                n_scored=len(per_token),
                n_tokens=enc.n_tokens,
                metric=metric,
                tokens_scored=tokens_scored,
                token_log_probs=per_token,
            )
        )
    return results


def _compute(
    lm: Any, requests: list[Any], cache: Any, namespace: Any, *, batch_tokens: int | None, progress: bool
) -> dict[tuple[tuple[int, ...], int, int], float]:
    """Log P(token | masked copy) for each request, cached, keyed by (masked ids, position, token id).

    From ``namespace`` (or ``cache``) when present, else from the engine, in chunks of similar length,
    each stored as soon as it is done (:func:`assoc.lm.compute.token_log_probs`).
    """
    from assoc.lm.compute import model_namespace, token_log_probs

    if namespace is None and cache is not None:
        namespace = model_namespace(cache, lm, "pll-log-prob", CACHE_VERSION)
    return token_log_probs(
        lm,
        requests,
        namespace,
        chunk=CHUNK,
        batch_tokens=batch_tokens,
        progress=progress,
        desc=f"pll {lm.name}",
        unit="token",
    )

r"""Pseudo-log-likelihood (PLL) of sentences under a masked language model.

    PLL(S) = sum_{i in I} log P(s_i | S with s_i masked)          (Salazar et al., 2020, Eq. 2)

where I is the set of scored token positions (every non-special token, or the
context tokens only: P(C|V) = prod_{c_i in C} P(c_i | S \ c_i), Nangia et al., 2020;
Watson et al., 2023, Eq. 2). Logarithms are natural. With ``metric="word_l2r"``
the later sub-tokens of the scored token's word are masked as well (Kauf &
Ivanova, 2023).

Every masked copy is one :class:`assoc.lm.masked.MaskRequest`; the engine batches the
copies of *all* sentences under a token budget, sorted by length, so memory is
bounded whatever the sentence length and padding is small.

References
----------
Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model scoring. ACL 2020.
Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs. EMNLP 2020.
Kauf, C., & Ivanova, A. (2023). A better way to do masked language model scoring. ACL 2023.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assoc import OptionError, StimuliError

from .masking import METRICS, TOKEN_SELECTIONS, encode_sentence, masked_copies, positions_to_score

CHUNK = 8192  # masked copies per engine call and per cache pack
CACHE_VERSION = 2  # 2: entries are lists, keyed by assoc.lm.masked.compute.request_key


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


def score_sentences(
    lm: Any,
    sentences: Sequence[str],
    spans: Sequence[tuple[int, int] | None] | None = None,
    *,
    metric: str = "original",
    tokens_scored: str = "all",
    max_tokens: int | None = None,
    progress: bool = False,
    cache: Any = None,
    namespace: Any = None,
    tokens: str | None = None,
) -> list[SentencePLL]:
    """PLL of each sentence under the masked LM ``lm`` (an :class:`assoc.lm.masked.MaskedLM`).

    Parameters
    ----------
    sentences:
        The sentences, as plain text.
    spans:
        For ``tokens_scored="context"`` or ``"variant"``: the character span ``(start, end)``
        of the variant in each sentence (the tokens that overlap it are the variant's).
    metric:
        ``"original"`` or ``"word_l2r"`` (see :mod:`assoc_pll.masking`).
    tokens_scored:
        ``"all"``, ``"context"`` (exclude the variant's tokens: P(C|V)) or ``"variant"``; the
        scorer's option of the same name.
    max_tokens:
        Token budget of one forward batch (padded length x batch size). ``None``:
        :func:`assoc.lm.masked.options.default_max_tokens` of the model's device.
    cache:
        An :class:`assoc.infra.cache.Cache` (or None): every masked copy's log-probability
        is stored as soon as its chunk is computed, so an interrupted run resumes.
    namespace:
        Instead of ``cache``, the :class:`assoc.infra.cache.Namespace` to store them in (the scorer
        passes a work unit's checkpoints, :meth:`assoc.lm.masked.scorer.MaskedLMScorer.unit_checkpoints`).
    tokens:
        The former name of ``tokens_scored`` (still accepted, with a :class:`DeprecationWarning`).
    """
    from assoc.lm import MaskRequest

    if tokens is not None:
        if tokens_scored != "all":
            raise OptionError("give tokens_scored only (tokens is its former name)")
        warnings.warn("score_sentences(tokens=...) is now tokens_scored=...", DeprecationWarning, stacklevel=2)
        tokens_scored = tokens

    if metric not in METRICS:
        raise OptionError(f"PLL metric must be one of {METRICS}, got {metric!r}")
    if tokens_scored not in TOKEN_SELECTIONS:
        raise OptionError(f"PLL tokens_scored must be one of {TOKEN_SELECTIONS}, got {tokens_scored!r}")
    if spans is None:
        spans = [None] * len(sentences)
    if len(spans) != len(sentences):
        raise StimuliError(f"{len(sentences)} sentences but {len(spans)} variant spans")

    encoded = [encode_sentence(lm.tokenizer, s, lm.max_length) for s in sentences]
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

    log_probs = _compute(lm, requests, cache, namespace, max_tokens=max_tokens, progress=progress)

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
    lm: Any, requests: list[Any], cache: Any, namespace: Any, *, max_tokens: int | None, progress: bool
) -> dict[tuple[tuple[int, ...], int, int], float]:
    """Log P(token | masked copy) for each request, cached, keyed by (masked ids, position, token id).

    From ``namespace`` (or ``cache``) when present, else from the engine, in chunks of similar length,
    each stored as soon as it is done (:func:`assoc.lm.token_log_probs`).
    """
    from assoc.lm import model_namespace, token_log_probs

    if namespace is None and cache is not None:
        namespace = model_namespace(cache, lm, "pll-log-prob", CACHE_VERSION)
    return token_log_probs(
        lm,
        requests,
        namespace,
        chunk=CHUNK,
        max_tokens=max_tokens,
        progress=progress,
        desc=f"pll {lm.name}",
        unit="token",
    )

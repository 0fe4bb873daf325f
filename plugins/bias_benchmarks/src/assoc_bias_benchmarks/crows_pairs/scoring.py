r"""Sentence scores of CrowS-Pairs pairs under a masked LM, through the shared masked-LM engine.

Four metrics (``metric=``):

``nangia2020`` (Nangia et al., 2020, Sec. 3; the authors' ``metric.py``)
    The two sentences' token ids (special tokens included) are aligned with
    :class:`difflib.SequenceMatcher` (the sentence about the disadvantaged group first); the
    "unmodified" tokens U are those in ``equal`` blocks. Each of them is masked, one at a time, and

        score(S) = sum_{u in U'} log P(u | S with u masked)

    where U' is U without its first and its last position (``range(1, N-1)`` in ``metric.py``:
    ``[CLS]``/``<s>`` and ``[SEP]``/``</s>``). Text is lower-cased first for uncased models.
``all_tokens`` (Salazar et al., 2020)
    The pseudo-log-likelihood: every non-special token masked in turn, log-probabilities summed
    (computed by :func:`assoc.lm.pseudo_log_likelihoods`, the ``pll`` scorer's function).
``aul`` (Kaneko & Bollegala, 2022, Eq. 3)
    All Unmasked Likelihood: the sentence unmasked, one forward pass,
    AUL(S) = (1/|S|) sum_{i=1}^{|S|} log P(w_i | S) over the non-special tokens.
``aula`` (Kaneko & Bollegala, 2022, Eq. 4)
    AUL with attention weights: (1/|S|) sum_i a_i log P(w_i | S), a_i the attention token i receives,
    averaged over layers, heads and attending positions (the authors' ``eval.py``).

The masked copies of every pair are sent to the engine together (batched under a token budget,
sorted by length), not one forward pass per masked token as in ``metric.py``.

References
----------
Nangia, N., Vania, C., Bhalerao, R., & Bowman, S. R. (2020). CrowS-Pairs. EMNLP 2020.
Salazar, J., Liang, D., Nguyen, T. Q., & Kirchhoff, K. (2020). Masked language model scoring. ACL 2020.
Kaneko, M., & Bollegala, D. (2022). Unmasking the mask - evaluating social biases in masked language
models. AAAI 2022, 11954-11962.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assoc import OptionError, StimuliError

from .items import CrowsPair

METRICS = ("nangia2020", "all_tokens", "aul", "aula")
LOWERCASE = ("auto", "always", "never")
#: the ``measure`` of each metric's rows
MEASURES = {"nangia2020": "log_prob_shared", "all_tokens": "pll", "aul": "aul", "aula": "aula"}
#: the decimals ``metric.py`` rounds each sentence score to before comparing (``round(score, 3)``)
NANGIA_DECIMALS = 3
CHUNK = 8192  # masked copies per engine call and per checkpoint pack


@dataclass(frozen=True)
class SentenceScore:
    """One sentence's score and how it was obtained."""

    text: str  # the text the model saw (lower-cased when the rule says so)
    score: float
    n_scored: int  # tokens whose log-probabilities make up the score
    n_tokens: int  # tokens of the sentence, special tokens excluded
    token_log_probs: tuple[tuple[int, str, float], ...]  # (position, token, log P) of each scored token


def shared_positions(ids1: Sequence[int], ids2: Sequence[int]) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two sequences share, aligned.

    ``difflib.SequenceMatcher(None, a, b)`` on the ids written as strings (as ``get_span`` in
    ``metric.py``: the order of the sequences matters, the matcher is not symmetric), keeping the
    ``equal`` opcodes; the two lists have equal length and pair the shared tokens.
    """
    matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    template1: list[int] = []
    template2: list[int] = []
    for op, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if op == "equal":
            template1.extend(range(a_start, a_end))
            template2.extend(range(b_start, b_end))
    return template1, template2


def lowercases(lm: Any, rule: str) -> bool:
    """Whether text is lower-cased before tokenisation: ``auto`` lower-cases for uncased tokenizers.

    ``metric.py`` lower-cases for its uncased models (bert-base-uncased, albert-xxlarge-v2) and not for
    roberta-large; ``auto`` decides the same from the tokenizer itself (:meth:`assoc.lm.MaskedLM.is_cased`).
    """
    if rule not in LOWERCASE:
        raise OptionError(f"lowercase must be one of {LOWERCASE}, got {rule!r}")
    return rule == "always" or (rule == "auto" and not lm.is_cased())


def _encode(lm: Any, text: str, pair: str) -> tuple[int, ...]:
    ids = lm.encode(text)
    if len(ids) > lm.max_length:
        raise StimuliError(
            f"pair {pair!r}: sentence {text[:60]!r}... has {len(ids)} tokens, more than model {lm.name!r} accepts "
            f"({lm.max_length})"
        )
    return ids


def score_pairs(
    lm: Any,
    pairs: Sequence[CrowsPair],
    *,
    metric: str = "nangia2020",
    lowercase: str = "auto",
    batch_tokens: int | None = None,
    namespace: Any = None,
    progress: bool = False,
) -> list[tuple[SentenceScore, SentenceScore]]:
    """``(sent_more, sent_less)`` scores of each pair under the masked LM ``lm`` (see the module docstring).

    Parameters
    ----------
    lm:
        A loaded :class:`assoc.lm.MaskedLM`.
    metric:
        One of :data:`METRICS`.
    lowercase:
        ``auto`` (lower-case the text for uncased tokenizers, as ``metric.py``), ``always`` or ``never``.
    batch_tokens:
        The engine's batch budget (None: the device default).
    namespace:
        An :class:`assoc.infra.Namespace` for the log-probabilities (checkpoints), or None.

    Returns
    -------
    list of (SentenceScore, SentenceScore)
        Per pair, the score of ``sent_more`` and of ``sent_less``; every score is rebuilt from its
        ``token_log_probs`` (a sum; AUL/AULA: a mean).
    """
    if metric not in METRICS:
        raise OptionError(f"CrowS-Pairs metric must be one of {METRICS}, got {metric!r}")
    lower = lowercases(lm, lowercase)
    texts: list[tuple[str, str]] = []  # (sent1, sent2) as metric.py orders them
    for pair in pairs:
        sent1, sent2 = pair.sent1_sent2
        texts.append((sent1.lower(), sent2.lower()) if lower else (sent1, sent2))
    if metric == "all_tokens":
        scored = _all_tokens(lm, texts, batch_tokens=batch_tokens, namespace=namespace, progress=progress)
    elif metric == "nangia2020":
        scored = _nangia(lm, pairs, texts, batch_tokens=batch_tokens, namespace=namespace, progress=progress)
    else:
        scored = _unmasked(lm, pairs, texts, attention=metric == "aula", batch_tokens=batch_tokens, namespace=namespace)
    out = []
    for pair, (first, second) in zip(pairs, scored, strict=True):
        # back from (sent1, sent2) to (sent_more, sent_less)
        out.append((first, second) if pair.stereo_antistereo == "stereo" else (second, first))
    return out


def _log_probs(lm: Any, requests: list[Any], namespace: Any, batch_tokens: int | None, progress: bool) -> list[float]:
    from assoc.lm import cached_log_probs

    values = cached_log_probs(
        lm, requests, namespace, chunk=CHUNK, batch_tokens=batch_tokens, progress=progress, desc=f"crows {lm.name}"
    )
    return [v[0] for v in values]


def _nangia(
    lm: Any,
    pairs: Sequence[CrowsPair],
    texts: Sequence[tuple[str, str]],
    *,
    batch_tokens: int | None,
    namespace: Any,
    progress: bool,
) -> list[tuple[SentenceScore, SentenceScore]]:
    from assoc.lm import MaskRequest

    plans = []
    requests: list[Any] = []
    index: dict[tuple[tuple[int, ...], int], int] = {}
    for pair, (sent1, sent2) in zip(pairs, texts):
        ids1, ids2 = _encode(lm, sent1, pair.pair), _encode(lm, sent2, pair.pair)
        template1, template2 = shared_positions(ids1, ids2)
        # metric.py: for i in range(1, N-1): the first and last shared positions are never masked
        chosen = list(zip(template1, template2))[1:-1]
        keys: list[tuple[int, int]] = []
        for p1, p2 in chosen:
            both = []
            for ids, position in ((ids1, p1), (ids2, p2)):
                masked = list(ids)
                masked[position] = lm.mask_token_id
                key = (tuple(masked), position)
                if key not in index:
                    index[key] = len(requests)
                    requests.append(MaskRequest(input_ids=key[0], position=position, token_ids=(ids[position],)))
                both.append(index[key])
            keys.append((both[0], both[1]))
        plans.append((ids1, ids2, chosen, keys))
    values = _log_probs(lm, requests, namespace, batch_tokens, progress)
    out = []
    for (sent1, sent2), (ids1, ids2, chosen, keys) in zip(texts, plans):
        sides = []
        for side, (text, ids) in enumerate(((sent1, ids1), (sent2, ids2))):
            per_token = tuple(
                (positions[side], lm.token_string(ids[positions[side]]), values[k[side]])
                for positions, k in zip(chosen, keys)
            )
            total = 0.0
            for _, _, value in per_token:
                total += value  # metric.py adds the .item() of each token in position order
            sides.append(SentenceScore(text, total, len(per_token), _n_content(lm, ids), per_token))
        out.append((sides[0], sides[1]))
    return out


def _n_content(lm: Any, ids: Sequence[int]) -> int:
    special = set(lm.tokenizer.all_special_ids)
    return sum(1 for i in ids if i not in special)


def _all_tokens(
    lm: Any, texts: Sequence[tuple[str, str]], *, batch_tokens: int | None, namespace: Any, progress: bool
) -> list[tuple[SentenceScore, SentenceScore]]:
    from assoc.lm import pseudo_log_likelihoods

    flat = [t for pair in texts for t in pair]
    results = pseudo_log_likelihoods(
        lm,
        flat,
        metric="original",
        tokens_scored="all",
        batch_tokens=batch_tokens,
        namespace=namespace,
        progress=progress,
    )
    scores = [
        SentenceScore(
            r.sentence,
            r.pll,
            r.n_scored,
            r.n_tokens,
            tuple((t.position, t.token, t.log_prob) for t in r.token_log_probs),
        )
        for r in results
    ]
    return [(scores[2 * i], scores[2 * i + 1]) for i in range(len(texts))]


def _unmasked(
    lm: Any,
    pairs: Sequence[CrowsPair],
    texts: Sequence[tuple[str, str]],
    *,
    attention: bool,
    batch_tokens: int | None,
    namespace: Any,
) -> list[tuple[SentenceScore, SentenceScore]]:
    """AUL / AULA: log P of every token of the unmasked sentence (one forward row per sentence in the engine)."""
    from assoc.lm import MaskRequest

    encoded = [(_encode(lm, t1, p.pair), _encode(lm, t2, p.pair)) for p, (t1, t2) in zip(pairs, texts)]
    requests: list[Any] = []
    for ids1, ids2 in encoded:
        for ids in (ids1, ids2):
            # Kaneko & Bollegala's eval.py: token_log_probs[1:-1], every token but the first and the last
            requests.extend(MaskRequest(input_ids=ids, position=p, token_ids=(ids[p],)) for p in range(1, len(ids) - 1))
    values = _log_probs(lm, requests, namespace, batch_tokens, False)
    weights = _attention_received(lm, [ids for pair in encoded for ids in pair], batch_tokens) if attention else None
    out = []
    k = 0
    for i, ((t1, t2), (ids1, ids2)) in enumerate(zip(texts, encoded)):
        sides = []
        for side, (text, ids) in enumerate(((t1, ids1), (t2, ids2))):
            positions = range(1, len(ids) - 1)
            per_token = tuple((p, lm.token_string(ids[p]), values[k + j]) for j, p in enumerate(positions))
            k += len(positions)
            if weights is not None:
                received = weights[2 * i + side]
                terms = [received[p] * lp for p, _, lp in per_token]
            else:
                terms = [lp for _, _, lp in per_token]
            score = math.fsum(terms) / len(terms) if terms else float("nan")
            sides.append(SentenceScore(text, score, len(per_token), _n_content(lm, ids), per_token))
        out.append((sides[0], sides[1]))
    return out


def _attention_received(lm: Any, sequences: Sequence[tuple[int, ...]], batch_tokens: int | None) -> list[list[float]]:
    """Per sequence, the attention each position receives, averaged over layers, heads and attending positions."""
    return [list(row) for row in lm.attention_received(list(sequences), batch_tokens=batch_tokens)]

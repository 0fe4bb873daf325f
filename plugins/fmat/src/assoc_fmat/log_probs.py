"""``log P(candidate | query)`` for every [MASK] candidate of every filled query, for one model.

The work per model: derive each candidate's token(s) at the mask from the tokenizer
(:mod:`assoc.lm.masked.words`), handle out-of-vocabulary [MASK] candidates (NaN, FMAT's temporary
tokens, or exact multi-token chains), collect one engine request per unique token
sequence, reuse cached results, compute the rest in chunks (each chunk is written to
the cache atomically, so an interrupted run resumes) and assemble table rows.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from assoc import MaskItem, OutOfVocabularyWarning, Stimuli
from assoc.infra import Namespace
from assoc.lm import WordTokens, chain_steps, settle_statuses, too_long_reason, without_value, word_tokens_batch

OOV_MODES = ("nan", "add_tokens", "multi_token")
CACHE_VERSION = 1
CHUNK = 512  # sequences per engine call and per cache pack


#: One value to compute: a filled query, a mask group and one candidate word (shared with pll).
Item = MaskItem


def items_of(stimuli: Stimuli) -> list[MaskItem]:
    """Every (filled query, mask group, option) of the stimuli, in design order."""
    return stimuli.mask_items()


def same_model(key: str, model: str) -> bool:
    """Whether an override key names ``model``.

    Whether ``key`` (of a ``{model: {word: token}}`` override) names ``model``: the same text, or the
    same local directory however written (``./m``, ``m/``, an absolute path).
    """
    import os

    if str(key) == str(model):
        return True
    a, b = (os.path.realpath(os.path.expanduser(str(x))) for x in (key, model))
    return a == b and os.path.isdir(a)


def check_overrides(token_overrides: Mapping[str, Any] | None, models: Sequence[str], words: set[str]) -> None:
    """Refuse token overrides that would be silently unused.

    Refuse overrides that would be silently unused: a model key that is not one of ``models``
    (e.g. misspelt, or a different model) or a word that is no [MASK] candidate of the stimuli.
    """
    from assoc import OptionError

    for key, value in (token_overrides or {}).items():
        if isinstance(value, Mapping):
            if not any(same_model(key, m) for m in models):
                raise OptionError(
                    f"option 'token_overrides': {key!r} is not one of the models being scored "
                    f"({', '.join(map(repr, models))}); write {{model: {{word: token}}}} with the "
                    "model exactly as given to models=/--model, or {word: token} for every model"
                )
            unknown = [str(w) for w in value if str(w) not in words]
        else:
            unknown = [str(key)] if str(key) not in words else []
        if unknown:
            raise OptionError(
                f"option 'token_overrides': {', '.join(map(repr, unknown))} is not a [MASK] candidate "
                "of the stimuli (overrides are keyed by the candidate word as written, case included)"
            )


def overrides_for(model: str, token_overrides: Mapping[str, Any] | None) -> dict[str, str]:
    """Explicit candidate -> token overrides for ``model``.

    Explicit candidate -> token overrides for ``model``: global ``{word: token}`` entries plus
    ``{model: {word: token}}`` entries for this model.
    """
    out: dict[str, str] = {}
    for key, value in (token_overrides or {}).items():
        if isinstance(value, Mapping):
            if same_model(key, model):
                out.update({str(w): str(t) for w, t in value.items()})
        else:
            out[str(key)] = str(value)
    return out


def score_model(
    lm: Any,
    items: Sequence[Item],
    *,
    oov: str = "nan",
    weight_decay: float = 1.0,
    token_overrides: Mapping[str, Any] | None = None,
    batch_tokens: int | None = None,
    cache: Any = None,
    progress: bool = False,
    namespace: Namespace | None = None,
    warn: bool = True,
) -> list[dict[str, Any]]:
    """Table rows (dicts) with ``value = log P(option | filled query)`` for model ``lm``.

    ``log P`` is the natural-log softmax over the model's whole output vocabulary at
    the mask position (Bao, 2024, Eq. 1 uses these log probabilities for LPRs).
    ``cache`` is an :class:`assoc.infra.cache.Cache` or None. ``batch_tokens`` is the
    engine's batch budget; None = the device default (:func:`assoc.lm.default_batch_tokens`).
    ``warn=False`` leaves the out-of-vocabulary warnings to the caller (:func:`warn_about_rows`
    builds them from the rows, as the fmat scorer does once per model for all its work units);
    the rows then carry a ``context_changed`` key for it.
    """
    if oov not in OOV_MODES:
        raise ValueError(f"oov must be one of {OOV_MODES}")
    overrides = overrides_for(lm.name, token_overrides)
    options_of: dict[str, list[str]] = {}
    for item in items:
        opts = options_of.setdefault(item.filling.text, [])
        if item.option not in opts:
            opts.append(item.option)
    word_tokens: dict[tuple[str, str], WordTokens] = word_tokens_batch(lm, options_of, overrides)
    if warn:
        warn_about_tokens(
            lm.name,
            {wt.word for wt in word_tokens.values() if not wt.in_vocab},
            {wt.word for wt in word_tokens.values() if wt.context_changed},
            oov,
        )

    added: dict[tuple[str, tuple[int, ...]], int] = {}
    if oov == "add_tokens":
        pairs = sorted({(wt.word, wt.token_ids) for wt in word_tokens.values() if not wt.in_vocab})
        added = dict(zip(pairs, lm.add_temporary_tokens(pairs, weight_decay), strict=True))

    # A filled query longer than the model accepts is never cut (that would score another query): its rows
    # are kept without a value, status "too_long", and nothing of it is computed.
    length = {
        key: max([len(wt.masked_ids), *(len(seq) for seq, _, _ in _steps(wt, oov, added, lm.mask_token_id))])
        for key, wt in word_tokens.items()
    }
    wanted: dict[tuple[tuple[int, ...], int], set[int]] = {}
    for key, wt in word_tokens.items():
        if length[key] > lm.max_length:
            continue
        for seq, pos, tok in _steps(wt, oov, added, lm.mask_token_id):
            wanted.setdefault((seq, pos), set()).add(tok)
    if namespace is None and cache is not None:
        namespace = fmat_namespace(cache, lm, added, weight_decay)
    log_prob = _compute(lm, wanted, namespace, batch_tokens=batch_tokens, progress=progress)

    rows = []
    for item in items:
        key = (item.filling.text, item.option)
        wt = word_tokens[key]
        steps = _steps(wt, oov, added, lm.mask_token_id)
        status = "too_long" if length[key] > lm.max_length else "ok" if steps else "oov"
        value = math.fsum(log_prob[(seq, pos, tok)] for seq, pos, tok in steps) if status == "ok" else math.nan
        row = {
            "model": lm.name,
            "context": item.filling.query,
            **item.filling.roles(item.mask_group, item.option),
            "design": item.filling.design,
            "sentence": item.filling.text,
            "token": " ".join(lm.token_string(t) for t in wt.token_ids),
            "oov": not wt.in_vocab,
            "n_tokens": len(wt.token_ids),
            "measure": "log_prob",
            "value": value,
            "status": status,
        }
        if status == "too_long":
            reason = too_long_reason(item.filling.text, length[key], lm.name, lm.max_length)
            row = without_value(row, status, f"query {reason}")
        if not warn:
            row["context_changed"] = wt.context_changed
        rows.append(row)
    if warn:  # no scorer's merge will: say it here, once
        rows, _ = settle_statuses("fmat", rows, quiet=("oov",))
    return rows


def _steps(
    wt: WordTokens, oov: str, added: Mapping[tuple[str, tuple[int, ...]], int], mask_token_id: int
) -> list[tuple[tuple[int, ...], int, int]]:
    if wt.in_vocab:
        return [(wt.masked_ids, wt.position, wt.token_ids[0])]
    if oov == "add_tokens":
        return [(wt.masked_ids, wt.position, added[(wt.word, wt.token_ids)])]
    if oov == "multi_token":
        return chain_steps(wt, mask_token_id)
    return []


def fmat_namespace(
    cache: Any, lm: Any, added: Mapping[tuple[str, tuple[int, ...]], int], weight_decay: float
) -> Namespace:
    """The cache namespace of ``lm``'s fmat log probabilities (the temporary tokens change the softmax)."""
    from assoc.lm import model_namespace

    return model_namespace(
        cache, lm, "fmat-log-prob", CACHE_VERSION, added=[[w, list(s), weight_decay] for (w, s) in sorted(added)]
    )


def _compute(
    lm: Any,
    wanted: Mapping[tuple[tuple[int, ...], int], set[int]],
    namespace: Namespace | None,
    *,
    batch_tokens: int | None,
    progress: bool,
) -> dict[tuple[tuple[int, ...], int, int], float]:
    from assoc.lm import MaskRequest, token_log_probs

    requests = [MaskRequest(seq, pos, tuple(sorted(toks))) for (seq, pos), toks in wanted.items()]
    return token_log_probs(
        lm,
        requests,
        namespace,
        chunk=CHUNK,
        batch_tokens=batch_tokens,
        progress=progress,
        desc=f"fmat {lm.name}",
        unit="seq",
    )


def warn_about_tokens(model: str, missing: Iterable[str], merged: Iterable[str], oov: str) -> None:
    """Warn about candidate words of ``model`` that tokenize badly, saying how ``oov`` handled them.

    ``missing``: words that are not single tokens of the vocabulary; ``merged``: words that merge
    with their neighbours when filled in.
    """
    missing, merged = sorted(set(missing)), sorted(set(merged))
    if missing:
        handled = {
            "nan": "their values are NaN (choose oov='add_tokens' or oov='multi_token' to score them)",
            "add_tokens": "they were added as temporary tokens (FMAT add.tokens; see docs/fmat.md)",
            "multi_token": "they were scored exactly as token sequences (oov='multi_token')",
        }[oov]
        warnings.warn(
            f"model {model!r}: {len(missing)} candidate word(s) are not single tokens of its "
            f"vocabulary: {', '.join(missing)}; {handled}",
            OutOfVocabularyWarning,
            stacklevel=3,
        )
    if merged:
        warnings.warn(
            f"model {model!r}: candidate word(s) {', '.join(merged)} change the tokens next to the mask "
            "when filled in (e.g. no space before or after [MASK]); check these queries",
            OutOfVocabularyWarning,
            stacklevel=3,
        )

"""Token-budget batching, shared by every engine: how many rows go into one forward pass.

A forward batch's cost and memory are about its padded size, rows x longest row. Every engine
(:mod:`assoc.lm.masked`, :mod:`assoc.lm.causal`) sorts its rows by length and cuts them with
:func:`plan_batches` so that no batch exceeds the budget (``batch_tokens``; default
:func:`default_batch_tokens` of the device) and the padding wasted is least. :func:`max_length` is
the longest sequence a model accepts, from its config and tokenizer. Pure Python: no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Default token budget of one forward batch (rows x longest row). On a CPU, batches of about
# 1k tokens stay in cache and ran 1.2-1.5x faster than 4k-token batches (bert-base, 2 cores);
# GPUs want large batches. Memory is bounded by the budget either way.
CPU_BUDGET = 1024
GPU_BUDGET = 4096

# Fixed cost of one forward call (Python, kernel launches, small-matrix inefficiency) in
# padded-token units: the batch planner accepts this much padding to save one call.
BATCH_OVERHEAD_TOKENS = 96


def default_batch_tokens(device: str) -> int:
    """The default batch budget for ``device``: :data:`CPU_BUDGET` on a CPU, :data:`GPU_BUDGET` otherwise."""
    return CPU_BUDGET if str(device).startswith("cpu") else GPU_BUDGET


def check_budget(batch_tokens: int | None, device: str) -> int:
    """``batch_tokens``, or the device's default when it is ``None``; ``ValueError`` below 1."""
    budget = default_batch_tokens(device) if batch_tokens is None else int(batch_tokens)
    if budget < 1:
        raise ValueError("batch_tokens must be >= 1")
    return budget


def renamed_budget(batch_tokens: int | None, max_tokens: int | None) -> int | None:
    """``batch_tokens``, or the value given under its former name ``max_tokens`` (with a DeprecationWarning)."""
    if max_tokens is None:
        return batch_tokens
    import warnings

    if batch_tokens is not None:
        raise ValueError("give batch_tokens only (max_tokens is its former name)")
    warnings.warn("log_probs(max_tokens=...) is now log_probs(batch_tokens=...)", DeprecationWarning, stacklevel=3)
    return max_tokens


def plan_batches(
    lengths: Sequence[int], batch_tokens: int, overhead: int = BATCH_OVERHEAD_TOKENS
) -> list[tuple[int, int]]:
    """Split rows of non-increasing ``lengths`` into ``[start, stop)`` batches.

    Each batch's padded size (rows x its first, longest row) stays at or under
    ``batch_tokens`` (a single longer row runs alone). Among such splits, the one with the
    least padded tokens plus ``overhead`` per batch is chosen (dynamic programming), so
    rows of equal length are not split across batches needlessly and short rows are not
    padded to a long neighbour's length. Padding is pure waste on a CPU, where a
    forward pass costs about its number of padded tokens.
    """
    n = len(lengths)
    inf = float("inf")
    cost = [0.0] + [inf] * n
    cut = [0] * (n + 1)
    for stop in range(1, n + 1):
        # the batch [start, stop) is padded to lengths[start]; grows as start moves left
        start = stop - 1
        while start >= 0:
            padded = (stop - start) * lengths[start]
            if padded > batch_tokens and stop - start > 1:
                break
            total = cost[start] + padded + overhead
            if total <= cost[stop]:  # ties: the bigger batch
                cost[stop], cut[stop] = total, start
            start -= 1
    batches = []
    stop = n
    while stop > 0:
        batches.append((cut[stop], stop))
        stop = cut[stop]
    return batches[::-1]


# Families whose position ids start after the padding index, so the last
# (padding_idx + 1) position embeddings cannot be used.
_OFFSET_POSITION_TYPES = {
    "roberta",
    "xlm-roberta",
    "camembert",
    "longformer",
    "data2vec-text",
    "xmod",
    "roberta-prelayernorm",
    "xlm-roberta-xl",
    "mpnet",
    "ibert",
    "luke",
    "markuplm",
}


def max_length(tokenizer: Any, config: Any) -> int:
    """The longest sequence (special tokens included) a model accepts: its positions and its tokenizer's limit."""
    limits = []
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        if getattr(config, "model_type", "") in _OFFSET_POSITION_TYPES and config.pad_token_id is not None:
            positions -= int(config.pad_token_id) + 1
        limits.append(positions)
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_limit, int) and 0 < tok_limit < 1_000_000:
        limits.append(tok_limit)
    return min(limits) if limits else 512

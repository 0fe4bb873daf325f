"""What every runtime of the masked-LM engine shares per batch: the padded inputs and the float64 log-softmax.

The PyTorch path (:mod:`assoc.lm.masked.engine`) and the ONNX Runtime backends (:mod:`assoc.lm.masked.onnx`)
build their inputs and read their outputs here, so both compute the same thing from the same arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def padded_batch(seqs: Sequence[Sequence[int]], pad_token_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(input ids, attention mask) of ``seqs`` right-padded to the longest, as int64 arrays.

    Padding on the right keeps every real token, and so every mask position, at its index.
    """
    longest = max(len(s) for s in seqs)
    ids = np.full((len(seqs), longest), pad_token_id, dtype=np.int64)
    attention = np.zeros((len(seqs), longest), dtype=np.int64)
    for b, seq in enumerate(seqs):
        ids[b, : len(seq)] = seq
        attention[b, : len(seq)] = 1
    return ids, attention


def log_softmax64(logits: Any) -> np.ndarray:
    """``log softmax(logits)`` over the last axis in float64, as a NumPy array (logits: a tensor or an array).

    The logits are cast to float64 before the softmax, so the normalisation over a 30k-50k-class
    vocabulary adds no float32 rounding of its own: ``x - m - log(sum(exp(x - m)))`` with ``m`` the
    row's maximum. A NumPy array (ONNX Runtime's output) is computed with NumPy, so a process
    running an export without torch (:mod:`assoc.lm.masked.torch_free`) computes it the same way as one
    with torch; a torch tensor with ``torch.log_softmax`` on its device. The two agree to float64
    rounding (about 1e-15).
    """
    if isinstance(logits, np.ndarray):
        values = logits.astype(np.float64)
        shifted = values - values.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    import torch

    return torch.log_softmax(logits.to(torch.float64), dim=-1).cpu().numpy()

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
    vocabulary adds no float32 rounding of its own.
    """
    import torch

    tensor = logits if isinstance(logits, torch.Tensor) else torch.from_numpy(np.asarray(logits))
    return torch.log_softmax(tensor.to(torch.float64), dim=-1).cpu().numpy()

"""A stand-in encoder for running peers' code on given encodings: each text is one token whose hidden state is its row.

fairlms's SEAT and CEAT take a Hugging Face tokenizer and model; these two give them the synthetic
encodings of the frozen references instead, so their statistics run on exactly the vectors assoc's do.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


class TableTokenizer:
    """A tokenizer that maps each known text to one token: its row in the table of encodings."""

    def __init__(self, texts: list[str]):
        self.index = {text: i for i, text in enumerate(texts)}

    def __call__(self, text, return_tensors=None, truncation=True, padding=True):
        import torch

        texts = [text] if isinstance(text, str) else list(text)
        ids = torch.tensor([[self.index[t]] for t in texts])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


class TableModel:
    """A model whose last hidden state at the one token is the text's encoding (float64)."""

    def __init__(self, table: np.ndarray):
        import torch

        self.table = torch.tensor(table, dtype=torch.float64)

    def __call__(self, input_ids, attention_mask):
        return SimpleNamespace(last_hidden_state=self.table[input_ids])

"""The unit of work of the masked-LM engine: one position of one token sequence."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MaskRequest:
    """Ask for ``log P(token | input_ids)`` at one position of one sequence.

    ``input_ids`` is the full sequence including special tokens, with the mask
    token id(s) already in place; ``position`` is the index whose prediction is
    read; ``token_ids`` are the vocabulary ids whose log-probabilities are
    returned (``None`` = the whole vocabulary).
    """

    input_ids: tuple[int, ...]
    position: int
    token_ids: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        # Tuples keep requests hashable, so equal sequences can share one forward row.
        if not isinstance(self.input_ids, tuple):
            object.__setattr__(self, "input_ids", tuple(int(i) for i in self.input_ids))
        if self.token_ids is not None and not isinstance(self.token_ids, tuple):
            object.__setattr__(self, "token_ids", tuple(int(i) for i in self.token_ids))
        if not self.input_ids:
            raise ValueError("MaskRequest.input_ids is empty")
        if not 0 <= self.position < len(self.input_ids):
            raise ValueError(
                f"MaskRequest.position {self.position} is outside the sequence of length {len(self.input_ids)}"
            )

"""The unit of work of the causal-LM engine: a continuation scored after a context."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CausalRequest:
    """Ask for ``log P(continuation[j] | context + continuation[:j])`` for every j.

    ``context`` holds every token the continuation is conditioned on, special tokens included
    (a BOS token, when the policy adds one, is its first token); it is never empty, because a
    causal LM has no distribution for a first token without something before it. The
    properties :attr:`input_ids`, :attr:`position` and :attr:`token_ids` describe the request
    the way :func:`assoc.lm.compute.cached_log_probs` keys and sorts requests, so that one
    cache -> chunk -> compute loop serves the masked and the causal engine.
    """

    context: tuple[int, ...]
    continuation: tuple[int, ...]

    def __post_init__(self) -> None:
        # Tuples keep requests hashable: equal contexts share one prefix pass.
        if not isinstance(self.context, tuple):
            object.__setattr__(self, "context", tuple(int(i) for i in self.context))
        if not isinstance(self.continuation, tuple):
            object.__setattr__(self, "continuation", tuple(int(i) for i in self.continuation))
        if not self.context:
            raise ValueError("CausalRequest.context is empty: a causal LM scores a token after at least one token")

    @property
    def input_ids(self) -> tuple[int, ...]:
        """The whole sequence, context then continuation."""
        return self.context + self.continuation

    @property
    def position(self) -> int:
        """Where the continuation starts in :attr:`input_ids`."""
        return len(self.context)

    @property
    def token_ids(self) -> tuple[int, ...]:
        """The scored tokens: the continuation (one log probability each)."""
        return self.continuation

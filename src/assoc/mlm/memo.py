"""Facts about model files remembered across processes: weight fingerprints and engine checks.

Hashing a bert-base model's 440 MB of weights, or checking numerically that the engine's
fast paths (packed encoder, oneDNN) reproduce the model's own forward pass, gives the
same answer every time for the same files and library versions. Each answer is stored as a small JSON file under
``<cache root>/memo/<kind>/`` (:meth:`assoc.infra.cache.Cache.remember`), keyed by everything it
depends on: for local files their size, modification time, change time and inode, so a
rewritten file is never matched. The memo lives in the cache of the run that computes the
answer: a scorer's ``cache_dir`` (nothing on disk with ``cache=False``); direct library
calls use the default cache root. The memo is an optimisation only: a memo that cannot be
read or written is ignored, and the answer is computed again.
"""

from __future__ import annotations

from typing import Any

from assoc.infra.cache import Cache


def recall(kind: str, key: Any, cache: Cache | None = None) -> Any:
    """The value remembered for ``key`` (JSON-serialisable) in ``cache`` (None: the default root), or None."""
    return (cache if cache is not None else Cache()).recall(kind, key)


def remember(kind: str, key: Any, value: Any, cache: Cache | None = None) -> None:
    """Store ``value`` for ``key`` in ``cache`` (None: the default root); skipped when it cannot be written."""
    (cache if cache is not None else Cache()).remember(kind, key, value)

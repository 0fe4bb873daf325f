"""Facts about model files remembered across processes: weight fingerprints and engine checks.

Hashing a bert-base model's 440 MB of weights, or checking numerically that the engine's
fast paths (packed encoder, oneDNN) reproduce the model's own forward pass, gives the
same answer every time for the same files and library versions. Each answer is stored as a small JSON file under
``<cache root>/memo/<kind>/`` (the result cache's root, :func:`assoc.infra.cache.default_root`),
keyed by everything it depends on: for local files their size, modification time, change
time and inode, so a rewritten file is never matched. The memo is an optimisation only:
a memo that cannot be read or written is ignored, and the answer is computed again.
"""

from __future__ import annotations

import json
from typing import Any

from assoc.infra.cache import default_root, digest
from assoc.infra.io import atomic_write

MEMO_VERSION = 1


def recall(kind: str, key: Any) -> Any:
    """The value remembered for ``key`` (JSON-serialisable), or None."""
    path = default_root() / "memo" / kind / f"{digest([MEMO_VERSION, key])[:40]}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != json.loads(json.dumps(key)):
        return None
    return record.get("value")


def remember(kind: str, key: Any, value: Any) -> None:
    """Store ``value`` for ``key`` atomically (silently skipped when the cache root is not writable)."""
    path = default_root() / "memo" / kind / f"{digest([MEMO_VERSION, key])[:40]}.json"
    try:
        with atomic_write(path, "w", encoding="utf-8") as handle:
            json.dump({"key": key, "value": value}, handle, ensure_ascii=False)
    except OSError:
        pass

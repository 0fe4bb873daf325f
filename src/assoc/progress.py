"""Progress bars for long runs: shown on a terminal, silent when output is piped."""

from __future__ import annotations

import sys
from typing import Any


def default_enabled() -> bool:
    """Progress bars are on only when standard error is an interactive terminal."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def bar(iterable: Any = None, *, total: int | None = None, desc: str | None = None,
        enabled: bool | None = None, unit: str = "it", leave: bool = False) -> Any:
    """Return a tqdm progress bar writing to standard error.

    ``enabled=None`` means "on when stderr is a terminal". A disabled bar still
    supports ``update``/``close``/iteration, so callers never branch on it.
    """
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = default_enabled()
    return tqdm(iterable, total=total, desc=desc, disable=not enabled, unit=unit,
                leave=leave, file=sys.stderr, dynamic_ncols=True)

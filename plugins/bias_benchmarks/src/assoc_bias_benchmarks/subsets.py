"""The seeded subsets every benchmark scorer offers: ``limit`` (the first N items of each group) or ``sample``.

``sample`` draws N items per group without replacement, seeded by ``sample_seed``, and keeps the file order of
the drawn items (:meth:`assoc.ItemStimuli.subset`), so a subset is the same on every machine and its items
appear as in the full run; a group with fewer items keeps them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assoc import Option, OptionError, non_negative, positive

#: The options of a benchmark scorer's subset, declared after its own.
SUBSET_OPTIONS: tuple[Option, ...] = (
    Option(
        "limit", int, None, "the first N items of each group (BBQ's category, a bias type; none: all)", check=positive
    ),
    Option("sample", int, None, "N items drawn per group (seeded by sample_seed; none: all)", check=positive),
    Option("sample_seed", int, 0, "seed of the draw of sample", check=non_negative),
)


def check_subset(params: Mapping[str, Any], scorer: str) -> None:
    """Refuse ``limit`` and ``sample`` together, in one line."""
    if params.get("limit") is not None and params.get("sample") is not None:
        raise OptionError(f"scorer {scorer!r}: give limit or sample, not both")


def subset_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :meth:`assoc.ItemStimuli.subset` that ``params`` ask for."""
    return {"limit": params.get("limit"), "sample": params.get("sample"), "seed": params.get("sample_seed", 0)}

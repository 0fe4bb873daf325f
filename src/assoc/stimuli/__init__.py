"""Stimuli: what to measure (queries, mask, target and attribute groups), validated on construction.

* `assoc.stimuli.design`: [`Design`][assoc.Design] (queries with one ``[MASK]``, mask/target/attribute
  groups), [`Filling`][assoc.Filling], `MaskItem`, `fill_mask`, `split_at_mask`.
* `assoc.stimuli.sets`: [`Stimuli`][assoc.Stimuli] (designs bound together, loaded from a file, a dict
  or a bundled name).
* `assoc.stimuli.items`: benchmark items, `ChoiceItem` (an item as written, with its options) and
  `ItemStimuli` (a benchmark's items as stimuli, with seeded subsets); `require_items`.

This package re-exports their public names (``from assoc.stimuli import Design, Stimuli``).
"""

from __future__ import annotations

from assoc.stimuli.design import (
    ATTRIB_SLOT,
    MASK,
    MAX_RANGE_WORDS,
    TARGET_SLOT,
    Design,
    Filling,
    Groups,
    MaskItem,
    fill_mask,
    split_at_mask,
)
from assoc.stimuli.items import ChoiceItem, ItemStimuli, require_items
from assoc.stimuli.sets import BundleResolver, Stimuli, set_bundle_resolver

__all__ = [
    "ATTRIB_SLOT",
    "MASK",
    "MAX_RANGE_WORDS",
    "TARGET_SLOT",
    "BundleResolver",
    "ChoiceItem",
    "Design",
    "Filling",
    "Groups",
    "ItemStimuli",
    "MaskItem",
    "Stimuli",
    "fill_mask",
    "require_items",
    "set_bundle_resolver",
    "split_at_mask",
]

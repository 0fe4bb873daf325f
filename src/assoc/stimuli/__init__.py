"""Stimuli: what to measure (queries, mask, target and attribute groups), validated on construction.

The model lives in `assoc.stimuli.model`; this package re-exports its public names, so
``from assoc.stimuli import Design, Stimuli`` keeps working.
"""

from __future__ import annotations

from assoc.stimuli.model import (
    ATTRIB_SLOT,
    MASK,
    MAX_RANGE_WORDS,
    TARGET_SLOT,
    BundleResolver,
    Design,
    Filling,
    Groups,
    MaskItem,
    Stimuli,
    fill_mask,
    set_bundle_resolver,
    split_at_mask,
)

__all__ = [
    "ATTRIB_SLOT",
    "MASK",
    "MAX_RANGE_WORDS",
    "TARGET_SLOT",
    "BundleResolver",
    "Design",
    "Filling",
    "Groups",
    "MaskItem",
    "Stimuli",
    "fill_mask",
    "set_bundle_resolver",
    "split_at_mask",
]

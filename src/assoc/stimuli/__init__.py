"""Stimuli: what to measure (queries, mask, target and attribute groups), validated on construction.

* `assoc.stimuli.design`: [`Design`][assoc.Design] (queries with one ``[MASK]``, mask/target/attribute
  groups), [`Filling`][assoc.Filling], `MaskItem`, `fill_mask`, `split_at_mask`.
* `assoc.stimuli.sets`: [`Stimuli`][assoc.Stimuli] (designs bound together, loaded from a file, a dict
  or a bundled name).
* `assoc.stimuli.items`: benchmark items, `ChoiceItem` (an item as written, with its options) and
  `ItemStimuli` (a benchmark's items as stimuli, with seeded subsets); `require_items`.
* `assoc.stimuli.seat`: May et al.'s SEAT test files read from the user's copy (`load_seat_tests`).

This package re-exports their public names (``from assoc.stimuli import Design, Stimuli``).
"""

from __future__ import annotations

from assoc.infra.importhooks import public_face as _public_face
from assoc.stimuli.design import ATTRIB_SLOT as ATTRIB_SLOT
from assoc.stimuli.design import MASK as MASK
from assoc.stimuli.design import MAX_RANGE_WORDS as MAX_RANGE_WORDS
from assoc.stimuli.design import TARGET_SLOT as TARGET_SLOT
from assoc.stimuli.design import Design as Design
from assoc.stimuli.design import Filling as Filling
from assoc.stimuli.design import Groups as Groups
from assoc.stimuli.design import MaskItem as MaskItem
from assoc.stimuli.design import fill_mask as fill_mask
from assoc.stimuli.design import split_at_mask as split_at_mask
from assoc.stimuli.items import ChoiceItem as ChoiceItem
from assoc.stimuli.items import ItemStimuli as ItemStimuli
from assoc.stimuli.items import require_items as require_items
from assoc.stimuli.seat import load_seat_tests as load_seat_tests
from assoc.stimuli.sets import BundleResolver as BundleResolver
from assoc.stimuli.sets import Stimuli as Stimuli
from assoc.stimuli.sets import set_bundle_resolver as set_bundle_resolver

__getattr__, __dir__ = _public_face(globals())

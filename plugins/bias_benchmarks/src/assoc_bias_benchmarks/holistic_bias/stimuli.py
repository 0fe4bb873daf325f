"""HolisticBias as assoc stimuli: the generated sentences as benchmark items, made when read.

``holistic_bias`` is the Likelihood Bias input (the 549,120 sentences the authors'
``run_bias_calculation.py`` scores) and ``holistic_bias_all`` every sentence of the generator (566,625),
both from the bundled dataset v1.1; ``holistic_bias:<folder>`` and ``holistic_bias_all:<folder>`` read a
user's copy (a folder holding the four JSON files, or a ResponsibleNLP checkout).

Each sentence is a :class:`assoc.ChoiceItem` without options: ``id`` and ``line`` are its number in the
generator's full order (1-based: the row of the authors' ``sentences.csv``), ``group`` its axis,
``fields`` the authors' record (``text``, the noun phrase's eleven fields, ``template``,
``first_turn_only``, ``must_be_noun``). :class:`HolisticBiasStimuli` offers what
:class:`assoc.ItemStimuli` offers (``items``, ``groups``, ``select``, ``subset``, ``fingerprint``) without
holding the items: ``items[k]`` is made from the noun phrase and template it needs, so memory stays a
few megabytes whatever the selection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from assoc import ChoiceItem, Design, Stimuli, StimuliError, UnknownNameError

from .sentences import (
    ALL,
    CITATION,
    LICENCE,
    LIKELIHOOD_BIAS,
    SOURCE,
    HolisticBiasDataset,
    Sentence,
    SentenceIndex,
    bundled_folder,
    dataset_folder,
)

if TYPE_CHECKING:
    import numpy as np


def item_of(sentence: Sentence, source: str) -> ChoiceItem:
    """The benchmark item of one sentence (see the module docstring)."""
    return ChoiceItem(
        id=str(sentence.number),
        group=sentence.noun_phrase.axis,
        fields=sentence.record(),
        source=source,
        line=sentence.number,
    )


class HolisticBiasItems(Sequence[ChoiceItem]):
    """The items at ``positions`` of a :class:`SentenceIndex` (all of them when ``positions`` is ``None``)."""

    def __init__(self, index: SentenceIndex, positions: np.ndarray | None, source: str):
        self.sentence_index = index
        self.positions = positions
        self.source = source

    def __len__(self) -> int:
        return len(self.sentence_index) if self.positions is None else int(self.positions.size)

    @overload
    def __getitem__(self, k: int) -> ChoiceItem: ...

    @overload
    def __getitem__(self, k: slice) -> list[ChoiceItem]: ...

    def __getitem__(self, k: int | slice) -> ChoiceItem | list[ChoiceItem]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        position = k if self.positions is None else int(self.positions[k])
        return item_of(self.sentence_index[position], self.source)

    def __iter__(self) -> Iterator[ChoiceItem]:
        for k in range(len(self)):
            yield self[k]

    def sentences(self) -> Iterator[Sentence]:
        """The sentences themselves, in item order (without building items)."""
        for k in range(len(self)):
            yield self.sentence_index[k if self.positions is None else int(self.positions[k])]


class HolisticBiasStimuli(Stimuli):
    """HolisticBias sentences as benchmark items, one design per axis (see the module docstring)."""

    def __init__(
        self,
        index: SentenceIndex,
        positions: np.ndarray | None = None,
        name: str = "holistic_bias",
        description: str = "",
        meta: Mapping[str, Any] | None = None,
        *,
        source: str = "",
    ):
        import numpy as np

        self.index = index
        self.source = source or f"HolisticBias sentences generated from {index.dataset.folder}"
        self.items: HolisticBiasItems = HolisticBiasItems(index, positions, self.source)
        if len(self.items) == 0:
            raise StimuliError(f"{name}: no sentences")
        ranges = index.axes()
        self._axes = list(ranges)
        self._starts = np.array([ranges[a][0] for a in self._axes], dtype=np.int64)
        codes = self._codes()
        found, first = np.unique(codes, return_index=True)
        present = [self._axes[c] for c in found[np.argsort(first)].tolist()]  # in the order the items give
        self.groups: tuple[str, ...] = tuple(present)
        counted = np.bincount(codes, minlength=len(self._axes))
        sizes = {axis: int(counted[self._axes.index(axis)]) for axis in present}
        designs = [
            Design(name=axis, target={axis: (axis,)}, description=f"HolisticBias {axis}: {sizes[axis]} sentences")
            for axis in present
        ]
        super().__init__(designs, name=name, description=description, meta=meta)

    def _positions(self) -> np.ndarray:
        import numpy as np

        positions = self.items.positions
        return np.arange(len(self.index), dtype=np.int64) if positions is None else positions

    def _codes(self) -> np.ndarray:
        """The axis (its index in the dataset's order) of each item."""
        import numpy as np

        return np.searchsorted(self._starts, self._positions(), side="right") - 1

    def _with(self, positions: np.ndarray, name: str, meta: Mapping[str, Any] | None = None) -> HolisticBiasStimuli:
        return HolisticBiasStimuli(
            self.index,
            positions,
            name=name or self.name,
            description=self.description,
            meta=meta or self.meta,
            source=self.source,
        )

    def select(self, names: Iterable[str], name: str = "") -> HolisticBiasStimuli:
        """The sentences of the given axes, in the given order (``holistic_bias:ability,age``)."""
        import numpy as np

        wanted = list(names)
        for axis in wanted:
            if axis not in self.groups:
                raise UnknownNameError(f"axis of {self.name or 'holistic_bias'}", axis, list(self.groups))
        positions, codes = self._positions(), self._codes()
        chosen = [positions[codes == self._axes.index(axis)] for axis in wanted]
        return self._with(np.concatenate(chosen), name)

    def subset(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> HolisticBiasStimuli:
        """A stated subset, per axis, exactly as :meth:`assoc.ItemStimuli.subset` takes it.

        ``limit``: the first ``limit`` sentences of each axis; ``sample``: ``sample`` sentences drawn per
        axis without replacement (``numpy.random.default_rng(seed)``, one draw per axis in design order,
        kept in generator order). An axis with fewer sentences keeps all. ``meta["subset"]`` records it.
        """
        import numpy as np

        if limit is not None and sample is not None:
            raise StimuliError("give limit or sample, not both")
        if limit is None and sample is None:
            return self
        size = limit if limit is not None else sample
        if size is None or size < 1:
            raise StimuliError(f"limit and sample must be positive, got {size!r}")
        positions, codes = self._positions(), self._codes()
        rng = np.random.default_rng(seed) if sample is not None else None
        chosen = []
        for axis in self.groups:
            members = positions[codes == self._axes.index(axis)]
            if rng is None:
                chosen.append(members[:size])
            elif members.size <= size:
                chosen.append(members)
            else:
                chosen.append(members[np.sort(rng.choice(members.size, size=size, replace=False))])
        picked = np.concatenate(chosen)
        taken = {
            "limit": limit,
            "sample": sample,
            "seed": seed if sample is not None else None,
            "items": int(picked.size),
        }
        return self._with(picked, self.name, {**self.meta, "subset": taken})

    def cells(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> HolisticBiasStimuli:
        """A subset of whole cells, so that the Likelihood Bias stays defined (:func:`pick_cells`)."""
        import numpy as np

        positions = self._positions()
        descriptors, descriptor_codes, template_codes = self.index.cells_of(positions)
        group_of = {axis: k for k, axis in enumerate(self.groups)}
        axis_codes = np.array([group_of.get(a, -1) for a in self._axes], dtype=np.int64)[self._codes()]
        templates = [t.text for t in self.index.dataset.templates]
        keep, taken = pick_cells(
            axis_codes, descriptor_codes, template_codes, self.groups, descriptors, templates,
            limit=limit, sample=sample, seed=seed,
        )  # fmt: skip
        if keep is None:
            return self
        return self._with(positions[keep], self.name, {**self.meta, "subset": taken})

    def fingerprint(self) -> str:
        """SHA-256 of the dataset's four files, the selection and the sentence numbers taken.

        The sentences are a function of the files (:class:`HolisticBiasDataset`), so this identifies
        them without generating them.
        """
        hasher = hashlib.sha256()
        hasher.update(f"holistic_bias|{self.index.dataset.digest}|{self.index.selection}|".encode())
        positions = self.items.positions
        hasher.update(b"all" if positions is None else positions.astype("<i8").tobytes())
        return hasher.hexdigest()


def pick_cells(
    axis_codes: np.ndarray,
    descriptor_codes: np.ndarray,
    template_codes: np.ndarray,
    axes: Sequence[str],
    descriptors: Sequence[str],
    templates: Sequence[str],
    *,
    limit: int | None,
    sample: int | None,
    seed: int,
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """Which sentences a subset of whole cells keeps: a boolean mask, and the record of what was taken.

    The Likelihood Bias compares, in each axis and template, every pair of descriptors over all their
    sentences, so a subset keeps **whole descriptors in whole templates**: per axis (in ``axes`` order), ``k_d``
    of its descriptors and ``k_t`` of its templates, and every sentence of those descriptors in those
    templates (all their nouns). With ``size`` = ``limit`` or ``sample`` (sentences per axis), ``b`` the
    axis's mean number of sentences per descriptor and template (32 in the authors' selection: one per
    noun) and ``slots = max(2, size // b)``: ``k_d = min(descriptors, slots)`` and ``k_t = min(templates,
    max(1, slots // k_d))``. ``limit`` takes the first descriptors (generator order) and the first templates
    (file order); ``sample`` draws both without replacement, seeded (``numpy.random.default_rng(seed)``,
    per axis in order: descriptors, then templates), kept in generator order. So each test the subset
    makes is the very test of the full run (the same sentences), and an axis's fraction is that of a
    random set of its descriptor pairs and templates: unbiased for the axis's fraction of the full run.
    ``sample=200`` keeps 6 descriptors in one template per axis (192 sentences, 15 pairs).

    Returns ``(None, {})`` when neither ``limit`` nor ``sample`` is given.
    """
    import math

    import numpy as np

    from assoc import StimuliError

    if limit is not None and sample is not None:
        raise StimuliError("give limit or sample, not both")
    if limit is None and sample is None:
        return None, {}
    size = limit if limit is not None else sample
    if size is None or isinstance(size, bool) or size < 1:
        raise StimuliError(f"limit and sample must be positive, got {size!r}")
    rng = np.random.default_rng(seed) if sample is not None else None
    keep = np.zeros(axis_codes.size, dtype=bool)
    kept_descriptors: dict[str, list[str]] = {}
    kept_templates: dict[str, list[str]] = {}
    for code, axis in enumerate(axes):
        members = axis_codes == code
        if not members.any():
            continue
        in_axis = descriptor_codes[members]
        found, first = np.unique(in_axis, return_index=True)
        own_descriptors = found[np.argsort(first, kind="stable")]
        own_templates = np.unique(template_codes[members])
        block = math.ceil(int(members.sum()) / (own_descriptors.size * own_templates.size))
        slots = max(2, size // block)
        k_d = min(own_descriptors.size, slots)
        k_t = min(own_templates.size, max(1, slots // k_d))
        if rng is None:
            chosen_d, chosen_t = own_descriptors[:k_d], own_templates[:k_t]
        else:
            chosen_d = own_descriptors[np.sort(rng.choice(own_descriptors.size, size=k_d, replace=False))]
            chosen_t = own_templates[np.sort(rng.choice(own_templates.size, size=k_t, replace=False))]
        keep |= members & np.isin(descriptor_codes, chosen_d) & np.isin(template_codes, chosen_t)
        kept_descriptors[axis] = [descriptors[d] for d in chosen_d.tolist()]
        kept_templates[axis] = [templates[t] for t in chosen_t.tolist()]
    taken = {
        "by": "cells",
        "limit": limit,
        "sample": sample,
        "seed": seed if sample is not None else None,
        "items": int(keep.sum()),
        "descriptors": kept_descriptors,
        "templates": kept_templates,
    }
    return keep, taken


def cell_subset(stimuli: Stimuli, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> Stimuli:
    """``stimuli`` cut to whole cells (:func:`pick_cells`): HolisticBias sentences, lazy or held as items.

    :class:`HolisticBiasStimuli` cut themselves without making a sentence; any other item stimuli whose
    items have HolisticBias's fields (``axis`` as the group, ``descriptor``, ``template``) are cut from
    their fields.
    """
    import numpy as np

    from assoc import ItemStimuli

    if limit is None and sample is None:
        return stimuli
    if isinstance(stimuli, HolisticBiasStimuli):
        return stimuli.cells(limit=limit, sample=sample, seed=seed)
    items = list(getattr(stimuli, "items", ()))
    groups = list(getattr(stimuli, "groups", ())) or list(dict.fromkeys(i.group for i in items))
    for item in items:
        missing = [f for f in ("descriptor", "template") if f not in item.fields]
        if missing:
            raise StimuliError(f"{item.where}: a HolisticBias sentence has the field(s) {', '.join(missing)}")
    descriptors: dict[str, int] = {}
    templates: dict[str, int] = {}
    axis_codes = np.array([groups.index(i.group) for i in items], dtype=np.int64)
    descriptor_codes = np.array([descriptors.setdefault(str(i.fields["descriptor"]), len(descriptors)) for i in items])
    template_codes = np.array([templates.setdefault(str(i.fields["template"]), len(templates)) for i in items])
    keep, taken = pick_cells(
        axis_codes, descriptor_codes, template_codes, groups, list(descriptors), list(templates),
        limit=limit, sample=sample, seed=seed,
    )  # fmt: skip
    assert keep is not None
    return ItemStimuli(
        [item for item, kept in zip(items, keep.tolist()) if kept],
        name=stimuli.name,
        description=stimuli.description,
        meta={**stimuli.meta, "subset": taken},
        groups=groups,
    )


def load(source: str | None, selection: str, name: str) -> HolisticBiasStimuli:
    """The sentences of ``selection`` from the bundled dataset v1.1 (``source`` ``None``) or a user's folder."""
    bundled = source is None
    folder = bundled_folder() if bundled else dataset_folder(source)  # type: ignore[arg-type]
    dataset = HolisticBiasDataset(folder)
    index = dataset.index(selection)
    what = "the Likelihood Bias input" if selection == LIKELIHOOD_BIAS else "every sentence of the generator"
    meta = {
        "citation": CITATION,
        "licence": LICENCE,
        "source": f"assoc bundled copy ({SOURCE})" if bundled else str(folder),
        "selection": selection,
        "sentences": len(index),
        "noun_phrases": len(dataset.noun_phrases),
        "templates": len(dataset.templates),
        "dataset_sha256": dataset.digest,
    }
    return HolisticBiasStimuli(
        index,
        name=name if bundled else f"{name}:{source}",
        description=f"HolisticBias (Smith et al., 2022): {what} ({len(index):,} sentences)",
        meta=meta,
        source="holistic_bias (dataset v1.1 as bundled; generated sentences)"
        if bundled
        else f"HolisticBias sentences of {folder}",
    )


def load_holistic_bias(source: str | None = None) -> HolisticBiasStimuli:
    """``holistic_bias``: the 549,120 sentences the Likelihood Bias scores (or those of a user's copy)."""
    return load(source, LIKELIHOOD_BIAS, "holistic_bias")


def load_holistic_bias_all(source: str | None = None) -> HolisticBiasStimuli:
    """``holistic_bias_all``: all 566,625 sentences of the generator (or those of a user's copy)."""
    return load(source, ALL, "holistic_bias_all")

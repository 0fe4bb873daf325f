"""Benchmark items: examples read from a benchmark's own files, kept as written, with their options.

A bias benchmark (BBQ, StereoSet, Winogender, WinoBias, DiscrimEval, CrowS-Pairs, ...) is a list of
items, not a grid of query templates: each item has an identity, a group (BBQ's category, a bias
type, an axis), every field of its line as the authors wrote it, and usually options to choose among
(BBQ's three answers, StereoSet's three sentences, Winogender's two referents). :class:`ChoiceItem`
is that shape, and :class:`ItemStimuli` holds a benchmark's items as assoc stimuli: one design per
group (what ``assoc stimuli`` and provenance show), the items themselves in :attr:`ItemStimuli.items`,
and the seeded subsets every benchmark offers (:meth:`ItemStimuli.subset`).

Scorers check the shape (:meth:`assoc.Stimuli.require_items`), never a benchmark's own class, so any
benchmark whose items are :class:`ChoiceItem` runs on any scorer that sends ``choice`` requests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assoc.errors import StimuliError, UnknownNameError
from assoc.stimuli.design import Design
from assoc.stimuli.sets import Stimuli


@dataclass(frozen=True)
class ChoiceItem:
    """One benchmark item: where it was read, its fields as written, and the options it offers.

    Attributes
    ----------
    id:
        Stable and unique within the benchmark (the authors' id where they give one; otherwise one the
        reader derives from the item's content and documents).
    group:
        What the benchmark reports results by: BBQ's category, CrowS-Pairs' bias type, an axis.
    fields:
        Every field of the item's line (or row) as written, values untouched.
    options:
        The options to choose among, as shown (empty for an item without options).
    answer:
        The correct option (0-based), ``None`` when the item has no correct answer.
    derived:
        Values the reader computed from the fields, each documented by the benchmark (BBQ's
        ``target_loc``, a StereoSet sentence's gold label, ...). JSON-compatible.
    source, line:
        The file and the 1-based line (or row) the item was read from: every message about an item
        names them.
    """

    id: str
    group: str
    fields: Mapping[str, Any]
    options: tuple[str, ...] = ()
    answer: int | None = None
    derived: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    line: int = 0

    def __post_init__(self) -> None:
        where = self.where
        if not isinstance(self.id, str) or not self.id:
            raise StimuliError(f"{where}: an item needs a non-empty text id, got {self.id!r}")
        if not isinstance(self.group, str) or not self.group:
            raise StimuliError(f"{where}: item {self.id!r} needs a non-empty group")
        object.__setattr__(self, "options", tuple(self.options))
        for number, option in enumerate(self.options):
            if not isinstance(option, str) or not option.strip():
                raise StimuliError(f"{where}: item {self.id!r} has an empty option {number}")
        if self.answer is not None and not 0 <= self.answer < len(self.options):
            raise StimuliError(
                f"{where}: item {self.id!r} gives answer {self.answer}, outside its {len(self.options)} option(s)"
            )

    @property
    def where(self) -> str:
        """``file, line N`` (or what is known of it), for messages."""
        if self.source and self.line:
            return f"{self.source}, line {self.line}"
        return self.source or f"item {self.id!r}"

    def record(self) -> dict[str, Any]:
        """The item as JSON-compatible data (for payloads and fingerprints)."""
        return {
            "id": self.id,
            "group": self.group,
            "fields": dict(self.fields),
            "options": list(self.options),
            "answer": self.answer,
            "derived": dict(self.derived),
            "source": self.source,
            "line": self.line,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ChoiceItem:
        """The item of :meth:`record`'s dict."""
        return cls(
            id=str(record["id"]),
            group=str(record["group"]),
            fields=dict(record.get("fields") or {}),
            options=tuple(record.get("options") or ()),
            answer=record.get("answer"),
            derived=dict(record.get("derived") or {}),
            source=str(record.get("source", "")),
            line=int(record.get("line", 0)),
        )


class ItemStimuli(Stimuli):
    """A benchmark's items as assoc stimuli: one design per group, every item in :attr:`items`.

    ``groups`` gives the design order and the groups a benchmark knows (BBQ's eleven categories): an
    item of another group is refused, with the file and line, so that ``Gender`` and ``gender`` never
    become two groups. Two items with one id are refused, naming both places.
    """

    def __init__(
        self,
        items: Iterable[ChoiceItem],
        name: str = "",
        description: str = "",
        meta: Mapping[str, Any] | None = None,
        *,
        groups: Sequence[str] | None = None,
    ):
        self.items: tuple[ChoiceItem, ...] = tuple(items)
        label = name or "stimuli"
        if not self.items:
            raise StimuliError(f"{label}: no items")
        seen: dict[str, str] = {}
        for item in self.items:
            if not isinstance(item, ChoiceItem):
                raise StimuliError(f"{label}: items must be ChoiceItem objects, got {type(item).__name__}")
            if item.id in seen:
                raise StimuliError(f"{item.where}: item id {item.id!r} is also at {seen[item.id]}")
            seen[item.id] = item.where
        order = list(dict.fromkeys(item.group for item in self.items))
        if groups is not None:
            known = list(groups)
            for item in self.items:
                if item.group not in known:
                    from assoc.errors import did_you_mean

                    raise StimuliError(
                        f"{item.where}: group {item.group!r} is not one of {label}'s "
                        f"({', '.join(known)}){did_you_mean(item.group, known)}"
                    )
            order = [g for g in known if g in set(order)]
        self.groups: tuple[str, ...] = tuple(groups) if groups is not None else tuple(order)
        counts = {g: 0 for g in order}
        for item in self.items:
            counts[item.group] += 1
        designs = [Design(name=g, target={g: (g,)}, description=f"{label} {g}: {counts[g]} items") for g in order]
        super().__init__(designs, name=name, description=description, meta=meta)

    def _with(
        self,
        items: Iterable[ChoiceItem],
        name: str,
        meta: Mapping[str, Any] | None = None,
        first: Sequence[str] = (),
    ) -> ItemStimuli:
        # the groups ``first`` lead the design order (a selection keeps the order it was given in)
        groups = [*first, *(g for g in self.groups if g not in first)]
        return ItemStimuli(
            items, name=name or self.name, description=self.description, meta=meta or self.meta, groups=groups
        )

    def select(self, names: Iterable[str], name: str = "") -> ItemStimuli:
        """The items of the given groups, in the given order (``bbq:Age,SES`` style selections)."""
        wanted = list(names)
        present = [d.name for d in self.designs]
        for group in wanted:
            if group not in present:
                raise UnknownNameError(f"group of {self.name or 'stimuli'}", group, present)
        return self._with([i for group in wanted for i in self.items if i.group == group], name, first=wanted)

    def subset(self, *, limit: int | None = None, sample: int | None = None, seed: int = 0) -> ItemStimuli:
        """A stated subset: the first ``limit`` items of each group, or ``sample`` items drawn per group.

        ``sample`` draws without replacement, seeded (``numpy.random.default_rng(seed)``, one draw per
        group in group order) and keeps the file order of the drawn items, so a subset is the same on
        every machine and its items appear as in the full run. A group with fewer items keeps all of
        them. The subset's ``meta`` records what was taken (``subset``: limit, sample, seed, items).
        """
        if limit is not None and sample is not None:
            raise StimuliError("give limit or sample, not both")
        if limit is None and sample is None:
            return self
        size = limit if limit is not None else sample
        if size is None or size < 1:
            raise StimuliError(f"limit and sample must be positive, got {size!r}")
        chosen: list[ChoiceItem] = []
        if limit is not None:
            for group in (d.name for d in self.designs):
                chosen.extend([i for i in self.items if i.group == group][:limit])
        else:
            import numpy as np

            rng = np.random.default_rng(seed)
            for group in (d.name for d in self.designs):
                members = [i for i in self.items if i.group == group]
                if len(members) <= size:
                    chosen.extend(members)
                    continue
                picked = sorted(rng.choice(len(members), size=size, replace=False).tolist())
                chosen.extend(members[k] for k in picked)
        taken = {"limit": limit, "sample": sample, "seed": seed if sample is not None else None, "items": len(chosen)}
        return self._with(chosen, self.name, {**self.meta, "subset": taken})

    def fingerprint(self) -> str:
        """SHA-256 of every item as written (with what the reader derived from it)."""
        hasher = hashlib.sha256()
        for item in self.items:
            record = item.record()
            record.pop("source")  # the same items read from another copy are the same stimuli
            hasher.update(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str).encode())
            hasher.update(b"\n")
        return hasher.hexdigest()


def require_items(stimuli: Stimuli, scorer: str, *, options: int | None = None) -> Sequence[ChoiceItem]:
    """The items of ``stimuli`` for ``scorer``; one line naming what to give when it has none.

    ``options``: the number of options every item must offer (``None``: any number, at least two).
    """
    items = getattr(stimuli, "items", None)
    if not items:
        raise StimuliError(
            f"scorer {scorer!r} reads benchmark items (a bundled benchmark such as bbq, or name:<path> to "
            f"your copy); stimuli {stimuli.name or '(unnamed)'!r} are query designs"
        )
    for item in items:
        if options is not None and len(item.options) != options:
            raise StimuliError(
                f"{item.where}: scorer {scorer!r} needs {options} options per item; item {item.id!r} has "
                f"{len(item.options)}"
            )
        if options is None and len(item.options) < 2:
            raise StimuliError(f"{item.where}: item {item.id!r} offers {len(item.options)} option(s); need two or more")
    return items

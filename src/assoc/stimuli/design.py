"""A design: query templates with one ``[MASK]`` and three kinds of named word groups, validated on construction.

It follows the FMAT R package's ``FMAT_query()``: a *design* has optional
``queries`` (templates with one ``[MASK]`` and optionally ``{TARGET}`` /
``{ATTRIB}`` placeholders) and three kinds of named word groups:

* ``mask``: the options that fill ``[MASK]`` (e.g. ``male: [he]``, ``female: [she]``);
* ``target``: words or phrases for ``{TARGET}`` (for embedding methods: WEAT's X and Y);
* ``attribute``: words or phrases for ``{ATTRIB}`` (for embedding methods: WEAT's A and B).

Also here: :class:`Filling` (a query with its placeholders filled), :class:`MaskItem`,
:func:`split_at_mask` and :func:`fill_mask`. Several designs bound together are a
:class:`~assoc.stimuli.sets.Stimuli`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from assoc.errors import StimuliError, StimuliWarning, did_you_mean

MASK = "[MASK]"
TARGET_SLOT = "{TARGET}"
ATTRIB_SLOT = "{ATTRIB}"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_KNOWN_PLACEHOLDERS = {"TARGET", "ATTRIB"}
_DESIGN_KEYS = {"name", "queries", "query", "mask", "target", "attribute", "description", "notes"}

Groups = Mapping[str, tuple[str, ...]]


#: Most words a ``{range: [from, to, step]}`` group may expand to: each is scored (a year range of
#: Bao 2024 has about 200), and 10**15 numbers would exhaust memory before anything else happens.
MAX_RANGE_WORDS = 100_000


def _expand_group_value(kind: str, group: str, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, Mapping):
        if set(value) != {"range"}:
            raise StimuliError(f"{where}: {kind} group {group!r} must be a list of words or {{range: [from, to]}}")
        bounds = value["range"]
        if (
            not isinstance(bounds, (list, tuple))
            or len(bounds) not in (2, 3)
            or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds)
        ):
            raise StimuliError(f"{where}: {kind} group {group!r}: range needs two or three integers [from, to, step]")
        start, stop = bounds[0], bounds[1]
        step = bounds[2] if len(bounds) == 3 else 1
        if step <= 0 or stop < start:
            raise StimuliError(f"{where}: {kind} group {group!r}: range [{start}, {stop}] with step {step} is empty")
        count = (stop - start) // step + 1
        if count > MAX_RANGE_WORDS:
            raise StimuliError(
                f"{where}: {kind} group {group!r}: range [{start}, {stop}] with step {step} has "
                f"{count:,} numbers; a group holds at most {MAX_RANGE_WORDS:,} (narrow the range or "
                "raise the step)"
            )
        return tuple(str(n) for n in range(start, stop + 1, step))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise StimuliError(f"{where}: {kind} group {group!r} must be a list of words, got {type(value).__name__}")
    words: list[str] = []
    for position, word in enumerate(value, 1):
        if isinstance(word, int) and not isinstance(word, bool):
            word = str(word)  # an integer from Python code: its digits are exactly what was written
        if not isinstance(word, str):
            raise StimuliError(
                f"{where}: {kind} group {group!r}, item {position}: {_non_text(word)} where a word belongs"
                f"{_quote_hint(word)}"
            )
        if not word.strip():
            raise StimuliError(f"{where}: {kind} group {group!r} contains an empty word")
        if word != word.strip():
            raise StimuliError(f"{where}: {kind} group {group!r}: word {word!r} has leading or trailing spaces")
        words.append(word)
    return tuple(words)


def _non_text(value: Any) -> str:
    """How a non-text stimuli item is named in errors."""
    if value is None:
        return "null (an empty item)"
    if isinstance(value, bool):
        return f"the boolean {value!r}"
    if isinstance(value, float):
        return f"the number {value!r}"
    return f"a non-text item {value!r}"


def _quote_hint(value: Any) -> str:
    if isinstance(value, (bool, float)) or value is None:
        return " (write words as text, e.g. in quotes, so that they are kept exactly as written)"
    return ""


def _normalise_groups(kind: str, groups: Any, where: str) -> dict[str, tuple[str, ...]]:
    if groups is None:
        return {}
    if not isinstance(groups, Mapping):
        raise StimuliError(f"{where}: {kind} must map group names to word lists, got {type(groups).__name__}")
    out: dict[str, tuple[str, ...]] = {}
    for name, value in groups.items():
        if not isinstance(name, str) or not name.strip():
            raise StimuliError(f"{where}: {kind} group names must be non-empty text, got {name!r}")
        words = _expand_group_value(kind, name, value, where)
        if not words:
            raise StimuliError(f"{where}: {kind} group {name!r} is empty")
        seen: set[str] = set()
        for word in words:
            if word in seen:
                raise StimuliError(f"{where}: {kind} group {name!r} lists {word!r} twice")
            seen.add(word)
        out[name] = words
    return out


def _warn_about_shared_words(kind: str, groups: Mapping[str, tuple[str, ...]], where: str) -> None:
    """Warn when one word is in two groups of one kind: it sits on both sides of the contrast."""
    first_group: dict[str, str] = {}
    for group, words in groups.items():
        for word in words:
            other = first_group.setdefault(word, group)
            if other != group:
                warnings.warn(
                    f"{where}: word {word!r} is in both {kind} groups {other!r} and {group!r}; a word on "
                    "both sides of a contrast cancels itself out and makes the contrast meaningless",
                    StimuliWarning,
                    stacklevel=2,
                )


@dataclass(frozen=True)
class Filling:
    """One query with its ``{TARGET}``/``{ATTRIB}`` placeholders filled (``[MASK]`` kept)."""

    design: str
    query: str
    text: str
    target_group: str = ""
    target: str = ""
    attribute_group: str = ""
    attribute: str = ""

    @property
    def fills_target(self) -> bool:
        """Whether the queries have a ``{TARGET}`` slot."""
        return TARGET_SLOT in self.query

    @property
    def fills_attribute(self) -> bool:
        """Whether the queries have an ``{ATTRIB}`` slot."""
        return ATTRIB_SLOT in self.query

    def roles(self, mask_group: str, option: str) -> dict[str, str]:
        """The association-table roles of a ``[MASK]`` option in this filling.

        The rule (documented in ``docs/table.md``):

        * the query fills ``{TARGET}`` only: the option is the **attribute**;
        * the query fills ``{ATTRIB}`` only: the option is the **target**;
        * the query fills neither: the option is the **target** (attribute empty);
        * the query fills both: target and attribute are the fillers, and the
          option appears only in ``mask_group``/``mask``.
        """
        row = {
            "target_group": self.target_group,
            "target": self.target,
            "attribute_group": self.attribute_group,
            "attribute": self.attribute,
            "mask_group": mask_group,
            "mask": option,
        }
        if self.fills_target and not self.fills_attribute:
            row["attribute_group"], row["attribute"] = mask_group, option
        elif self.fills_attribute and not self.fills_target:
            row["target_group"], row["target"] = mask_group, option
        elif not self.fills_target and not self.fills_attribute:
            row["target_group"], row["target"] = mask_group, option
        return row


def split_at_mask(text: str) -> tuple[str, str]:
    """Split a filled query at its single ``[MASK]`` (or raise :class:`StimuliError`)."""
    n = text.count(MASK)
    if n != 1:
        raise StimuliError(f"query {text!r} must contain exactly one {MASK}, found {n}")
    prefix, suffix = text.split(MASK)
    return prefix, suffix


def fill_mask(text: str, filler: str) -> tuple[str, tuple[int, int]]:
    """Put ``filler`` into the single ``[MASK]`` of ``text``.

    Returns the filled text and the character span ``(start, end)`` of ``filler`` in it.
    The one implementation of ``[MASK]`` filling: a model's own mask token
    (:func:`assoc.lm.masked.words.fill_mask_token`) and a candidate word (the pll scorer's
    sentences) are put in the same way.
    """
    prefix, suffix = split_at_mask(text)
    return prefix + filler + suffix, (len(prefix), len(prefix) + len(filler))


@dataclass(frozen=True)
class MaskItem:
    """One ``[MASK]`` option of one filled query: the unit of the fmat and pll scorers' output rows."""

    filling: Filling
    mask_group: str
    option: str

    def roles(self) -> dict[str, str]:
        """The association-table roles of this option (see :meth:`Filling.roles`)."""
        return self.filling.roles(self.mask_group, self.option)

    def sentence(self) -> tuple[str, tuple[int, int]]:
        """The filled query with the option in the ``[MASK]`` slot, and the option's character span."""
        return fill_mask(self.filling.text, self.option)


@dataclass(frozen=True)
class Design:
    """One design: query templates, [MASK] candidates, targets and attributes.

    Construct it directly or through [`Stimuli.from_dict`][assoc.stimuli.Stimuli.from_dict]; the constructor
    validates everything and raises [`StimuliError`][assoc.StimuliError] naming
    the problem.
    """

    name: str = ""
    queries: tuple[str, ...] = ()
    mask: Groups = field(default_factory=dict)
    target: Groups = field(default_factory=dict)
    attribute: Groups = field(default_factory=dict)
    description: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = f"design {self.name!r}" if self.name else "design"
        queries = self.queries
        if isinstance(queries, str):
            queries = (queries,)
        if not isinstance(queries, (list, tuple)):
            raise StimuliError(f"{where}: queries must be a list of templates")
        object.__setattr__(self, "queries", tuple(queries))
        object.__setattr__(self, "mask", _normalise_groups("mask", self.mask, where))
        object.__setattr__(self, "target", _normalise_groups("target", self.target, where))
        object.__setattr__(self, "attribute", _normalise_groups("attribute", self.attribute, where))
        notes = self.notes
        object.__setattr__(self, "notes", (notes,) if isinstance(notes, str) else tuple(notes or ()))
        seen: set[str] = set()
        for query in self.queries:
            if not isinstance(query, str) or not query.strip():
                raise StimuliError(f"{where}: a query is empty")
            if query in seen:
                raise StimuliError(f"{where}: query {query!r} is listed twice")
            seen.add(query)
            if query.count(MASK) > 1:
                raise StimuliError(f"{where}: query {query!r} has {query.count(MASK)} [MASK]s; exactly one is allowed")
            for slot in _PLACEHOLDER.findall(query):
                if slot not in _KNOWN_PLACEHOLDERS:
                    raise StimuliError(
                        f"{where}: query {query!r} has an unknown placeholder {{{slot}}}"
                        f"{did_you_mean(slot, _KNOWN_PLACEHOLDERS)} (allowed: {{TARGET}}, {{ATTRIB}})"
                    )
            for slot, groups, kind in (
                (TARGET_SLOT, self.target, "target"),
                (ATTRIB_SLOT, self.attribute, "attribute"),
            ):
                if query.count(slot) > 1:
                    raise StimuliError(f"{where}: query {query!r} has {slot} more than once")
                if slot in query and not groups:
                    raise StimuliError(
                        f"{where}: query {query!r} has a {slot} placeholder but no {kind} groups are given"
                    )
        if self.queries:
            for slot, groups, kind in (
                (TARGET_SLOT, self.target, "target"),
                (ATTRIB_SLOT, self.attribute, "attribute"),
            ):
                if groups and not all(slot in query for query in self.queries):
                    missing = next(query for query in self.queries if slot not in query)
                    raise StimuliError(
                        f"{where}: {kind} groups are given but query {missing!r} has no {slot} placeholder to fill"
                    )
            if any(MASK in q for q in self.queries) and not self.mask:
                raise StimuliError(f"{where}: queries contain [MASK] but no mask groups (options) are given")
        elif self.mask:
            raise StimuliError(f"{where}: mask groups (options for [MASK]) need queries with [MASK]")
        if not (self.queries or self.mask or self.target or self.attribute):
            raise StimuliError(f"{where}: is empty (no queries and no groups)")
        for kind, groups in (("mask", self.mask), ("target", self.target), ("attribute", self.attribute)):
            _warn_about_shared_words(kind, groups, where)

    # -- derived views ---------------------------------------------------------------------------

    @property
    def fills_target(self) -> bool:
        """Whether the queries have a ``{TARGET}`` slot."""
        return any(TARGET_SLOT in q for q in self.queries)

    @property
    def fills_attribute(self) -> bool:
        """Whether the queries have an ``{ATTRIB}`` slot."""
        return any(ATTRIB_SLOT in q for q in self.queries)

    def fillings(self) -> Iterator[Filling]:
        """Every query with every combination of target and attribute fillers."""
        targets = [(g, w) for g, words in self.target.items() for w in words] or [("", "")]
        attributes = [(g, w) for g, words in self.attribute.items() for w in words] or [("", "")]
        for query in self.queries:
            for tg, tw in targets if TARGET_SLOT in query else [("", "")]:
                for ag, aw in attributes if ATTRIB_SLOT in query else [("", "")]:
                    text = query.replace(TARGET_SLOT, tw).replace(ATTRIB_SLOT, aw)
                    yield Filling(self.name, query, text, tg, tw, ag, aw)

    def mask_items(self) -> Iterator[MaskItem]:
        """Every (filled query, mask group, option), in query, filler and option order."""
        for filling in self.fillings():
            for group, options in self.mask.items():
                for option in options:
                    yield MaskItem(filling, group, option)

    def embedding_groups(self) -> tuple[Groups, Groups]:
        """Target and attribute groups for methods without queries (e.g. WEAT).

        The same role rule as [`Filling.roles`][assoc.stimuli.Filling.roles]: when the queries fill
        ``{TARGET}`` only, the mask groups act as attribute groups; when they fill
        ``{ATTRIB}`` only or nothing, as target groups; when they fill both, the
        fillers are the targets and attributes. So one stimuli file runs through
        FMAT and WEAT alike.
        """
        target, attribute = dict(self.target), dict(self.attribute)
        if self.mask and not (self.fills_target and self.fills_attribute):
            if self.fills_target:
                attribute = dict(self.mask)
            else:
                target = dict(self.mask)
        return target, attribute

    def word_pairs(self) -> Iterator[tuple[str, str, str, str]]:
        """``(target_group, target, attribute_group, attribute)`` for every pair (see `embedding_groups`)."""
        target, attribute = self.embedding_groups()
        for tg, twords in target.items():
            for tw in twords:
                for ag, awords in attribute.items():
                    for aw in awords:
                        yield tg, tw, ag, aw

    def to_dict(self) -> dict[str, Any]:
        """The design as a plain dict (the stimuli file format)."""
        out: dict[str, Any] = {"name": self.name}
        if self.queries:
            out["queries"] = list(self.queries)
        for key in ("mask", "target", "attribute"):
            groups = getattr(self, key)
            if groups:
                out[key] = {g: list(ws) for g, ws in groups.items()}
        if self.description:
            out["description"] = self.description
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def design_from_dict(data: Any, default_name: str, where: str) -> Design:
    """The :class:`Design` a stimuli file or dict describes (``where`` names it in errors)."""
    if not isinstance(data, Mapping):
        raise StimuliError(f"{where}: a design must be a mapping, got {type(data).__name__}")
    unknown = [key for key in data if key not in _DESIGN_KEYS]
    if unknown:
        key = str(unknown[0])
        raise StimuliError(
            f"{where}: unknown key {key!r}{did_you_mean(key, _DESIGN_KEYS)} "
            f"(allowed: queries, mask, target, attribute, name, description, notes)"
        )
    if "query" in data and "queries" in data:
        raise StimuliError(f"{where}: give either 'query' or 'queries', not both")
    queries = data.get("queries", data.get("query", ()))
    if queries is None:
        queries = ()
    name = data.get("name", default_name)
    if not isinstance(name, str):
        raise StimuliError(f"{where}: name must be text, got {name!r}")
    return Design(
        name=name,
        queries=queries,
        mask=data.get("mask") or {},
        target=data.get("target") or {},
        attribute=data.get("attribute") or {},
        description=data.get("description", "") or "",
        notes=data.get("notes") or (),
    )

"""The stimuli model every scorer reads.

It follows the FMAT R package's ``FMAT_query()``: a *design* has optional
``queries`` (templates with one ``[MASK]`` and optionally ``{TARGET}`` /
``{ATTRIB}`` placeholders) and three kinds of named word groups:

* ``mask``: the options that fill ``[MASK]`` (e.g. ``male: [he]``, ``female: [she]``);
* ``target``: words or phrases for ``{TARGET}`` (for embedding methods: WEAT's X and Y);
* ``attribute``: words or phrases for ``{ATTRIB}`` (for embedding methods: WEAT's A and B).

A :class:`Stimuli` is a list of designs (``FMAT_query_bind``): several query
templates with different [MASK] candidates are several designs bound together.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assoc.errors import StimuliError, StimuliWarning, UnknownNameError, did_you_mean

#: Finds the loader of a bundled stimuli set by name (``"caliskan"``). The registry layer
#: (:mod:`assoc.plugins.manager`) installs it with :func:`set_bundle_resolver` when ``assoc`` is imported,
#: so this data model imports nothing above it.
BundleResolver = Callable[[str], Callable[[], "Stimuli"]]
_bundle_resolver: BundleResolver | None = None


def set_bundle_resolver(resolver: BundleResolver | None) -> None:
    """Install the function that resolves bundled set names for :meth:`Stimuli.load` (``None``: none)."""
    global _bundle_resolver
    _bundle_resolver = resolver


MASK = "[MASK]"
TARGET_SLOT = "{TARGET}"
ATTRIB_SLOT = "{ATTRIB}"
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_KNOWN_PLACEHOLDERS = {"TARGET", "ATTRIB"}
_DESIGN_KEYS = {"name", "queries", "query", "mask", "target", "attribute", "description", "notes"}
_FILE_KEYS = {"name", "designs", "description", "meta", "citation"}

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
    (:func:`assoc.mlm.words.fill_mask_token`) and a candidate word (the pll scorer's
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

    Construct it directly or through :meth:`Stimuli.from_dict`; the constructor
    validates everything and raises :class:`~assoc.errors.StimuliError` naming
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

        The same role rule as :meth:`Filling.roles`: when the queries fill
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
        """``(target_group, target, attribute_group, attribute)`` for every pair (see :meth:`embedding_groups`)."""
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


def _design_from_dict(data: Any, default_name: str, where: str) -> Design:
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


def _citations_of(meta: Mapping[str, Any]) -> list[str]:
    """The citation(s) in a stimuli ``meta``: one text or a list of texts."""
    cited = meta.get("citation")
    if isinstance(cited, str):
        return [cited] if cited.strip() else []
    if isinstance(cited, (list, tuple)):
        return [str(c) for c in cited if str(c).strip()]
    return []


def _as_written(data: Any) -> Any:
    """A parsed stimuli file with its words, labels and queries exactly as the user typed them.

    The parsers (:func:`assoc.infra.textfiles.parse_yaml`/``parse_json`` with ``keep_text``) return
    every scalar YAML 1.1 or JSON would retype (``010``, ``1.10``, ``no``, ``null``, ``.nan``,
    ``NaN``) as :class:`~assoc.infra.textfiles.TypedText`. Here the places that hold text (words, group
    and design names, queries, descriptions, notes, the keys of the file's mappings) keep that
    text; the places that hold other values (``range`` bounds, ``meta``) and an empty entry get
    the parser's reading.
    """
    if not isinstance(data, dict):
        return _typed(data)
    out = _design_as_written(data)
    for key in ("meta", "citation"):
        if key in out:
            out[key] = _typed(out[key])
    if "designs" in out:
        designs = out["designs"]
        if isinstance(designs, list):
            out["designs"] = [_design_as_written(d) for d in designs]
        elif isinstance(designs, dict):
            out["designs"] = {_text(k): _design_as_written(v) for k, v in designs.items()}
        else:
            out["designs"] = _typed(designs)
    return out


def _typed(value: Any) -> Any:
    from assoc.infra.textfiles import typed_value

    return typed_value(value)


def _text(value: Any) -> Any:
    """Text as written; an empty entry (YAML ``key:`` with nothing after it) stays null."""
    from assoc.infra.textfiles import TypedText

    if isinstance(value, TypedText):
        return None if value == "" else str(value)
    return value


def _texts(value: Any) -> Any:
    """A text or a list of texts, as written (a lone ``null`` is no entry at all)."""
    from assoc.infra.textfiles import TypedText

    if isinstance(value, list):
        return [_text(item) if not isinstance(item, (list, dict)) else _typed(item) for item in value]
    if isinstance(value, TypedText) and value.value is None:
        return None
    return _text(value) if not isinstance(value, dict) else _typed(value)


def _design_as_written(data: Any) -> Any:
    if not isinstance(data, dict):
        return _typed(data)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        key = _text(key)
        if key in ("mask", "target", "attribute") and isinstance(value, dict):
            value = {_text(group): _group_as_written(words) for group, words in value.items()}
        elif key in ("name", "description", "queries", "query", "notes"):
            value = _texts(value)
        elif key not in ("designs", "meta", "citation"):
            value = _typed(value)
        out[key] = value
    return out


def _group_as_written(words: Any) -> Any:
    if isinstance(words, dict):  # {range: [from, to, step]}: numbers
        return {_text(k): _typed(v) for k, v in words.items()}
    return _texts(words)


def _reads_path(loader: Callable[..., Any]) -> bool:
    """Whether a bundled set's loader takes an argument: the path of the user's copy (``name:<path>``)."""
    import inspect

    try:
        return len(inspect.signature(loader).parameters) > 0
    except (TypeError, ValueError):
        return False


def _names_path(selection: str) -> bool:
    """Whether the text after ``name:`` is a path (it exists, or has a path separator) rather than design names."""
    return "/" in selection or "\\" in selection or Path(selection).expanduser().exists()


class Stimuli:
    """An ordered collection of :class:`Design` objects, validated on construction."""

    def __init__(
        self, designs: Iterable[Design], name: str = "", description: str = "", meta: Mapping[str, Any] | None = None
    ):
        self.designs: tuple[Design, ...] = tuple(designs)
        self.name = name
        self.description = description
        self.meta = dict(meta or {})
        if not self.designs:
            raise StimuliError(f"stimuli {name!r} contain no designs" if name else "stimuli contain no designs")
        for design in self.designs:
            if not isinstance(design, Design):
                raise StimuliError(f"stimuli must be built from Design objects, got {type(design).__name__}")
        names = [d.name for d in self.designs if d.name]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise StimuliError(f"design name {duplicated[0]!r} is used twice")

    # -- constructors -------------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], name: str = "") -> Stimuli:
        """Build from a dict.

        Build from a dict: either one design (``queries``/``mask``/``target``/``attribute``
        at top level) or ``{"designs": [...]}``.
        """
        if isinstance(data, Stimuli):
            return data
        if not isinstance(data, Mapping):
            raise StimuliError(f"stimuli must be a mapping, got {type(data).__name__}")
        label = name or str(data.get("name", "")) or "stimuli"
        if "designs" in data:
            unknown = [key for key in data if key not in _FILE_KEYS]
            if unknown:
                key = str(unknown[0])
                raise StimuliError(
                    f"{label}: unknown top-level key {key!r}{did_you_mean(key, _FILE_KEYS)} "
                    f"(allowed with designs: {', '.join(sorted(_FILE_KEYS))})"
                )
            raw = data["designs"]
            if isinstance(raw, Mapping):
                raw = [{"name": key, **(value or {})} for key, value in raw.items()]
            if not isinstance(raw, list) or not raw:
                raise StimuliError(f"{label}: 'designs' must be a non-empty list")
            designs = [_design_from_dict(d, f"design{i + 1}", f"{label}, design {i + 1}") for i, d in enumerate(raw)]
            meta = data.get("meta") or {}
            if data.get("citation"):
                meta = {**meta, "citation": data["citation"]}
            return cls(
                designs, name=name or str(data.get("name", "")), description=str(data.get("description", "")), meta=meta
            )
        design = _design_from_dict(dict(data), str(data.get("name", "") or name), label)
        return cls([design], name=name or design.name)

    @classmethod
    def from_file(cls, path: str | Path) -> Stimuli:
        """Load a YAML (``.yaml``/``.yml``) or JSON (``.json``) stimuli file."""
        path = Path(path)
        if not path.is_file():
            raise StimuliError(f"stimuli file not found: {path}")
        from assoc.infra.textfiles import parse_json, parse_yaml, read_text

        suffix = path.suffix.lower()
        if suffix not in {".json", ".yaml", ".yml"}:
            raise StimuliError(f"stimuli file {path} must end in .yaml, .yml or .json")
        text = read_text(path, what="stimuli file", error=StimuliError)
        parse = parse_json if suffix == ".json" else parse_yaml
        data = _as_written(parse(text, path, error=StimuliError, keep_text=True))
        if data is None:
            raise StimuliError(f"stimuli file {path} is empty")
        try:
            return cls.from_dict(data, name=str(data.get("name", "")) if isinstance(data, Mapping) else "")
        except StimuliError as exc:
            if type(exc) is StimuliError and str(path) not in str(exc):  # name the file the problem is in
                raise StimuliError(f"{path}: {exc}") from None
            raise

    @classmethod
    def load(cls, spec: str | Path | Mapping[str, Any] | Stimuli) -> Stimuli:
        """Load stimuli from a :class:`Stimuli`, a dict, a file path, or a bundled name.

        Bundled names come from plugins (``assoc stimuli`` lists them):
        ``"caliskan"`` (all designs), ``"caliskan:weat1"`` or ``"caliskan:weat1,weat2"``. A set
        whose loader takes an argument also reads the user's own copy: ``"bbq:<path>"`` (a path
        that exists, or any text with a path separator) calls ``loader("<path>")``.
        """
        if isinstance(spec, Stimuli):
            return spec
        if isinstance(spec, Mapping):
            return cls.from_dict(spec)
        text = str(spec)
        path = Path(text)
        if path.suffix.lower() in {".yaml", ".yml", ".json"} or path.exists():
            return cls.from_file(path)
        if _bundle_resolver is None:
            raise StimuliError(
                f"{text!r} is neither a stimuli file nor a dict, and no registry of bundled "
                "stimuli sets is installed (import assoc)"
            )
        bundle, _, selection = text.partition(":")
        loader = _bundle_resolver(bundle)
        if selection and _reads_path(loader) and _names_path(selection):
            # ``name:<path>``: a set whose loader reads the user's own copy (e.g. ``bbq:~/BBQ/data``)
            return loader(str(Path(selection).expanduser()))  # type: ignore[call-arg]
        loaded = loader()
        if loaded.name != bundle:  # provenance records the name users can load it by again
            loaded = Stimuli(loaded.designs, name=bundle, description=loaded.description, meta=loaded.meta)
        if not selection:
            return loaded
        return loaded.select([part.strip() for part in selection.split(",") if part.strip()], name=text)

    # -- operations ---------------------------------------------------------------------------------

    def select(self, names: Iterable[str], name: str = "") -> Stimuli:
        """The designs with the given names, in the given order."""
        by_name = {d.name: d for d in self.designs}
        chosen = []
        for wanted in names:
            if wanted not in by_name:
                raise UnknownNameError(f"design of {self.name or 'stimuli'}", wanted, by_name)
            chosen.append(by_name[wanted])
        return Stimuli(chosen, name=name or self.name, description=self.description, meta=self.meta)

    def bind(self, *others: Stimuli) -> Stimuli:
        """All designs of ``self`` and ``others`` in one :class:`Stimuli` (like ``FMAT_query_bind``)."""
        loaded = [self, *(Stimuli.load(other) for other in others)]
        designs = [design for part in loaded for design in part.designs]
        names = [self.name] + [o.name for o in others if isinstance(o, Stimuli)]
        # Every source stays cited: one citation as it was, several as a list in bind order.
        cited = list(dict.fromkeys(c for part in loaded for c in _citations_of(part.meta)))
        meta = {"citation": cited[0] if len(cited) == 1 else cited} if cited else {}
        return Stimuli(designs, name="+".join(n for n in names if n), meta=meta)

    __add__ = bind

    def __iter__(self) -> Iterator[Design]:
        return iter(self.designs)

    def __len__(self) -> int:
        return len(self.designs)

    def __repr__(self) -> str:
        return f"Stimuli(name={self.name!r}, designs={[d.name for d in self.designs]!r})"

    @property
    def has_queries(self) -> bool:
        """Whether any design has ``[MASK]`` queries."""
        return any(d.queries for d in self.designs)

    def require_embedding_groups(self, scorer: str) -> None:
        """Raise unless every design has target and attribute groups (:meth:`Design.embedding_groups`).

        Embedding scorers that compare targets with attributes (``weat``, ``sbert_cosine``) call it.
        """
        for design in self.designs:
            target, attribute = design.embedding_groups()
            if not target or not attribute:
                raise StimuliError(
                    f"scorer {scorer!r} needs target and attribute groups; design {design.name!r} has "
                    f"{len(target)} target and {len(attribute)} attribute group(s) "
                    "(mask groups count as attributes when queries fill {TARGET})"
                )

    def require_queries(self, scorer: str) -> None:
        """Raise unless every design has queries with exactly one ``[MASK]``."""
        for design in self.designs:
            if not design.queries:
                raise StimuliError(f"scorer {scorer!r} needs queries with [MASK]; design {design.name!r} has none")
            for query in design.queries:
                if MASK not in query:
                    other = re.search(r"<mask>|\[mask\]|\[MASK|MASK\]|<MASK>", query, flags=re.IGNORECASE)
                    hint = (
                        f" (write {other.group(0)!r} as [MASK]: the portable spelling, replaced by each "
                        "model's own mask token when scoring)"
                        if other
                        else ""
                    )
                    raise StimuliError(
                        f"scorer {scorer!r} needs a [MASK] in every query; design {design.name!r} has {query!r}{hint}"
                    )

    def fillings(self) -> Iterator[Filling]:
        """Every query filling of every design."""
        for design in self.designs:
            yield from design.fillings()

    def mask_items(self) -> list[MaskItem]:
        """Every ``[MASK]`` option of every filled query of every design, in design order."""
        return [item for design in self.designs for item in design.mask_items()]

    def to_dict(self) -> dict[str, Any]:
        """The stimuli as a plain dict (the stimuli file format)."""
        out: dict[str, Any] = {"name": self.name, "designs": [d.to_dict() for d in self.designs]}
        if self.description:
            out["description"] = self.description
        if self.meta:  # the source and its citation: provenance and ``table.assoc.cite()`` read them
            out["meta"] = dict(self.meta)
        return out

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of the designs (recorded in provenance)."""
        blob = json.dumps(self.to_dict()["designs"], sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()

"""Stimuli: the designs of one study bound together (``FMAT_query_bind``), loaded from a file, a dict or a bundled name.

Several query templates with different [MASK] candidates are several designs
(:class:`~assoc.stimuli.design.Design`) bound together. :meth:`Stimuli.load` reads YAML or
JSON files keeping every value as written, and asks the plugin registry for bundled sets
(through :func:`set_bundle_resolver`, so this module imports nothing above it).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from assoc.errors import AssocError, StimuliError, UnknownNameError, did_you_mean
from assoc.stimuli.design import MASK, Design, Filling, MaskItem, design_from_dict

#: Finds the loader of a bundled stimuli set by name (``"caliskan"``). The registry layer
#: (:mod:`assoc.plugins.manager`) installs it with :func:`set_bundle_resolver` when ``assoc`` is imported,
#: so this data model imports nothing above it.
BundleResolver = Callable[[str], Callable[[], "Stimuli"]]
_bundle_resolver: BundleResolver | None = None


def set_bundle_resolver(resolver: BundleResolver | None) -> None:
    """Install the function that resolves bundled set names for :meth:`Stimuli.load` (``None``: none)."""
    global _bundle_resolver
    _bundle_resolver = resolver


_FILE_KEYS = {"name", "designs", "description", "meta", "citation"}


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


#: Endings of the files a bundled set's loader may read (``crows_pairs:my.csv``): such a selection is a path.
DATA_SUFFIXES = frozenset({".csv", ".tsv", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".gz", ".zip", ".parquet"})


def _names_path(selection: str) -> bool:
    """Whether the text after ``name:`` is a path rather than design names.

    It is when it exists, has a path separator, or ends like a data file (``my.csv``).
    """
    return (
        "/" in selection
        or "\\" in selection
        or Path(selection).suffix.lower() in DATA_SUFFIXES
        or Path(selection).expanduser().exists()
    )


class Stimuli:
    """An ordered collection of [`Design`][assoc.Design] objects, validated on construction."""

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
            designs = [design_from_dict(d, f"design{i + 1}", f"{label}, design {i + 1}") for i, d in enumerate(raw)]
            meta = data.get("meta") or {}
            if data.get("citation"):
                meta = {**meta, "citation": data["citation"]}
            return cls(
                designs, name=name or str(data.get("name", "")), description=str(data.get("description", "")), meta=meta
            )
        design = design_from_dict(dict(data), str(data.get("name", "") or name), label)
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
        """Load stimuli from a [`Stimuli`][assoc.Stimuli], a dict, a file path, or a bundled name.

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
        # ``name:<copy>.json`` is a set reading the user's file, not a stimuli file named so
        named = ":" in text and not path.exists() and _bundle_resolver is not None
        if path.exists() or (path.suffix.lower() in {".yaml", ".yml", ".json"} and not named):
            return cls.from_file(path)
        if _bundle_resolver is None:
            raise StimuliError(
                f"{text!r} is neither a stimuli file nor a dict, and no registry of bundled "
                "stimuli sets is installed (import assoc)"
            )
        bundle, _, selection = text.partition(":")
        loader = _bundle_resolver(bundle)
        hint = ""
        if selection and _names_path(selection):
            given = Path(selection).expanduser()
            if _reads_path(loader):
                # ``name:<path>``: a set whose loader reads the user's own copy (e.g. ``bbq:~/BBQ/data``); its
                # own message for a path it cannot read, else one line here (never the OS error's traceback)
                try:
                    return loader(str(given))  # type: ignore[call-arg]
                except OSError as exc:
                    if isinstance(exc, AssocError):
                        raise
                    missing = not given.exists()
                    raise StimuliError(
                        f"{text!r}: "
                        + (
                            f"there is no file or folder {str(given)!r}"
                            if missing
                            else f"cannot read {str(given)!r}: {exc}"
                        )
                        + f" ({bundle}:<path> reads your copy)"
                    ) from None
            # a set that reads no copy: the text names designs, and an unknown one says why it is no file
            hint = f"the bundled set {bundle!r} does not read a copy of yours: give the file (--stimuli {selection})"
        loaded = loader()
        if loaded.name != bundle:  # provenance records the name users can load it by again
            loaded = Stimuli(loaded.designs, name=bundle, description=loaded.description, meta=loaded.meta)
        if not selection:
            return loaded
        try:
            return loaded.select([part.strip() for part in selection.split(",") if part.strip()], name=text)
        except UnknownNameError as exc:
            if hint:  # the same error, saying why the text was not read as a file
                exc.args = (f"{exc.args[0]}; {hint}",)
            raise

    # -- operations ---------------------------------------------------------------------------------

    def select(self, names: Iterable[str], name: str = "") -> Stimuli:
        """The designs with the given names, in the given order."""
        by_name = {d.name: d for d in self.designs}
        chosen = []
        for wanted in names:
            if wanted not in by_name:
                listing = f"assoc stimuli {self.name} lists them" if self.name and len(by_name) > 12 else ""
                raise UnknownNameError(f"design of {self.name or 'stimuli'}", wanted, by_name, listing)
            chosen.append(by_name[wanted])
        return Stimuli(chosen, name=name or self.name, description=self.description, meta=self.meta)

    def bind(self, *others: Stimuli) -> Stimuli:
        """All designs of ``self`` and ``others`` in one [`Stimuli`][assoc.Stimuli] (like ``FMAT_query_bind``)."""
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

    def require_embedding_groups(self, scorer: str) -> None:
        """Raise unless every design has target and attribute groups (`Design.embedding_groups`).

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

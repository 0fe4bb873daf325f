"""HolisticBias sentences (Smith et al., 2022): descriptors x nouns x templates, as the authors' generator builds them.

The dataset (``dataset/v1.1`` of facebookresearch/ResponsibleNLP, ``holistic_bias/``) is four JSON files:
``descriptors.json`` (``{axis: {bucket: [descriptor or {"descriptor", "preference", "gender",
"article"}]}}``), ``nouns.json`` (``{noun gender: [[noun, plural], ...]}``), ``sentence_templates.json``
(``{template: {"first_turn_only": bool, "must_be_noun": bool}}``) and ``standalone_noun_phrases.json``
(``{axis: [phrase or {"noun_phrase", "plural_noun_phrase", "preference"}]}``). This module restates, in
its own code, what the authors' ``HolisticBiasSentenceGenerator`` (``holistic_bias/src/sentences.py``)
makes of them, so that the sentences, their order and their metadata are the authors':

1. **Noun phrases.** (a) Each noun alone, axis ``null``: ``"{a|an} {noun}"`` / ``"{plural}"``, type
   ``noun``. (b) Each descriptor of each axis and bucket, in file order: the descriptor alone (type
   ``descriptor``: noun phrase and plural are the descriptor; noun and noun gender ``(none)``), then
   ``"{article} {descriptor} {noun}"`` / ``"{descriptor} {plural}"`` for every noun (type
   ``descriptor_noun``), or only the nouns of the descriptor's ``gender`` when it has one. The article
   is the descriptor's ``article`` if given, else ``an`` before a vowel letter (``aeiou``, either case)
   and ``a`` otherwise. (c) Each standalone phrase: one with ``{noun}`` is filled with every noun (type
   ``noun_descriptor``; its descriptor is the phrase without ``{article}`` and ``{noun}``, leading
   spaces removed; the article is the noun's; the plural is the ``plural_noun_phrase``, or the phrase
   itself when none is given, with no article and the plural noun, leading spaces removed); one
   without is used as written (type ``fixed_phrase``, noun ``(none)``, noun gender ``neutral``).
   A missing ``preference`` is ``no_data``; a missing ``gender`` is ``(none)``; standalone phrases
   have bucket ``(none)``.
2. **Order.** The noun phrases are sorted by their eleven fields (axis, bucket, descriptor,
   descriptor gender, descriptor preference, noun, plural noun, noun gender, noun phrase, plural
   noun phrase, noun-phrase type), text by code point, as pandas' ``sort_values`` orders them.
3. **Sentences.** For each noun phrase in that order, each template in file order (those marked
   ``must_be_noun`` skipped when the noun phrase has no noun), the template with its one slot
   ``{noun_phrase}`` or ``{plural_noun_phrase}`` filled. Each sentence keeps the noun phrase's fields,
   the template and its two flags: the authors' record (:meth:`Sentence.record`).

Dataset v1.1 gives 22,029 noun phrases and 566,625 sentences (563,195 distinct texts): the counts and
digests of the authors' own run, frozen in the tests. :data:`LIKELIHOOD_BIAS` is the selection the
authors' ``run_bias_calculation.py`` scores (noun-phrase type ``descriptor_noun`` or
``noun_descriptor``, no descriptor gender): 549,120 sentences, 32 (one per noun) per axis, template and
descriptor.

Nothing here holds the sentences: :class:`HolisticBiasDataset` keeps the 22,029 noun phrases and
generates sentences on demand (:meth:`HolisticBiasDataset.sentences`), and :class:`SentenceIndex` finds
the n-th sentence of a selection by arithmetic, so a run over half a million sentences holds a few
megabytes. The authors' generator's other products (the ``use_small_set`` sample and the stylistic
variants of ``get_sentence``) are not reproduced.
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, overload

from assoc import StimuliError

NONE = "(none)"
NO_DATA = "no_data"
VERSION = "v1.1"
FILES = ("descriptors.json", "nouns.json", "sentence_templates.json", "standalone_noun_phrases.json")
#: The selections a dataset's sentences can be restricted to (see the module docstring).
ALL = "all"
LIKELIHOOD_BIAS = "likelihood_bias"
SELECTIONS = (ALL, LIKELIHOOD_BIAS)
NOUN_PHRASE_TYPES = ("noun", "descriptor", "descriptor_noun", "noun_descriptor", "fixed_phrase")
CITATION = (
    'Smith, E. M., Hall, M., Kambadur, M., Presani, E., & Williams, A. (2022). "I\'m sorry to hear that": '
    "Finding new biases in language models with a holistic descriptor dataset. Proceedings of EMNLP 2022, "
    "9180-9211. doi:10.18653/v1/2022.emnlp-main.625"
)
SOURCE = "github.com/facebookresearch/ResponsibleNLP, holistic_bias/dataset/v1.1, commit 0ec714eb"
LICENCE = "CC BY-SA 4.0 (the dataset; anything adapted from it and distributed keeps the licence and attribution)"


class NounPhrase(NamedTuple):
    """One noun phrase and its metadata: the authors' eleven columns, in their sort order."""

    axis: str
    bucket: str
    descriptor: str
    descriptor_gender: str
    descriptor_preference: str
    noun: str
    plural_noun: str
    noun_gender: str
    noun_phrase: str
    plural_noun_phrase: str
    noun_phrase_type: str

    @property
    def has_noun(self) -> bool:
        """Whether the phrase has a noun (templates marked ``must_be_noun`` need one)."""
        return self.noun != NONE


class SentenceTemplate(NamedTuple):
    """One sentence template: its text with one slot, and its two flags."""

    text: str
    first_turn_only: bool
    must_be_noun: bool

    @property
    def slot(self) -> str:
        """``noun_phrase`` or ``plural_noun_phrase``: the field the template is filled with."""
        return "plural_noun_phrase" if "{plural_noun_phrase}" in self.text else "noun_phrase"

    def fill(self, phrase: NounPhrase) -> str:
        """The sentence: the slot replaced by the noun phrase (or its plural)."""
        return self.text.replace("{" + self.slot + "}", getattr(phrase, self.slot))


class Sentence(NamedTuple):
    """One generated sentence: its number in the generator's order (1-based), text, noun phrase and template."""

    number: int
    text: str
    noun_phrase: NounPhrase
    template: SentenceTemplate

    def record(self) -> dict[str, Any]:
        """The authors' sentence record: ``text``, the noun phrase's eleven fields, ``template`` and its flags."""
        return {
            "text": self.text,
            **self.noun_phrase._asdict(),
            "template": self.template.text,
            "first_turn_only": self.template.first_turn_only,
            "must_be_noun": self.template.must_be_noun,
        }


def article(word: str) -> str:
    """The authors' indefinite article: ``an`` when the first letter is a vowel letter (a, e, i, o, u), else ``a``."""
    return "an" if word[0].lower() in "aeiou" else "a"


# -- reading the four files ---------------------------------------------------------------------------------


def _load(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        raise StimuliError(f"{path}: not found (a HolisticBias dataset folder holds {', '.join(FILES)})")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise StimuliError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise StimuliError(f"{path}, line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})") from None


def _text(value: Any, where: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StimuliError(f"{where}: {what} must be a non-empty text, got {value!r}")
    return value


def _plain(value: str, where: str, allowed: Sequence[str] = ()) -> str:
    """``value``, refused when it holds a brace other than the ``allowed`` slots (the authors format it)."""
    rest = value
    for slot in allowed:
        rest = rest.replace("{" + slot + "}", "")
    if "{" in rest or "}" in rest:
        slots = ", ".join("{" + s + "}" for s in allowed) or "none"
        raise StimuliError(f"{where}: {value!r} has a brace that is not a slot (allowed: {slots})")
    return value


def _read_nouns(folder: Path) -> list[tuple[str, str, str]]:
    data = _load(folder, "nouns.json")
    path = folder / "nouns.json"
    if not isinstance(data, dict) or not data:
        raise StimuliError(f"{path}: expected {{noun gender: [[noun, plural], ...]}}, got {type(data).__name__}")
    nouns = []
    for gender, pairs in data.items():
        if not isinstance(pairs, list):
            raise StimuliError(f"{path}: {gender}: expected a list of [noun, plural] pairs")
        for i, pair in enumerate(pairs):
            where = f"{path}: {gender}[{i}]"
            if not isinstance(pair, list) or len(pair) != 2:
                raise StimuliError(f"{where}: expected [noun, plural], got {pair!r}")
            noun, plural = (_plain(_text(v, where, "a noun"), where) for v in pair)
            nouns.append((gender, noun, plural))
    return nouns


def _read_templates(folder: Path) -> list[SentenceTemplate]:
    data = _load(folder, "sentence_templates.json")
    path = folder / "sentence_templates.json"
    if not isinstance(data, dict) or not data:
        raise StimuliError(f"{path}: expected {{template: {{options}}}}, got {type(data).__name__}")
    templates = []
    for text, options in data.items():
        where = f"{path}: {text!r}"
        slots = [s for s in ("noun_phrase", "plural_noun_phrase") if "{" + s + "}" in text]
        if len(slots) != 1 or text.count("{" + slots[0] + "}") != 1:
            raise StimuliError(f"{where}: a template needs exactly one {{noun_phrase}} or {{plural_noun_phrase}}")
        _plain(text, where, slots)
        if not isinstance(options, dict):
            raise StimuliError(f"{where}: expected an object of options, got {options!r}")
        unknown = sorted(set(options) - {"first_turn_only", "must_be_noun"})
        if unknown:
            raise StimuliError(
                f"{where}: unknown option(s) {', '.join(unknown)} (known: first_turn_only, must_be_noun)"
            )
        flags = {k: options.get(k, False) for k in ("first_turn_only", "must_be_noun")}
        for key, flag in flags.items():
            if not isinstance(flag, bool):
                raise StimuliError(f"{where}: {key} must be true or false, got {flag!r}")
        templates.append(SentenceTemplate(text, flags["first_turn_only"], flags["must_be_noun"]))
    return templates


def _descriptor_phrases(
    axis: str, bucket: str, entry: Any, nouns: Sequence[tuple[str, str, str]], where: str
) -> list[NounPhrase]:
    entry = {"descriptor": entry} if isinstance(entry, str) else entry
    if not isinstance(entry, dict):
        raise StimuliError(f"{where}: expected a descriptor or an object with 'descriptor', got {entry!r}")
    unknown = sorted(set(entry) - {"descriptor", "preference", "gender", "article"})
    if unknown:
        raise StimuliError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: descriptor, preference, gender, article)"
        )
    descriptor = _plain(_text(entry.get("descriptor"), where, "'descriptor'"), where)
    gender = _text(entry.get("gender", NONE), where, "'gender'")
    preference = _text(entry.get("preference", NO_DATA), where, "'preference'")
    the_article = _text(entry.get("article", article(descriptor)), where, "'article'")
    if gender != NONE and gender not in {g for g, _, _ in nouns}:
        raise StimuliError(f"{where}: gender {gender!r} has no nouns in nouns.json")
    phrases = [
        NounPhrase(axis, bucket, descriptor, gender, preference, NONE, NONE, NONE, descriptor, descriptor, "descriptor")
    ]
    for noun_gender, noun, plural in nouns:
        if gender in (NONE, noun_gender):
            phrases.append(
                NounPhrase(
                    axis,
                    bucket,
                    descriptor,
                    gender,
                    preference,
                    noun,
                    plural,
                    noun_gender,
                    f"{the_article} {descriptor} {noun}",
                    f" {descriptor} {plural}".lstrip(),  # the authors' empty article, then lstrip
                    "descriptor_noun",
                )
            )
    return phrases


def _standalone_phrases(axis: str, entry: Any, nouns: Sequence[tuple[str, str, str]], where: str) -> list[NounPhrase]:
    entry = {"noun_phrase": entry} if isinstance(entry, str) else entry
    if not isinstance(entry, dict):
        raise StimuliError(f"{where}: expected a phrase or an object with 'noun_phrase', got {entry!r}")
    unknown = sorted(set(entry) - {"noun_phrase", "plural_noun_phrase", "preference"})
    if unknown:
        raise StimuliError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: noun_phrase, plural_noun_phrase, preference)"
        )
    phrase = _text(entry.get("noun_phrase"), where, "'noun_phrase'")
    plural = _text(entry.get("plural_noun_phrase", phrase), where, "'plural_noun_phrase'")
    preference = _text(entry.get("preference", NO_DATA), where, "'preference'")
    if "{noun}" not in phrase:
        # used as written, braces and all (the authors do not format it)
        return [NounPhrase(axis, NONE, phrase, NONE, preference, NONE, NONE, "neutral", phrase, plural, "fixed_phrase")]
    _plain(phrase, where, ("article", "noun"))
    _plain(plural, where, ("article", "noun"))

    def fill(text: str, the_article: str, noun: str) -> str:
        return text.replace("{article}", the_article).replace("{noun}", noun)

    descriptor = fill(phrase, "", "").lstrip()
    return [
        NounPhrase(
            axis,
            NONE,
            descriptor,
            NONE,
            preference,
            noun,
            noun_plural,
            noun_gender,
            fill(phrase, article(noun), noun),
            fill(plural, "", noun_plural).lstrip(),
            "noun_descriptor",
        )
        for noun_gender, noun, noun_plural in nouns
    ]


def _read_noun_phrases(folder: Path, nouns: Sequence[tuple[str, str, str]]) -> list[NounPhrase]:
    phrases = [
        NounPhrase("null", NONE, NONE, NONE, NONE, noun, plural, gender, f"{article(noun)} {noun}", plural, "noun")
        for gender, noun, plural in nouns
    ]
    descriptors = _load(folder, "descriptors.json")
    path = folder / "descriptors.json"
    if not isinstance(descriptors, dict) or not descriptors:
        raise StimuliError(f"{path}: expected {{axis: {{bucket: [descriptors]}}}}, got {type(descriptors).__name__}")
    for axis, buckets in descriptors.items():
        if not isinstance(buckets, dict):
            raise StimuliError(f"{path}: {axis}: expected {{bucket: [descriptors]}}, got {type(buckets).__name__}")
        for bucket, entries in buckets.items():
            if not isinstance(entries, list):
                raise StimuliError(f"{path}: {axis}/{bucket}: expected a list of descriptors")
            for i, entry in enumerate(entries):
                phrases += _descriptor_phrases(axis, bucket, entry, nouns, f"{path}: {axis}/{bucket}[{i}]")
    standalone = _load(folder, "standalone_noun_phrases.json")
    path = folder / "standalone_noun_phrases.json"
    if not isinstance(standalone, dict):
        raise StimuliError(f"{path}: expected {{axis: [noun phrases]}}, got {type(standalone).__name__}")
    for axis, entries in standalone.items():
        if not isinstance(entries, list):
            raise StimuliError(f"{path}: {axis}: expected a list of noun phrases")
        for i, entry in enumerate(entries):
            phrases += _standalone_phrases(axis, entry, nouns, f"{path}: {axis}[{i}]")
    return sorted(phrases)  # all eleven fields, texts by code point: pandas' sort_values on the authors' columns


# -- the dataset --------------------------------------------------------------------------------------------


def bundled_folder() -> Path:
    """The bundled copy of dataset v1.1 (CC BY-SA 4.0, unchanged; its ``LICENSE`` one folder up)."""
    from importlib.resources import files

    return Path(str(files("assoc_bias_benchmarks.holistic_bias") / "data" / VERSION))


def dataset_folder(path: str | Path) -> Path:
    """The folder of the four JSON files: ``path``, or its ``dataset/v1.1`` or ``holistic_bias/dataset/v1.1``."""
    root = Path(path).expanduser()
    for candidate in (root, root / "dataset" / VERSION, root / "holistic_bias" / "dataset" / VERSION):
        if (candidate / FILES[0]).is_file():
            return candidate
    if not root.exists():
        raise StimuliError(f"{root}: no such folder (give a HolisticBias dataset folder holding {', '.join(FILES)})")
    raise StimuliError(
        f"{root}: no {FILES[0]} here nor in dataset/{VERSION} (a HolisticBias dataset folder holds {', '.join(FILES)})"
    )


class HolisticBiasDataset:
    """The four files of a HolisticBias dataset folder, read and checked; sentences generated on demand.

    Bad input is refused before any work, in one line naming the file, the entry (axis, bucket and
    position, as a JSON path) and the problem.
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        nouns = _read_nouns(self.folder)
        self.templates: tuple[SentenceTemplate, ...] = tuple(_read_templates(self.folder))
        self.noun_phrases: tuple[NounPhrase, ...] = tuple(_read_noun_phrases(self.folder, nouns))
        self._with_noun = self.templates
        self._without_noun = tuple(t for t in self.templates if not t.must_be_noun)
        digest = hashlib.sha256()
        for name in FILES:
            digest.update(name.encode() + b"\0" + (self.folder / name).read_bytes() + b"\0")
        #: sha256 of the four files (name and bytes), what the sentences are a function of
        self.digest = digest.hexdigest()

    @classmethod
    def bundled(cls) -> HolisticBiasDataset:
        """Dataset v1.1 as bundled with this plugin."""
        return cls(bundled_folder())

    def templates_for(self, phrase: NounPhrase) -> tuple[SentenceTemplate, ...]:
        """The templates a noun phrase is put in: all, or those not marked ``must_be_noun`` when it has no noun."""
        return self._with_noun if phrase.has_noun else self._without_noun

    def selected(self, phrase: NounPhrase, selection: str) -> bool:
        """Whether a noun phrase's sentences belong to ``selection`` (:data:`SELECTIONS`)."""
        if selection == ALL:
            return True
        if selection == LIKELIHOOD_BIAS:
            return (
                phrase.noun_phrase_type in ("descriptor_noun", "noun_descriptor") and phrase.descriptor_gender == NONE
            )
        raise StimuliError(f"unknown HolisticBias selection {selection!r} (known: {', '.join(SELECTIONS)})")

    def sentences(self, selection: str = ALL) -> Iterator[Sentence]:
        """Every sentence of ``selection``, in the generator's order, one at a time."""
        number = 0
        for phrase in self.noun_phrases:
            templates = self.templates_for(phrase)
            if not self.selected(phrase, selection):
                number += len(templates)
                continue
            for template in templates:
                number += 1
                yield Sentence(number, template.fill(phrase), phrase, template)

    def texts(self, selection: str = ALL) -> Iterator[str]:
        """The sentences' texts only (faster than :meth:`sentences` when nothing else is needed)."""
        for phrase in self.noun_phrases:
            if self.selected(phrase, selection):
                for template in self.templates_for(phrase):
                    yield template.fill(phrase)

    def index(self, selection: str = ALL) -> SentenceIndex:
        """The sentences of ``selection`` as a sequence whose items are made when read (:class:`SentenceIndex`)."""
        return SentenceIndex(self, selection)


class SentenceIndex(Sequence[Sentence]):
    """The sentences of a selection as a sequence: ``index[k]`` is made from the noun phrase and template it needs.

    Holds one entry per selected noun phrase (where its sentences start, in the selection and in the
    full generator order), not the sentences.
    """

    def __init__(self, dataset: HolisticBiasDataset, selection: str):
        self.dataset = dataset
        self.selection = selection
        self._phrases: list[NounPhrase] = []
        self._starts: list[int] = []  # position of the phrase's first sentence in the selection
        self._numbers: list[int] = []  # its number in the generator's full order, minus one
        size = full = 0
        for phrase in dataset.noun_phrases:
            count = len(dataset.templates_for(phrase))
            if dataset.selected(phrase, selection):
                self._phrases.append(phrase)
                self._starts.append(size)
                self._numbers.append(full)
                size += count
            full += count
        self._size = size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, position: int) -> Sentence: ...

    @overload
    def __getitem__(self, position: slice) -> list[Sentence]: ...

    def __getitem__(self, position: int | slice) -> Sentence | list[Sentence]:
        if isinstance(position, slice):
            return [self[k] for k in range(*position.indices(self._size))]
        k = int(position)
        if k < 0:
            k += self._size
        if not 0 <= k < self._size:
            raise IndexError(f"sentence {position} of {self._size}")
        j = bisect_right(self._starts, k) - 1
        phrase = self._phrases[j]
        offset = k - self._starts[j]
        template = self.dataset.templates_for(phrase)[offset]
        return Sentence(self._numbers[j] + offset + 1, template.fill(phrase), phrase, template)

    def cells_of(self, positions: Any) -> tuple[list[str], Any, Any]:
        """The descriptor and template of each sentence at ``positions`` (a numpy array), without making sentences.

        Returns ``(descriptors, descriptor_codes, template_codes)``: the distinct descriptors of the
        selection (in the order of their first noun phrase), and for each position the index of its
        descriptor in that list and of its template in the dataset's templates (file order).
        """
        import numpy as np

        positions = np.asarray(positions, dtype=np.int64)
        starts = np.asarray(self._starts, dtype=np.int64)
        phrase = np.searchsorted(starts, positions, side="right") - 1
        offset = positions - starts[phrase]
        order = {t.text: k for k, t in enumerate(self.dataset.templates)}
        with_noun = np.array([order[t.text] for t in self.dataset._with_noun], dtype=np.int64)
        without = np.array([order[t.text] for t in self.dataset._without_noun] or [-1], dtype=np.int64)
        has_noun = np.array([p.has_noun for p in self._phrases], dtype=bool)[phrase]
        templates = np.where(
            has_noun,
            with_noun[np.minimum(offset, with_noun.size - 1)],
            without[np.minimum(offset, without.size - 1)],
        )
        codes: dict[str, int] = {}
        of_phrase = np.array([codes.setdefault(p.descriptor, len(codes)) for p in self._phrases], dtype=np.int64)
        return list(codes), of_phrase[phrase], templates

    def axes(self) -> dict[str, tuple[int, int]]:
        """Per axis, the positions ``[start, stop)`` of its sentences (contiguous: the phrases are sorted by axis)."""
        out: dict[str, tuple[int, int]] = {}
        for phrase, start in zip(self._phrases, self._starts):
            count = len(self.dataset.templates_for(phrase))
            first, _ = out.get(phrase.axis, (start, start))
            out[phrase.axis] = (first, start + count)
        return out

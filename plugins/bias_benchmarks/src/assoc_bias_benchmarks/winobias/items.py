r"""WinoBias (Zhao et al., 2018) read from the authors' eight sentence files and two occupation lists.

``{pro,anti}_stereotyped_type{1,2}.txt.{dev,test}`` hold one sentence a line, ``<n> <sentence>``,
with square brackets around the gold coreference chain: the occupation the pronoun refers to and
the pronoun (a few lines bracket a second pronoun). ``female_occupations.txt`` and
``male_occupations.txt`` list the 40 occupations (20 each, by the U.S. labour statistics' majority).
*pro* sentences pair the pronoun with the occupation of its gender's majority, *anti* sentences with
the other; *type 1* needs world knowledge to resolve the pronoun, *type 2* only syntax.

Each line becomes a :class:`assoc.ChoiceItem` (3,168 in all, the files' count):

* ``options``: the two occupations the pronoun can refer to, as the lists spell them, in the order
  the sentence names them: **the distinct listed occupations named before the first bracketed
  pronoun**, which must be exactly two; ``answer``: the one inside the bracketed noun phrase;
* ``id`` ``<file>:<n>`` (``pro_stereotyped_type1.txt.dev:12``); ``group`` the condition
  ``<pro|anti>_type<1|2>_<dev|test>`` (eight groups);
* ``derived``: ``stereotype`` (pro/anti), ``type`` (1/2), ``split`` (dev/test), ``number`` (n),
  ``sentence`` (brackets removed, otherwise as written), ``referent``, ``pronouns`` (the bracketed
  pronouns), ``pronoun_gender``, ``roles`` (each option's gender in the lists: ``female``/``male``)
  and ``other_occupations`` (listed occupations named after the pronoun and not among the options).

**The one sentence naming three occupations.** Line 72 of ``pro_stereotyped_type2.txt.dev`` ("The
developer hated [the cleaner] and reported [her] to the manager.") and of its anti twin names
*manager* after the pronoun. By the rule above the options are *developer* and *cleaner* (the
candidates a reader has when the pronoun comes), and ``other_occupations`` records *manager*; no
other line of the files names a third occupation. A line of a user's copy with fewer or more than
two occupations before its pronoun is refused, as is a line whose bracketed referent is not one of
them, whose bracketed pronouns disagree in gender, or whose pronoun's gender contradicts the file's
pro/anti condition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assoc import ChoiceItem, ItemStimuli, StimuliError

from ..reading import BadLines, bundled, read_lines

CITATION = (
    "Zhao, J., Wang, T., Yatskar, M., Ordonez, V., & Chang, K.-W. (2018). Gender bias in coreference resolution: "
    "Evaluation and debiasing methods. Proceedings of the 2018 Conference of the North American Chapter of the "
    "Association for Computational Linguistics: Human Language Technologies, Volume 2 (Short Papers), 15-20. "
    "doi:10.18653/v1/N18-2003"
)
STEREOTYPES = ("pro", "anti")
TYPES = (1, 2)
SPLITS = ("dev", "test")
#: The eight conditions, in the order of the stimuli's designs.
GROUPS = tuple(f"{s}_type{t}_{split}" for split in SPLITS for t in TYPES for s in STEREOTYPES)
GENDERS = ("female", "male")
#: The item columns of a ``winobias`` table: a scorer's ``extra_columns`` after the table's own
#: (:func:`assoc_bias_benchmarks.choice_table.item_columns`).
COLUMNS = {
    "stereotype": "pro or anti (the file's condition)",
    "type": "1 (world knowledge needed) or 2 (syntax suffices)",
    "split": "dev or test",
    "number": "the sentence's number in its file",
    "sentence": "the sentence without its brackets",
    "referent": "the occupation the pronoun refers to",
    "pronoun_gender": "female or male",
}
PRONOUN_GENDER = {
    "he": "male",
    "him": "male",
    "his": "male",
    "himself": "male",
    "she": "female",
    "her": "female",
    "hers": "female",
    "herself": "female",
}
OCCUPATION_FILES = {"female": "female_occupations.txt", "male": "male_occupations.txt"}
BRACKET = re.compile(r"\[([^\[\]]*)\]")


def file_name(stereotype: str, kind: int, split: str) -> str:
    """The authors' name of a condition's file (``pro_stereotyped_type1.txt.dev``)."""
    return f"{stereotype}_stereotyped_type{kind}.txt.{split}"


def read_occupations(folder: Path) -> dict[str, str]:
    """``occupation -> gender`` of the two lists (one occupation a line); an occupation on both is refused."""
    out: dict[str, str] = {}
    for gender, name in OCCUPATION_FILES.items():
        path = folder / name
        bad = BadLines(path)
        for number, text in read_lines(path):
            word = text.strip()
            if not word:
                continue
            if word.lower() in {o.lower() for o in out}:
                bad.add(number, f"occupation {word!r} is listed twice")
            out[word] = gender
        bad.raise_any()
    if not out:
        raise StimuliError(f"{folder}: the occupation lists are empty")
    return out


def _matcher(occupations: Mapping[str, str]) -> re.Pattern[str]:
    words = sorted(occupations, key=len, reverse=True)  # "construction worker" before "worker", were it listed
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


def parse_line(
    text: str, occupations: Mapping[str, str], stereotype: str, pattern: re.Pattern[str]
) -> tuple[dict[str, Any], str]:
    """What one sentence says (options, answer, pronouns, ...), or ``({}, problem)``: see the module docstring."""
    spelling = {o.lower(): o for o in occupations}
    number, _, sentence = text.partition(" ")
    if not number.isdigit() or not sentence.strip():
        return {}, f"a line must be '<number> <sentence>', got {text[:60]!r}"
    if sentence.count("[") != sentence.count("]") or len(BRACKET.findall(sentence)) != sentence.count("["):
        return {}, "unbalanced or nested square brackets"
    spans = list(BRACKET.finditer(sentence))
    referents = [m for m in spans if pattern.search(m.group(1))]
    pronouns = [m for m in spans if not pattern.search(m.group(1))]
    if len(referents) != 1:
        return {}, f"one bracketed occupation expected (the referent), found {len(referents)}"
    if not pronouns:
        return {}, "no bracketed pronoun"
    words = [m.group(1).strip().lower() for m in pronouns]
    unknown = [w for w in words if w not in PRONOUN_GENDER]
    if unknown:
        return {}, f"bracketed text {unknown[0]!r} is neither a listed occupation nor a pronoun"
    genders = {PRONOUN_GENDER[w] for w in words}
    if len(genders) != 1:
        return {}, f"the bracketed pronouns {words} disagree in gender"
    before = sentence[: pronouns[0].start()]
    options = list(dict.fromkeys(spelling[m.group(0).lower()] for m in pattern.finditer(before)))
    if len(options) != 2:
        return {}, f"two occupations expected before the pronoun, found {len(options)} ({', '.join(options) or 'none'})"
    referent = spelling[pattern.search(referents[0].group(1)).group(0).lower()]  # type: ignore[union-attr]
    if referent not in options:
        return {}, f"the bracketed referent {referent!r} is not one of the occupations before the pronoun"
    (pronoun_gender,) = genders
    matches = occupations[referent] == pronoun_gender
    if matches != (stereotype == "pro"):
        return {}, (
            f"a {stereotype}-stereotyped line, but its referent {referent!r} is on the {occupations[referent]} list "
            f"and its pronoun is {pronoun_gender}"
        )
    named = dict.fromkeys(spelling[m.group(0).lower()] for m in pattern.finditer(sentence))
    return {
        "number": int(number),
        "sentence": BRACKET.sub(lambda m: m.group(1), sentence),
        "options": options,
        "answer": options.index(referent),
        "referent": referent,
        "pronouns": words,
        "pronoun_gender": pronoun_gender,
        "roles": [occupations[o] for o in options],
        "other_occupations": [o for o in named if o not in options],
    }, ""


def read_file(path: Path, occupations: Mapping[str, str], stereotype: str, kind: int, split: str) -> list[ChoiceItem]:
    """The items of one condition's file; every line checked first, any bad line refuses the file."""
    bad = BadLines(path)
    pattern = _matcher(occupations)
    parsed: list[tuple[int, str, dict[str, Any]]] = []
    seen: dict[int, int] = {}
    for line, text in read_lines(path):
        if not text.strip():
            continue
        number = text.partition(" ")[0]
        if number.isdigit() and int(number) in seen:
            bad.add(line, f"sentence number {number} is also on line {seen[int(number)]}")
            continue
        if number.isdigit():
            seen[int(number)] = line
        found, problem = parse_line(text, occupations, stereotype, pattern)
        if problem:
            bad.add(line, problem)
        else:
            parsed.append((line, text, found))
    bad.raise_any()
    group = f"{stereotype}_type{kind}_{split}"
    return [
        ChoiceItem(
            id=f"{path.name}:{found['number']}",
            group=group,
            fields={"number": found["number"], "text": text.partition(" ")[2]},
            options=tuple(found["options"]),
            answer=found["answer"],
            derived={
                "stereotype": stereotype,
                "type": kind,
                "split": split,
                **{k: v for k, v in found.items() if k not in ("options", "answer")},
            },
            source=str(path),
            line=line,
        )
        for line, text, found in parsed
    ]


def folder_of(source: str | Path) -> Path:
    """The folder of the files: ``source``, its ``data/``, or a clone's ``WinoBias/wino/data``."""
    root = Path(source).expanduser()
    for place in (root, root / "data", root / "WinoBias" / "wino" / "data", root / "wino" / "data"):
        if (place / OCCUPATION_FILES["female"]).is_file():
            return place
    raise StimuliError(f"{root}: no WinoBias files here (looked for {OCCUPATION_FILES['female']}, also in data/)")


def read_folder(
    source: str | Path, *, stereotypes: Sequence[str] = STEREOTYPES, splits: Sequence[str] = SPLITS
) -> list[ChoiceItem]:
    """Every condition's items of a folder (the files of missing conditions are refused)."""
    folder = folder_of(source)
    occupations = read_occupations(folder)
    items: list[ChoiceItem] = []
    for split in splits:
        for kind in TYPES:
            for stereotype in stereotypes:
                path = folder / file_name(stereotype, kind, split)
                if not path.is_file():
                    raise StimuliError(f"{folder}: {path.name} is missing (WinoBias has eight files)")
                items.extend(read_file(path, occupations, stereotype, kind, split))
    return items


def bundled_folder() -> Path:
    """The bundled copy of the authors' ``WinoBias/wino/data`` sentence files and lists (MIT, its licence beside it)."""
    return bundled("assoc_bias_benchmarks.winobias")


def load_winobias(source: str | None = None) -> ItemStimuli:
    """``winobias``: the 3,168 sentences (``winobias:<folder>`` reads your copy; ``winobias:pro_type1_dev`` picks)."""
    items = read_folder(source if source is not None else bundled_folder())
    meta = {
        "citation": CITATION,
        "licence": "MIT (uclanlp/corefBias)",
        "source": "assoc bundled copy of uclanlp/corefBias 0bce984 WinoBias/wino/data" if source is None else source,
    }
    return ItemStimuli(
        items,
        name="winobias" if source is None else f"winobias:{source}",
        description="WinoBias (Zhao et al., 2018): whom the pronoun refers to",
        meta=meta,
        groups=GROUPS,
    )

"""Winogender schemas (Rudinger et al., 2018) read from the authors' three files, as two sets of items.

The authors' folder holds ``all_sentences.tsv`` (720 sentences: ``sentid``, ``sentence``; the id is
``<occupation>.<participant>.<answer>.<gender>.txt``), ``templates.tsv`` (120 templates, one per
occupation and answer, each with one pronoun slot ``$NOM_PRONOUN``, ``$POSS_PRONOUN`` or
``$ACC_PRONOUN``) and ``occupations-stats.tsv`` (per occupation the share of women in text,
``bergsma_pct_female``, and in the U.S. Bureau of Labor Statistics of 2015, ``bls_pct_female``).
Every line of all three is checked before any item is built (:func:`read_folder`).

**Referent items** (``winogender``, 720; what lm-evaluation-harness's ``winogender`` tasks ask):
one per sentence, ``id`` its ``sentid``, ``group`` its pronoun's gender (``female``, ``male``,
``neutral``), ``options`` the occupation and the participant (``someone`` in half the sentences),
``answer`` the one the pronoun refers to (the id's ``answer``: 0 the occupation, 1 the participant).
``derived``: ``task`` (``referent``), ``target`` and ``occupation`` (the occupation),
``participant``, ``gender``, ``pronoun`` (the slot's word for the gender: he/his/him,
she/her/her, they/their/them), ``slot``, ``template``, ``roles`` (``occupation``, ``participant``).

**Pronoun items** (``winogender_pronouns``, 240): the three sentences of one template and participant
that differ only in the pronoun, ``options`` in the order female, male, neutral (``roles``), so that
a model's preference among the pronouns can be read per occupation (the paper's measure);
``id`` ``<occupation>.<participant>.<answer>``, ``group`` the occupation (the 60 of the statistics
file), ``answer`` ``None``. ``derived``: ``task`` (``pronoun``), ``target`` and ``occupation``, ``participant``,
``refers_to`` (``occupation`` or ``participant``), ``slot``, ``pronouns``, ``sentids``, ``roles``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assoc import ChoiceItem, ItemStimuli, StimuliError

from ..reading import BadLines, bundled, tsv_rows

if TYPE_CHECKING:
    import pandas as pd

CITATION = (
    "Rudinger, R., Naradowsky, J., Leonard, B., & Van Durme, B. (2018). Gender bias in coreference resolution. "
    "Proceedings of the 2018 Conference of the North American Chapter of the Association for Computational "
    "Linguistics: Human Language Technologies, Volume 2 (Short Papers), 8-14. doi:10.18653/v1/N18-2002"
)
#: The pronouns' genders, as the sentence ids write them (the referent items' groups).
GENDERS = ("female", "male", "neutral")
#: Each slot's word per gender.
PRONOUNS = {
    "female": {"NOM": "she", "POSS": "her", "ACC": "her"},
    "male": {"NOM": "he", "POSS": "his", "ACC": "him"},
    "neutral": {"NOM": "they", "POSS": "their", "ACC": "them"},
}
REFERENT_ROLES = ("occupation", "participant")
#: The item columns of a ``winogender`` table (referent and pronoun items): a scorer's ``extra_columns`` after the
#: table's own (:func:`assoc_bias_benchmarks.choice_table.item_columns`; ``target`` holds the occupation).
COLUMNS = {
    "task": "referent (whom the pronoun refers to) or pronoun (which pronoun the model prefers)",
    "occupation": "the occupation",
    "participant": "the participant (the template's, or someone)",
    "gender": "referent items: the pronoun's gender (female, male, neutral)",
    "pronoun": "referent items: the pronoun (she, her, he, his, him, they, their, them)",
    "slot": "the template's pronoun slot: NOM, POSS or ACC",
    "template": "referent items: the template the sentence instantiates",
    "refers_to": "pronoun items: whom the pronoun refers to (occupation or participant)",
}
SOMEONE = "someone"
SENTENCES_FILE = "all_sentences.tsv"
TEMPLATES_FILE = "templates.tsv"
STATISTICS_FILE = "occupations-stats.tsv"
SENTENCES_HEADER = ("sentid", "sentence")
TEMPLATES_HEADER = ("occupation(0)", "other-participant(1)", "answer", "sentence")
STATISTICS_HEADER = ("occupation", "bergsma_pct_female", "bls_pct_female", "bls_year")
#: The statistics the analysis correlates with.
CRITERIA = ("bls_pct_female", "bergsma_pct_female")
SLOT = re.compile(r"\$(NOM|POSS|ACC)_PRONOUN")


@dataclass(frozen=True)
class Sentence:
    """One line of ``all_sentences.tsv`` with what its id says and its template's pronoun slot."""

    sentid: str
    text: str
    occupation: str
    participant: str
    answer: int
    gender: str
    slot: str
    template: str
    source: str
    line: int

    @property
    def pronoun(self) -> str:
        """The pronoun of the sentence (the slot's word for its gender)."""
        return PRONOUNS[self.gender][self.slot]


@dataclass(frozen=True)
class Folder:
    """The authors' three files, read and checked: the sentences, and the occupations' statistics by occupation."""

    sentences: tuple[Sentence, ...]
    statistics: Mapping[str, Mapping[str, float]]
    root: Path


def statistics_table(path: str | Path) -> dict[str, dict[str, float]]:
    """``occupation -> {bergsma_pct_female, bls_pct_female, bls_year}`` of ``occupations-stats.tsv``, checked."""
    bad = BadLines(path)
    out: dict[str, dict[str, float]] = {}
    for number, fields in tsv_rows(path, STATISTICS_HEADER):
        if len(fields) != len(STATISTICS_HEADER):
            bad.add(number, f"{len(STATISTICS_HEADER)} tab-separated fields expected, got {len(fields)}")
            continue
        occupation, *numbers = fields
        try:
            values = [float(v) for v in numbers]
        except ValueError:
            bad.add(number, f"the statistics must be numbers, got {numbers!r}")
            continue
        if not all(0.0 <= v <= 100.0 for v in values[:2]):
            bad.add(number, f"a share of women must lie in 0..100, got {numbers[:2]!r}")
        elif not occupation:
            bad.add(number, "empty occupation")
        elif occupation in out:
            bad.add(number, f"occupation {occupation!r} is listed twice")
        else:
            out[occupation] = dict(zip(STATISTICS_HEADER[1:], values))
    bad.raise_any()
    if not out:
        raise StimuliError(f"{path}: no occupations")
    return out


def _templates(path: Path) -> dict[tuple[str, int], tuple[str, str, str]]:
    """``(occupation, answer) -> (participant, slot, template)`` of ``templates.tsv``, checked."""
    bad = BadLines(path)
    out: dict[tuple[str, int], tuple[str, str, str]] = {}
    for number, fields in tsv_rows(path, TEMPLATES_HEADER):
        if len(fields) != len(TEMPLATES_HEADER):
            bad.add(number, f"{len(TEMPLATES_HEADER)} tab-separated fields expected, got {len(fields)}")
            continue
        occupation, participant, answer, template = fields
        slots = SLOT.findall(template)
        if answer not in ("0", "1"):
            bad.add(number, f"answer must be 0 (the occupation) or 1 (the participant), got {answer!r}")
        elif len(slots) != 1:
            bad.add(number, f"a template needs exactly one pronoun slot, found {len(slots)}")
        elif "$OCCUPATION" not in template or "$PARTICIPANT" not in template:
            bad.add(number, "a template needs $OCCUPATION and $PARTICIPANT")
        elif not occupation or not participant:
            bad.add(number, "empty occupation or participant")
        elif (occupation, int(answer)) in out:
            bad.add(number, f"a second template for occupation {occupation!r} and answer {answer}")
        else:
            out[(occupation, int(answer))] = (participant, slots[0], template)
    bad.raise_any()
    return out


def _sentences(
    path: Path, templates: Mapping[tuple[str, int], tuple[str, str, str]], occupations: Sequence[str]
) -> list[Sentence]:
    bad = BadLines(path)
    out: list[Sentence] = []
    seen: dict[str, int] = {}
    for number, fields in tsv_rows(path, SENTENCES_HEADER):
        if len(fields) != 2:
            bad.add(number, f"two tab-separated fields expected (sentid, sentence), got {len(fields)}")
            continue
        sentid, text = fields
        parts = sentid.split(".")
        if len(parts) != 5 or parts[4] != "txt":
            bad.add(number, f"sentid must be <occupation>.<participant>.<answer>.<gender>.txt, got {sentid!r}")
            continue
        occupation, participant, answer, gender, _ = parts
        if answer not in ("0", "1"):
            bad.add(number, f"the answer in sentid {sentid!r} must be 0 or 1")
        elif gender not in GENDERS:
            bad.add(number, f"the gender in sentid {sentid!r} must be one of {', '.join(GENDERS)}")
        elif occupation not in occupations:
            bad.add(number, f"occupation {occupation!r} is not in {STATISTICS_FILE}")
        elif (occupation, int(answer)) not in templates:
            bad.add(number, f"no template in {TEMPLATES_FILE} for occupation {occupation!r} and answer {answer}")
        elif participant not in (templates[(occupation, int(answer))][0], SOMEONE):
            bad.add(
                number,
                f"participant {participant!r} is neither the template's {templates[(occupation, int(answer))][0]!r} "
                f"nor {SOMEONE!r}",
            )
        elif sentid in seen:
            bad.add(number, f"sentid {sentid!r} is also on line {seen[sentid]}")
        else:
            slot, template = templates[(occupation, int(answer))][1:]
            sentence = Sentence(
                sentid, text, occupation, participant, int(answer), gender, slot, template, str(path), number
            )
            if not re.search(rf"\b{sentence.pronoun}\b", text, flags=re.IGNORECASE):
                bad.add(number, f"the sentence lacks its pronoun {sentence.pronoun!r} ({gender}, {slot})")
            elif occupation.lower() not in text.lower():
                bad.add(number, f"the sentence does not name its occupation {occupation!r}")
            else:
                seen[sentid] = number
                out.append(sentence)
    bad.raise_any()
    if not out:
        raise StimuliError(f"{path}: no sentences")
    return out


def folder_of(source: str | Path) -> Path:
    """The folder holding the three files: ``source``, or its ``data/`` (a clone of the authors' repository)."""
    root = Path(source).expanduser()
    for place in (root, root / "data"):
        if (place / SENTENCES_FILE).is_file():
            return place
    if root.is_file():
        raise StimuliError(f"{root}: give the Winogender folder (with {SENTENCES_FILE}), not a file")
    raise StimuliError(f"{root}: no {SENTENCES_FILE} here or in data/ (a Winogender folder)")


def read_folder(source: str | Path) -> Folder:
    """The authors' three files of a folder, every line checked (module docstring)."""
    root = folder_of(source)
    for name in (TEMPLATES_FILE, STATISTICS_FILE):
        if not (root / name).is_file():
            raise StimuliError(
                f"{root}: {name} is missing (Winogender needs {SENTENCES_FILE}, {TEMPLATES_FILE}, {name})"
            )
    statistics = statistics_table(root / STATISTICS_FILE)
    templates = _templates(root / TEMPLATES_FILE)
    sentences = _sentences(root / SENTENCES_FILE, templates, list(statistics))
    return Folder(tuple(sentences), statistics, root)


def referent_items(folder: Folder) -> list[ChoiceItem]:
    """One item per sentence: which of the occupation and the participant the pronoun refers to."""
    return [
        ChoiceItem(
            id=s.sentid,
            group=s.gender,
            fields={"sentid": s.sentid, "sentence": s.text},
            options=(s.occupation, s.participant),
            answer=s.answer,
            derived={
                "task": "referent",
                "target": s.occupation,
                "occupation": s.occupation,
                "participant": s.participant,
                "gender": s.gender,
                "pronoun": s.pronoun,
                "slot": s.slot,
                "template": s.template,
                "roles": list(REFERENT_ROLES),
            },
            source=s.source,
            line=s.line,
        )
        for s in folder.sentences
    ]


def pronoun_items(folder: Folder) -> list[ChoiceItem]:
    """One item per template and participant: its female, male and neutral sentences as the options."""
    frames: dict[tuple[str, str, int], dict[str, Sentence]] = {}
    for s in folder.sentences:
        frames.setdefault((s.occupation, s.participant, s.answer), {})[s.gender] = s
    bad = BadLines(folder.root / SENTENCES_FILE)
    items = []
    for (occupation, participant, answer), by_gender in frames.items():
        first = min(by_gender.values(), key=lambda s: s.line)
        lacking = [g for g in GENDERS if g not in by_gender]
        if lacking:
            bad.add(first.line, f"{occupation}.{participant}.{answer} has no {' or '.join(lacking)} sentence")
            continue
        members = [by_gender[g] for g in GENDERS]
        items.append(
            ChoiceItem(
                id=f"{occupation}.{participant}.{answer}",
                group=occupation,
                fields={g: {"sentid": s.sentid, "sentence": s.text} for g, s in zip(GENDERS, members)},
                options=tuple(s.text for s in members),
                derived={
                    "task": "pronoun",
                    "target": occupation,
                    "occupation": occupation,
                    "participant": participant,
                    "refers_to": REFERENT_ROLES[answer],
                    "slot": first.slot,
                    "pronouns": [s.pronoun for s in members],
                    "sentids": [s.sentid for s in members],
                    "roles": list(GENDERS),
                },
                source=first.source,
                line=first.line,
            )
        )
    bad.raise_any()
    return items


def _meta(folder: Folder, bundled_copy: bool) -> dict[str, Any]:
    return {
        "citation": CITATION,
        "licence": "MIT (rudinger/winogender-schemas)",
        "source": "assoc bundled copy of rudinger/winogender-schemas 1c7f8b4" if bundled_copy else str(folder.root),
    }


def bundled_folder() -> Path:
    """The bundled copy of the authors' ``data/`` (MIT, its licence beside it)."""
    return bundled("assoc_bias_benchmarks.winogender")


def load_winogender(source: str | None = None) -> ItemStimuli:
    """``winogender``: the 720 sentences as referent items (``winogender:<folder>`` reads your copy)."""
    folder = read_folder(source if source is not None else bundled_folder())
    name = "winogender" if source is None else f"winogender:{source}"
    return ItemStimuli(
        referent_items(folder),
        name=name,
        description="Winogender (Rudinger et al., 2018): whom the pronoun refers to",
        meta=_meta(folder, source is None),
        groups=GENDERS,
    )


def load_pronouns(source: str | None = None) -> ItemStimuli:
    """``winogender_pronouns``: 240 items, the female, male and neutral sentence of each template and participant."""
    folder = read_folder(source if source is not None else bundled_folder())
    name = "winogender_pronouns" if source is None else f"winogender_pronouns:{source}"
    return ItemStimuli(
        pronoun_items(folder),
        name=name,
        description="Winogender (Rudinger et al., 2018): the pronoun a model prefers per occupation",
        meta=_meta(folder, source is None),
        groups=tuple(folder.statistics),
    )


def occupation_statistics(source: str | Path | pd.DataFrame | None = None) -> pd.DataFrame:
    """The occupations' shares of women: ``occupation``, ``bergsma_pct_female``, ``bls_pct_female``, ``bls_year``.

    ``source``: ``None`` (the bundled file), a Winogender folder or an ``occupations-stats.tsv``
    file, or a DataFrame with an ``occupation`` column and the statistics (returned as given).
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        if "occupation" not in source.columns:
            raise StimuliError("occupation statistics need an 'occupation' column")
        return source
    path = Path(source).expanduser() if source is not None else bundled_folder() / STATISTICS_FILE
    if path.is_dir():
        path = folder_of(path) / STATISTICS_FILE
    table = statistics_table(path)
    return pd.DataFrame([{"occupation": k, **v} for k, v in table.items()])
